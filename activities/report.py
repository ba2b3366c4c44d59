"""Activities that end a run: assemble and save its report, and discard its working files."""
from __future__ import annotations

import azure.durable_functions as df

from activities._shared import folder_of
from app.golden import save_while_golden
import evaluation  # evaluation.save_report: the library's, beside an activity of the same name (with report.html)
from evaluation.holes.steps import refused_block, with_judged
from evaluation.run.app_judging import join_app_judging
from evaluation.run.app_run import join_app_run
from evaluation.run.work_files import run_parts

bp = df.Blueprint()


@bp.activity_trigger(input_name="job")
def save_report(job: dict) -> dict:
    """{collection, sha256, run_id, failures: {key: why}, reused_ranks, settled, judged?, judging_failed?} -> the
    report (with its judged block when the holes were judged: ``run.app_judging.join_app_judging``), saved
    beside the golden copy if the golden file still holds the run's bytes: {"saved": true, "report":
    name}; else {"saved": false, "sha256": what it holds now} (that save's own run reports on it).
    ``reused_ranks`` and ``settled`` are ``plan_evaluation``'s: the setups whose unchanged questions'
    results, and whose times and sample, come from an earlier run (``run.reuse``, ``run.retime``).
    The report is ``join_app_run`` of the run's working files; the conditional write, and why it is
    safe against a save landing meanwhile, is ``app.golden.save_while_golden``'s.
    """
    settings, folder = folder_of(job)
    run_id = job["run_id"]
    if job.get("judged"):  # the report was joined when the judging was planned, and the judging adds its block
        report = join_app_judging(folder, run_id, failed=job.get("judging_failed"))
    else:
        report = join_app_run(**run_parts(folder, run_id, failures=job.get("failures") or {},
                                          settled=job.get("settled") or [],
                                          reused_ranks=job.get("reused_ranks") or []),
                              owned=True)  # decoded for this call: the report takes them without copies
        if job.get("judging_failed"):  # the judging could not even be planned: the report says why
            report = with_judged(report, refused_block(settings.judge_deployment or "the judge", job["judging_failed"]))
    return save_while_golden(settings, folder, job["sha256"], run_id,
                             lambda: evaluation.save_report(folder.store, report, folder.kept_golden(job["sha256"])))


@bp.activity_trigger(input_name="job")
def discard_run_files(job: dict) -> dict:
    """{collection, run_id} -> delete the run's working files (plan, pinned targets, entries, times)."""
    _, folder = folder_of(job)
    return {"discarded": folder.discard_work(job["run_id"])}
