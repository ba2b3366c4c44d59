"""Saves of one run id at once, from real processes, into a folder store: one keeps the run, the others are
told it is kept already, and what is kept (report, page) is one saver's whole (issue 46: three callers were
told "saved" and one report was kept)."""
from __future__ import annotations

import contextlib
import multiprocessing
import queue
import time

import pytest

from conftest import GOLDEN_RAW, build_report
from evaluation.errors import StoreError
from evaluation.store import RUNS_DIR, LocalStore, report_bytes
from evaluation.store.builds import ChunkingRuns

RUN = "20261130T012433123Z-000001"
SLOW_DISK_S = 0.3  # each file a save writes waits this long first: every saver is inside its save at once
FORK = multiprocessing.get_context("fork")  # the children take this module's helpers as they are


def report_of(saver: int) -> dict:
    """The same run id, a report each saver can be told apart by (its times)."""
    report = build_report(RUN)
    report["setups"][0]["times_ms"] = [float(saver)] * 3
    return report


def slow_disk() -> None:
    """Every file a folder store writes waits ``SLOW_DISK_S`` first, as on a busy network disk."""
    import evaluation.store.runs as runs

    real = runs.write_whole

    def slow(*args, **keywords):
        time.sleep(SLOW_DISK_S)
        return real(*args, **keywords)

    runs.write_whole = slow


def save_in_child(root: str, saver: int, start, told, *, locks: bool = True) -> None:
    slow_disk()
    store = LocalStore(root)
    if not locks:  # a file system whose locks no other process sees (some network shares)
        store.one_saver = lambda folder: contextlib.nullcontext()
    start.wait()
    try:
        store.save(report_of(saver), GOLDEN_RAW, html=f"<!doctype html><p>saver {saver}</p>")
        told.put((saver, "saved"))
    except StoreError as err:
        told.put((saver, f"StoreError: {err}"))
    except BaseException as err:  # noqa: BLE001 - what the test must never see: said, not lost in the child
        told.put((saver, f"raw {type(err).__name__}: {err}"))


def three_savers_at_once(root, **keywords) -> dict[int, str]:
    start, told = FORK.Barrier(3), FORK.Queue()
    children = [FORK.Process(target=save_in_child, args=(str(root), n, start, told), kwargs=keywords) for n in range(3)]
    for child in children:
        child.start()
    answers = dict(told.get(timeout=60) for _ in children)
    for child in children:
        child.join(timeout=60)
    return answers


def test_three_processes_saving_one_run_id_at_once_keep_one_and_the_other_two_are_told(tmp_path):
    answers = three_savers_at_once(tmp_path / "store")

    saved = [n for n, said in answers.items() if said == "saved"]
    assert len(saved) == 1, answers
    for n, said in answers.items():
        if n not in saved:
            assert said.startswith(f"StoreError: run {RUN} is already in the store"), said
    store = LocalStore(tmp_path / "store")
    assert store.ids() == [RUN]
    assert store.get(RUN)["setups"][0]["times_ms"] == [float(saved[0])] * 3  # the run of the one told "saved"
    assert store.page(RUN) == f"<!doctype html><p>saver {saved[0]}</p>".encode()  # and its page, not another's


def test_where_locks_are_not_shared_the_report_is_still_kept_once_and_no_saver_sees_a_raw_error(tmp_path):
    """The report is linked into place, never renamed over one that came meanwhile: without the lock, one
    saver still keeps the run and the others hear a sentence (never a FileExistsError)."""
    answers = three_savers_at_once(tmp_path / "store", locks=False)

    assert sorted(said == "saved" for said in answers.values()) == [False, False, True], answers
    saved = next(n for n, said in answers.items() if said == "saved")
    assert all(said.startswith("StoreError: run ") for n, said in answers.items() if n != saved), answers
    assert LocalStore(tmp_path / "store").get(RUN)["setups"][0]["times_ms"] == [float(saved)] * 3


def wait_then_save(root: str, go, ready, told) -> None:
    go.wait()
    ready.put("saving")
    try:
        LocalStore(root).save(report_of(1), GOLDEN_RAW, html="<!doctype html><p>saver 1</p>")
        told.put("saved")
    except StoreError as err:
        told.put(f"StoreError: {err}")


def test_a_second_saver_waits_for_the_first_and_is_then_told_the_run_is_kept(tmp_path):
    """While one process saves (holding the store's lock), another process's save of the same id writes
    nothing, not even its page; once the first is done, the second is told the run is kept."""
    store = LocalStore(tmp_path / "store")
    go, ready, told = FORK.Event(), FORK.Queue(), FORK.Queue()
    # started before the lock is taken: a child forked inside would hold the lock's open file as well
    child = FORK.Process(target=wait_then_save, args=(str(store.root), go, ready, told))
    child.start()
    with store.one_saver(RUNS_DIR):
        go.set()
        assert ready.get(timeout=60) == "saving"
        with pytest.raises(queue.Empty):  # two seconds inside its save: it has not finished
            told.get(timeout=2)
        assert not (store.root / RUNS_DIR / RUN).exists()  # nothing of it written, not its page
        # the first saver's files, written as its save writes them while it holds the lock
        store._write_new(f"{RUNS_DIR}/{RUN}/report.html", b"<!doctype html><p>saver 0</p>")
        store._write_new(f"{RUNS_DIR}/{RUN}/report.json", report_bytes(report_of(0)))
    said = told.get(timeout=60)
    child.join(timeout=60)

    assert said.startswith(f"StoreError: run {RUN} is already in the store"), said
    assert store.page(RUN) == b"<!doctype html><p>saver 0</p>"


def save_chunking_in_child(root: str, saver: int, start, told) -> None:
    slow_disk()
    report = {"kind": "chunking", "format": 1, "id": RUN, "saver": saver}
    start.wait()
    try:
        ChunkingRuns(LocalStore(root)).save(report, html=f"<p>{saver}</p>")
        told.put((saver, "saved"))
    except StoreError as err:
        told.put((saver, f"StoreError: {err}"))


def test_chunking_runs_of_one_id_saved_at_once_are_kept_once_too(tmp_path):
    start, told = FORK.Barrier(3), FORK.Queue()
    children = [FORK.Process(target=save_chunking_in_child, args=(str(tmp_path / "store"), n, start, told))
                for n in range(3)]
    for child in children:
        child.start()
    answers = dict(told.get(timeout=60) for _ in children)
    for child in children:
        child.join(timeout=60)

    assert sorted(said == "saved" for said in answers.values()) == [False, False, True], answers
    assert all("is already in the store" in said for said in answers.values() if said != "saved")


def test_a_file_system_that_refuses_the_lock_still_saves_and_keeps_one_run(tmp_path, monkeypatch):
    """NFS refuses an flock on a folder opened for reading (EBADF): the save goes on without it."""
    import errno

    import evaluation.store.runs as runs

    def refused(handle, operation):
        raise OSError(errno.EBADF, "Bad file descriptor")

    monkeypatch.setattr(runs.fcntl, "flock", refused)
    store = LocalStore(tmp_path / "store")
    assert store.save(report_of(0), GOLDEN_RAW) == RUN
    with pytest.raises(StoreError, match=f"run {RUN} is already in the store"):
        store.save(report_of(1), GOLDEN_RAW)
