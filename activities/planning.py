"""The activity that plans a run: its setups, its pinned targets, and each setup's shards."""
from __future__ import annotations

import logging
import warnings

import azure.durable_functions as df

from activities._shared import folder_of
from app.storage import collection_targets, open_collection_target
from evaluation.errors import GoldenFileError, MissingDocumentsWarning, SearchIndexError, TargetConfigError, UsageError
from evaluation.evaluate import held_in_report, newest_report
from evaluation.golden import golden_from_bytes
from evaluation.run.app_run import plan_app_run
from evaluation.run.app_run_settings import AppRunSettings
from evaluation.run.work_files import keep_plan
from evaluation.store.collections import GOLDEN_NAME

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
    {"setups": [keys], "side_by_side": true, "shards": {key: how many}, "reused_times": how many,
    "reused_ranks": [keys], "settled": [keys]}, and with a race ``"race": {"looks": how many, "raced":
    [keys], "rounds": {key: [the round of each shard]}}``; or {"refused": why}.

    The collection's newest report says what the run may reuse (``run.plan_app_run`` holds the rules):
    its times, unless EVALUATION_RETIME=always or they are older than EVALUATION_RETIME_MAX_DAYS, and its
    results of unchanged questions (kept as reused/<key>.json, left out of the shards), unless
    EVALUATION_RETIME=always; it also sizes the shards, and tells "no longer holds" from "does not
    hold". ``settled``: the setups whose times and sampled questions are all reused, which need no timed
    pass; ``reused_ranks``: the setups with reused results."""
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
            planned = plan_app_run(targets, golden, newest=newest, held_before=held_in_report(newest),
                                   created_at=job["created_at"], run_id=job["run_id"], warn=log.warning,
                                   settings=AppRunSettings.from_app(settings))
    except _REFUSALS as err:
        return {"refused": str(err)}
    keep_plan(folder, job["run_id"], planned, specs, targets)
    # side_by_side: the orchestrator times every setup in one pass (time_side_by_side); a plan answered
    # before it had none, and its run, still in flight, replays one time_setup per setup as it began
    answer = {"setups": [s["key"] for s in planned.plan["setups"]], "side_by_side": True,
              "shards": {key: len(s) for key, s in planned.shards.items()},
              "reused_times": len(planned.reused_times), "reused_ranks": sorted(planned.reused_ranks),
              "settled": planned.settled}
    race = planned.plan.get("race")
    if race:  # the orchestrator times first, then runs a round of shards per look, a race_look after each
        answer["race"] = {"looks": len(race["looks"]), "raced": list(race["raced"]), "rounds": planned.rounds}
    return answer
