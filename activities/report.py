"""Activities that end a run: assemble and save its report, and discard its working files."""
from __future__ import annotations

import azure.durable_functions as df

from activities._shared import folder_of
from app import steps

bp = df.Blueprint()


@bp.activity_trigger(input_name="job")
def save_report(job: dict) -> dict:
    """{collection, sha256, run_id, failures: {key: why}, reused_ranks, settled, judged?, judging_failed?} -> the
    report (with its judged block when the holes were judged: ``run.app_judging.join_app_judging``), saved
    beside the golden copy if the golden file still holds the run's bytes: {"saved": true, "report":
    name}; else {"saved": false, "sha256": what it holds now} (that save's own run reports on it).
    ``reused_ranks`` and ``settled`` are ``plan_evaluation``'s: the setups whose unchanged questions'
    results, and whose times and sample, come from an earlier run (``run.reuse``, ``run.retime``).
    ``app.steps.save_report`` joins the run's working files and saves while the golden file holds them.
    """
    return steps.save_report(*folder_of(job), job)


@bp.activity_trigger(input_name="job")
def discard_run_files(job: dict) -> dict:
    """{collection, run_id} -> delete the run's working files (plan, pinned targets, entries, times)."""
    _, folder = folder_of(job)
    return steps.discard_run_files(folder, job["run_id"])
