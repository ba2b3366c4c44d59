"""Activities that plan a run and run its setups: the plan, one setup's ranks, every timed pass."""
from __future__ import annotations

import logging

import azure.durable_functions as df

from activities._shared import PLAN, TARGETS, TIMES, cores, entry_name, folder_of, open_pinned
from app_storage import collection_targets, open_collection_target
from evaluation.errors import GoldenFileError, SearchIndexError, TargetConfigError, UsageError
from evaluation.golden import golden_from_bytes
from evaluation import steps  # its rank_setup and time_setups are what the activities of those names call
from evaluation.store.collections import GOLDEN_NAME
from evaluation.targets import opened_state

log = logging.getLogger(__name__)

bp = df.Blueprint()

# What stops a run for good: its configuration, settings or index, not a passing fault. These come
# back as {"refused": sentence} for the orchestrator to keep as the run's report; anything else is
# raised, so the orchestrator's retry options try again.
_REFUSALS = (TargetConfigError, UsageError, GoldenFileError, SearchIndexError)


@bp.activity_trigger(input_name="job")
def plan_evaluation(job: dict) -> dict:
    """{collection, sha256, run_id, created_at, state} -> plan the run from the kept golden copy, pin its
    targets (in the run's working files), and give {"setups": [keys]}; or {"refused": why}."""
    settings, folder = folder_of(job)
    golden = golden_from_bytes(folder.kept_golden(job["sha256"]), folder.address(GOLDEN_NAME))
    states = job.get("state") or {}
    try:
        specs = collection_targets(settings, folder)
        targets = [open_collection_target(settings, spec, states.get(spec.name)) for spec in specs]
        plan = steps.plan_run(targets, golden, only=list(settings.only) or None, skip=settings.skip, by=settings.by,
                        timed=settings.timed, time_budget=settings.time_budget, created_at=job["created_at"],
                        run_id=job["run_id"], warn=log.warning)  # missing documents, at WARNING in the app's log
    except _REFUSALS as err:
        return {"refused": str(err)}
    folder.write_work(job["run_id"], TARGETS, {t.name: {"spec": s.to_dict(), "state": opened_state(t)}
                                              for s, t in zip(specs, targets)})
    folder.write_work(job["run_id"], PLAN, plan)
    return {"setups": [s["key"] for s in plan["setups"]]}


@bp.activity_trigger(input_name="job")
def rank_setup(job: dict) -> dict:
    """{collection, run_id, key} -> that setup's ranks, kept as the run's entries/<key>.json; {"key", "ok"}."""
    settings, folder = folder_of(job)
    plan = folder.read_work(job["run_id"], PLAN)
    pinned = folder.read_work(job["run_id"], TARGETS)[steps.planned_setup(plan, job["key"])["target"]]
    with cores(settings, alone=False):
        entry = steps.rank_setup(open_pinned(settings, pinned), plan, job["key"])
    folder.write_work(job["run_id"], entry_name(job["key"]), entry)
    return {"key": job["key"], "ok": entry["error"] is None}


@bp.activity_trigger(input_name="job")
def time_setups(job: dict) -> dict:
    """{collection, run_id, keys} -> every listed setup's timed pass, one after another and alone on this
    instance's cores, kept as the run's times.json; {"timed": how many, "failed": how many}."""
    settings, folder = folder_of(job)
    plan = folder.read_work(job["run_id"], PLAN)
    pinned = folder.read_work(job["run_id"], TARGETS)
    needed = {steps.planned_setup(plan, key)["target"] for key in job["keys"]}
    targets = {name: open_pinned(settings, pinned[name]) for name in sorted(needed)}
    with cores(settings, alone=True):
        times = steps.time_setups(targets, plan, job["keys"])
    folder.write_work(job["run_id"], TIMES, times)
    failed = sum("error" in t for t in times.values())
    return {"timed": len(times) - failed, "failed": failed}
