"""Activities that end a run: assemble and save its report, and discard its working files."""
from __future__ import annotations

import azure.durable_functions as df

from activities._shared import PLAN, TIMES, entry_name, folder_of, report_name
from evaluation.evaluate import save_report as keep_report
from evaluation.steps import assemble_report, finish_entries

bp = df.Blueprint()


@bp.activity_trigger(input_name="job")
def save_report(job: dict) -> dict:
    """{collection, sha256, run_id, failures: {key: why}} -> the report, saved beside the golden copy if
    the golden file still holds the run's bytes: {"saved": true, "report": name}; else
    {"saved": false, "sha256": what it holds now} (that save's own run reports on it)."""
    _, folder = folder_of(job)
    run_id, failures = job["run_id"], job.get("failures") or {}
    plan = folder.read_work(run_id, PLAN)
    ranked = {s["key"]: folder.read_work(run_id, entry_name(s["key"])) for s in plan["setups"]
              if s["key"] not in failures}
    times = folder.read_work(run_id, TIMES) if any(e["error"] is None for e in ranked.values()) else {}
    report = assemble_report(plan, finish_entries(plan, ranked, times, failures))
    now = folder.golden_sha256()
    if now != job["sha256"]:
        return {"saved": False, "sha256": now}
    if not folder.store.has(run_id):  # a retried activity saved it already
        keep_report(folder.store, report, folder.kept_golden(job["sha256"]))  # with its report.html
    return {"saved": True, "report": report_name(folder, run_id)}


@bp.activity_trigger(input_name="job")
def discard_run_files(job: dict) -> dict:
    """{collection, run_id} -> delete the run's working files (plan, pinned targets, entries, times)."""
    _, folder = folder_of(job)
    return {"discarded": folder.discard_work(job["run_id"])}
