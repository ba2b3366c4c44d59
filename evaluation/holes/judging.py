"""``judge_holes``: a run's unjudged results graded by a chat model the team brings, its agreement with
the team's own labels measured first, every number it touches kept apart and marked.

The steps, on a finished report (the run keeps ids only: the texts are read here, from the golden file
and the corpus or index, and none is kept):

1. Refusals before any call: the evidence grain (it has no holes), a judge of a model family under test
   (``family``; ``allow_family`` judges anyway and prints the conflict on every pick), a cost cap for a
   model the price table does not price.
2. Calibration (``calibration``): a seeded slice of the labels the team has, graded blind on the golden
   file's scale (``grader.Scale``); Cohen's kappa with its interval, weighted (quadratic) on a graded
   scale, and the confusion matrix (``agreement``); the judge's bias toward any setup.
3. The gate: the judge's grades count only when every calibration label was graded and the low end of
   kappa's interval (weighted kappa's on a graded scale) reaches ``min_kappa`` (0.4 by default, the
   floor of "moderate" agreement on Landis & Koch's scale; published judges sit at 0.4-0.65). A judge
   that does not pass grades no hole: nothing is spent on grades that would not count.
4. The holes: every (question, unit) some ranked setup left unjudged in its top 10, best placed first
   (so a cap that stops the judging leaves the deepest holes), each graded once.
5. The numbers again on human + judged labels (``filled``): each setup's summary, the Kendall tau of
   the two rankings with its interval, and the picks they would name. The report's own picks stay the
   human labels' unless ``picks_from="judged"``, which puts the judged picks (and their ties) in the
   report, keeps the human ones beside, and marks the report (``picks_from``).

Every model call goes through the reply cache first (``golden.writing.cache.ReplyCache``, the one
``golden write`` keeps: keyed by the model's name and the messages), so a warm re-run asks nothing and
costs nothing; the ``CostMeter`` counts tokens and refuses the call that could pass the cap.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping, Sequence

from ..errors import UsageError
from ..golden.writing.cache import ReplyCache
from .prices import PriceTable, read_prices
from .settings import HoleSettings
from .steps import (JUDGED_MARK, PartSettings, Progress, calibration_gate, finish_judging, grade_pairs, plan_judging,
                    with_judged)
from .texts import UnitTexts


def judge_holes(report: Mapping[str, Any], questions: Any, texts: UnitTexts, grader: Any, *,
                settings: HoleSettings | None = None, cache: Any = None,
                prices: PriceTable | str | Path | None = None, progress: Progress | None = None,
                **keywords: Any) -> dict[str, Any]:
    """The report's ``judged`` block (the module docstring's steps, in one process: ``steps``' plan, one
    part of calibration, the gate, one part of holes, finish); the report is not changed (``with_judged``
    puts the block in a copy).

    ``questions``: the golden file's questions (a ``Golden`` or a list), for their text: a run keeps none.
    ``texts``: the text of units (``texts.index_texts``, ``texts.corpus_texts``). ``grader``: a
    ``grader.HoleGrader`` or anything with ``ask(messages) -> (text, usage)``, ``name`` and ``max_tokens``.
    ``cache``: a ``ReplyCache`` or its file, or the Blob one (``replies.BlobReplies``). ``prices``: a
    ``PriceTable`` or its file (default: the shipped ``prices.json``). Settings as ``HoleSettings`` or its
    fields as keywords.
    """
    settings = HoleSettings.of(settings, **keywords)
    table = prices if isinstance(prices, PriceTable) else read_prices(prices)
    name = str(getattr(grader, "name", "") or "")
    plan = plan_judging(report, questions, texts, name, settings=settings, prices=table,
                        api=getattr(getattr(grader, "settings", None), "kind", None),
                        max_tokens=int(getattr(grader, "max_tokens", 100)))
    replies = cache if _is_cache(cache) else ReplyCache(cache)
    total = len(plan.calibration) + len(plan.holes)
    calibrated = grade_pairs(plan, [(q, u) for q, u, _ in plan.calibration], questions, report, texts, grader, replies,
                             PartSettings(budget=settings.max_cost, what="grading the calibration labels",
                                          progress=progress, total=total))
    _, why_not = calibration_gate(report, plan, calibrated.grades)
    costs, stopped, hole_grades = [calibrated.cost], calibrated.stopped, []
    if why_not is None:
        left = None if settings.max_cost is None else max(0.0, settings.max_cost - calibrated.cost["cost_at_most"])
        holes = grade_pairs(plan, plan.holes, questions, report, texts, grader, replies,
                            PartSettings(budget=left, what="grading the holes", progress=progress, total=total,
                                         done=len(plan.calibration)))
        costs.append(holes.cost)
        stopped, hole_grades = holes.stopped, holes.grades
    if progress is not None:
        progress(total, total, "judge_holes: done")
    return finish_judging(report, plan, calibrated.grades, hole_grades, costs, stopped)


class HoleJudge:
    """A judging to run on a finished report, as ``evaluate(holes=...)`` takes it: the grader and how it
    judges, called with the report, the golden file and the run's targets; gives the report with its
    ``judged`` block (``with_judged``). ``texts`` left out: the first target whose index holds its chunks
    (the embedded engine's) gives them (``texts.index_texts``)."""

    def __init__(self, grader: Any, *, texts: UnitTexts | None = None, settings: HoleSettings | None = None,
                 cache: Any = None, prices: PriceTable | str | Path | None = None,
                 progress: Progress | None = None, **keywords: Any) -> None:
        self.grader, self.texts, self.cache, self.prices, self.progress = grader, texts, cache, prices, progress
        self.settings = HoleSettings.of(settings, **keywords)
        self.prices = prices if isinstance(prices, PriceTable) or prices is None else read_prices(prices)
        self.cache = cache if _is_cache(cache) or cache is None else ReplyCache(cache)  # checked now

    def __call__(self, report: Mapping[str, Any], questions: Any, targets: Sequence[Any] = ()) -> dict[str, Any]:
        texts = self.texts or texts_of_targets(targets)
        estimate = getattr(self.progress, "estimate", None)
        if callable(estimate):  # the run's estimate was of searches: from here on the count is of grades
            estimate(lambda: None, "grades")
        block = judge_holes(report, questions, texts, self.grader, settings=self.settings, cache=self.cache,
                            prices=self.prices, progress=self.progress)
        return with_judged(report, block)


def texts_of_targets(targets: Sequence[Any]) -> UnitTexts:
    """Unit texts from the first target whose index holds its chunks; a ``UsageError`` when none does."""
    from .texts import index_texts

    for target in targets:
        chunks = getattr(getattr(target, "index", None), "chunks", None)
        if chunks:
            return index_texts(chunks)
    raise UsageError("the judge reads each result's text, and no target here keeps its chunks (an Azure AI Search "
                     "index is read through its service): give the corpus too (--corpus, or texts=corpus_texts(...))")


def _is_cache(cache: Any) -> bool:
    """A reply cache already made: ``ReplyCache``, ``replies.BlobReplies``, anything with ``get`` and ``put``."""
    return callable(getattr(cache, "get", None)) and callable(getattr(cache, "put", None))


__all__ = ["JUDGED_MARK", "HoleJudge", "HoleSettings", "judge_holes", "texts_of_targets", "with_judged"]
