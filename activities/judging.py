"""The activities that judge a run's holes (``evaluation.run.app_judging``): plan the judging (the report
joined and kept), grade one part of the calibration or of the holes, and say whether the calibration
lets the grades count. Each decodes its job, opens what it needs (the kept golden copy, the run's pinned
targets for the texts, the judge, the reply cache in Blob), makes one library call, and encodes the
answer. The judge is the chat deployment EVALUATION_JUDGE_DEPLOYMENT on AZURE_OPENAI_ENDPOINT, signed
in as the app's identity."""
from __future__ import annotations

from typing import Any

import azure.durable_functions as df

from activities._shared import folder_of, open_pinned
from app.settings import AppSettings
from app.storage import judge_replies
from evaluation.chat import ChatSettings
from evaluation.errors import UsageError
from evaluation.holes.grader import GRADE_MAX_TOKENS, HoleGrader
from evaluation.holes.judging import texts_of_targets
from evaluation.holes.prices import parse_prices, read_prices
from evaluation.holes.settings import HoleSettings
from evaluation.run import app_judging
from evaluation.run.app_run import join_app_run
from evaluation.run.work_files import TARGETS, run_parts

bp = df.Blueprint()


def judge_of(settings: AppSettings) -> HoleGrader:
    """The judge the app's settings name: a deployment on the app's Azure OpenAI account, as its identity."""
    if not settings.judge_deployment or not settings.openai_endpoint:
        raise UsageError("EVALUATION_JUDGE_DEPLOYMENT names the judge's deployment on AZURE_OPENAI_ENDPOINT: set both")
    return HoleGrader(ChatSettings(endpoint=settings.openai_endpoint, model=settings.judge_deployment, api="azure",
                                   auth="managed_identity", max_tokens=GRADE_MAX_TOKENS, role="judge"))


def _texts(settings: AppSettings, folder: Any, run_id: str) -> Any:
    """The units' texts from the run's pinned targets (the embedded engine's chunks)."""
    pinned = folder.read_work(run_id, TARGETS)
    return texts_of_targets([open_pinned(settings, target) for target in pinned.values()])


@bp.activity_trigger(input_name="job")
def plan_holes(job: dict) -> dict:
    """{collection, sha256, run_id, failures, reused_ranks, settled} -> the report joined from the run's parts
    and kept, the judging planned and kept: {"calibration": parts, "holes": parts}, or {"refused": why}
    (the run is then saved without judged grades, saying why)."""
    settings, folder = folder_of(job)
    run_id = job["run_id"]
    report = join_app_run(**run_parts(folder, run_id, failures=job.get("failures") or {},
                                      settled=job.get("settled") or [], reused_ranks=job.get("reused_ranks") or []),
                          owned=True)
    name = settings.judge_deployment or ""
    try:
        texts = _texts(settings, folder, run_id)
        prices = parse_prices(settings.judge_prices, "EVALUATION_JUDGE_PRICES") if settings.judge_prices \
            else read_prices()
        judge_of(settings)  # a judge the settings cannot name is refused here, before any part
    except UsageError as err:
        refusing = app_judging.AppJudgingSettings(judge=name, settings=HoleSettings.from_app(settings),
                                                  prices=read_prices())
        return app_judging.plan_app_judging(folder, run_id, job["sha256"], report, refusing, texts=None,
                                            refused=str(err))
    judging = app_judging.AppJudgingSettings(judge=name, settings=HoleSettings.from_app(settings), prices=prices,
                                             api="azure", max_tokens=GRADE_MAX_TOKENS,
                                             pairs_per_part=settings.judge_pairs)
    return app_judging.plan_app_judging(folder, run_id, job["sha256"], report, judging, texts=texts)


@bp.activity_trigger(input_name="job")
def judge_part(job: dict) -> dict:
    """{collection, sha256, run_id, stage, part} -> that part graded, reply cache in Blob first, under its
    share of EVALUATION_JUDGE_MAX_COST; kept as judging/<stage>/<part>.json; {"stage", "part", "graded",
    "stopped"}."""
    settings, folder = folder_of(job)
    with judge_of(settings) as judge:
        return app_judging.judge_app_part(folder, job["run_id"], job["sha256"], job["stage"], job["part"], judge,
                                          texts=_texts(settings, folder, job["run_id"]), cache=judge_replies(folder))


@bp.activity_trigger(input_name="job")
def judging_gate(job: dict) -> dict:
    """{collection, run_id} -> {"counted": bool, "why_not": sentence or None}: whether the judge's kappa on the
    calibration lets its grades count, and so whether the holes are graded."""
    _, folder = folder_of(job)
    return app_judging.app_judging_gate(folder, job["run_id"])
