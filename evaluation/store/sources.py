"""Read the bytes of a file named by a path or a storage address, through one function.

``read_bytes`` is how the golden file and other inputs are read, so a Blob address works wherever a
path does. Paths are local files; Blob addresses go through ``evaluation.store.blob`` (see its docstring for
the address forms and how each signs in).
"""
from __future__ import annotations

from pathlib import Path

from ..errors import InputTooLargeError
from .address import is_blob_address, local_path_problem, malformed_address  # noqa: F401 (their old address)


def read_bytes(source: str | Path, *, connection_string: str | None = None, max_bytes: int | None = None) -> bytes:
    """The raw bytes at ``source``. Raises ``FileNotFoundError`` when there is nothing there, and
    ``InputTooLargeError`` when it holds more than ``max_bytes`` (None: no limit): at most
    ``max_bytes + 1`` bytes are read, so ``/dev/zero`` or a pipe that never ends stops there.

    ``connection_string`` is used for Blob addresses only (the caller reads it from its settings).
    """
    if is_blob_address(source):
        from .blob import read_blob_bytes  # the only place Blob enters; keeps azure imports lazy

        return read_blob_bytes(str(source), connection_string=connection_string, max_bytes=max_bytes)
    path = Path(source)
    if path.is_dir():
        raise IsADirectoryError(21, "a folder, not a file", str(path))
    if max_bytes is None:
        return path.read_bytes()
    with path.open("rb") as handle:
        data = handle.read(max_bytes + 1)
    if len(data) > max_bytes:
        raise InputTooLargeError(source, max_bytes)
    return data
