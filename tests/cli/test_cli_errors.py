"""Every command line entry point turns every error into a sentence and exit code 1 or 2: flags that
cannot be right are refused before any work, and a bug is one sentence naming its traceback's file."""
from __future__ import annotations

import argparse
from pathlib import Path

import pytest


from conftest import run_cli

SAMPLES = Path(__file__).resolve().parent.parent.parent / "samples"


def exit_code(capsys, *argv: str) -> tuple[int, str, str]:
    """``run_cli``, with argparse's own exit (a refused flag) read as its code."""
    try:
        return run_cli(capsys, *argv)
    except SystemExit as done:
        out, err = capsys.readouterr()
        return int(done.code or 0), out, err


@pytest.fixture
def nothing_runs(monkeypatch):
    """Fail the test if a command gets as far as building or opening an index."""
    from evaluation.cli import evaluate_cmd

    monkeypatch.setattr(evaluate_cmd, "build_targets", lambda *a: pytest.fail("the run started"))


@pytest.mark.parametrize("flag, value, says", [
    ("--balance", "nan", "not a number of points"),
    ("--balance", "inf", "not a number of points"),
    ("--balance", "-1", "not a number of points"),
    ("--time", "NaN", "not a number of points"),
    ("--rerank-candidates", "0", "at least 1"),
    ("--rerank-candidates", "-5", "at least 1"),
    ("--depth", "10", "at least 20"),
    ("--timed", "-1", "at least 0"),
    ("--time-margin", "100", "from 0 to under 100"),
    ("--time-margin", "nan", "from 0 to under 100"),
    ("--time-floor", "5", "at least 6"),
    ("--time-budget", "-1", "0 (no budget) or more"),
    ("--time-budget", "nan", "0 (no budget) or more"),
    ("--time-budget", "inf", "0 (no budget) or more"),
    ("--threads", "0", "at least 1"),
    ("--depth", "5000", "at most 1000"),
    ("--alpha", "nan", "not a probability"),
    ("--resamples", "99999999999", "at most 1000000"),
    ("--only", "", "names no setup"),
    ("--only", " , ", "names no setup"),
    ("--skip", "", "names no setup"),
])
def test_a_flag_value_that_cannot_be_right_is_refused_before_anything_runs(capsys, nothing_runs, flag, value, says):
    code, _, err = exit_code(capsys, "evaluate", "--index", "x", "--golden", "g.jsonl", flag, value)
    assert code == 2 and says in err and "Traceback" not in err


@pytest.mark.parametrize("rule, says", [
    ("found@10=80", "found@10 is a share from 0 to 1, so 80 can never be met; write 0.8 for 80%"),
    ("found@010=0.8", 'not METRIC=VALUE'),
    ("found@10=1.5", "share from 0 to 1"),
    ("mrr=nan", "not METRIC=VALUE"),
    ("recal@10=0.5", "not METRIC=VALUE"),
])
def test_a_fail_under_rule_no_run_can_meet_is_refused_before_anything_runs(capsys, nothing_runs, rule, says):
    code, _, err = exit_code(capsys, "evaluate", "--index", "x", "--golden", "g.jsonl", "--fail-under", rule)
    assert code == 2 and says in err


def test_an_unexpected_error_is_one_sentence_and_its_traceback_goes_to_a_file(capsys, monkeypatch, tmp_path):
    import tempfile

    from evaluation.cli import score_cmd

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    monkeypatch.setattr(score_cmd, "score_file", lambda args: {}["no such key"])
    code, out, err = exit_code(capsys, "score", "--golden", "g.jsonl", "--run", "r.trec")

    written = sorted(tmp_path.glob("retrieval-eval-error-*.txt"))
    assert code == 1 and out == "" and err.count("\n") == 1 and "Traceback" not in err
    assert err.startswith("error: something went wrong that this tool does not expect (KeyError: 'no such key')")
    assert len(written) == 1 and f"the full traceback is in {written[0]}" in err
    assert "Traceback (most recent call last)" in written[0].read_text(encoding="utf-8")


