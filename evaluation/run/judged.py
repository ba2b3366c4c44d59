"""A setup's results judged into the per-question maps an entry keeps, whoever searched them: a batch
(``one_setup``), a timed pass, or an earlier run whose results are reused (``reuse``)."""
from __future__ import annotations

from typing import Any, Sequence

from ..golden import Question
from ..scoring.judging import Rule, judge, judge_rows
from ..scoring.metrics import Outcome, outcome_arrays, score_matrix
from ..target import Hit
from .planned import Plan, PlannedSetup

# What a setup's searches give per question id; ``outcomes`` (``Outcome.to_json``) is kept until
# ``with_times`` has every question for the summary, then dropped.
PER_QUESTION = ("ranks", "ndcg_10", "results", "outcomes")


def judged(questions: Sequence[Question], hit_lists: Sequence[Sequence[Hit]], by: str | Rule) -> dict[str, dict]:
    """Each question's outcome for its hits, as the per-question maps of ``PER_QUESTION`` (``by``: the
    grain, or the run's whole ``Rule``)."""
    if len(hit_lists) != len(questions):  # a silent zip would score the wrong results
        raise RuntimeError(f"the search gave {len(hit_lists)} result lists for {len(questions)} questions")
    outcomes = [judge(question, hits, by) for question, hits in zip(questions, hit_lists, strict=True)]
    return _maps(questions, outcomes, [[hit.to_row() for hit in hits] for hits in hit_lists])


def judged_rows(questions: Sequence[Question], row_lists: Sequence[Sequence[Sequence[Any]]],
                by: str | Rule) -> dict[str, dict]:
    """``judged`` for results a report kept (``Hit.to_row`` rows, ``run.reuse``): the same maps ``judged``
    gives for the hits the rows were made from, without making them. Not at the evidence grain (a row
    keeps no text: ``judge_rows``)."""
    if len(row_lists) != len(questions):
        raise RuntimeError(f"{len(row_lists)} result lists for {len(questions)} questions")
    outcomes = [judge_rows(question, rows, by) for question, rows in zip(questions, row_lists, strict=True)]
    return _maps(questions, outcomes, [[row_again(row) for row in rows] for rows in row_lists])


def row_again(row: Sequence[Any]) -> list:
    """A report's result row as ``Hit.to_row`` writes it again for the hit it was made from (``[id,
    doc_id, page, score(, reranker_score)]``, scores rounded, a None fifth element left out), without
    making that hit. (Here, not beside ``to_row``: ``target.py`` is part of the ranking state,
    ``reuse.ranking_software``, and this changes no ranking.)"""
    again = [row[0], row[1], row[2], round(float(row[3]), 6)]
    if len(row) > 4 and row[4] is not None:
        again.append(round(float(row[4]), 6))
    return again


def _maps(questions: Sequence[Question], outcomes: Sequence[Outcome], rows: Sequence[list]) -> dict[str, dict]:
    ndcg = score_matrix(*outcome_arrays(outcomes))["ndcg_10"] if outcomes else ()
    return {
        "ranks": {o.question_id: o.first for o in outcomes},
        "ndcg_10": {o.question_id: round(float(value), 6) for o, value in zip(outcomes, ndcg, strict=True)},
        "results": {q.id: found for q, found in zip(questions, rows, strict=True)},
        "outcomes": {o.question_id: o.to_json() for o in outcomes},
    }


def untimed_ids(plan: Plan) -> list[str]:
    """The ids of the questions outside the plan's timed sample, in plan order: every setup ranks them
    in its batch (``batch_ids``: a setup timed a fixed count ranks the sample's rest there too)."""
    timed = set(plan.timed_question_ids)
    return [qid for qid in plan.question_ids if qid not in timed]


# The fewest timed searches whose median has a distribution-free 95% interval (order statistics 1 and
# 6 of 6: 1 - 2 * 0.5**6 = 0.969).
FEWEST_TIMED = 6

# Rankers that score every candidate of every search through a model on the searching machine: seconds
# a search (a cross-encoder over 30 candidates: 2-3.5 s on 2 cores). A setup with one is timed on exactly
# FEWEST_TIMED searches, whatever they take. Why a fixed count rather than the floor-overrun rule alone
# (which stops a setup at 6 when 10 would spend the time budget): on 2 quiet cores the reranked searches
# sat at 2.0-2.7 s, on that rule's line, so a first run timed 6 or 10-11 of them by chance (one
# evaluate of the three reranked setups: 137-160 s). And with the count known when the run is planned,
# the sample's rest is part of the setup's batch, so the Function App ranks it in shards in parallel
# instead of in the one timing activity, one after another with every other setup's (issue 28).
FIXED_COUNT_RANKERS = ("cross-encoder",)


def timed_at_fixed_count(setup: PlannedSetup) -> bool:
    """Whether ``setup`` (a plan's setup) is timed on exactly ``FEWEST_TIMED`` searches."""
    return setup.ranker in FIXED_COUNT_RANKERS


def timed_ids(plan: Plan, setup_key: str) -> list[str]:
    """The sampled questions ``setup_key``'s timed pass may search one by one, in the order it times them:
    the plan's whole timed sample (the pass stops once the median is known well enough), or its first
    ``FEWEST_TIMED`` for a setup timed at a fixed count (``timed_at_fixed_count``)."""
    sample = list(plan.timed_question_ids)
    return sample[:FEWEST_TIMED] if timed_at_fixed_count(plan.setup(setup_key)) else sample


def batch_ids(plan: Plan, setup_key: str) -> list[str]:
    """The questions ``setup_key``'s batch ranks, in plan order: every one its timed pass never searches
    (``untimed_ids``, and the sample beyond ``timed_ids`` for a setup timed at a fixed count)."""
    timed = set(timed_ids(plan, setup_key))
    return [qid for qid in plan.question_ids if qid not in timed]
