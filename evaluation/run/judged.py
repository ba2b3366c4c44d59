"""A setup's results judged into the per-question maps an entry keeps, whoever searched them: a batch
(``one_setup``), a timed pass, or an earlier run whose results are reused (``reuse``)."""
from __future__ import annotations

from typing import Any, Sequence

from ..golden import Question
from ..scoring.judging import judge
from ..scoring.metrics import outcome_arrays, score_matrix
from ..target import Hit

# What a setup's searches give per question id; ``outcomes`` ([positions, units expected]) is kept
# until ``with_times`` has every question for the summary, then dropped.
PER_QUESTION = ("ranks", "ndcg_10", "results", "outcomes")


def judged(questions: Sequence[Question], hit_lists: Sequence[Sequence[Hit]], by: str) -> dict[str, dict]:
    """Each question's outcome for its hits, as the per-question maps of ``PER_QUESTION``."""
    if len(hit_lists) != len(questions):  # a silent zip would score the wrong results
        raise RuntimeError(f"the search gave {len(hit_lists)} result lists for {len(questions)} questions")
    outcomes = [judge(question, hits, by) for question, hits in zip(questions, hit_lists)]
    ndcg = score_matrix(*outcome_arrays(outcomes))["ndcg_10"] if outcomes else []
    return {
        "ranks": {o.question_id: o.first for o in outcomes},
        "ndcg_10": {o.question_id: round(float(value), 6) for o, value in zip(outcomes, ndcg)},
        "results": {q.id: [hit.to_row() for hit in hits] for q, hits in zip(questions, hit_lists)},
        "outcomes": {o.question_id: [list(o.positions), o.relevant] for o in outcomes},
    }


def untimed_ids(plan: dict[str, Any]) -> list[str]:
    """The ids of the questions a setup's batch ranks (every one the plan does not time), in plan order."""
    timed = set(plan["timed_question_ids"])
    return [q["id"] for q in plan["questions"] if q["id"] not in timed]
