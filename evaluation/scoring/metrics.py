"""Retrieval metrics over judged questions, computed for all questions at once with numpy.

A question's ``Outcome`` holds the 1-based positions at which each of its relevant units was first
found (see ``judging``) and how many relevant units it has. From those:

- found@k   share of questions with a relevant result at position <= k (k in 1, 3, 5, 10, 20).
- MRR       mean over questions of 1 / (position of the first relevant result); 0 when none came back.
- nDCG@10   DCG = sum over relevant positions p <= 10 of 1 / log2(p + 1), binary gains, divided by
            the ideal DCG of min(relevant, 10) relevant results at the top (trec_eval's ndcg_cut_10).
- landed    how many questions had their first relevant result first, at 2-3, 4-5, 6-10, 11-20,
            or not in the top 20.

Rules: positions count results as they came back, so a target's order decides ties (the embedded
engine orders equal scores by chunk id). A question with no results, or with nothing relevant in
them, scores 0 on every metric and lands "not in top 20". Questions without any relevant unit are
not scored at all (the caller leaves them out). Times: median and 95th percentile (linear
interpolation between closest ranks, numpy's default) of the timed searches, in milliseconds.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

CUTOFFS = (1, 3, 5, 10, 20)
LANDED = ("first", "2-3", "4-5", "6-10", "11-20", "not in top 20")
_LANDED_EDGES = (1, 3, 5, 10, 20)  # upper position of each bucket but the last
NDCG_CUTOFF = 10


@dataclass(frozen=True)
class Outcome:
    question_id: str
    positions: tuple[int, ...]  # ascending, 1-based
    relevant: int

    @property
    def first(self) -> int | None:
        return self.positions[0] if self.positions else None


def _discounts(length: int) -> np.ndarray:
    return 1.0 / np.log2(np.arange(2, length + 2, dtype=np.float64))


def score_matrix(first: np.ndarray, hits10: np.ndarray, relevant: np.ndarray) -> dict[str, np.ndarray]:
    """Per-question metric arrays.

    ``first``: (Q,) position of the first relevant result, 0 when none. ``hits10``: (Q, 10) bool, a
    relevant unit first found at position j + 1. ``relevant``: (Q,) number of relevant units.
    """
    found = first > 0
    rr = np.where(found, 1.0 / np.maximum(first, 1), 0.0)
    discounts = _discounts(NDCG_CUTOFF)
    dcg = hits10 @ discounts
    ideal_cum = np.concatenate(([0.0], np.cumsum(discounts)))
    idcg = ideal_cum[np.minimum(relevant, NDCG_CUTOFF)]
    ndcg = np.divide(dcg, idcg, out=np.zeros_like(dcg), where=idcg > 0)
    return {"found": found, "rr": rr, "ndcg_10": ndcg}


def outcome_arrays(outcomes: Sequence[Outcome]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(first, hits10, relevant) arrays for ``score_matrix``."""
    n = len(outcomes)
    first = np.zeros(n, dtype=np.int64)
    hits10 = np.zeros((n, NDCG_CUTOFF), dtype=np.float64)
    relevant = np.zeros(n, dtype=np.int64)
    for i, outcome in enumerate(outcomes):
        relevant[i] = outcome.relevant
        if outcome.positions:
            first[i] = outcome.positions[0]
            for p in outcome.positions:
                if p > NDCG_CUTOFF:
                    break
                hits10[i, p - 1] = 1.0
    return first, hits10, relevant


def landed_bucket(first: int | None) -> str:
    if not first:
        return LANDED[-1]
    for name, edge in zip(LANDED, _LANDED_EDGES):
        if first <= edge:
            return name
    return LANDED[-1]


def percentile_ms(times_ms: Sequence[float], q: float) -> float | None:
    if not times_ms:
        return None
    return round(float(np.percentile(np.asarray(times_ms, dtype=np.float64), q)), 3)


def timing_summary(times_ms: Sequence[float]) -> dict[str, Any]:
    """The summary's time fields: how many searches were timed, their median and p95 in ms."""
    return {"timed": len(times_ms), "median_ms": percentile_ms(times_ms, 50), "p95_ms": percentile_ms(times_ms, 95)}


def summarise(outcomes: Sequence[Outcome], times_ms: Sequence[float] = ()) -> dict[str, Any]:
    """The report's ``summary`` of one setup: counts, shares, MRR, nDCG@10, landed, times.

    Without ``times_ms`` the time fields read 0 and None until ``timing_summary`` fills them."""
    n = len(outcomes)
    first, hits10, relevant = outcome_arrays(outcomes)
    scores = score_matrix(first, hits10, relevant)
    counts = {str(k): int(np.count_nonzero((first > 0) & (first <= k))) for k in CUTOFFS}
    landed = {name: 0 for name in LANDED}
    for value in first.tolist():
        landed[landed_bucket(value)] += 1
    timing = timing_summary(times_ms)
    return {
        "questions": n,
        "timed": timing["timed"],
        "counts": counts,
        "found": {k: (round(c / n, 4) if n else 0.0) for k, c in counts.items()},
        "mrr": round(float(scores["rr"].mean()), 4) if n else 0.0,
        "ndcg_10": round(float(scores["ndcg_10"].mean()), 4) if n else 0.0,
        "landed": landed,
        "median_ms": timing["median_ms"],
        "p95_ms": timing["p95_ms"],
    }
