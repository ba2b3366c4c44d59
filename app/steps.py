"""The steps of one run of a collection's golden version, as both flows run them: the Function App's
activities (``activities/``) and the AWS flow's Lambda handlers (``aws/``). Each takes the flow's
settings and the collection's folder (a Blob container's or an S3 bucket's ``CollectionFolder``), makes
its library calls and answers a small dict of plain JSON, so the two flows cannot drift apart: the same
job gives the same answer and the same files, on Blob or on S3.

What the flows keep to themselves is how they reach a folder and which targets a collection may name
(``app.storage`` for Blob, ``aws.storage`` for S3), and how they hold an instance's cores and cache.
The searching steps are ``evaluation.run.app_searches``', called by each flow with its own ways.
"""
from __future__ import annotations

import logging
import warnings
from typing import Any, Mapping, Sequence, cast

import evaluation  # evaluation.save_report: the library's (it renders report.html too)
from app.golden import GoldenTooLarge, golden_version, report_name, save_while_golden
from app.settings import AppSettings
from app.storage import open_collection_target
from evaluation.errors import GoldenFileError, MissingDocumentsWarning, SearchIndexError, TargetConfigError, UsageError
from evaluation.evaluate import held_in_report, newest_report
from evaluation.golden import check_golden_bytes, golden_from_bytes
from evaluation.holes.steps import refused_block, with_judged
from evaluation.run.app_judging import join_app_judging
from evaluation.run.app_run import join_app_run, plan_app_run
from evaluation.run.plan import PlanContext
from evaluation.run.app_run_settings import AppRunSettings
from evaluation.run.assemble import refused_run_report
from evaluation.run.work_files import keep_plan, run_parts
from evaluation.store.collections import GOLDEN_NAME, CollectionFolder
from evaluation.target_specs import TargetSpec

log = logging.getLogger(__name__)

# What stops a run for good: its configuration, settings or index, not a passing fault. These come
# back as {"refused": sentence} for the flow to keep as the run's report; anything else is raised, so
# the flow's retries try again.
REFUSALS = (TargetConfigError, UsageError, GoldenFileError, SearchIndexError)


def golden_hash(settings: AppSettings, folder: CollectionFolder) -> dict[str, Any]:
    """-> {"sha256": the golden file's sha256 now, or None when it is gone}; over the size limit
    {"sha256": None, "too_large": true}, unread (a run's own bytes were within it: it was replaced)."""
    try:
        version = golden_version(settings, folder)
    except GoldenTooLarge:
        return {"sha256": None, "too_large": True}
    return {"sha256": version.sha256 if version else None}


def keep_golden(settings: AppSettings, folder: CollectionFolder, sha256: str) -> dict[str, Any]:
    """Keep golden_dataset/<sha256>.jsonl once, if the file still holds those bytes: {"kept": true}, or
    {"kept": false, "sha256": what it holds now} when a newer save replaced it."""
    try:
        version = golden_version(settings, folder, read=True)
    except GoldenTooLarge:  # replaced by a file over the limit: not the run's bytes, and never read
        version = None
    if version is None or version.sha256 != sha256 or version.raw is None:
        return {"kept": False, "sha256": version.sha256 if version else None}
    folder.store.keep_golden(version.raw)  # read=True: the bytes are there
    return {"kept": True}


def check_golden_copy(folder: CollectionFolder, sha256: str) -> dict[str, Any]:
    """{"ok", "errors": how many} for the kept copy (the problems themselves stay in storage)."""
    check = check_golden_bytes(folder.kept_golden(sha256), folder.address(GOLDEN_NAME))
    return {"ok": check.ok, "errors": len(check.errors)}


def refuse_run(settings: AppSettings, folder: CollectionFolder, job: dict[str, Any]) -> dict[str, Any]:
    """{sha256, run_id, created_at, reason | None} -> keep the report of a run that could not start, where
    runs are read; without a reason, the golden file's errors are why. {"report": its name}."""
    raw = folder.kept_golden(job["sha256"])
    report = refused_run_report(raw, source=folder.address(GOLDEN_NAME), reason=job["reason"], run_id=job["run_id"],
                                created_at=job["created_at"], by=settings.by, timed=settings.timed)
    if not folder.store.has(job["run_id"]):  # a retried step saved it already
        evaluation.save_report(folder.store, cast(dict[str, Any], report), raw)  # with its report.html
    return {"report": report_name(folder, job["run_id"])}


