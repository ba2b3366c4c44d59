"""What the activities share: the app's settings and collection folder, a run's pinned target, and the
instance's cores. A run's working files (names, what is kept and read back) are the library's
``evaluation.run.work_files``."""
from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Any, Iterator

from app.settings import AppSettings, current_settings
from app.storage import collection_folder, open_collection_target
from evaluation.files import locked
from evaluation.store.collections import CollectionFolder
from evaluation.target import Target
from evaluation.target_specs import TargetSpec


def folder_of(job: dict[str, Any]) -> tuple[AppSettings, CollectionFolder]:
    settings = current_settings()
    return settings, collection_folder(settings, job["collection"])


def open_pinned(settings: AppSettings, pinned: dict[str, Any], *, batch_cache: Any = None) -> Target:
    """The target a run pinned: ``{"spec": {...}, "state": "..."}`` from its ``targets.json``. Its opened
    index is the one this process already holds for that version, if any (``app.storage.opened_indexes``):
    the activities of a run on one instance open the index once."""
    return open_collection_target(settings, TargetSpec.from_dict(pinned["spec"]), pinned["state"],
                                  batch_cache=batch_cache)


@contextlib.contextmanager
def cores(settings: AppSettings, *, alone: bool) -> Iterator[None]:
    """Hold this instance's cores: shared by any number of ranking activities, or ``alone`` for a
    timed pass, which waits until no ranking or other timed pass runs here and keeps them out
    meanwhile (an ``flock`` on a file every activity process of the instance opens)."""
    path = Path(settings.index_cache) / ".cores.lock"
    path.parent.mkdir(parents=True, exist_ok=True)
    with locked(path, shared=not alone):
        yield
