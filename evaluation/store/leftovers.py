"""What a save stopped half way (kill -9, a power cut) leaves in a store, and what the next read does with it.

A save writes a run's page, then its ``report.json``; in a folder store each file goes to a temporary
name (``.report.json.<pid>-<8 random characters>.tmp``) renamed into place. Stopped in between, it
leaves a temporary file, or a run folder holding a page and no report. Every listing of the runs
(``RunStore.ids``, ``ChunkingRuns.ids``) reads the folders anyway, so it sorts out these leftovers at
no extra cost (``runs_in``), and the store then:

- removes a temporary file that is surely stale and ours: named as our saves name them, by a process
  of this machine that is gone (``processes.process_alive``), untouched for ``STALE_AFTER_S``. The age
  guards a store on a shared folder, where the process id may be another machine's. The run folder is
  removed too when nothing else is left in it.
- names everything else in one logged warning each (once per store object): a temporary file it
  cannot be sure of (a running save's, or one named by an earlier version), and a folder holding a
  page but no report, with what to do. A Blob or S3 store writes each file in one request, so only
  page-only folders are ever found there.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterable

STALE_AFTER_S = 600.0  # a save writes a file in well under a second: ten minutes untouched is a stopped save
TEMP_SUFFIX = ".tmp"
_OURS = re.compile(r"\.(?P<name>[^/]+)\.(?P<pid>[0-9]{1,10})-[a-z0-9_]{8}\.tmp")  # mkstemp: 8 random characters
_EARLIER = re.compile(r"\.(?P<name>[^/]+)\.[a-z0-9_]{8}\.tmp")  # before the pid was in the name


def temp_prefix(name: str, pid: int) -> str:
    """The ``mkstemp`` prefix of the temporary file ``name`` is written to by process ``pid``."""
    return f".{name}.{pid}-"


@dataclass(frozen=True)
class Leftover:
    """One thing a stopped save left: ``path`` relative to the store's root; ``pid`` the process that
    wrote a temporary file of ours (None otherwise); ``what`` says what it is and what to do."""

    path: str
    what: str
    pid: int | None = None


@dataclass(frozen=True)
class Listing:
    """The run ids a listing of a runs folder holds, and the leftovers found beside them."""

    ids: frozenset[str]
    leftovers: tuple[Leftover, ...]


def temp_leftover(path: str) -> Leftover | None:
    """The temporary file at ``path``, as a leftover; None when its name is not a temporary file's."""
    name = path.rsplit("/", 1)[-1]
    ours = _OURS.fullmatch(name)
    if ours:
        return Leftover(path, f"a temporary file of {ours['name']}, left by a save that stopped or is still running "
                              f"(removed once its process is gone and it is {STALE_AFTER_S / 60:.0f} minutes old)",
                        pid=int(ours["pid"]))
    if _EARLIER.fullmatch(name):
        return Leftover(path, "a temporary file left by a save of an earlier version that stopped; delete it")
    return None


def runs_in(paths: Iterable[str], folder: str, report: str, page: str, again: str) -> Listing:
    """Sort a listing of ``folder`` (``retrieval/runs`` or ``chunking/runs``; ``paths`` relative to the
    store's root): the run ids (a folder holding ``report``), and the leftovers (temporary files, and
    folders holding ``page`` but no ``report``, named with ``again``: how such a run is kept again).
    Paths deeper than a run's own files are not ours."""
    files: dict[str, set[str]] = {}
    leftovers = []
    for path in paths:
        parts = path[len(folder) + 1:].split("/")
        if len(parts) != 2 or not parts[0] or parts[0].startswith("."):
            continue
        files.setdefault(parts[0], set()).add(parts[1])
        temp = temp_leftover(path)
        if temp is not None:
            leftovers.append(temp)
    ids = frozenset(run for run, names in files.items() if report in names)
    for run in sorted(set(files) - ids):
        if page in files[run]:
            leftovers.append(Leftover(f"{folder}/{run}/{page}", f"a page with no {report} beside it: a save of run "
                                      f"{run} stopped between the two; {again}, or delete the folder"))
    return Listing(ids, tuple(leftovers))
