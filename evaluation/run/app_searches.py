"""The Function App's search steps over a run's working files: one shard of a setup's batch, one setup's
timed pass, one part of every setup's timed pass side by side, and the race's look between two rounds.
Each reads what the plan kept
(``work_files``), runs the step (``one_setup``) and keeps its result, so an activity only decodes its job,
opens what the app opens (targets on its shared cache, its cores) and encodes the answer.

``open_target(pinned)`` opens a target the run pinned; ``cores(alone)`` is the context the searching runs
in (``alone``: the step has this instance's cores to itself, as timing needs).
"""
from __future__ import annotations

from contextlib import AbstractContextManager
from typing import Any, Callable, Sequence

from ..store.collections import CollectionFolder
from ..target import Target
from . import app_run, one_setup, work_files

OpenTarget = Callable[[dict[str, Any]], Target]
Cores = Callable[[bool], AbstractContextManager[Any]]


def rank_shard(folder: CollectionFolder, run_id: str, key: str, shard: int, *, open_target: OpenTarget,
               cores: Cores) -> bool:
    """The ranks of shard ``shard`` of setup ``key``'s batch (its questions are in the run's shards.json),
    kept as entries/<key>/<shard>.json; whether the setup answered."""
    plan, pinned = work_files.setup_work(folder, run_id, key)
    questions = work_files.shard_questions(folder, run_id, key, shard)
    with cores(False):
        entry = one_setup.rank_setup(open_target(pinned), plan, key, questions=questions)
    folder.write_work(run_id, work_files.shard_name(key, shard), entry)
    return entry["error"] is None


def time_setup(folder: CollectionFolder, run_id: str, key: str, *, open_target: OpenTarget, cores: Cores) -> bool:
    """Setup ``key``'s timed pass alone on the cores, kept as times/<key>.json; whether it ran (a failed pass
    keeps its error). A setup the plan found times for (reused_times.json) takes them and only ranks its
    sample, in a batch, so it needs the cores to itself no more."""
    plan, pinned = work_files.setup_work(folder, run_id, key)
    target = open_target(pinned)
    reused = work_files.reused_times_of(folder, run_id, key)
    with cores(not reused):
        times = one_setup.time_setups({target.name: target}, plan, [key], reused=reused)
    folder.write_work(run_id, work_files.times_name(key), times[key])
    return "error" not in times[key]


def time_side_by_side(folder: CollectionFolder, run_id: str, keys: Sequence[str], part: int, *,
                      open_target: OpenTarget, cores: Cores, seconds: float) -> tuple[bool, int]:
    """One part of the timed pass of every setup in ``keys``, side by side (``one_setup.time_setups_part``),
    at most about ``seconds`` of rounds. Part 0 starts the pass; each later part reads where the last one
    stopped (times/side_by_side.json). Once every setup has stopped, each setup's result is kept as
    times/<key>.json, as ``time_setup`` keeps it. (whether the pass is done, rounds timed so far)."""
    keys = list(keys)
    work = work_files.side_by_side_work(folder, run_id, keys)
    plan, pinned, reused = work.plan, work.pinned, work.reused
    targets = {name: open_target(spec) for name, spec in pinned.items()}
    state = folder.read_work(run_id, work_files.SIDE_BY_SIDE) if part else None
    with cores(True):
        state, found = one_setup.time_setups_part(targets, plan, keys, state=state, seconds=seconds, reused=reused)
    if found is None:
        folder.write_work(run_id, work_files.SIDE_BY_SIDE, state)
    else:
        for key, times in found.items():
            folder.write_work(run_id, work_files.times_name(key), times)
    return found is not None, state["round"]


def race_look(folder: CollectionFolder, run_id: str, look: int, *, failures: dict[str, str], settled: list[str],
              reused_ranks: list[str]) -> dict[str, Any]:
    """The race's decisions once its rounds up to ``look`` have searched (``app_run.race_look_of_parts`` on
    what the run's parts kept, read as ``save_report`` reads them): ``{"looked", "running": [keys still
    racing], "stopped": {key: {"look", ...the comparison}}}``. Searches nothing."""
    parts = work_files.run_parts(folder, run_id, failures=failures, settled=settled, reused_ranks=reused_ranks)
    return app_run.race_look_of_parts(parts["plan"], look=look, shard_entries=parts["shard_entries"],
                                      times=parts["times"], reused_ranks=parts["reused_ranks"],
                                      reused_times=parts["reused_times"], settled=settled, failures=failures)
