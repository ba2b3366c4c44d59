"""What the activities share: their settings, a run's pinned targets, and the instance's cores.

A run pins its targets when it is planned (``targets.json`` in its working files: each spec with the
state it was opened at, e.g. the index fingerprint), so every later activity of the run searches the
same index version even if a newer one is published meanwhile.
"""
from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Any, Iterator, Sequence

from app_settings import AppSettings, current_settings
from app_storage import collection_folder, open_collection_target
from evaluation.files import locked
from app_golden import report_name  # noqa: F401  (the activities' name for it)
from evaluation.errors import StoreError
from evaluation.store.collections import CollectionFolder
from evaluation.target import Target
from evaluation.settings import EvaluationSettings
from evaluation.targets import TargetSpec, opened_state

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


def plan_options(settings: AppSettings) -> dict[str, Any]:
    """The app's settings as ``plan_app_run`` takes them: what to reuse, how to cut shards, which setups,
    and the evaluation settings."""
    return {"retime": settings.retime, "retime_max_days": settings.retime_max_days,
            "shard_seconds": settings.shard_seconds, "most_questions": settings.shard_questions,
            "only": list(settings.only) or None, "skip": settings.skip,
            "settings": EvaluationSettings.from_app(settings)}


def keep_plan(folder: CollectionFolder, run_id: str, planned: Any, specs: Sequence[TargetSpec],
              targets: Sequence[Target]) -> None:
    """Write what ``plan_app_run`` gave (``planned``) and the targets as the run pinned them (each spec
    with the state it was opened at) as the run's working files: the plan, the targets, the shards, the
    reused times, and each setup's reused results."""
    folder.write_work(run_id, TARGETS, {t.name: {"spec": s.to_dict(), "state": opened_state(t)}
                                        for s, t in zip(specs, targets)})
    folder.write_work(run_id, PLAN, planned.plan)
    folder.write_work(run_id, SHARDS, planned.shards)
    folder.write_work(run_id, REUSED, planned.reused_times)
    for key, found in planned.reused_ranks.items():
        folder.write_work(run_id, reused_ranks_name(key), found)


def run_parts(folder: CollectionFolder, run_id: str, *, failures: dict[str, str], settled: list[str],
              reused_ranks: list[str]) -> dict[str, Any]:
    """What the run's activities kept, read back as ``join_app_run`` takes it: the plan, each setup's
    shard entries, its reused results, its live times and the reused times. A failed setup's files may
    be partly absent (its shards are not read), a settled one has no times file."""
    plan = folder.read_work(run_id, PLAN)
    shards = folder.read_work(run_id, SHARDS)
    return {"plan": plan, "failures": failures, "settled": settled,
            "shard_entries": {key: [folder.read_work(run_id, shard_name(key, n)) for n in range(len(parts))]
                              for key, parts in shards.items() if key not in failures},
            "reused_ranks": {key: _optional(folder, run_id, reused_ranks_name(key)) for key in reused_ranks},
            "times": {key: _optional(folder, run_id, times_name(key)) for key in shards
                      if key not in failures and key not in settled},
            "reused_times": folder.read_work(run_id, REUSED) if settled else {}}


def _optional(folder: CollectionFolder, run_id: str, name: str) -> dict | None:
    """A working file that may be absent: a setup's timed pass that never ran (``join_app_run`` then
    says so), or reused results no longer there (then merging says which questions have none)."""
    try:
        return folder.read_work(run_id, name)
    except StoreError:
        return None


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
