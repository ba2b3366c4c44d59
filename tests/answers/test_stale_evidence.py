"""stale_evidence: quotes no chunk of their expected documents holds, warned by line before anyone searches."""
from __future__ import annotations

import json

import pytest

from evaluation.answers.stale import stale_evidence, stale_questions
from evaluation.engine.corpus import read_corpus
from evaluation.golden.wording import quoted
from evaluation.run import plan_run

from conftest import SAMPLES, run_cli
from fakes import ANSWERS, ListTarget, write_golden
from evaluation.run.plan import PlanContext

GOLDEN = SAMPLES / "golden.jsonl"
SAMPLE_ROWS = [json.loads(line) for line in GOLDEN.read_text(encoding="utf-8").splitlines()]


def corpus_without(tmp_path, doc_id, quote):
    """The shipped sample corpus with ``quote`` edited out of document ``doc_id``."""
    rows = [json.loads(line) for line in (SAMPLES / "corpus.jsonl").read_text(encoding="utf-8").splitlines()]
    row = next(r for r in rows if r["id"] == doc_id)
    assert quote in row["text"]
    row["text"] = row["text"].replace(quote, "a sentence someone rewrote")
    path = tmp_path / "corpus.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def test_every_quote_of_the_shipped_sample_is_held_by_a_chunk_of_its_expected_document(sample_index):
    from evaluation import EmbeddedTarget, open_index

    assert stale_evidence(read_corpus(SAMPLES / "corpus.jsonl"), GOLDEN) == ()
    assert stale_evidence(EmbeddedTarget(open_index(sample_index), cross_encoder=False), GOLDEN) == {}


def test_a_quote_removed_from_the_corpus_is_caught_on_its_questions_line(tmp_path):
    first = SAMPLE_ROWS[0]  # line 1: one quote
    corpus = read_corpus(corpus_without(tmp_path, first["expected"][0], first["evidence"][0]))
    [stale] = stale_evidence(corpus, GOLDEN)
    assert (stale.question_id, stale.line, stale.quotes, stale.scores_zero) == (first["id"], 1,
                                                                                (first["evidence"][0],), True)
    assert stale.message() == (f'question "{first["id"]}": no chunk of its expected documents holds its evidence quote '
                               f'any more ({quoted(first["evidence"][0])}), so it always scores 0 at --by evidence; '
                               f'copy the '
                               'quote again from the document, or fix "expected"')


def test_one_of_two_quotes_gone_is_said_as_one_of_two(tmp_path):
    second = SAMPLE_ROWS[1]  # line 2: two quotes
    corpus = read_corpus(corpus_without(tmp_path, second["expected"][0], second["evidence"][1]))
    [stale] = stale_evidence(corpus, GOLDEN)
    assert stale.line == 2 and stale.usable == 2 and not stale.scores_zero
    assert stale.message().startswith(f'question "{second["id"]}": no chunk of its expected documents holds 1 of its '
                                      f'2 evidence quotes any more ({quoted(second["evidence"][1])}), so it can '
                                      f'score less')


def test_a_quote_in_another_document_is_still_stale_and_case_and_spacing_do_not_matter(tmp_path):
    corpus = tmp_path / "c.jsonl"
    corpus.write_text(json.dumps({"id": "a", "text": "Keys Are\n  Rotated every ninety days."}) + "\n"
                      + json.dumps({"id": "b", "text": "Tokens expire after one hour."}) + "\n", encoding="utf-8")
    golden = write_golden(tmp_path, [
        {"id": "held", "question": "How often?", "expected": ["a"], "evidence": ["keys are rotated every"]},
        {"id": "elsewhere", "question": "When?", "expected": ["a"], "evidence": ["tokens expire after one hour"]},
        {"id": "short", "question": "Which?", "expected": ["a"], "evidence": ["gone now"]},  # under 3 words: unused
        {"id": "in-b", "question": "How long?", "expected": ["b"], "evidence": ["expire after one hour"]},
    ])
    assert [s.question_id for s in stale_evidence(read_corpus(corpus), golden)] == ["elsewhere"]


def test_golden_check_with_a_corpus_warns_about_the_stale_quote_by_line_and_still_passes(tmp_path, capsys):
    first = SAMPLE_ROWS[0]
    corpus = corpus_without(tmp_path, first["expected"][0], first["evidence"][0])
    code, out, _ = run_cli(capsys, "golden", "check", str(GOLDEN), "--corpus", str(corpus))
    assert code == 0 and "1 warning:" in out
    assert f'line 1: question "{first["id"]}": no chunk of its expected documents holds its evidence quote' in out


