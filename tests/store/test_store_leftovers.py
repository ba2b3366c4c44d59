"""What a save killed half way leaves in a folder store (a temporary file, a run folder with a page and no
report) is removed by the next read when it is surely stale and ours, and named in a warning otherwise; a
run whose report.json is a folder is named, never left out of the list without a word (issue 37)."""
from __future__ import annotations

import json
import logging
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from conftest import GOLDEN_RAW, run_cli
from evaluation.store import LocalStore
from evaluation.store.builds import ChunkingRuns
from evaluation.store.leftovers import STALE_AFTER_S

RUN, KILLED = "20261130T090000000Z-000001", "20261130T100000000Z-00dead"
ROOT = Path(__file__).resolve().parent.parent.parent


def dead_pid() -> int:
    """The id of a process of this machine that has ended."""
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def age(path: Path, seconds: float) -> Path:
    then = time.time() - seconds
    os.utime(path, (then, then))
    return path


@pytest.fixture
def store(tmp_path, make_report) -> LocalStore:
    kept = LocalStore(tmp_path / "store")
    kept.save(make_report(RUN), GOLDEN_RAW, html="<!doctype html><p>run</p>")
    return kept


def folder(store: LocalStore, run_id: str = KILLED) -> Path:
    path = store.root / "retrieval" / "runs" / run_id
    path.mkdir(parents=True, exist_ok=True)
    return path


def test_a_real_kill_inside_a_save_leaves_a_temporary_file_the_next_list_removes_once_stale(store, make_report,
                                                                                          capsys, caplog):
    """A child process saves a run and is killed (SIGKILL) while its report is being written: after the
    page, before the rename. What it left is found by the next `runs list`."""
    report = json.dumps(make_report(KILLED))
    child = subprocess.Popen([sys.executable, "-c", textwrap.dedent(f"""
        import json, os, signal, sys
        sys.path.insert(0, {str(ROOT)!r})
        from evaluation.store import LocalStore
        def dies_on_the_report(real):
            def placed(source, target):
                if str(target).endswith("report.json"):
                    os.kill(os.getpid(), signal.SIGKILL)
                real(source, target)
            return placed
        os.replace, os.link = dies_on_the_report(os.replace), dies_on_the_report(os.link)  # however it is put in place
        LocalStore({str(store.root)!r}).save(json.loads({report!r}), html="<!doctype html><p>killed</p>")
    """)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    assert child.wait() == -signal.SIGKILL
    left = sorted(p.name for p in folder(store).iterdir())
    assert left[1] == "report.html" and left[0].startswith(f".report.json.{child.pid}-") and len(left) == 2
    temp = folder(store) / left[0]

    with caplog.at_level(logging.INFO):
        code, out, err = run_cli(capsys, "runs", "list", "--store", str(store.root))
    assert code == 0 and RUN in out and KILLED not in out
    assert temp.exists()  # a few seconds old: kept, and named
    assert f"{temp} is a temporary file of report.json, left by a save that stopped or is still running" in caplog.text

    caplog.clear()
    age(temp, STALE_AFTER_S + 1)
    with caplog.at_level(logging.INFO):
        code, out, err = run_cli(capsys, "runs", "list", "--store", str(store.root))
    assert not temp.exists() and f"removed {temp}" in caplog.text
    assert (folder(store) / "report.html").exists()  # the page is named, never removed
    assert f"{folder(store) / 'report.html'} is a page with no report.json beside it: a save of run {KILLED} " \
           "stopped between the two; save the run again from its unsaved-run file" in caplog.text


@pytest.mark.parametrize("whose, seconds_old", [("this process", STALE_AFTER_S + 60), ("a process that ended", 5)])
def test_a_temporary_file_of_a_living_process_or_a_young_one_is_kept_and_named(store, caplog, whose, seconds_old):
    pid = os.getpid() if whose == "this process" else dead_pid()
    temp = folder(store) / f".report.json.{pid}-abcd_123.tmp"
    temp.write_bytes(b"{")
    age(temp, seconds_old)

    with caplog.at_level(logging.INFO):
        ids = store.ids()

    assert ids == [RUN] and temp.exists()
    assert f"{temp} is a temporary file of report.json" in caplog.text and f"removed {temp}" not in caplog.text


def test_a_stale_temporary_file_whose_process_ended_is_removed_with_the_folder_it_made(store, caplog):
    temp = folder(store) / f".report.html.{dead_pid()}-k3j_x9q0.tmp"
    temp.write_bytes(b"<!doctype")
    age(temp, STALE_AFTER_S + 1)

    with caplog.at_level(logging.INFO):
        ids = store.ids()

    assert ids == [RUN] and not temp.exists() and not temp.parent.exists()
    assert f"removed {temp}" in caplog.text


def test_a_temporary_file_named_by_an_earlier_version_is_named_never_removed(store, caplog):
    temp = folder(store) / ".report.json.abcd1234.tmp"
    temp.write_bytes(b"{")
    age(temp, STALE_AFTER_S * 10)

    with caplog.at_level(logging.INFO):
        store.ids()

    assert temp.exists() and f"{temp} is a temporary file left by a save of an earlier version" in caplog.text


def test_each_leftover_is_named_once_per_store_however_often_it_is_listed(store, caplog):
    (folder(store) / "report.html").write_text("<!doctype html>", encoding="utf-8")
    with caplog.at_level(logging.WARNING):
        store.ids(), store.ids(), store.latest(), store.history()
    assert caplog.text.count("is a page with no report.json beside it") == 1


def test_runs_list_names_a_run_whose_report_json_is_a_folder(store, capsys):
    (folder(store) / "report.json").mkdir()

    code, out, err = run_cli(capsys, "runs", "list", "--store", str(store.root))

    assert code == 0 and RUN in out
    assert f"warning: skipped a run that cannot be read: {folder(store) / 'report.json'}: cannot be read " \
           "(a folder, not a file)" in err


def test_a_pipe_where_a_report_goes_is_named_and_never_waited_on(store, capsys):
    os.mkfifo(folder(store) / "report.json")

    code, out, err = run_cli(capsys, "runs", "list", "--store", str(store.root))

    assert code == 0 and "(not a regular file, not a file)" in err


def test_a_chunking_runs_leftovers_are_named_and_a_markers_temporary_file_is_never_a_run(tmp_path, caplog):
    from test_chunking_page import report as chunking_report

    store = LocalStore(tmp_path / "store")
    ChunkingRuns(store).save({**chunking_report(), "id": RUN})
    page_only = store.root / "chunking" / "runs" / KILLED
    page_only.mkdir()
    (page_only / "report.html").write_text("<!doctype html>", encoding="utf-8")
    marker_temp = store.root / "chunking" / "kinds" / "chunking" / f".{KILLED}.{os.getpid()}-abcdefgh.tmp"
    marker_temp.write_bytes(b"")

    with caplog.at_level(logging.WARNING):
        ids, marked = ChunkingRuns(store).ids(), ChunkingRuns(store).ids_of("chunking")

    assert ids == [RUN] and marked == [RUN]
    assert f"{page_only / 'report.html'} is a page with no report.json beside it" in caplog.text
    assert f"{marker_temp} is a temporary file of {KILLED}" in caplog.text
