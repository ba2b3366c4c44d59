"""Read the bytes of a file named by a path or a storage address, through one function.

``read_bytes`` is how the golden file and other inputs are read, so a Blob address works wherever a
path does. Paths are local files; Blob addresses go through ``evaluation.store.blob`` (see its docstring for
the address forms and how each signs in).
"""
from __future__ import annotations

import re
from pathlib import Path


_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://")


def is_blob_address(source: str | Path) -> bool:
    """True for anything written as ``scheme://...``, in any case: it goes to ``blob.parse_address``,
    which reads a Blob address or refuses with a sentence, and never to a local folder named ``https:``."""
    return not isinstance(source, Path) and bool(_SCHEME.match(str(source)))


def read_bytes(source: str | Path, *, connection_string: str | None = None) -> bytes:
    """The raw bytes at ``source``. Raises ``FileNotFoundError`` when there is nothing there.

    ``connection_string`` is used for Blob addresses only (the caller reads it from its settings).
    """
    if is_blob_address(source):
        from .blob import read_blob_bytes  # the only place Blob enters; keeps azure imports lazy

        return read_blob_bytes(str(source), connection_string=connection_string)
    path = Path(source)
    if path.is_dir():
        raise IsADirectoryError(21, "a folder, not a file", str(path))
    return path.read_bytes()
