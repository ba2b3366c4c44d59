"""The judging legs of the app's run (issue 48): the judge the app's settings name, the texts it reads,
and each leg's one library call, so the activities in activities/judging.py only decode and encode."""
from __future__ import annotations

from typing import Any

from app.settings import AppSettings
from app.storage import judge_replies, open_collection_target
from evaluation.chat import ChatSettings
from evaluation.errors import UsageError
from evaluation.holes.grader import GRADE_MAX_TOKENS, HoleGrader
from evaluation.holes.judging import texts_of_targets
from evaluation.holes.prices import parse_prices, read_prices
from evaluation.holes.settings import HoleSettings
from evaluation.run import app_judging
from evaluation.run.app_run import join_app_run
from evaluation.run.work_files import TARGETS, run_parts
from evaluation.store.collections import CollectionFolder
from evaluation.target_specs import TargetSpec


def judge_of(settings: AppSettings) -> HoleGrader:
    """The judge the app's settings name: a deployment on the app's Azure OpenAI account, as its identity."""
    if not settings.judge_deployment or not settings.openai_endpoint:
        raise UsageError("EVALUATION_JUDGE_DEPLOYMENT names the judge's deployment on AZURE_OPENAI_ENDPOINT: set both")
    return HoleGrader(ChatSettings(endpoint=settings.openai_endpoint, model=settings.judge_deployment, api="azure",
                                   auth="managed_identity", max_tokens=GRADE_MAX_TOKENS, role="judge"))


def _texts(settings: AppSettings, folder: Any, run_id: str) -> Any:
    """The units' texts from the run's pinned targets (the embedded engine's chunks)."""
    pinned = folder.read_work(run_id, TARGETS)
    return texts_of_targets([open_collection_target(settings, TargetSpec.from_dict(target["spec"]), target["state"])
                             for target in pinned.values()])


def plan_judging(settings: AppSettings, folder: CollectionFolder, job: dict[str, Any]) -> dict[str, Any]:
    """{collection, sha256, run_id, failures, reused_ranks, settled} -> the report joined from the run's parts
    and kept, the judging planned and kept: {"calibration": parts, "holes": parts}, or {"refused": why}
    (the run is then saved without judged grades, saying why)."""
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


def judge_part(settings: AppSettings, folder: CollectionFolder, job: dict[str, Any]) -> dict[str, Any]:
    """{collection, sha256, run_id, stage, part} -> that part graded, reply cache in Blob first, under its
    share of EVALUATION_JUDGE_MAX_COST; kept as judging/<stage>/<part>.json; {"stage", "part", "graded",
    "stopped"}."""
    with judge_of(settings) as judge:
        return app_judging.judge_app_part(folder, job["run_id"], job["sha256"], job["stage"], job["part"], judge,
                                          texts=_texts(settings, folder, job["run_id"]), cache=judge_replies(folder))
