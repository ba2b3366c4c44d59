"""A leading ``~`` in any path flag is the home folder, as a shell reads it unquoted: a quoted ``'~/i'``, a
``--out=~/i`` or a path a script passes on reaches the command as it is, and must never become a folder
named ``~`` in the current one."""
from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from conftest import run_cli
from evaluation.cli import build_parser

CORPUS = Path(__file__).resolve().parent.parent / "fixtures" / "corpus" / "readmes.jsonl"
GOLDEN_ROW = '{"id": "q1", "question": "How do I install tokenizers?", "expected": ["tokenizers"]}\n'

# Every argument of the command line that names a file, a folder or a store ("run" is score's TREC run file;
# golden next's --run, an id, has the metavar ID)
PATH_ARGUMENTS = {"file", "corpus", "index", "qrels", "collection", "path", "out", "golden", "index_cache",
                  "index_dir", "store", "save_to", "baseline_store", "env_file", "questions", "examples", "cache",
                  "unanswerable", "answers", "run", "azure_rows", "queries", "chunker_config", "report_json",
                  "report_csv", "report_html", "space", "work_dir", "judge_reply_cache", "judge_prices"}


def path_arguments(parser: argparse.ArgumentParser, command: str = "") -> list[tuple[str, argparse.Action]]:
    found = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                found += path_arguments(sub, f"{command} {name}".strip())
        elif action.dest in PATH_ARGUMENTS and action.metavar != "ID" and action.nargs != 0:  # not a switch
            found.append((command, action))
    return found


def test_every_path_argument_of_every_command_reads_a_leading_tilde_as_the_home_folder(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    found = path_arguments(build_parser())
    assert len(found) > 80  # every command's: the walk reached the subcommands
    read_as = {(command, action.dest): str(action.type("~/x")) if action.type else "~/x" for command, action in found}
    assert {key: value for key, value in read_as.items() if value != str(tmp_path / "home" / "x")} == {}


def test_an_address_and_a_folder_named_tilde_are_taken_as_they_are(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    store = next(a for c, a in path_arguments(build_parser()) if c == "runs list" and a.dest == "store")
    assert store.type("s3://bucket/~/runs") == "s3://bucket/~/runs"
    assert store.type("./~/runs") == "./~/runs"
    with pytest.raises(argparse.ArgumentTypeError, match='there is no user "no-such-user-46" here'):
        store.type("~no-such-user-46/runs")


@pytest.fixture
def here(tmp_path, monkeypatch):
    """The current folder, with the corpus and a golden file; ``~`` is ``home`` beside it."""
    (tmp_path / "home").mkdir()
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.chdir(work)
    (work / "corpus.jsonl").write_bytes(CORPUS.read_bytes())
    (work / "golden.jsonl").write_text(GOLDEN_ROW, encoding="utf-8")
    return work


@pytest.mark.parametrize("argv, written", [
    (["index", "corpus.jsonl", "--out", "~/i", "--models", "hash", "--quiet"], "i"),
    (["evaluate", "--corpus", "corpus.jsonl", "--index-dir", "~/ix", "--models", "hash", "--mode", "keyword",
      "--golden", "golden.jsonl", "--no-save", "--quiet"], "ix"),
    (["golden", "template", "--corpus", "corpus.jsonl", "--out", "~/t.jsonl", "-n", "2"], "t.jsonl"),
    (["golden", "template", "--corpus", "corpus.jsonl", "--out=~/t.jsonl", "-n", "2"], "t.jsonl"),
])
def test_a_command_writing_to_a_path_from_home_writes_in_the_home_folder(here, capsys, argv, written):
    code, _, err = run_cli(capsys, *argv)
    assert code == 0, err
    assert (here.parent / "home" / written).exists() and not (here / "~").exists()


def test_runs_export_and_golden_next_write_in_the_home_folder(here, capsys):
    code, _, err = run_cli(capsys, "evaluate", "--corpus", "corpus.jsonl", "--models", "hash", "--mode", "keyword",
                           "--golden", "golden.jsonl", "--save-to", "store", "--quiet")
    assert code == 0, err
    code, out, err = run_cli(capsys, "runs", "export", "latest", "--store", "store", "--out", "~/exp")
    assert code == 0, err
    assert any((here.parent / "home" / "exp").iterdir()) and str(here.parent / "home" / "exp") in out
    code, out, err = run_cli(capsys, "golden", "next", "golden.jsonl", "--out", "~/n.jsonl", "--store", "store")
    assert code == 0, err
    assert not (here / "~").exists()
