"""The activities that judge a run's holes (``evaluation.run.app_judging``): plan the judging (the report
joined and kept), grade one part of the calibration or of the holes, and say whether the calibration
lets the grades count. Each decodes its job, opens what it needs (the kept golden copy, the run's pinned
targets for the texts, the judge, the reply cache in Blob), makes one library call, and encodes the
answer. The judge is the chat deployment EVALUATION_JUDGE_DEPLOYMENT on AZURE_OPENAI_ENDPOINT, signed
in as the app's identity."""
from __future__ import annotations

import azure.durable_functions as df

from activities._shared import folder_of
from app import judging_steps
from evaluation.run import app_judging

bp = df.Blueprint()


@bp.activity_trigger(input_name="job")
def plan_holes(job: dict) -> dict:
    """{collection, sha256, run_id, failures, reused_ranks, settled} -> the report joined and kept, the judging
    planned and kept (``judging_steps.plan_judging``)."""
    settings, folder = folder_of(job)
    return judging_steps.plan_judging(settings, folder, job)


@bp.activity_trigger(input_name="job")
def judge_part(job: dict) -> dict:
    """{collection, sha256, run_id, stage, part} -> that part graded (``judging_steps.judge_part``)."""
    settings, folder = folder_of(job)
    return judging_steps.judge_part(settings, folder, job)


@bp.activity_trigger(input_name="job")
def judging_gate(job: dict) -> dict:
    """{collection, run_id} -> {"counted": bool, "why_not": sentence or None}: whether the judge's kappa on the
    calibration lets its grades count, and so whether the holes are graded."""
    _, folder = folder_of(job)
    return app_judging.app_judging_gate(folder, job["run_id"])
