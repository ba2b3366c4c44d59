"""The judging of a run's holes done in parts, as the Function App does it (``holes.steps`` in activities):
planned in one call, graded in parts at once, gated, joined into the report when it is saved.

- ``plan_app_judging``: the report joined from the run's parts (``join_app_run``) and kept, the judging
  planned (``plan_judging``, as one ``AppJudgingSettings`` says) and kept, and how many parts of each
  stage there are (``PAIRS_PER_PART`` pairs a part, in the plan's order); a refusal (a family under
  test, a cap without a price, targets without text) is kept and said, and the run is saved without
  judged grades;
- ``judge_app_part``: one part graded under its share of the cap (``part_budgets``: the calibration's
  parts share the cap, the holes' parts what the calibration left), its grades and costs kept;
- ``app_judging_gate``: whether the calibration lets the grades count (then the holes are graded);
- ``join_app_judging``: the report with its ``judged`` block, for ``save_report``.

Working files (``judging/`` beside the run's others, discarded with them): ``report.json``, ``plan.json``
(ids, grades and costs only, as the report), ``refused.json``, and ``<stage>/<part>.json`` per part. The
texts are read again in each part from the kept golden copy and the run's pinned targets.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence, cast

from ..errors import StoreError, UsageError
from ..golden import golden_from_bytes
from ..holes.prices import PriceTable
from ..holes.settings import HoleSettings
from ..holes.steps import (Graded, JudgingPlan, PartSettings, calibration_gate, finish_judging, grade_pairs,
                           part_budgets, plan_judging, refused_block, with_judged)
from ..holes.texts import UnitTexts
from ..store.collections import GOLDEN_NAME, CollectionFolder
from ..store.shape import Report

PAIRS_PER_PART = 100  # about 2-3 minutes of a chat model's replies: no activity runs long
REPORT = "judging/report.json"
PLAN = "judging/plan.json"
REFUSED = "judging/refused.json"
STAGES = ("calibration", "holes")


def part_name(stage: str, part: int) -> str:
    if stage not in STAGES:
        raise ValueError(f"stage {stage!r}: one of {', '.join(STAGES)}")
    return f"judging/{stage}/{part}.json"


def _chunks(items: Sequence[Any], size: int) -> list[list[Any]]:
    return [list(items[start:start + size]) for start in range(0, len(items), size)]


@dataclass(frozen=True)
class AppJudgingSettings:
    """How a run's holes are judged in parts: the judge (its name, a deployment, and how it is called:
    ``api``, ``max_tokens``), its prices, the judging's ``HoleSettings``, and how many (question, unit)
    pairs one part grades (``pairs_per_part``: a few minutes of a chat model's replies)."""

    judge: str
    settings: HoleSettings
    prices: PriceTable
    api: str | None = None
    max_tokens: int = 100
    pairs_per_part: int = PAIRS_PER_PART


def plan_app_judging(folder: CollectionFolder, run_id: str, sha256: str, report: Report,
                     judging: AppJudgingSettings, *, texts: UnitTexts | None,
                     refused: str | None = None) -> dict[str, Any]:
    """Keep ``report`` and the judging's plan; ``{"calibration": parts, "holes": parts}``, or
    ``{"refused": why}`` (kept too) when the judging cannot start (``refused`` given: the caller's own
    reason, such as no target holding text). ``judging``: the judge and how it judges."""
    folder.write_work(run_id, REPORT, report)
    judge, per = judging.judge, judging.pairs_per_part
    if refused is None and texts is not None:
        golden = golden_from_bytes(folder.kept_golden(sha256), folder.address(GOLDEN_NAME))
        try:
            plan = plan_judging(report, golden, texts, judge, settings=judging.settings, prices=judging.prices,
                                api=judging.api, max_tokens=judging.max_tokens)
        except UsageError as err:
            refused = str(err)
    if refused is not None or texts is None:
        reason = refused or "no target of the run keeps its text"
        folder.write_work(run_id, REFUSED, {"judge": judge, "reason": reason})
        return {"refused": reason}
    folder.write_work(run_id, PLAN, {**plan.to_json(), "pairs_per_part": per})
    return {"calibration": len(_chunks(plan.calibration, per)), "holes": len(_chunks(plan.holes, per))}


def _plan(folder: CollectionFolder, run_id: str) -> tuple[JudgingPlan, int]:
    kept = folder.read_work(run_id, PLAN)
    return JudgingPlan.from_json(kept), int(kept["pairs_per_part"])


def _calibration_parts(folder: CollectionFolder, run_id: str, plan: JudgingPlan, per: int) -> list[Graded]:
    return [Graded(**folder.read_work(run_id, part_name("calibration", n)))
            for n in range(len(_chunks(plan.calibration, per)))]


def judge_app_part(folder: CollectionFolder, run_id: str, sha256: str, stage: str, part: int, grader: Any, *,
                   texts: UnitTexts, cache: Any) -> dict[str, Any]:
    """Grade one part of ``stage`` under its share of the cap and keep what it gave;
    ``{"stage", "part", "graded": n, "stopped": bool}``."""
    plan, per = _plan(folder, run_id)
    report = folder.read_work(run_id, REPORT)
    cap = plan.settings.max_cost
    if stage == "calibration":
        pairs = [(q, u) for q, u, _ in plan.calibration]
        budgets = part_budgets(_chunks(plan.worst_calibration, per), cap)
    else:
        pairs = list(plan.holes)
        spent = sum(float(g.cost.get("cost_at_most") or 0) for g in _calibration_parts(folder, run_id, plan, per))
        budgets = part_budgets(_chunks(plan.worst_holes, per), None if cap is None else max(0.0, cap - spent))
    mine = _chunks(pairs, per)[part]
    golden = golden_from_bytes(folder.kept_golden(sha256), folder.address(GOLDEN_NAME))
    graded = grade_pairs(plan, mine, golden, report, texts, grader, cache,
                         PartSettings(budget=budgets[part], what=f"grading the {stage}, part {part + 1}"))
    folder.write_work(run_id, part_name(stage, part), graded.to_json())
    return {"stage": stage, "part": part, "graded": sum(g is not None for g in graded.grades),
            "stopped": graded.stopped}


def app_judging_gate(folder: CollectionFolder, run_id: str) -> dict[str, Any]:
    """``{"counted": bool, "why_not": sentence or None}`` from the calibration's parts."""
    plan, per = _plan(folder, run_id)
    report = folder.read_work(run_id, REPORT)
    grades = [g for part in _calibration_parts(folder, run_id, plan, per) for g in part.grades]
    _, why_not = calibration_gate(report, plan, grades)
    return {"counted": why_not is None, "why_not": why_not}


def join_app_judging(folder: CollectionFolder, run_id: str, *, failed: str | None = None) -> Report:
    """The kept report with its ``judged`` block: the grades of every part, or why there are none (a
    refusal kept by the plan, or ``failed``: a part whose retries ran out)."""
    report = folder.read_work(run_id, REPORT)
    try:
        refusal = folder.read_work(run_id, REFUSED)
    except StoreError:
        refusal = None
    if refusal is not None:
        return cast(Report, with_judged(report, refused_block(refusal["judge"], refusal["reason"])))
    plan, per = _plan(folder, run_id)
    if failed is not None:
        return cast(Report, with_judged(report, refused_block(plan.judge, f"the judging stopped: {failed}")))
    calibration = _calibration_parts(folder, run_id, plan, per)
    holes = []
    for n in range(len(_chunks(plan.holes, per))):
        try:
            holes.append(Graded(**folder.read_work(run_id, part_name("holes", n))))
        except StoreError:  # the gate stopped the judging before the holes: none was graded
            holes = []
            break
    block = finish_judging(report, plan, [g for p in calibration for g in p.grades],
                           [g for p in holes for g in p.grades], [p.cost for p in calibration + holes],
                           any(p.stopped for p in calibration + holes))
    return cast(Report, with_judged(report, block))
