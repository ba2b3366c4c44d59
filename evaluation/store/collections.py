"""A collection's folder in a Blob container: its golden file, its targets, its runs and the files a run
works with while it runs.

Layout under ``<collection>/`` (the collection's name may hold "/", as ``team-a/docs``)::

    golden.jsonl                                  what a team saves; a save starts a run
    targets.json                                  optional: {"targets": [...]} for this collection
    retrieval/runs/<run id>/report.json           the reports (``RunStore``, rooted at the folder)
    golden_dataset/<sha256>.jsonl                 each golden version a run read, kept once
    golden_dataset/runs_in_progress/<run id>/     a running run's plan (it holds question text),
                                                  resolved targets, per-setup entries and times

Working files live beside the golden copies, never under ``retrieval/runs/``: whoever may read runs
reads there, and a run's plan holds the questions' text. Entries and times hold ids and scores
only. The app deletes a run's working files when the run ends (``discard``); a run stopped half way
leaves them, so a lifecycle rule on ``golden_dataset/runs_in_progress/`` can age them out.
"""
from __future__ import annotations

import hashlib
import json
import re
from typing import Any

from ..errors import StoreError
from .runs import GOLDEN_DIR, BlobStore, check_run_id

GOLDEN_NAME = "golden.jsonl"
TARGETS_NAME = "targets.json"
WORK_DIR = f"{GOLDEN_DIR}/runs_in_progress"

_SEGMENT = re.compile(r"[^/\x00-\x1f\x7f]+")


def check_collection_name(name: str) -> str:
    """``name`` when it can name a folder of blobs: "/"-separated parts, none empty, ".", ".." or with
    control characters, at most 512 characters; a ``StoreError`` saying so otherwise."""
    parts = name.split("/") if isinstance(name, str) else [""]
    if (not name or len(name) > 512 or not all(_SEGMENT.fullmatch(p) for p in parts)
            or any(p in (".", "..") for p in parts)):
        raise StoreError(f"{name!r} cannot name a collection: use a folder path of the container such as "
                         "\"docs\" or \"team-a/docs\" (no empty, \".\" or \"..\" parts, no control "
                         "characters, at most 512 characters)")
    return name


def collection_of(blob_name: str) -> str | None:
    """The collection whose golden file ``blob_name`` is (``docs/golden.jsonl`` -> ``docs``); None for
    any other blob, and for a golden file at the container's root (it belongs to no collection)."""
    folder, slash, file_name = blob_name.rpartition("/")
    if file_name != GOLDEN_NAME or not slash:
        return None
    try:
        return check_collection_name(folder)
    except StoreError:
        return None


class CollectionFolder:
    """One collection's files in a container (see the module docstring)."""

    def __init__(self, container_client: Any, name: str) -> None:
        self.container = container_client
        self.name = check_collection_name(name)
        self.store = BlobStore(container_client, name)

    def address(self, path: str = "") -> str:
        """The Blob address of ``path`` inside the folder (the folder itself for "")."""
        return "/".join(p for p in (self.container.url.rstrip("/"), self.name, path) if p)

    # -- the golden file ----------------------------------------------------------------------
    def golden_bytes(self) -> bytes | None:
        """The golden file's bytes as saved now; None when there is none."""
        return self._read_or_none(GOLDEN_NAME)

    def golden_sha256(self) -> str | None:
        raw = self.golden_bytes()
        return None if raw is None else hashlib.sha256(raw).hexdigest()

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

    # -- a run's working files ------------------------------------------------------------------
    def work_path(self, run_id: str, name: str) -> str:
        """The blob name of a run's working file ``name`` (``plan.json``, ``entries/<key>.json``)."""
        return f"{self.name}/{WORK_DIR}/{check_run_id(run_id)}/{name}"

    def write_work(self, run_id: str, name: str, value: Any) -> str:
        """Keep ``value`` as JSON in the run's working file ``name`` (replacing it); its blob name."""
        from .blob import write_blob

        path = self.work_path(run_id, name)
        write_blob(self.container, path, json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8"))
        return path

    def read_work(self, run_id: str, name: str) -> Any:
        """The JSON value of the run's working file ``name``; a ``StoreError`` when it is gone."""
        from .blob import read_blob

        path = self.work_path(run_id, name)
        try:
            return json.loads(read_blob(self.container, path))
        except FileNotFoundError as err:
            raise StoreError(f"{self.address()}: run {run_id} has no working file {name} (it was discarded, "
                             "or the step that writes it never ran)") from err

    def discard_work(self, run_id: str) -> int:
        """Delete every working file of the run; how many there were."""
        from .blob import delete_blobs, list_blob_names

        names = list_blob_names(self.container, f"{self.name}/{WORK_DIR}/{check_run_id(run_id)}/")
        delete_blobs(self.container, names)
        return len(names)

    def _read_or_none(self, path: str) -> bytes | None:
        from .blob import read_blob

        try:
            return read_blob(self.container, f"{self.name}/{path}")
        except FileNotFoundError:
            return None
