"""Metrics at any cut-off k, as ElectriPy's runner reports them: hit rate, precision, recall, MRR@k, nDCG@k.

Each question's ``Outcome`` (see ``metrics``) holds the 1-based position at which each of its expected
units (a document, or a chunk at ``--by chunk``) was first found, and how many units it has. At a
cut-off k, with ``found_k`` the units first found at positions <= k, ``results_k`` the distinct positions
they were found at (results, not units: they differ only where one result holds two) and ``first`` the
first such position:

- hit_rate@k   1 when ``first <= k``, else 0 (our found@k: the same number under ElectriPy's name).
- precision@k  ``results_k / k``: k is the denominator even when fewer than k results came back, as in
               trec_eval's P@k; a later chunk of a document already found is not relevant again.
- recall@k     ``found_k / units``.
- MRR@k        ``1 / first`` when ``first <= k``, else 0: a relevant result past k earns nothing.
- nDCG@k       ``metrics``' nDCG@10 at depth k, so one name means one number in every view (trec_eval's
               ndcg_cut_k): the gain of a unit first found at p <= k is its grade where the golden file
               grades (the ideal: every judged grade above 0, best first), else 1 (the ideal: one
               relevant result at each position 1..min(needed, k), ``needed`` as in ``metrics``).

Each is macro-averaged: the mean over questions of the per-question value, every question weighing
the same. A question with no results scores 0 on all five. Values are rounded to 4 decimals only
where a report shows them (``summarise_at``); per-question values keep full precision.
"""
from __future__ import annotations

from typing import Any, Iterable, Sequence

from ..errors import WrongValueError
from ..measures import AT_K_KEYS
from .metrics import Outcome, outcome_arrays, score_matrix

AT_K = AT_K_KEYS  # each measure's key at a cut-off, in the order reports list them (measures.at_k)
MAX_K = 1000  # results a search is asked for at most: a larger cut-off is a typo, not a measure


def check_cutoffs(cutoffs: Iterable[int]) -> tuple[int, ...]:
    """``cutoffs`` as a sorted tuple without repeats; ``WrongValueError`` (a ValueError) for anything but whole
    numbers from 1 to ``MAX_K``, or for none at all."""
    out = [check_cutoff(k) for k in cutoffs]
    if not out:
        raise WrongValueError("give at least one cut-off, such as 3, 5, 10")
    return tuple(sorted(set(out)))


def check_cutoff(k: Any) -> int:
    """``k`` when it is a whole number of results from 1 to ``MAX_K``; else ``WrongValueError`` saying so (a cut-off
    of 0 would divide precision by 0)."""
    if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= MAX_K:
        raise WrongValueError(f"a cut-off is a whole number of results from 1 to {MAX_K:,}, not {k!r}")
    return k


def question_at(outcome: Outcome, k: int) -> dict[str, float]:
    """The five metrics of one question at cut-off ``k`` (see the module docstring); ``WrongValueError`` for a
    ``k`` that is not a cut-off (``check_cutoff``)."""
    check_cutoff(k)
    within = [p for p in outcome.positions if p <= k]
    distinct = sorted(set(within))
    first = distinct[0] if distinct else None
    return {
        "hit_rate": 1.0 if first is not None else 0.0,
        "precision": len(distinct) / k,  # results, not units: one result holding two units counts once
        "recall": len(within) / outcome.relevant if outcome.relevant else 0.0,
        "mrr": 1.0 / first if first is not None else 0.0,
        "ndcg": float(score_matrix(*outcome_arrays([outcome], k))[f"ndcg_{k}"][0]),  # graded where graded
    }


def summarise_at(outcomes: Sequence[Outcome], cutoffs: Iterable[int]) -> dict[str, dict[str, float]]:
    """``{str(k): {metric: macro average over questions}}`` for each k in ``cutoffs``, rounded to 4 decimals."""
    out: dict[str, dict[str, float]] = {}
    for k in check_cutoffs(cutoffs):
        rows = [question_at(o, k) for o in outcomes]
        out[str(k)] = {m: round(sum(r[m] for r in rows) / len(rows), 4) if rows else 0.0 for m in AT_K}
    return out


def per_question_at(outcomes: Sequence[Outcome], cutoffs: Iterable[int]) -> list[dict[str, Any]]:
    """One row per question: its id, units, first position, and each metric at each k (unrounded)."""
    ks = check_cutoffs(cutoffs)
    return [{"id": o.question_id, "relevant": o.relevant, "first": o.first,
             "at": {str(k): question_at(o, k) for k in ks}} for o in outcomes]
