"""The activity that plans a run: its setups, its pinned targets, and each setup's shards."""
from __future__ import annotations

import azure.durable_functions as df

from activities._shared import folder_of
from app import steps
from app.storage import collection_targets

bp = df.Blueprint()


@bp.activity_trigger(input_name="job")
def plan_evaluation(job: dict) -> dict:
    """{collection, sha256, run_id, created_at, state} -> plan the run from the kept golden copy, pin its
    targets and cut each setup's batch into shards (the run's working files), and give
    {"setups": [keys], "side_by_side": true, "shards": {key: how many}, "reused_times": how many,
    "reused_ranks": [keys], "settled": [keys], "missing": how many expected documents a target does not
    hold}; or {"refused": why} (``app.steps.plan_evaluation`` holds what may be reused and why).

    The collection's targets are its targets.json in Blob, else EVALUATION_TARGETS; a mistake in either
    refuses the run with the sentence that names it."""
    settings, folder = folder_of(job)
    try:
        specs = collection_targets(settings, folder)
    except steps.REFUSALS as err:
        return {"refused": str(err)}
    return steps.plan_evaluation(settings, folder, job, specs)
