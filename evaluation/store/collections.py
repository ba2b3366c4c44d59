"""Many run stores in one place: a container (or folder) whose top-level folders are collections.

The Function App keeps each collection beside its golden file, ``<container>/<collection>/golden.jsonl``,
and its runs in that folder's store (``<collection>/retrieval/runs/...``, see ``runs``). ``Collections``
lists the folders and opens each one's ``RunStore``; ``newest_runs`` merges their runs, newest first,
each named by its collection. A collection name is only ever one of the folder names listed, so a name
given by a caller never builds a path by itself.
"""
from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable

from ..errors import StoreError, did_you_mean
from .runs import BlobStore, LocalStore, RunStore


@dataclass(frozen=True, order=True)
class RunRef:
    """One run of one collection. Sorted: by run id (time), then collection."""

    run_id: str
    collection: str


class Collections(ABC):
    """The collections of a container or folder, and the run store of each."""

    address: str

    @abstractmethod
    def names(self) -> list[str]:
        """Every collection (top-level folder), sorted."""

    @abstractmethod
    def _open(self, name: str) -> RunStore:
        """The store of the folder ``name`` (already checked to be listed)."""

    def store(self, name: str) -> RunStore:
        """The run store of the collection ``name``; a ``StoreError`` naming the collections otherwise."""
        names = self.names()
        if name not in names:
            raise StoreError(f"no collection {name!r} in {self.address}.{did_you_mean(name, names)} "
                             f"Collections: {', '.join(names) or 'none yet'}")
        return self._open(name)

    def stores(self, only: str | None = None) -> list[tuple[str, RunStore]]:
        """(name, store) of every collection, or of ``only``."""
        if only is not None:
            return [(only, self.store(only))]
        return [(name, self._open(name)) for name in self.names()]


def newest_runs(stores: Iterable[tuple[str, RunStore]]) -> list[RunRef]:
    """Every run of every store given, newest first (run ids sort by time; a tie by collection)."""
    refs = [RunRef(run_id, name) for name, store in stores for run_id in store.ids()]
    return sorted(refs, reverse=True)


class LocalCollections(Collections):
    """Collections as the sub-folders of a local folder."""

    def __init__(self, root: Path | str) -> None:
        self.root = Path(root)
        self.address = str(self.root)

    def names(self) -> list[str]:
        if not self.root.is_dir():
            raise StoreError(f"{self.root}: no such folder; it should hold one folder per collection")
        return sorted(p.name for p in self.root.iterdir() if p.is_dir() and not p.name.startswith("."))

    def _open(self, name: str) -> RunStore:
        return LocalStore(self.root / name)


class BlobCollections(Collections):
    """Collections as the top-level folders of a Blob container."""

    def __init__(self, container_client: Any) -> None:
        self.container = container_client
        self.address = container_client.url.rstrip("/")

    def names(self) -> list[str]:
        from .blob import list_folders

        return sorted(list_folders(self.container))

    def _open(self, name: str) -> RunStore:
        return BlobStore(self.container, name)
