"""A new user's first mistakes are said in a few lines (issue 23): a mistake of the whole file once, with
its count; at most 20 problems then "and N more like these"; an id not in the corpus with the nearest
ids; "does not hold" for ids never held; a missing path with the nearest file; an argument error in two
lines. Each test counts the lines it promises as well as reading the words."""
from __future__ import annotations

import json
import shlex
import subprocess
from pathlib import Path

import pytest

from evaluation.errors import PROBLEMS_SHOWN, at_most, nearest_file
from evaluation.golden import check_golden
from evaluation.engine.corpus import check_corpus, read_corpus
from evaluation.errors import CorpusError
from evaluation.report.notes import missing_note
from evaluation.store.report_parts import Missing

from conftest import run_cli
from fakes import ListTarget

SAMPLES = Path(__file__).resolve().parent.parent / "samples"
ROWS = [json.loads(line) for line in (SAMPLES / "golden.jsonl").read_text(encoding="utf-8").splitlines()
        if line.strip() and not line.startswith("#")]  # 36 questions


def cli(capsys, *argv: str) -> tuple[int, str, list[str]]:
    try:
        code, out, err = run_cli(capsys, *argv)
    except SystemExit as done:
        out, err = capsys.readouterr()
        code = int(done.code or 0)
    return code, out, err.splitlines()


def test_a_golden_file_written_as_one_json_array_is_one_sentence_with_its_count(tmp_path, capsys):
    path = tmp_path / "golden.json"
    path.write_text(json.dumps(ROWS, indent=2), encoding="utf-8")  # 428 lines, each an error before

    check = check_golden(path)
    code, _, err = cli(capsys, "evaluate", "--corpus", str(SAMPLES / "corpus.jsonl"), "--golden", str(path))

    assert len(check.errors) == 1
    assert check.errors[0].message.startswith("the file is one JSON array of 36 items, not one JSON object per line")
    assert code == 1 and len(err) == 1  # the file's name and the one sentence
    assert "one JSON array of 36 items" in err[0] and "json.dumps" in err[0]


def test_a_field_under_another_name_on_every_row_is_one_rename(tmp_path, capsys):
    corpus = tmp_path / "corpus.jsonl"
    rows = [json.loads(line) for line in (SAMPLES / "corpus.jsonl").read_text(encoding="utf-8").splitlines()[:184]]
    corpus.write_text("".join(json.dumps({"id": r["id"], "body": r["text"]}) + "\n" for r in rows), encoding="utf-8")
    golden = tmp_path / "golden.jsonl"
    golden.write_text("".join(json.dumps({"query": r["question"], "expected": r["expected"]}) + "\n" for r in ROWS),
                      encoding="utf-8")

    corpus_problems = [str(p) for p in check_corpus(corpus)]
    code, _, err = cli(capsys, "index", str(corpus), "--out", str(tmp_path / "index"))
    golden_errors = [e.message for e in check_golden(golden).errors]

    # 184 rows x 2 messages (not a field, needs "text") were 368 lines
    assert corpus_problems == ['every one of the 184 rows has "body" and no "text"; rename "body" to "text" on '
                               'every line']
    assert code == 1 and len(err) == 2 and err[0].endswith("1 problem in the corpus; fix it and run again:")
    assert golden_errors == ['every one of the 36 rows has "query" and no "question"; rename "query" to "question" '
                             "on every line"]


def test_a_golden_file_in_utf16_is_one_sentence_with_its_count(tmp_path, capsys):
    path = tmp_path / "golden.jsonl"
    path.write_bytes((SAMPLES / "golden.jsonl").read_text(encoding="utf-8").encode("utf-16"))

    lines = check_golden(path).summary().splitlines()
    code, _, err = cli(capsys, "golden", "check", str(path))

    assert len(lines) == 4  # counts, "1 error", the sentence, "Not ready to run."
    assert lines[2].strip().startswith("the file is UTF-16 text, not UTF-8, so none of its 37 lines can be read")
    assert code == 1


def test_lines_in_another_8_bit_encoding_are_counted_in_one_sentence(tmp_path):
    path = tmp_path / "golden.jsonl"
    text = "".join(json.dumps({"question": f"Où est le café {n}?", "expected": ["a"]}, ensure_ascii=False) + "\n"
                   for n in range(3))
    path.write_bytes(text.encode("cp1252") + b'{"question": "plain", "expected": ["a"]}\n')

    errors = [str(e) for e in check_golden(path).errors]

    assert errors == ["the file is not all UTF-8: 3 of its 4 lines are in another encoding (they read as "
                      "Windows-1252 or Latin-1 text), lines 1, 2, 3; save the file as UTF-8: iconv -f CP1252 -t UTF-8 "
                      "FILE > NEW"]
    # the command it gives, run as given, makes the file every row of which reads as written
    fixed = tmp_path / "fixed.jsonl"
    command = errors[0].rsplit(": ", 1)[1]
    command = command.replace("FILE", shlex.quote(str(path))).replace("NEW", shlex.quote(str(fixed)))
    subprocess.run(command, shell=True, check=True)
    assert check_golden(fixed).ok and check_golden(fixed).ready == 4
    assert "Où est le café 0?" in fixed.read_text(encoding="utf-8")


