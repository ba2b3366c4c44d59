"""Whether a process that left something behind is still running: the rule for removing what it left.

An index build names its staging folder after its process id (``engine.index``), a folder store's save
its temporary files (``store.leftovers``), and a run's scratch folder (a sweep's, a chunking comparison's,
``from_documents``') its host and process id (``scratch_folder``); what a process that is gone left is
removed by the next build, the next read or the next run that makes such a folder, and what a running one
(or one we cannot tell about) left is kept.
"""
from __future__ import annotations

import logging
import os
import re
import shutil
import socket
import tempfile
import time
from pathlib import Path

log = logging.getLogger(__name__)

# A scratch folder untouched this long, whose process is gone, is a killed run's: removed. The age guards
# a folder shared with processes this one cannot see (another container of the same host name, whose
# process ids are not ours); a build writes to its folder every few seconds.
SCRATCH_STALE_AFTER_S = 600.0


def process_alive(pid: int) -> bool:
    """Whether process ``pid`` of this machine is running; True when we cannot tell (another user's
    process, a number the system refuses), so nothing of a living process is ever removed."""
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError, OSError, ValueError):
        return True
    return True


def host_tag() -> str:
    """This machine's name as it goes into a scratch folder's: letters, digits and ``-`` only, at most 40."""
    return re.sub(r"[^A-Za-z0-9-]", "-", socket.gethostname())[:40] or "host"


def scratch_folder(prefix: str, where: str | Path | None = None) -> Path:
    """A new folder ``<prefix><host>.<pid>.<random>`` in ``where`` (None: the system's temporary folder),
    named for the process that owns it, so a later run can tell it was killed; the scratch folders of
    ``prefix`` that killed runs left there are removed first (``remove_left_scratch``). The caller removes
    its own folder when done, as before: this only catches a run that never got to."""
    base = Path(where) if where is not None else Path(tempfile.gettempdir())
    remove_left_scratch(prefix, base)
    return Path(tempfile.mkdtemp(prefix=f"{prefix}{host_tag()}.{os.getpid()}.", dir=base))


def remove_left_scratch(prefix: str, base: Path) -> list[Path]:
    """Remove each folder of ``base`` named by ``scratch_folder`` for ``prefix`` whose process is surely gone:
    made on this host, by a process that no longer runs, and untouched (itself and everything in it) for
    ``SCRATCH_STALE_AFTER_S``. The folders removed. Another host's, a living process's, a young one and
    anything named otherwise (a folder of an earlier version, a user's) are never touched."""
    pattern = re.compile(re.escape(prefix) + r"(?P<host>[A-Za-z0-9-]{1,40})\.(?P<pid>[0-9]{1,10})\.[^/]+")
    removed: list[Path] = []
    try:
        entries = list(base.iterdir())
    except OSError:
        return removed
    for entry in entries:
        found = pattern.fullmatch(entry.name)
        if found is None or found["host"] != host_tag() or process_alive(int(found["pid"])):
            continue
        try:
            if entry.is_symlink() or not entry.is_dir() or _untouched_for(entry) < SCRATCH_STALE_AFTER_S:
                continue
        except OSError:
            continue
        shutil.rmtree(entry, ignore_errors=True)
        if not entry.exists():
            log.info("removed %s, the scratch folder of a run (process %s) that was stopped", entry, found["pid"])
            removed.append(entry)
    return removed


def _untouched_for(folder: Path) -> float:
    """Seconds since anything in ``folder`` (itself included) last changed."""
    newest = folder.stat().st_mtime
    for root, dirs, files in os.walk(folder):
        for name in (*dirs, *files):
            try:
                newest = max(newest, os.lstat(os.path.join(root, name)).st_mtime)
            except OSError:
                continue
    return time.time() - newest