def test_an_operating_system_error_is_a_sentence_naming_the_path(capsys, monkeypatch):
    from evaluation.cli import score_cmd

    def denied(args: argparse.Namespace) -> int:
        raise PermissionError(13, "Permission denied", "/srv/runs/r.trec")

    monkeypatch.setattr(score_cmd, "score_file", denied)
    code, _, err = exit_code(capsys, "score", "--golden", "g.jsonl", "--run", "r.trec")
    assert code == 1 and err.startswith("error: /srv/runs/r.trec: Permission denied; check the path")


def test_text_that_cannot_be_printed_as_utf8_is_printed_escaped(capsys, tmp_path):
    code, out, _ = exit_code(capsys, "golden", "check", str(tmp_path / "lost\udcff.jsonl"))
    assert code == 1 and "lost\\udcff.jsonl: no such golden file" in out


# -- golden template: where it may write ---------------------------------------------------------

@pytest.fixture
def corpus(tmp_path) -> Path:
    path = tmp_path / "corpus.jsonl"
    path.write_text('{"id": "a.md", "text": "Alpha explains how to install the package with pip."}\n',
                    encoding="utf-8")
    return path


def test_a_template_never_replaces_its_corpus_even_with_force(capsys, corpus):
    before = corpus.read_bytes()
    code, _, err = exit_code(capsys, "golden", "template", "--corpus", str(corpus), "--out", str(corpus), "--force")
    assert code == 1 and "is the corpus the template is made from" in err
    assert corpus.read_bytes() == before


def test_a_template_into_a_folder_that_does_not_exist_yet_makes_it(capsys, corpus, tmp_path):
    out = tmp_path / "goldens" / "docs" / "golden.jsonl"
    code, _, _ = exit_code(capsys, "golden", "template", "--corpus", str(corpus), "--out", str(out))
    assert code == 0 and out.is_file()


@pytest.mark.parametrize("out, code_wanted, says", [
    ("https://acct.blob.core.windows.net/collections/docs/golden.jsonl", 2, "a template is written to a local file"),
    ("HTTPS://acct.blob.core.windows.net/collections/docs/golden.jsonl", 2, "a template is written to a local file"),
    ("AFILE/golden.jsonl", 1, "cannot write the template there"),
    ("AFOLDER", 1, "is a folder; give the path of the golden file"),
])
def test_a_template_destination_that_cannot_be_written_is_a_sentence(capsys, corpus, tmp_path, monkeypatch, out,
                                                                     code_wanted, says):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "AFILE").write_text("x", encoding="utf-8")
    (tmp_path / "AFOLDER").mkdir()
    before = sorted(p.name for p in tmp_path.iterdir())

    code, _, err = exit_code(capsys, "golden", "template", "--corpus", str(corpus), "--out", out)

    assert code == code_wanted and says in err and "Traceback" not in err
    assert sorted(p.name for p in tmp_path.iterdir()) == before


def test_azure_sign_in_warnings_stay_quiet_unless_verbose(capsys, caplog, monkeypatch):
    import logging

    from evaluation.cli import score_cmd
    from evaluation.errors import StoreError

    def signs_in_and_fails(args: argparse.Namespace) -> int:
        for credential in ("EnvironmentCredential", "ManagedIdentityCredential", "AzureCliCredential"):
            logging.getLogger("azure.identity._credentials.default").warning("%s.get_token failed", credential)
        raise StoreError("https://acct.blob.core.windows.net/runs: not signed in or not allowed")

    monkeypatch.setattr(score_cmd, "score_file", signs_in_and_fails)
    monkeypatch.setattr(logging.getLogger("azure"), "level", logging.NOTSET)  # restored after the test
    caplog.set_level(logging.DEBUG)

    code, _, err = exit_code(capsys, "score", "--golden", "g.jsonl", "--run", "r.trec")
    assert code == 1 and err.splitlines() == [
        "error: https://acct.blob.core.windows.net/runs: not signed in or not allowed"
    ]
    assert [r.getMessage() for r in caplog.records if r.name.startswith("azure")] == []

    code, _, err = exit_code(capsys, "-v", "score", "--golden", "g.jsonl", "--run", "r.trec")
    assert [r.getMessage() for r in caplog.records if r.name.startswith("azure")] == [
        "EnvironmentCredential.get_token failed", "ManagedIdentityCredential.get_token failed",
        "AzureCliCredential.get_token failed"]


