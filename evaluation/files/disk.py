"""What is done to a file on disk in more than one room: hashing one in blocks, holding a lock on one,
claiming one to write, reading an input without waiting on a pipe, and writing a file whole.

``write_whole`` writes through a temporary file beside the path, renamed into place, so a full disk leaves
the old file or none, never half a file, and the error names the path. Which files a command may write at
all is ``outputs``' rule, not this module's.
"""
from __future__ import annotations

import contextlib
import errno
import fcntl
import hashlib
import os
import secrets
import socket
import stat
import tempfile
from pathlib import Path
from typing import Iterator

from ..errors import NotAFile  # noqa: F401  (its name before the naming rule, importable here as before)
from ..errors import EvaluationError, InputTooLargeError, NotAFileError, WriteError

_BLOCK = 1 << 20  # 1 MiB: a model file or a vectors file is read in blocks, never whole
TEMP_SUFFIX = ".tmp"


def sha256_file(path: str | Path) -> str:
    """The sha256 of the file at ``path``, as 64 hex digits, read in 1 MiB blocks."""
    digest = hashlib.sha256()
    with Path(path).open("rb") as handle:
        for block in iter(lambda: handle.read(_BLOCK), b""):
            digest.update(block)
    return digest.hexdigest()


@contextlib.contextmanager
def locked(path: str | Path, *, shared: bool = False) -> Iterator[None]:
    """Hold an ``flock`` on the file at ``path`` (made if absent, never truncated) while the block runs:
    exclusive, or ``shared`` with other shared holders. The lock is the open file's: a process that
    dies lets go of it with its files."""
    with Path(path).open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_SH if shared else fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


CLAIM_SUFFIX = ".writing"  # ``.<name>.writing`` beside an output: who holds the claim on writing it (``claimed``)


@contextlib.contextmanager
def claimed(path: str | Path, *, what: str, error: type[EvaluationError] = WriteError,
            fix: str = "wait for it to finish, or write to another file") -> Iterator[None]:
    """Hold the claim on writing ``path`` while the block runs, or raise ``error`` at once when another
    process holds it: for an output that costs a long run (model calls) to make, so the second run of two
    aimed at one file stops before its work, not after it.

    The claim is an exclusive, non-blocking ``flock`` on ``.<name>.writing`` beside ``path`` (its folders
    made), holding the owner's process id and host for the sentence; removed when the block ends. A process
    that dies lets go of its lock with its files, so a file left by a kill claims nothing. ``what`` names
    what is written ("the drafts"); ``fix`` what the loser should do.
    """
    path = Path(path)
    marker = path.with_name(f".{path.name}{CLAIM_SUFFIX}")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise error(f"{path}: cannot write {what} there ({err.strerror or err}); give a folder you may write to"
                    ) from err
    for _ in range(10):  # the holder removes the file as it lets go: a lock on a removed file claims nothing
        try:
            handle = os.open(marker, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o666)
        except OSError as err:
            raise error(f"{path}: cannot write {what} there ({err.strerror or err}); give a folder you may write "
                        "to") from err
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.read(handle, 200).decode("utf-8", "replace").strip() or "another process"
            os.close(handle)
            raise error(f"{path} is being written already, by {holder}: {what} of one run would be lost to the "
                        f"other's; {fix}") from None
        except OSError:  # a file system that takes no locks: the write itself still never goes over a file
            pass
        try:
            same = os.fstat(handle).st_ino == os.stat(marker).st_ino
        except FileNotFoundError:
            same = False
        if same:
            break
        os.close(handle)
    else:
        raise error(f"{path}: could not claim it for {what} (its claim file {marker.name} keeps changing); try again")
    try:
        os.ftruncate(handle, 0)
        os.write(handle, f"process {os.getpid()} on {socket.gethostname()}".encode("utf-8", "replace"))
        yield
    finally:
        with contextlib.suppress(OSError):
            marker.unlink()  # while still held: whoever opens the name next makes a new file
        os.close(handle)


# -- reading an input -------------------------------------------------------------------------------

def read_input(path: str | Path, *, max_bytes: int | None = None) -> bytes:
    """The bytes of the file at ``path``, every input a command reads from the disk.

    Raises ``FileNotFoundError`` when nothing is there, ``IsADirectoryError`` for a folder, ``NotAFileError``
    for a named pipe, a device or a socket (opened without waiting, so a pipe nobody writes to is refused
    at once, not waited on), and ``InputTooLargeError`` when the file holds more than ``max_bytes``
    (None: no limit; no more than ``max_bytes + 1`` bytes are read). Callers catch ``OSError`` and say
    what they were reading.
    """
    path = Path(path)
    handle = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    mode = os.fstat(handle).st_mode  # of what was opened: nothing can be swapped in after a check
    if not stat.S_ISREG(mode):
        os.close(handle)
        if stat.S_ISDIR(mode):
            raise IsADirectoryError(errno.EISDIR, "a folder, not a file", str(path))
        raise NotAFileError(errno.EINVAL, f"{special_kind(mode)}, not a file", str(path))
    with os.fdopen(handle, "rb") as opened:
        data = opened.read() if max_bytes is None else opened.read(max_bytes + 1)
    if max_bytes is not None and len(data) > max_bytes:
        raise InputTooLargeError(path, max_bytes)
    return data


