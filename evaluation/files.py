"""Two things done to files in more than one room: hashing one in blocks, and holding a lock on one.

Bottom layer (imports nothing of the library), so the engine, the store and the app's activities share
one way of each instead of keeping copies.
"""
from __future__ import annotations

import contextlib
import fcntl
import hashlib
from pathlib import Path
from typing import Iterator

_BLOCK = 1 << 20  # 1 MiB: a model file or a vectors file is read in blocks, never whole


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