@pytest.mark.parametrize("flag, value, says", [
    ("--timeout", "inf", "not a number of seconds over 0 and at most 600"),
    ("--timeout", "nan", "not a number of seconds"),
    ("--timeout", "0", "not a number of seconds"),
    ("--retries", "100", "at most 10"),
    ("--retries", "-1", "at least 0"),
])
def test_a_judge_that_could_be_waited_on_for_ever_is_refused(capsys, flag, value, says):
    code, _, err = exit_code(capsys, "answers", "score", "--golden", "g.jsonl", "--answers", "a.jsonl", flag, value)
    assert code == 2 and says in err


def test_report_out_never_replaces_an_input(capsys, tmp_path, make_report):
    from evaluation.store import LocalStore

    store = LocalStore(tmp_path / "store")
    store.save(make_report())
    golden = tmp_path / "golden.jsonl"
    golden.write_text('{"question": "Why?", "expected": ["a.md"]}\n', encoding="utf-8")
    kept = store.root / "retrieval" / "runs" / make_report()["id"] / "report.json"
    before = kept.read_bytes()

    for out in (golden, kept):
        code, _, err = exit_code(capsys, "report", "latest", "--store", str(store.root), "--out", str(out))
        assert code == 2 and ("is not an HTML page" in err or "inside the store" in err)
    assert golden.read_text(encoding="utf-8").startswith('{"question"') and kept.read_bytes() == before
    code, _, _ = exit_code(capsys, "report", "latest", "--store", str(store.root), "--out", str(tmp_path / "page.html"))
    assert code == 0
    code, _, _ = exit_code(capsys, "report", "latest", "--store", str(store.root), "--out", str(tmp_path / "page.html"))
    assert code == 0  # a page it wrote may be written again


@pytest.mark.parametrize("argv, nearest, command", [
    # other tools' names for our flags, and near spellings: the nearest flag of the command, and its own help
    (["evaluate", "--golden", "g.jsonl", "--corpus", "c", "--top-k", "5"], "--depth", "evaluate"),
    (["evaluate", "--golden", "g.jsonl", "--corpus", "c", "--save", "runs"], "--save-to", "evaluate"),
    (["evaluate", "--gold", "g.jsonl", "--corpus", "c"], "--golden", "evaluate"),
    (["evaluate", "--golden", "g.jsonl", "--corpus", "c", "--store", "runs"], "--save-to", "evaluate"),
    (["golden", "check", "g.jsonl", "--corpos", "docs"], "--corpus", "golden check"),
    (["runs", "list", "--sotre", "x"], "--store", "runs list"),
    (["matrix", "--corpus", "c", "--queries", "q", "--topk", "3"], "--top-k", "matrix"),
])
def test_a_flag_the_command_lacks_names_the_nearest_it_has_and_the_commands_own_help(capsys, argv, nearest, command):
    code, _, err = exit_code(capsys, *argv)
    assert code == 2
    assert f'Did you mean "{nearest}"?' in err
    assert err.rstrip().endswith(f"evaluation {command} --help")


def test_a_flag_no_command_has_points_at_the_top_level_help(capsys):
    code, _, err = exit_code(capsys, "--bogus")
    assert code == 2 and "Did you mean" not in err and err.rstrip().endswith("evaluation --help")
