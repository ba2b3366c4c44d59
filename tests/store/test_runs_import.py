"""``runs import FILE``: the unsaved-run-<id>.json a failed save kept goes into the store as the save would
have put it (report, golden file, page), checked as a kept report is; the failed save's message names the
command (issue 37)."""
from __future__ import annotations

import json
import logging
import shlex
import shutil

import pytest
from test_store_safety import ROWS, FailsOnTheReport, target

from conftest import run_cli
from evaluation import evaluate
from evaluation.errors import RunNotSavedError
from evaluation.store import LocalStore
from fakes import write_golden


@pytest.fixture
def unsaved(tmp_path):
    """A run whose save failed on its report: (its RunNotSavedError, the golden file, the store's folder)."""
    golden = write_golden(tmp_path, ROWS)
    with pytest.raises(RunNotSavedError) as caught:
        evaluate(target(), golden, save_to=FailsOnTheReport(tmp_path / "store"), fallback_dirs=[tmp_path])
    return caught.value, golden, tmp_path / "store"


def test_the_failed_save_names_runs_import_and_it_keeps_the_run_as_the_save_would_have(unsaved, capsys):
    failed, golden, root = unsaved
    command = str(failed).split("keep it there with `", 1)[1].split("`", 1)[0]
    assert command == f"runs import {failed.kept} --store {root}"

    code, out, err = run_cli(capsys, *shlex.split(command), "--golden", str(golden))

    run_id = failed.report["id"]
    kept = LocalStore(root)
    # stderr holds what the command's log says, as in a terminal: only the store naming the page the failed save
    # left, which this import completes
    assert code == 0 and out.startswith(f"Kept run {run_id} in {root}")
    assert all("is a page with no report.json beside it" in line for line in err.splitlines())
    assert kept.get(run_id) == json.loads(failed.kept.read_text(encoding="utf-8"))
    assert b"<!doctype html>" in kept.page(run_id) and kept.has_golden(failed.report["golden"]["sha256"])
    assert failed.kept.exists()  # the file is the user's: left where it is


def test_importing_the_same_file_twice_writes_nothing_the_second_time(unsaved, capsys):
    failed, _, root = unsaved
    shutil.rmtree(root / "golden_dataset")  # as if the golden file's write had failed too
    argv = ("runs", "import", str(failed.kept), "--store", str(root))
    first = run_cli(capsys, *argv)
    page = LocalStore(root).page(failed.report["id"])

    again = run_cli(capsys, *argv)

    assert first[0] == again[0] == 0 and LocalStore(root).page(failed.report["id"]) == page
    assert "note: the golden file the run read" in first[2] and "give it with --golden" in first[2]


def test_the_page_a_failed_save_left_is_named_until_the_run_is_imported(unsaved, capsys, caplog):
    failed, golden, root = unsaved
    with caplog.at_level(logging.WARNING):
        LocalStore(root).ids()
    assert "is a page with no report.json beside it" in caplog.text and "`runs import`" in caplog.text

    run_cli(capsys, "runs", "import", str(failed.kept), "--store", str(root))
    caplog.clear()
    with caplog.at_level(logging.WARNING):
        assert LocalStore(root).ids() == [failed.report["id"]]
    assert caplog.text == ""


@pytest.mark.parametrize("edit, says", [
    (lambda text: text.replace('"mrr":', '"mrr":NaN,"was":', 1), "it holds NaN, which is not a JSON number"),
    (lambda text: json.dumps({**json.loads(text), "setups": {}}), "setups is an object, not a list"),
    (lambda text: text[: len(text) // 2], "not a readable report (not valid JSON"),
    (lambda text: "[" * 100_000 + "]" * 100_000, "nested too deeply to read"),
    # edited since: numbers any run could have measured, which its own ranks contradict (was kept as measured)
    (lambda text: edited(text, lambda summary: summary.update(mrr=round(1 - summary["mrr"] / 2, 4))),
     "but its ranks give"),
    (lambda text: edited(text, lambda summary: summary["counts"].update({"20": summary["counts"]["20"] - 1})),
     "but its ranks put"),
], ids=["NaN", "wrong kind", "cut short", "deep", "MRR edited", "a count edited"])
def test_an_unsaved_file_that_is_not_a_sound_report_is_a_sentence_and_nothing_is_kept(unsaved, capsys, edit, says):
    failed, _, root = unsaved
    failed.kept.write_text(edit(failed.kept.read_text(encoding="utf-8")), encoding="utf-8")

    code, out, err = run_cli(capsys, "runs", "import", str(failed.kept), "--store", str(root))

    assert code == 1 and err.startswith(f"error: {failed.kept}: ") and says in err and "this is a bug" not in err
    assert LocalStore(root).ids() == []


def edited(text: str, change) -> str:
    """The report ``text`` with ``change`` made to its first summary that found anything."""
    report = json.loads(text)
    change(next(s["summary"] for s in report["setups"] if s.get("summary") and s["summary"]["counts"]["20"]))
    return json.dumps(report)


def test_a_run_the_store_keeps_with_another_report_is_refused(unsaved, capsys):
    failed, _, root = unsaved
    LocalStore(root).save({**failed.report, "created_at": "2026-11-30T00:00:00Z"})

    code, out, err = run_cli(capsys, "runs", "import", str(failed.kept), "--store", str(root))

    assert code == 1 and f"run {failed.report['id']} is kept in {root} already, with another report" in err


def test_a_golden_file_that_is_not_the_runs_is_refused_before_anything_is_written(unsaved, capsys, tmp_path):
    failed, _, root = unsaved
    (tmp_path / "other").mkdir()
    other = write_golden(tmp_path / "other", ROWS[:1])

    code, out, err = run_cli(capsys, "runs", "import", str(failed.kept), "--store", str(root), "--golden", str(other))

    assert code == 1 and "the golden file given hashes to" in err and LocalStore(root).ids() == []


@pytest.mark.parametrize("given, says",
                         [("folder", "a folder; give the file itself"), ("missing.json", "no such file")])
def test_a_file_argument_that_is_no_file_is_a_sentence(tmp_path, capsys, given, says):
    (tmp_path / "folder").mkdir()
    code, out, err = run_cli(capsys, "runs", "import", str(tmp_path / given), "--store", str(tmp_path / "store"))
    assert code == 1 and says in err
