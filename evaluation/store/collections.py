"""Collections: the top-level folders of a container (or a local folder), each a collection's home.

``<container>/<collection>/`` holds the collection's files::

    golden.jsonl                                  what a team saves; a save starts a run
    targets.json                                  optional: {"targets": [...]} for this collection
    retrieval/runs/<run id>/report.json           the reports (``RunStore``, rooted at the folder)
    golden_dataset/<sha256>.jsonl                 each golden version a run read, kept once
    golden_dataset/runs_in_progress/<run id>/     a running run's plan (it holds question text),
                                                  pinned targets, per-setup entries and times

``Collections`` lists the folders and opens each one's ``RunStore``; ``newest_runs`` merges their runs,
newest first, each named by its collection. A collection name given by a caller of the routes is only
ever one of the folder names listed, so it never builds a path by itself.

``CollectionFolder`` is one collection's files as the Function App reads and writes them. Working
files live beside the golden copies, never under ``retrieval/runs/``: whoever may read runs reads
there, and a run's plan holds the questions' text. Entries and times hold ids and scores only. The
app deletes a run's working files when the run ends (``discard_work``); a run stopped half way leaves
them, so a lifecycle rule on ``*/golden_dataset/runs_in_progress/`` can age them out.
"""
from __future__ import annotations

import hashlib
import json
import logging
import re
from abc import ABC, abstractmethod
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable

from ..errors import StoreError, did_you_mean, shown
from .runs import GOLDEN_DIR, UNTIMED, BlobStore, LocalStore, RunStore, check_run_id, is_timed_id

log = logging.getLogger(__name__)


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
            raise StoreError(f"no collection {shown(name)} in {self.address}.{did_you_mean(name, names)} "
                             f"Collections: {', '.join(names) or 'none yet'}")
        return self._open(name)

    def stores(self, only: str | None = None) -> list[tuple[str, RunStore]]:
        """(name, store) of every collection, or of ``only``."""
        if only is not None:
            return [(only, self.store(only))]
        return [(name, self._open(name)) for name in self.names()]


def newest_runs(stores: Iterable[tuple[str, RunStore]]) -> list[RunRef]:
    """Every run of every store given, newest first (run ids sort by time; a tie by collection), then
    the folders not named by time (``runs.newest_first``), which are never newest."""
    refs = [RunRef(run_id, name) for name, store in stores for run_id in store.ids()]
    timed = sorted((r for r in refs if is_timed_id(r.run_id)), reverse=True)
    return timed + sorted(r for r in refs if not is_timed_id(r.run_id))


def latest_run(stores: Iterable[tuple[str, RunStore]],
               on_skip: Callable[[str, str], None] | None = None) -> RunRef | None:
    """The newest run of any of ``stores`` whose report reads (``RunStore.latest``'s rule across
    collections), None when there is none; each run passed over is named to ``on_skip(run_id, sentence)``
    (by default a logged warning), so one strange folder or broken report never blocks the rest."""
    on_skip = on_skip or (lambda run_id, why: log.warning("skipped run %s: %s", run_id, why))
    stores = list(stores)
    by_name = dict(stores)
    refs = newest_runs(stores)
    for ref in refs:
        if not is_timed_id(ref.run_id):
            on_skip(ref.run_id, f"{ref.collection}/retrieval/runs/{ref.run_id}: {UNTIMED}")
    for ref in filter(lambda r: is_timed_id(r.run_id), refs):
        try:
            by_name[ref.collection].get(ref.run_id)
        except StoreError as err:
            on_skip(ref.run_id, str(err))
            continue
        return ref
    return None


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


# -- one collection's files, as the Function App uses them ----------------------------------------------

GOLDEN_NAME = "golden.jsonl"
TARGETS_NAME = "targets.json"
WORK_DIR = f"{GOLDEN_DIR}/runs_in_progress"

_NAME = re.compile(r"[^/\x00-\x1f\x7f]+")


def check_collection_name(name: object) -> str:
    """``name`` when it can name a collection: one top-level folder of the container (the routes list
    collections as top-level folders), not "." or "..", no "/" or control characters, at most 512
    characters; a ``StoreError`` saying so otherwise (anything but such a string, from a request or an event)."""
    if (not isinstance(name, str) or not name or len(name) > 512 or not _NAME.fullmatch(name)
            or name in (".", "..")):
        raise StoreError(f"{shown(name)} cannot name a collection: use the name of a top-level folder of the "
                         "container, such as \"docs\" (no \"/\", not \".\" or \"..\", no control characters, at most "
                         "512 characters)")
    return name


def collection_of(blob_name: str) -> str | None:
    """The collection whose golden file ``blob_name`` is (``docs/golden.jsonl`` -> ``docs``); None for
    any other blob, for a golden file at the container's root, and for one in a deeper folder."""
    folder, slash, file_name = blob_name.rpartition("/")
    if file_name != GOLDEN_NAME or not slash:
        return None
    try:
        return check_collection_name(folder)
    except StoreError:
        return None