def test_at_most_twenty_problems_are_printed_then_how_many_more(tmp_path, capsys):
    path = tmp_path / "golden.jsonl"
    # 25 rows with an error each, all different (a count of their own), and one good row
    bad = [json.dumps({"question": f"q {n}", "expected": ["a"], "extra": n}) for n in range(12)]
    bad += [json.dumps({"question": f"r {n}", "expected": []}) for n in range(13)]
    path.write_text("\n".join([*bad, json.dumps({"question": "ok", "expected": ["a"]})]) + "\n", encoding="utf-8")

    code, _, err = cli(capsys, "evaluate", "--corpus", str(SAMPLES / "corpus.jsonl"), "--golden", str(path))
    summary = check_golden(path).summary().splitlines()

    assert code == 1
    assert len(err) == 1 + PROBLEMS_SHOWN + 1  # the head, 20 problems, "and 5 more like these"
    assert err[-1].strip() == "and 5 more like these (--json lists every one)"
    assert "  and 5 more like these (--json lists every one)" in summary and len(check_golden(path).errors) == 12 + 13


def test_at_most_keeps_a_short_list_whole_and_counts_the_rest():
    assert at_most([str(n) for n in range(20)]) == [str(n) for n in range(20)]
    assert at_most([str(n) for n in range(23)], 20) == [*[str(n) for n in range(20)], "and 3 more like these"]


def test_an_expected_id_not_in_the_corpus_gets_the_nearest_corpus_ids(tmp_path):
    path = tmp_path / "golden.jsonl"
    path.write_text(json.dumps({"question": "How do I sign in?",
                                "expected": ["azure-identity/managed-identty-support"]})
                    + "\n", encoding="utf-8")

    warnings = [str(w) for w in check_golden(path, read_corpus(SAMPLES / "corpus.jsonl")).warnings]

    assert len(warnings) == 1
    assert warnings[0].startswith('line 1: "azure-identity/managed-identty-support" (nearest: '
                                  '"azure-identity/managed-identity-support"')
    assert warnings[0].endswith(") is not in the corpus; check the id, or add the document")


class _Index:
    doc_ids = frozenset({"alpha", "beta", "gamma-guide"})


class _IndexedTarget(ListTarget):
    """A target that can list its ids, as the embedded engine's index does."""

    index = _Index()


def test_an_id_never_held_does_not_hold_and_one_an_earlier_run_found_no_longer_holds(tmp_path):
    from evaluation import evaluate

    golden = tmp_path / "golden.jsonl"
    golden.write_text(json.dumps({"id": "a", "question": "where is alpha", "expected": ["alpha"]}) + "\n" +
                      json.dumps({"id": "g", "question": "where is gamma", "expected": ["gamma-gide"]}) + "\n",
                      encoding="utf-8")
    answers = {m: {} for m in ("keyword", "dense", "hybrid")}
    first = []
    evaluate(_IndexedTarget("t", answers, held={"alpha", "beta", "gamma-guide"}), golden, warn=first.append,
             save_to=tmp_path / "runs", unfound_share=1.0)  # the notes on held ids alone, not the share found nowhere
    # the same store, and now alpha is gone from the target: the first run found it there
    golden.write_text(golden.read_text(encoding="utf-8").replace("gamma-gide", "gamma-guide"), encoding="utf-8")
    second = []
    report = evaluate(_IndexedTarget("t", answers, held={"beta", "gamma-guide"}), golden, warn=second.append,
                      save_to=tmp_path / "runs", run_id="20990101T000000000Z-000001", unfound_share=1.0)

    assert first == ['t does not hold 1 expected document: gamma-gide (nearest: gamma-guide); questions that '
                     "cannot be found there: g"]
    assert second == ["t no longer holds 1 expected document an earlier run found there: alpha; questions that "
                      "cannot be found there: a"]
    assert report["missing"]["t"]["was_held"] == ["alpha"]


def test_a_note_without_was_held_says_does_not_hold():
    assert missing_note("t", Missing.from_json({"documents": ["x"], "questions": ["q"]})) == (
        "t does not hold 1 expected document: x; questions that cannot be found there: q")


def test_a_missing_path_names_the_nearest_existing_file(tmp_path, capsys, monkeypatch):
    (tmp_path / "samples").mkdir()
    (tmp_path / "samples" / "golden.jsonl").write_text('{"question": "q", "expected": ["a"]}\n', encoding="utf-8")
    (tmp_path / "samples" / "corpus.jsonl").write_text('{"id": "a", "text": "words"}\n', encoding="utf-8")
    monkeypatch.chdir(tmp_path)

    code, out, err = cli(capsys, "golden", "check", "samples/golden.jsnl")
    err = out.splitlines() + err

    assert code == 1 and len(err) <= 4
    assert 'samples/golden.jsnl: no such golden file. Did you mean "samples/golden.jsonl"?' in "\n".join(err)
    assert "template" not in "\n".join(err)  # no advice to create a file with the typo's name
    assert nearest_file("sample/corpus.jsonl") == ' Did you mean "samples/corpus.jsonl"?'
    with pytest.raises(CorpusError, match=r'no such corpus\. Did you mean "samples/corpus\.jsonl"\?'):
        read_corpus("samples/corpus.json")
    assert nearest_file("elsewhere/nothing-like-it.txt") == ""


@pytest.mark.parametrize("argv, says", [
    (["evaluate", "--corpus", "c.jsonl", "--golden"], "error: argument --golden/--queries: expected one argument"),
    (["evaluat"], "error: argument COMMAND: invalid choice: 'evaluat'"),
    (["evaluate", "--golden", "g", "--balance", "nan"], "error: argument --balance: nan is not a number of points"),
])
def test_an_argument_error_is_two_lines_the_sentence_then_help(capsys, argv, says):
    code, out, err = cli(capsys, *argv)

    assert code == 2 and out == ""
    assert len(err) == 2 and err[0].startswith(says)
    assert err[1].startswith("see: python3 -m evaluation") and err[1].endswith("--help")
