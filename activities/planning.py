"""The activity that plans a run: its setups, its pinned targets, and each setup's shards."""
from __future__ import annotations

import logging
import warnings

import azure.durable_functions as df

from activities._shared import PLAN, REUSED, SHARDS, TARGETS, folder_of, reused_ranks_name
from app_storage import collection_targets, open_collection_target
from evaluation.errors import GoldenFileError, MissingDocumentsWarning, SearchIndexError, TargetConfigError, UsageError
from evaluation.evaluate import held_in_report, newest_report
from evaluation.golden import golden_from_bytes
from evaluation.settings import EvaluationSettings
from evaluation import steps  # plan_run, plan_shards, measured_times: the run's first step
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
    targets and cut each setup's batch into shards (the run's working files), and give
    {"setups": [keys], "shards": {key: how many}}; or {"refused": why}.

    The collection's newest report says which expected documents its targets held then (so a run can
    say "no longer holds", as the CLI does), how long each setup's searches took (the shards' sizes),
    and which setups it timed live on the same index state (their times are reused, unless
    EVALUATION_RETIME=always or they are older than EVALUATION_RETIME_MAX_DAYS), and which questions'
    results it searched under the same ranking state (``run.reuse``: left out of the shards, kept as
    reused/<key>.json; also unless EVALUATION_RETIME=always). ``settled``: the setups whose times and
    sampled questions are all reused, which need no timed pass; ``reused_ranks``: the setups with
    reused results."""
    settings, folder = folder_of(job)
    golden = golden_from_bytes(folder.kept_golden(job["sha256"]), folder.address(GOLDEN_NAME))
    states = job.get("state") or {}
    newest = newest_report(folder.store)
    try:
        specs = collection_targets(settings, folder)
        targets = [open_collection_target(settings, spec, states.get(spec.name)) for spec in specs]
        with warnings.catch_warnings():
            # Missing documents are said once, at WARNING in the app's log through ``warn``; the
            # MissingDocumentsWarning plan_run also raises would reach the same log a second time
            # (the worker logs warnings), so the app ignores it, as the command line does.
            warnings.simplefilter("ignore", MissingDocumentsWarning)
            plan = steps.plan_run(targets, golden, only=list(settings.only) or None, skip=settings.skip,
                                  settings=EvaluationSettings.from_app(settings), created_at=job["created_at"],
                                  run_id=job["run_id"], held_before=held_in_report(newest), warn=log.warning)
        live = settings.retime == "always"  # EVALUATION_RETIME=always: every search and every time live
        reused = {} if live else steps.reusable_times(plan, newest, max_age_days=settings.retime_max_days)
        ranks = {} if live else steps.reusable_ranks(plan, newest)
        shards = steps.plan_shards(plan, measured_ms=steps.measured_times(newest), reused=ranks,
                                   shard_seconds=settings.shard_seconds, most_questions=settings.shard_questions)
        settled = [s["key"] for s in plan["setups"]
                   if steps.reused_timing(plan, s["key"], reused.get(s["key"]), ranks.get(s["key"])) is not None]
    except _REFUSALS as err:
        return {"refused": str(err)}
    folder.write_work(job["run_id"], TARGETS, {t.name: {"spec": s.to_dict(), "state": opened_state(t)}
                                              for s, t in zip(specs, targets)})
    folder.write_work(job["run_id"], PLAN, plan)
    folder.write_work(job["run_id"], SHARDS, shards)
    folder.write_work(job["run_id"], REUSED, reused)
    for key, found in ranks.items():
        folder.write_work(job["run_id"], reused_ranks_name(key), found)
    return {"setups": [s["key"] for s in plan["setups"]], "shards": {key: len(s) for key, s in shards.items()},
            "reused_times": len(reused), "reused_ranks": sorted(ranks), "settled": settled}
