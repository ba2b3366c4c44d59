"""``python3 -m evaluation golden check|template``: output shape and exit codes."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from evaluation.cli import main

FIXTURES = Path(__file__).parent.parent / "fixtures" / "golden"


def test_check_json_prints_the_result_dict_and_exits_0_when_ok(capsys):
    assert main(["golden", "check", str(FIXTURES / "drafts.jsonl"), "--json"]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert list(printed) == ["ok", "rows", "ready", "unfilled", "drafts", "errors", "warnings"]
    assert printed == {"ok": True, "rows": 3, "ready": 3, "unfilled": 0, "drafts": 1, "errors": [], "warnings": [
        {"line": None,
         "message": '1 draft question not checked yet (line 2); check each one and remove "draft": true'}]}


def test_check_exits_1_when_there_are_errors(capsys):
    assert main(["golden", "check", str(FIXTURES / "five_mistakes.jsonl"), "--json"]) == 1
    printed = json.loads(capsys.readouterr().out)
    assert printed["ok"] is False
    assert [e["line"] for e in printed["errors"]] == [2, 3, 4, 5, 6]


def test_check_prints_the_summary_without_json(capsys):
    assert main(["golden", "check", str(FIXTURES / "unknown_field.jsonl")]) == 1
    out = capsys.readouterr().out
    assert '  line 2: "expeted" is not a field. Did you mean "expected"?\n' in out
    assert out.rstrip().endswith("Not ready to run.")


def test_check_of_a_missing_file_is_an_error_entry_and_exit_1(tmp_path, capsys):
    missing = tmp_path / "golden.jsonl"
    assert main(["golden", "check", str(missing), "--json"]) == 1
    captured = capsys.readouterr()
    errors = json.loads(captured.out)["errors"]
    assert [e["line"] for e in errors] == [None]
    assert errors[0]["message"].endswith(f"--out {missing}")
    assert "Traceback" not in captured.err


def test_check_with_a_corpus_warns_about_documents_it_does_not_hold(tmp_path, capsys):
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text('{"id": "backup.md", "text": "Backups run nightly."}\n', encoding="utf-8")
    golden = tmp_path / "golden.jsonl"
    golden.write_text('{"question": "Where are backups?", "expected": ["backup.md", "dr.md"]}\n', encoding="utf-8")
    assert main(["golden", "check", str(golden), "--corpus", str(corpus), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["warnings"] == [
        {"line": 1, "message": '"dr.md" is not in the corpus; check the id, or add the document'}]


def test_a_missing_corpus_is_one_sentence_on_stderr_and_exit_1(tmp_path, capsys):
    assert main(["golden", "check", str(FIXTURES / "valid.jsonl"), "--corpus", str(tmp_path / "none.jsonl")]) == 1
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1 and "no such corpus" in err


def test_template_writes_the_rows_and_says_what_to_do_next(tmp_path, capsys):
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("".join(json.dumps({"id": f"d{i}.md", "text": f"Doc {i} " + "word " * 30}) + "\n"
                              for i in range(6)), encoding="utf-8")
    out = tmp_path / "golden.jsonl"
    argv = ["golden", "template", "--corpus", str(corpus), "--out", str(out), "-n", "4", "--seed", "2"]
    assert main(argv) == 0
    assert capsys.readouterr().out.startswith(f"wrote 4 template rows to {out};")
    assert len(out.read_text(encoding="utf-8").splitlines()) == 4
    assert main(argv) == 1  # the file exists now: not replaced without --force
    assert "already exists" in capsys.readouterr().err
    assert main([*argv, "--force", "--by", "page"]) == 0


def test_template_from_an_index_samples_the_corpus_it_was_built_from(sample_index, tmp_path, capsys):
    from conftest import SAMPLES

    by_index, by_corpus = tmp_path / "index.jsonl", tmp_path / "corpus.jsonl"
    assert main(["golden", "template", "--index", str(sample_index), "--out", str(by_index), "-n", "5"]) == 0
    assert (
        main(["golden", "template", "--corpus", str(SAMPLES / "corpus.jsonl"), "--out", str(by_corpus), "-n", "5"]) == 0
    )
    assert by_index.read_bytes() == by_corpus.read_bytes() and len(by_index.read_bytes().splitlines()) == 5


@pytest.mark.parametrize("argv", [["golden", "template", "--corpus", "c.jsonl", "--out", "g.jsonl", "-n", "0"],
                                  ["golden", "template", "--corpus", "c.jsonl", "--out", "g.jsonl", "--by", "chapter"],
                                  ["golden", "check"]])
def test_arguments_that_do_not_fit_exit_2(argv, capsys):
    with pytest.raises(SystemExit) as caught:
        main(argv)
    assert caught.value.code == 2


def test_golden_alone_prints_its_help_and_exits_2(capsys):
    assert main(["golden"]) == 2
    assert "check" in capsys.readouterr().err