class CollectionFolder:
    """One collection's files in a container (see the module docstring). The storage itself is reached
    through the few methods at the end (a name is the whole name in the container: ``<collection>/...``);
    ``s3_folder.S3CollectionFolder`` is the same folder in an S3 bucket."""

    def __init__(self, container_client: Any, name: str) -> None:
        self.container = container_client
        self.name = check_collection_name(name)
        self.store: RunStore = BlobStore(container_client, name)

    def address(self, path: str = "") -> str:
        """The address of ``path`` inside the folder (the folder itself for "")."""
        return "/".join(p for p in (self._root(), self.name, path) if p)

    # -- the golden file ----------------------------------------------------------------------
    def golden_bytes(self) -> bytes | None:
        """The golden file's bytes as saved now; None when there is none."""
        return self._read_or_none(GOLDEN_NAME)

    def golden_sha256(self) -> str | None:
        raw = self.golden_bytes()
        return None if raw is None else hashlib.sha256(raw).hexdigest()

    def golden_version(self, *, max_bytes: int, read: bool = False) -> tuple[str, str, bytes | None] | None:
        """``(sha256, etag, bytes or None)`` of the golden file now, None when there is none; a
        ``BlobTooLargeError`` over ``max_bytes``, before any byte is read (``blob.blob_version``)."""
        return self._version(f"{self.name}/{GOLDEN_NAME}", max_bytes=max_bytes, read=read)

    def golden_has_etag(self, etag: str) -> bool:
        """Whether the golden file is still the version ``etag`` names."""
        return self._has_etag(f"{self.name}/{GOLDEN_NAME}", etag)

    def kept_golden(self, sha256: str) -> bytes:
        """The golden version kept under ``sha256``, checked against its name."""
        raw = self.store.golden(sha256)
        if hashlib.sha256(raw).hexdigest() != sha256:
            raise StoreError(f"{self.address(f'{GOLDEN_DIR}/{sha256}.jsonl')} does not hash to its name; "
                             "delete it so the next run keeps the golden file again")
        return raw

    def targets_json(self) -> bytes | None:
        """The bytes of ``targets.json`` beside the golden file; None when there is none."""
        return self._read_or_none(TARGETS_NAME)

    def delete(self, paths: Iterable[str]) -> None:
        """Delete the files at ``paths`` inside the folder; one already gone is no error."""
        self._delete([f"{self.name}/{path}" for path in paths])

    # -- a run's working files ------------------------------------------------------------------
    def work_path(self, run_id: str, name: str) -> str:
        """The blob name of a run's working file ``name`` (``plan.json``, ``entries/<key>.json``)."""
        return f"{self.name}/{WORK_DIR}/{check_run_id(run_id)}/{name}"

    def write_work(self, run_id: str, name: str, value: Any) -> str:
        """Keep ``value`` as JSON in the run's working file ``name`` (replacing it); its blob name."""
        path = self.work_path(run_id, name)
        self._write(path, json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8"))
        return path

    def read_work(self, run_id: str, name: str) -> Any:
        """The JSON value of the run's working file ``name``; a ``StoreError`` when it is gone."""
        path = self.work_path(run_id, name)
        try:
            return json.loads(self._read(path))
        except FileNotFoundError as err:
            raise StoreError(f"{self.address()}: run {run_id} has no working file {name} (it was discarded, "
                             "or the step that writes it never ran)") from err

    def discard_work(self, run_id: str) -> int:
        """Delete every working file of the run; how many there were."""
        names = self._list(f"{self.name}/{WORK_DIR}/{check_run_id(run_id)}/")
        self._delete(names)
        return len(names)

    def _read_or_none(self, path: str) -> bytes | None:
        try:
            return self._read(f"{self.name}/{path}")
        except FileNotFoundError:
            return None

    # -- the storage: whole names in the container ----------------------------------------------
    def _root(self) -> str:
        return self.container.url.rstrip("/")

    def _read(self, name: str) -> bytes:
        from .blob import read_blob

        return read_blob(self.container, name)

    def _write(self, name: str, data: bytes) -> None:
        from .blob import write_blob

        write_blob(self.container, name, data)

    def _list(self, prefix: str) -> list[str]:
        from .blob import list_blob_names

        return list_blob_names(self.container, prefix)

    def _delete(self, names: list[str]) -> None:
        from .blob import delete_blobs

        delete_blobs(self.container, names)

    def _version(self, name: str, *, max_bytes: int, read: bool) -> tuple[str, str, bytes | None] | None:
        from .blob import blob_version

        return blob_version(self.container, name, max_bytes=max_bytes, read=read)

    def _has_etag(self, name: str, etag: str) -> bool:
        from .blob import blob_has_etag

        return blob_has_etag(self.container, name, etag)