def plan_evaluation(settings: AppSettings, folder: CollectionFolder, job: dict[str, Any],
                    specs: Sequence[TargetSpec]) -> dict[str, Any]:
    """{sha256, run_id, created_at, state} and the collection's target ``specs`` -> plan the run from the
    kept golden copy, pin its targets and cut each setup's batch into shards (the run's working files):
    {"setups": [keys], "side_by_side": true, "shards": {key: how many}, "reused_times": how many,
    "reused_ranks": [keys], "settled": [keys], "missing": how many expected documents a target does
    not hold}, and with a race ``"race": {"looks": how many, "raced": [keys], "rounds": {key: [the round
    of each shard]}}``; or {"refused": why}.

    The collection's newest report says what the run may reuse (``run.plan_app_run`` holds the rules):
    its times, unless EVALUATION_RETIME=always or they are older than EVALUATION_RETIME_MAX_DAYS, and its
    results of unchanged questions (kept as reused/<key>.json, left out of the shards), unless
    EVALUATION_RETIME=always; it also sizes the shards, and tells "no longer holds" from "does not
    hold". Every expected document is looked up on every target before any search (``plan_run``): what
    a target does not hold is warned about once and kept in the report's ``missing``. ``settled``: the
    setups whose times and sampled questions are all reused, which need no timed pass; ``reused_ranks``:
    the setups with reused results; ``judge``: whether the holes are judged (EVALUATION_JUDGE_DEPLOYMENT).
    """
    golden = golden_from_bytes(folder.kept_golden(job["sha256"]), folder.address(GOLDEN_NAME))
    states = job.get("state") or {}
    newest = newest_report(folder.store)
    try:
        targets = [open_collection_target(settings, spec, states.get(spec.name)) for spec in specs]
        with warnings.catch_warnings():
            # Missing documents are said once, at WARNING in the flow's log through ``warn``; the
            # MissingDocumentsWarning plan_run also raises would reach the same log a second time, so
            # the flows ignore it, as the command line does.
            warnings.simplefilter("ignore", MissingDocumentsWarning)
            context = PlanContext(run_id=job["run_id"], created_at=job["created_at"], warn=log.warning,
                                  held_before=held_in_report(newest))
            planned = plan_app_run(targets, golden, newest=newest, context=context,
                                   settings=AppRunSettings.from_app(settings))
    except REFUSALS as err:
        return {"refused": str(err)}
    keep_plan(folder, job["run_id"], planned, specs, targets)
    missing = planned.plan.missing
    # side_by_side: every setup is timed in one pass (time_side_by_side); a Function App plan answered
    # before it had none, and its run, still in flight, replays one time_setup per setup as it began
    answer = {"setups": planned.plan.setup_keys, "side_by_side": True,
              "shards": {key: len(s) for key, s in planned.shards.items()},
              "reused_times": len(planned.reused_times), "reused_ranks": sorted(planned.reused_ranks),
              "settled": planned.settled,
              # judge: the holes are judged before the save; plans answered before judging had no such
              # key, and their runs, in flight, save as they began
              "judge": bool(settings.judge_deployment),
              "missing": sum(len(found.get("documents") or ()) for found in missing.values()
                             if isinstance(found, dict))}
    race = planned.plan.race
    if race is not None:  # the flow times first, then runs a round of shards per look, a race_look after each
        answer["race"] = {"looks": len(race.looks), "raced": list(race.raced), "rounds": planned.rounds}
    return answer


def save_report(settings: AppSettings, folder: CollectionFolder, job: dict[str, Any]) -> dict[str, Any]:
    """{sha256, run_id, failures: {key: why}, reused_ranks, settled} -> the report, saved beside the golden
    copy if the golden file still holds the run's bytes: {"saved": true, "report": name}; else
    {"saved": false, "sha256": what it holds now} (that save's own run reports on it). The report is
    ``join_app_run`` of the run's working files; the conditional write, and why it is safe against a save
    landing meanwhile, is ``app.golden.save_while_golden``'s."""
    run_id = job["run_id"]
    report: Mapping[str, Any]
    if job.get("judged"):  # the report was joined when the judging was planned, and the judging adds its block
        report = join_app_judging(folder, run_id, failed=job.get("judging_failed"))
    else:
        report = join_app_run(**run_parts(folder, run_id, failures=job.get("failures") or {},
                                          settled=job.get("settled") or [],
                                          reused_ranks=job.get("reused_ranks") or []),
                              owned=True)  # decoded for this call: the report takes them without copies
        if job.get("judging_failed"):  # the judging could not even be planned: the report says why
            report = with_judged(report, refused_block(settings.judge_deployment or "the judge", job["judging_failed"]))
    kept = cast(dict[str, Any], report)  # a Report is a dict (a TypedDict)
    return save_while_golden(settings, folder, job["sha256"], run_id,
                             lambda: evaluation.save_report(folder.store, kept, folder.kept_golden(job["sha256"])))


def discard_run_files(folder: CollectionFolder, run_id: str) -> dict[str, Any]:
    """Delete the run's working files (plan, pinned targets, entries, times): {"discarded": how many}."""
    return {"discarded": folder.discard_work(run_id)}
