"""A Function App run's working files in its collection's folder (``CollectionFolder.write_work``): what
each part of the run keeps for the next, and reads back.

The plan (``plan_app_run``) pins the run's targets (``targets.json``: each spec with the state it was
opened at, e.g. the index fingerprint), so every later part searches the same index version even if a
newer one is published meanwhile; it keeps the plan, the shards, the reused times and each setup's
reused results. Each shard of a setup's batch keeps its ranks, each timed pass its times, and the
save reads them all back as ``join_app_run`` takes them (``run_parts``).
"""
from __future__ import annotations

from typing import Any, NamedTuple, Sequence

from ..errors import StoreError
from ..store.collections import CollectionFolder
from ..target import Target
from ..target_specs import TargetSpec, opened_state
from .planned import Plan

PLAN = "plan.json"
TARGETS = "targets.json"
SHARDS = "shards.json"  # {setup key: [[question ids of each shard]]}: run.shards.plan_shards
REUSED = "reused_times.json"  # {setup key: times an earlier run measured live}: run.retime.reusable_times
SIDE_BY_SIDE = "times/side_by_side.json"  # the side-by-side timed pass so far, between its parts


def reused_ranks_name(setup_key: str) -> str:
    """The working file of one setup's reused results (``run.reuse.reusable_ranks`` for that setup),
    one per setup, so a part reads only its own setup's."""
    return f"reused/{setup_key}.json"


def shard_name(setup_key: str, shard: int) -> str:
    """The working file of one shard's ranks (``rank_setup`` over that shard's questions)."""
    return f"entries/{setup_key}/{shard}.json"


def times_name(setup_key: str) -> str:
    """The working file of one setup's timed pass (``time_setups`` of that setup alone)."""
    return f"times/{setup_key}.json"


def keep_plan(folder: CollectionFolder, run_id: str, planned: Any, specs: Sequence[TargetSpec],
              targets: Sequence[Target]) -> None:
    """Write what ``plan_app_run`` gave (``planned``) and the targets as the run pinned them (each spec
    with the state it was opened at) as the run's working files: the plan, the targets, the shards, the
    reused times, and each setup's reused results."""
    folder.write_work(run_id, TARGETS, {t.name: {"spec": s.to_dict(), "state": opened_state(t)}
                                        for s, t in zip(specs, targets, strict=True)})
    folder.write_work(run_id, PLAN, planned.plan.to_json())  # the plan leaves the process here, as JSON
    folder.write_work(run_id, SHARDS, planned.shards)
    folder.write_work(run_id, REUSED, planned.reused_times)
    for key, found in planned.reused_ranks.items():
        folder.write_work(run_id, reused_ranks_name(key), found)


def read_plan(folder: CollectionFolder, run_id: str) -> Plan:
    """The run's plan, read back from its JSON (``keep_plan`` wrote it): where every later part gets it."""
    return Plan.from_json(folder.read_work(run_id, PLAN))


def setup_work(folder: CollectionFolder, run_id: str, setup_key: str) -> tuple[Plan, dict[str, Any]]:
    """The plan and the pinned target (``{"spec", "state"}``) one setup searches."""
    plan = read_plan(folder, run_id)
    return plan, folder.read_work(run_id, TARGETS)[plan.setup(setup_key).target]


class SideBySideWork(NamedTuple):
    """What a side-by-side timed pass reads: the plan, the pinned targets it searches (by name), and the
    times the plan found for any of its setups (``reused_times_of``)."""

    plan: Plan
    pinned: dict[str, Any]
    reused: dict[str, Any]


def side_by_side_work(folder: CollectionFolder, run_id: str, setup_keys: list[str]) -> SideBySideWork:
    """What a side-by-side timed pass of ``setup_keys`` reads (``SideBySideWork``)."""
    plan = read_plan(folder, run_id)
    pinned = folder.read_work(run_id, TARGETS)
    names = {plan.setup(key).target for key in setup_keys}
    reused = {k: v for k, v in folder.read_work(run_id, REUSED).items() if k in setup_keys}
    return SideBySideWork(plan, {name: pinned[name] for name in sorted(names)}, reused)


def shard_questions(folder: CollectionFolder, run_id: str, setup_key: str, shard: int) -> list[str]:
    """The question ids of one shard of a setup's batch."""
    return folder.read_work(run_id, SHARDS)[setup_key][shard]


def reused_times_of(folder: CollectionFolder, run_id: str, setup_key: str) -> dict[str, Any]:
    """The times the plan found for this setup (``{key: times}``, or empty: it is timed live)."""
    return {k: v for k, v in folder.read_work(run_id, REUSED).items() if k == setup_key}


def run_parts(folder: CollectionFolder, run_id: str, *, failures: dict[str, str], settled: list[str],
              reused_ranks: list[str]) -> dict[str, Any]:
    """What the run's parts kept, read back as ``join_app_run`` takes it: the plan, each setup's
    shard entries, its reused results, its live times and the reused times. A failed setup's files may
    be partly absent (its shards are not read), a settled one has no times file, and a raced setup has
    the shards of the rounds it ran (the race stopped it before the rest)."""
    plan = read_plan(folder, run_id)
    shards = folder.read_work(run_id, SHARDS)
    raced = plan.raced_keys  # a raced setup's later shards never ran once it stopped
    return {"plan": plan, "failures": failures, "settled": settled,
            "shard_entries": {key: [entry for entry in (
                (_optional(folder, run_id, shard_name(key, n)) if key in raced else
                 folder.read_work(run_id, shard_name(key, n))) for n in range(len(parts))) if entry is not None]
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
