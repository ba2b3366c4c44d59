"""What the activities share: their settings, a run's pinned targets, and the instance's cores.

A run pins its targets when it is planned (``targets.json`` in its working files: each spec with the
state it was opened at, e.g. the index fingerprint), so every later activity of the run searches the
same index version even if a newer one is published meanwhile.
"""
from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Any, Iterator

from app_settings import AppSettings, current_settings
from app_storage import collection_folder, open_collection_target
from evaluation.files import locked
from evaluation.store.collections import CollectionFolder
from evaluation.store.runs import REPORT_NAME, RUNS_DIR
from evaluation.target import Target
from evaluation.targets import TargetSpec

PLAN = "plan.json"
TARGETS = "targets.json"
SHARDS = "shards.json"  # {setup key: [[question ids of each shard]]}: run.shards.plan_shards
REUSED = "reused_times.json"  # {setup key: times an earlier run measured live}: run.retime.reusable_times


def reused_ranks_name(setup_key: str) -> str:
    """The working file of one setup's reused results (``run.reuse.reusable_ranks`` for that setup),
    one per setup, so an activity reads only its own setup's."""
    return f"reused/{setup_key}.json"


def shard_name(setup_key: str, shard: int) -> str:
    """The working file of one shard's ranks (``rank_setup`` over that shard's questions)."""
    return f"entries/{setup_key}/{shard}.json"


def times_name(setup_key: str) -> str:
    """The working file of one setup's timed pass (``time_setups`` of that setup alone)."""
    return f"times/{setup_key}.json"


def report_name(folder: CollectionFolder, run_id: str) -> str:
    """The report's blob name in the container: ``<collection>/retrieval/runs/<id>/report.json``."""
    return f"{folder.name}/{RUNS_DIR}/{run_id}/{REPORT_NAME}"


def folder_of(job: dict[str, Any]) -> tuple[AppSettings, CollectionFolder]:
    settings = current_settings()
    return settings, collection_folder(settings, job["collection"])


def open_pinned(settings: AppSettings, pinned: dict[str, Any], *, batch_cache: Any = None) -> Target:
    """The target a run pinned: ``{"spec": {...}, "state": "..."}`` from its ``targets.json``. Its opened
    index is the one this process already holds for that version, if any (``app_storage.opened_indexes``):
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
