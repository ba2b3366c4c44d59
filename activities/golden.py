"""Activities on a collection's golden file: its hash now, its kept copy, its check, a refused run. Each is
``app.steps``' step of the same name on the collection's folder in Blob (the AWS flow runs the same steps)."""
from __future__ import annotations

import azure.durable_functions as df

from activities._shared import folder_of
from app import steps

bp = df.Blueprint()


@bp.activity_trigger(input_name="job")
def golden_hash(job: dict) -> dict:
    """{collection} -> {"sha256": the golden file's sha256 now, or None when it is gone}; over the size
    limit {"sha256": None, "too_large": true}, unread (a run's own bytes were within it: it was replaced)."""
    return steps.golden_hash(*folder_of(job))


@bp.activity_trigger(input_name="job")
def keep_golden(job: dict) -> dict:
    """{collection, sha256} -> keep golden_dataset/<sha256>.jsonl once, if the file still holds those bytes.

    {"kept": true}, or {"kept": false, "sha256": what it holds now} when a newer save replaced it.
    """
    return steps.keep_golden(*folder_of(job), job["sha256"])


@bp.activity_trigger(input_name="job")
def check_golden_copy(job: dict) -> dict:
    """{collection, sha256} -> {"ok", "errors": how many} for the kept copy (problems stay in Blob)."""
    _, folder = folder_of(job)
    return steps.check_golden_copy(folder, job["sha256"])


@bp.activity_trigger(input_name="job")
def refuse_run(job: dict) -> dict:
    """{collection, sha256, run_id, created_at, reason | None} -> keep the report of a run that could not
    start, where runs are read; without a reason, the golden file's errors are why."""
    return steps.refuse_run(*folder_of(job), job)