def test_golden_check_with_an_index_checks_its_chunks(sample_index, capsys):
    code, out, _ = run_cli(capsys, "golden", "check", str(GOLDEN), "--index", str(sample_index), "--json")
    assert code == 0 and json.loads(out)["warnings"] == []


class ChunkedTarget(ListTarget):
    """A flow-test target that also gives its chunk texts, as the embedded engine does."""

    def chunk_texts(self, doc_ids):
        return {d: [f"the {d} document says {d} lives here"] for d in doc_ids if d in self.held}


def test_evaluate_by_evidence_warns_about_stale_quotes_before_searching(tmp_path):
    golden = write_golden(tmp_path, [
        {"id": "a", "question": "where is alpha", "expected": ["alpha"], "evidence": ["alpha lives here"]},
        {"id": "b", "question": "where is beta", "expected": ["beta"], "evidence": ["beta moved out long ago"]},
    ])
    target = ChunkedTarget("t", ANSWERS, held={"alpha", "beta"})
    said = []
    plan_run(target, golden, by="evidence",
             context=PlanContext(warn=lambda text: said.append((text, list(target.calls)))))
    assert len(said) == 2 and all(calls == [] for _, calls in said)  # before any search
    assert said[0][0].startswith(f"{golden}: line 2: on t, question \"b\": no chunk of its expected documents holds "
                                 "its evidence quote any more")
    assert "1 question cannot be found at all by evidence on t" in said[1][0]
    quiet = []
    plan_run(target, golden, by="doc", context=PlanContext(warn=quiet.append))
    assert quiet == []  # only the evidence grain depends on the quotes


@pytest.mark.parametrize("target", [object(), ListTarget("t", ANSWERS, held=set())])
def test_a_target_without_chunk_texts_is_not_checked_rather_than_guessed(tmp_path, target):
    golden = write_golden(tmp_path, [{"id": "a", "question": "where is alpha", "expected": ["alpha"],
                                      "evidence": ["alpha lives here"]}])
    from evaluation.answers.stale import stale_warnings

    assert stale_warnings(target, str(golden), []) == []
    with pytest.raises(TypeError, match="needs a Corpus or a target with chunk_texts"):
        stale_questions(target, golden)


def test_none_of_two_quotes_held_says_any_of_them(tmp_path):
    corpus = tmp_path / "c.jsonl"
    corpus.write_text(json.dumps({"id": "a", "text": "Keys are rotated every ninety days."}) + "\n", encoding="utf-8")
    golden = write_golden(tmp_path, [{"id": "q", "question": "How often?", "expected": ["a"],
                                      "evidence": ["tokens expire after an hour", "secrets live in the vault"]}])
    [stale] = stale_evidence(read_corpus(corpus), golden)
    assert stale.scores_zero and stale.message().startswith(
        'question "q": no chunk of its expected documents holds any of its evidence quotes any more')


def test_a_document_the_target_does_not_hold_is_left_to_missing_documents(tmp_path):
    corpus = tmp_path / "c.jsonl"
    corpus.write_text(json.dumps({"id": "a", "text": "Keys are rotated every ninety days."}) + "\n", encoding="utf-8")
    golden = write_golden(tmp_path, [
        {"id": "gone", "question": "Where?", "expected": ["renamed"], "evidence": ["keys are rotated every"]},
        {"id": "one-held", "question": "How often?", "expected": ["renamed", "a"],
         "evidence": ["keys are rotated every"]},
        {"id": "one-held-stale", "question": "When?", "expected": ["renamed", "a"],
         "evidence": ["tokens expire after an hour"]},
    ])
    # "gone" expects only a document the corpus lacks: missing, not stale; the others are judged on "a"
    assert [s.question_id for s in stale_evidence(read_corpus(corpus), golden)] == ["one-held-stale"]


def test_several_targets_answer_by_target_name_naming_only_those_with_a_stale_question(tmp_path):
    golden = write_golden(tmp_path, [
        {"id": "a", "question": "where is alpha", "expected": ["alpha"], "evidence": ["alpha lives here"]},
        {"id": "b", "question": "where is beta", "expected": ["beta"], "evidence": ["beta moved out long ago"]},
    ])
    fresh = ChunkedTarget("fresh", ANSWERS, held={"alpha"})  # beta not held: missing, not stale
    old = ChunkedTarget("old", ANSWERS, held={"alpha", "beta"})
    unreadable = ListTarget("unreadable", ANSWERS, held={"alpha", "beta"})  # no chunk texts: left out
    found = stale_evidence([fresh, old, unreadable], golden)
    assert {name: [s.question_id for s in stale] for name, stale in found.items()} == {"old": ["b"]}
    by_mapping = stale_evidence({"VectrixDB": old, "Azure AI Search": fresh}, golden)
    assert list(by_mapping) == ["VectrixDB"]
