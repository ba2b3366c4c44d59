"""Read the bytes of a file named by a path or a storage address, through one function.

``read_bytes`` is how the golden file and other inputs are read, so a Blob address works wherever a
path does. Paths are local files; Blob addresses go through ``evaluation.store.blob`` (see its docstring for
the address forms and how each signs in).
"""
from __future__ import annotations

from pathlib import Path


def is_blob_address(source: str | Path) -> bool:
    text = str(source)
    return text.startswith(("https://", "http://")) and "/" in text.split("://", 1)[1]


def read_bytes(source: str | Path, *, connection_string: str | None = None) -> bytes:
    """The raw bytes at ``source``. Raises ``FileNotFoundError`` when there is nothing there.

    ``connection_string`` is used for Blob addresses only (the caller reads it from its settings).
    """
    if is_blob_address(source):
        from .blob import read_blob_bytes  # the only place Blob enters; keeps azure imports lazy

        return read_blob_bytes(str(source), connection_string=connection_string)
    return Path(source).read_bytes()
