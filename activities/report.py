"""Activities that end a run: assemble and save its report, and discard its working files."""
from __future__ import annotations

import azure.durable_functions as df

from activities._shared import (PLAN, REUSED, SHARDS, folder_of, report_name, reused_ranks_name, shard_name,
                                times_name)
from app_golden import GoldenTooLarge, golden_version, still_holds
import evaluation  # evaluation.save_report: the library's, beside an activity of the same name
from evaluation import steps  # join_app_run: the run's parts joined into its report
from evaluation.errors import StoreError
from evaluation.store.blob import delete_blobs
from evaluation.store.collections import CollectionFolder
from evaluation.store.runs import PAGE_NAME, RUNS_DIR

bp = df.Blueprint()


@bp.activity_trigger(input_name="job")
def save_report(job: dict) -> dict:
    """{collection, sha256, run_id, failures: {key: why}, reused_ranks, settled} -> the report, saved
    beside the golden copy if the golden file still holds the run's bytes: {"saved": true, "report":
    name}; else {"saved": false, "sha256": what it holds now} (that save's own run reports on it).
    ``reused_ranks`` and ``settled`` are ``plan_evaluation``'s: the setups whose unchanged questions'
    results, and whose times and sample, come from an earlier run (``run.reuse``, ``run.retime``).

    The write is conditional on the golden file's ETag at the hash check: Blob conditions hold only
    for the blob a request writes, so the report is written and then the golden file asked, with
    ``If-Match`` on that ETag, whether it is still that version; when it is not (a save landed in
    between), the report and its page are deleted again. A report never stays for bytes no longer in
    the file, and a save is never blocked (a lease on the golden file would refuse the team's upload).
    """
    settings, folder = folder_of(job)
    run_id, failures = job["run_id"], job.get("failures") or {}
    settled = job.get("settled") or []
    plan = folder.read_work(run_id, PLAN)
    shards = folder.read_work(run_id, SHARDS)
    # the files the run's activities kept: a failed setup's may be partly absent, a settled one has no times
    report = steps.join_app_run(
        plan, failures=failures, settled=settled,
        shard_entries={key: [folder.read_work(run_id, shard_name(key, n)) for n in range(len(parts))]
                       for key, parts in shards.items() if key not in failures},
        reused_ranks={key: _optional(folder, run_id, reused_ranks_name(key)) for key in job.get("reused_ranks") or ()},
        times={key: _optional(folder, run_id, times_name(key)) for key in shards
               if key not in failures and key not in settled},
        reused_times=folder.read_work(run_id, REUSED) if settled else {})
    seen = _golden_now(settings, folder)
    if seen is None or seen.sha256 != job["sha256"]:
        _take_back(folder, run_id)  # an earlier attempt of this activity may have kept it already
        return {"saved": False, "sha256": seen.sha256 if seen else None}
    if not folder.store.has(run_id):  # a retried activity saved it already
        evaluation.save_report(folder.store, report, folder.kept_golden(job["sha256"]))  # with its report.html
    if not still_holds(folder, seen):
        _take_back(folder, run_id)
        now = _golden_now(settings, folder)
        return {"saved": False, "sha256": now.sha256 if now else None}
    return {"saved": True, "report": report_name(folder, run_id)}


def _optional(folder: CollectionFolder, run_id: str, name: str) -> dict | None:
    """A working file that may be absent: a setup's timed pass that never ran (``join_app_run`` then
    says so), or reused results no longer there (then merging says which questions have none)."""
    try:
        return folder.read_work(run_id, name)
    except StoreError:
        return None


def _golden_now(settings, folder: CollectionFolder):
    try:
        return golden_version(settings, folder)
    except GoldenTooLarge:  # replaced by a file over the limit: not the run's bytes
        return None


def _take_back(folder: CollectionFolder, run_id: str) -> None:
    """Delete the run's report, then its page (a page without its report is never listed)."""
    delete_blobs(folder.container, [report_name(folder, run_id), f"{folder.name}/{RUNS_DIR}/{run_id}/{PAGE_NAME}"])


@bp.activity_trigger(input_name="job")
def discard_run_files(job: dict) -> dict:
    """{collection, run_id} -> delete the run's working files (plan, pinned targets, entries, times)."""
    _, folder = folder_of(job)
    return {"discarded": folder.discard_work(job["run_id"])}
