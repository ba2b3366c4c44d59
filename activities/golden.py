"""Activities on a collection's golden file: its hash now, its kept copy, its check, a refused run."""
from __future__ import annotations

import azure.durable_functions as df

from activities._shared import folder_of
from app.golden import GoldenTooLarge, golden_version, report_name
import evaluation  # evaluation.save_report, as activities/report.py calls it (an activity there has its name)
from evaluation.golden import check_golden_bytes
from evaluation.run.assemble import refused_run_report
from evaluation.store.collections import GOLDEN_NAME

bp = df.Blueprint()


@bp.activity_trigger(input_name="job")
def golden_hash(job: dict) -> dict:
    """{collection} -> {"sha256": the golden file's sha256 now, or None when it is gone}; over the size
    limit {"sha256": None, "too_large": true}, unread (a run's own bytes were within it: it was replaced)."""
    settings, folder = folder_of(job)
    try:
        version = golden_version(settings, folder)
    except GoldenTooLarge:
        return {"sha256": None, "too_large": True}
    return {"sha256": version.sha256 if version else None}


@bp.activity_trigger(input_name="job")
def keep_golden(job: dict) -> dict:
    """{collection, sha256} -> keep golden_dataset/<sha256>.jsonl once, if the file still holds those bytes.

    {"kept": true}, or {"kept": false, "sha256": what it holds now} when a newer save replaced it.
    """
    settings, folder = folder_of(job)
    try:
        version = golden_version(settings, folder, read=True)
    except GoldenTooLarge:  # replaced by a file over the limit: not the run's bytes, and never read
        version = None
    if version is None or version.sha256 != job["sha256"]:
        return {"kept": False, "sha256": version.sha256 if version else None}
    folder.store.keep_golden(version.raw)
    return {"kept": True}


@bp.activity_trigger(input_name="job")
def check_golden_copy(job: dict) -> dict:
    """{collection, sha256} -> {"ok", "errors": how many} for the kept copy (problems stay in Blob)."""
    _, folder = folder_of(job)
    check = check_golden_bytes(folder.kept_golden(job["sha256"]), folder.address(GOLDEN_NAME))
    return {"ok": check.ok, "errors": len(check.errors)}


@bp.activity_trigger(input_name="job")
def refuse_run(job: dict) -> dict:
    """{collection, sha256, run_id, created_at, reason | None} -> keep the report of a run that could not
    start, where runs are read; without a reason, the golden file's errors are why."""
    settings, folder = folder_of(job)
    raw = folder.kept_golden(job["sha256"])
    report = refused_run_report(raw, source=folder.address(GOLDEN_NAME), reason=job["reason"], run_id=job["run_id"],
                                created_at=job["created_at"], by=settings.by, timed=settings.timed)
    if not folder.store.has(job["run_id"]):  # a retried activity saved it already
        evaluation.save_report(folder.store, report, raw)  # with its report.html
    return {"report": report_name(folder, job["run_id"])}
