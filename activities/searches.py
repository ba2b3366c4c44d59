"""The activities that search: one shard of a setup's batch, every setup's timed pass side by side (in
parts), and one setup's timed pass (for runs planned before side-by-side timing)."""
from __future__ import annotations

import azure.durable_functions as df

from activities._shared import cores, folder_of, open_pinned
from app.storage import shared_cache
# the module, not its functions: the activity time_setup below has the name of one of them
from evaluation.run import one_setup, work_files

bp = df.Blueprint()


@bp.activity_trigger(input_name="job")
def rank_shard(job: dict) -> dict:
    """{collection, run_id, key, shard} -> the ranks of that shard of the setup's batch (its questions
    are in the run's shards.json), kept as entries/<key>/<shard>.json; {"key", "shard", "ok"}. Query
    vectors and pair scores come from, and go to, the collection's cache in Blob (``shared_cache``)."""
    settings, folder = folder_of(job)
    plan, pinned = work_files.setup_work(folder, job["run_id"], job["key"])
    questions = work_files.shard_questions(folder, job["run_id"], job["key"], job["shard"])
    cache = shared_cache(folder)
    with cores(settings, alone=False):
        entry = one_setup.rank_setup(open_pinned(settings, pinned, batch_cache=cache), plan, job["key"],
                                     questions=questions)
    cache.flush()  # never raises: a cache that cannot be written costs the next run, not this one
    folder.write_work(job["run_id"], work_files.shard_name(job["key"], job["shard"]), entry)
    return {"key": job["key"], "shard": job["shard"], "ok": entry["error"] is None}


@bp.activity_trigger(input_name="job")
def time_setup(job: dict) -> dict:
    """{collection, run_id, key} -> the setup's timed pass, alone on this instance's cores (bounded by
    the run's time budget), kept as times/<key>.json; {"key", "ok"} (a failed pass keeps its error).
    A setup the plan found times for (reused_times.json) takes them and only ranks its sample."""
    settings, folder = folder_of(job)
    plan, pinned = work_files.setup_work(folder, job["run_id"], job["key"])
    target = open_pinned(settings, pinned)
    reused = work_files.reused_times_of(folder, job["run_id"], job["key"])
    with cores(settings, alone=not reused):  # reused times: only the sample's ranks, in a batch
        times = one_setup.time_setups({target.name: target}, plan, [job["key"]], reused=reused)
    folder.write_work(job["run_id"], work_files.times_name(job["key"]), times[job["key"]])
    return {"key": job["key"], "ok": "error" not in times[job["key"]]}


@bp.activity_trigger(input_name="job")
def time_side_by_side(job: dict) -> dict:
    """{collection, run_id, keys, part} -> one part of the timed pass of every setup in ``keys``, side by
    side (``one_setup.time_setups_part``), alone on this instance's cores: at most about
    EVALUATION_SHARD_SECONDS of rounds, so no activity runs long and a recycled instance costs one part.
    Part 0 starts the pass; each later part reads where the last one stopped (times/side_by_side.json).
    Once every setup has stopped, each setup's result is kept as times/<key>.json (what ``save_report``
    reads, as from ``time_setup``); {"done": true|false, "part": n, "round": rounds timed so far}."""
    settings, folder = folder_of(job)
    keys = list(job["keys"])
    plan, pinned, reused = work_files.side_by_side_work(folder, job["run_id"], keys)
    targets = {name: open_pinned(settings, spec) for name, spec in pinned.items()}
    state = folder.read_work(job["run_id"], work_files.SIDE_BY_SIDE) if job["part"] else None
    with cores(settings, alone=True):
        state, found = one_setup.time_setups_part(targets, plan, keys, state=state,
                                                  seconds=settings.shard_seconds, reused=reused)
    if found is None:
        folder.write_work(job["run_id"], work_files.SIDE_BY_SIDE, state)
    else:
        for key, times in found.items():
            folder.write_work(job["run_id"], work_files.times_name(key), times)
    return {"done": found is not None, "part": job["part"], "round": state["round"]}
