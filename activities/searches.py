"""The activities that search: one shard of a setup's batch, every setup's timed pass side by side (in
parts), one setup's timed pass (for runs planned before side-by-side timing), and the race's look
between two rounds of shards (which searches nothing: it decides which raced setups go on). Each decodes its job,
makes one call to ``evaluation.run.app_searches`` with the app's way of opening a pinned target and of
holding the cores, and encodes the answer."""
from __future__ import annotations

import azure.durable_functions as df

from activities._shared import cores, folder_of, open_pinned
from app.storage import shared_cache
from evaluation.run import app_searches  # the module: the activities below have the names of its functions

bp = df.Blueprint()


@bp.activity_trigger(input_name="job")
def rank_shard(job: dict) -> dict:
    """{collection, run_id, key, shard} -> the ranks of that shard of the setup's batch, kept as
    entries/<key>/<shard>.json; {"key", "shard", "ok"}. Query vectors and pair scores come from, and go
    to, the collection's cache in Blob (``shared_cache``)."""
    settings, folder = folder_of(job)
    cache = shared_cache(folder)
    ok = app_searches.rank_shard(folder, job["run_id"], job["key"], job["shard"],
                                 open_target=lambda pinned: open_pinned(settings, pinned, batch_cache=cache),
                                 cores=lambda alone: cores(settings, alone=alone))
    cache.flush()  # never raises: a cache that cannot be written costs the next run, not this one
    return {"key": job["key"], "shard": job["shard"], "ok": ok}


@bp.activity_trigger(input_name="job")
def time_setup(job: dict) -> dict:
    """{collection, run_id, key} -> the setup's timed pass (``app_searches.time_setup``), kept as
    times/<key>.json; {"key", "ok"}."""
    settings, folder = folder_of(job)
    ok = app_searches.time_setup(folder, job["run_id"], job["key"],
                                 open_target=lambda pinned: open_pinned(settings, pinned),
                                 cores=lambda alone: cores(settings, alone=alone))
    return {"key": job["key"], "ok": ok}


@bp.activity_trigger(input_name="job")
def time_side_by_side(job: dict) -> dict:
    """{collection, run_id, keys, part} -> one part of every setup's timed pass side by side
    (``app_searches.time_side_by_side``): at most about EVALUATION_SHARD_SECONDS of rounds, so no activity
    runs long and a recycled instance costs one part; {"done": true|false, "part": n, "round": rounds
    timed so far}."""
    settings, folder = folder_of(job)
    done, rounds = app_searches.time_side_by_side(folder, job["run_id"], job["keys"], job["part"],
                                                  open_target=lambda pinned: open_pinned(settings, pinned),
                                                  cores=lambda alone: cores(settings, alone=alone),
                                                  seconds=settings.shard_seconds)
    return {"done": done, "part": job["part"], "round": rounds}


@bp.activity_trigger(input_name="job")
def race_look(job: dict) -> dict:
    """{collection, run_id, look, failures, settled, reused_ranks} -> the race's decisions after round
    ``look`` (``app_searches.race_look``): {"looked", "running": [keys], "stopped": {key: why}}. Made from
    the run's working files alone, so a retry or a replay decides the same."""
    _, folder = folder_of(job)
    return app_searches.race_look(folder, job["run_id"], job["look"], failures=job.get("failures") or {},
                                  settled=job.get("settled") or [], reused_ranks=job.get("reused_ranks") or [])