def special_kind(mode: int) -> str:
    """What a file that is not a regular one is, from its ``st_mode``, as a sentence says it: "a named pipe"."""
    if stat.S_ISFIFO(mode):
        return "a named pipe"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "a device"


def same_file(one: str | Path, other: str | Path) -> bool:
    """Whether two paths name one file: the same file on disk (through a link too) when both exist, else
    the same absolute path once ``..`` and links are resolved."""
    try:
        return os.path.samefile(one, other)
    except OSError:
        return Path(one).resolve() == Path(other).resolve()


# -- writing a file --------------------------------------------------------------------------------

def try_writing_in(folder: str | Path) -> None:
    """Make a file in ``folder`` and remove it again, so nothing is left: ``OSError`` when the folder does not
    take one (read-only, full of inodes, not a folder). Asked before work a failed write would waste."""
    handle, probe = tempfile.mkstemp(dir=folder, prefix=".write-check-")
    os.close(handle)
    os.unlink(probe)


def write_whole(path: str | Path, data: bytes | str, *, replace: bool = True, what: str = "the file",
                error: type[EvaluationError] = WriteError) -> None:
    """Write ``data`` to ``path`` whole or not at all, making its folders. Text is written as UTF-8, a lone
    surrogate in it (a ``"\\ud800"`` escape an old report kept: no character) as its escape.

    It goes to a temporary file beside ``path`` (``.<name>.<pid>-<random>.tmp``: ``temp_prefix``),
    which is then renamed into place: a reader sees the old file or the new one, never half of one. With
    ``replace=False`` it never goes over a file holding anything (it is linked into place, so a file that
    appeared meanwhile is kept: ``FileExistsError``); an empty file holds nothing and is replaced. On any
    other failure (a full disk) the temporary file is removed, ``path`` is as it was, and ``error`` says
    which path could not be written and why.
    """
    path = Path(path)
    raw = data.encode("utf-8", "backslashreplace") if isinstance(data, str) else data
    temp = None
    placed = True
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        handle, temp = _new_temporary(path)
        with os.fdopen(handle, "wb") as out:
            out.write(raw)
        if replace:
            os.replace(temp, path)  # readers see the whole file or none of it
        else:
            placed = _linked_into_place(Path(temp), path)
    except OSError as err:
        raise error(f"{path}: cannot write {what} there ({err.strerror or err}); nothing was written there, and a "
                    "file that was there before is as it was: free some space or give a folder you may write to"
                    ) from err
    finally:
        if temp is not None:
            Path(temp).unlink(missing_ok=True)
    if not placed:
        raise FileExistsError(errno.EEXIST, "a file holding something is there, and it is never written over",
                              str(path))


def temp_prefix(name: str, pid: int) -> str:
    """How the temporary file of ``name`` written by process ``pid`` starts: ``.<name>.<pid>-``, then 8
    random characters and ``TEMP_SUFFIX``; named for its process, so a read after a kill -9 knows whose it
    was (``store.leftovers``)."""
    return f".{name}.{pid}-"


def _new_temporary(path: Path) -> tuple[int, str]:
    """A new file beside ``path``, open for writing, with the permissions any new file gets (the umask's:
    ``mkstemp`` would make it readable by its owner alone)."""
    while True:
        temp = path.with_name(f"{temp_prefix(path.name, os.getpid())}{secrets.token_hex(4)}{TEMP_SUFFIX}")
        try:
            return os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o666), str(temp)
        except FileExistsError:
            continue


def _linked_into_place(temp: Path, path: Path) -> bool:
    """Whether ``temp`` now stands at ``path``: False when a file holding anything is there (kept)."""
    try:
        os.link(temp, path)  # fails when path exists: nothing is replaced
    except FileExistsError:
        if not (path.is_file() and path.stat().st_size == 0):
            return False
        os.replace(temp, path)
    except OSError as err:
        if err.errno not in (errno.EPERM, errno.EOPNOTSUPP, errno.ENOSYS):
            raise
        # a file system without hard links (FAT, some network shares): asked, then renamed, in two steps
        if os.path.lexists(path) and not (path.is_file() and path.stat().st_size == 0):
            return False
        os.replace(temp, path)
    return True
