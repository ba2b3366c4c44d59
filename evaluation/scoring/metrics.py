"""Retrieval metrics over judged questions, computed for all questions at once with numpy.

A question's ``Outcome`` holds, for each of its expected units (document, page, chunk or quote: see
``judging``) found in the results, the 1-based position of the first result that holds it, and how
many units it has. One result may hold several units (a chunk holding two quotes; a chunk of
``r.pdf`` page 2 when both ``r.pdf`` and ``r.pdf#page=2`` are expected): those units share a
position. From those:

- found@k    share of questions with a relevant result at position <= k (k in 1, 3, 5, 10, 20).
- recall@k   mean over questions of (units found at positions <= k) / (units expected).
- MRR        mean over questions of 1 / (position of the first relevant result); 0 when none came back.
- nDCG@10    DCG / ideal DCG, binary gains. DCG = sum over the positions p <= 10 where at least one
             unit was first found of 1 / log2(p + 1): a result counts once, however many units it
             holds. The ideal is the DCG of a perfect ranking: one relevant result at each of the
             positions 1..min(needed, 10), where ``needed`` is how many results hold every unit
             = (distinct positions at which units were found) + (units not found, one result each).
- landed     how many questions had their first relevant result first, at 2-3, 4-5, 6-10, 11-20,
             or not in the top 20.

So a perfect ranking scores 1.0 on found@k, MRR and nDCG@10 at every grain, and recall@k once k
reaches the results the question needs (as in trec_eval, a question with two expected documents has
recall@1 of at most 1/2). Where no result holds two units (every grain when each document, chunk
or quote is in a different result), ``needed`` is the number of units and every number equals
trec_eval's on the run whose docno at each position is the unit first found there (recip_rank,
success_k, recall_k, ndcg_cut_10); where one result holds several units, trec_eval would count that
result once in its DCG but every unit in its ideal, so a perfect ranking could not reach 1.0: here
the ideal counts that result once too.

Rules: positions count results as they came back, so a target's order decides ties (the embedded
engine orders equal scores by position in the index). A question with no results, or with nothing
relevant in them, scores 0 on every metric and lands "not in top 20". Questions without any relevant
unit are not scored at all (the caller leaves them out). Times: median and 95th percentile (linear
interpolation between closest ranks, numpy's default) of the timed searches, in milliseconds.
"""
from __future__ import annotations

import math

from dataclasses import dataclass
from typing import Any, Mapping, Sequence

import numpy as np

from ..measures import CUTOFFS, MRR, NDCG_10

LANDED = ("first", "2-3", "4-5", "6-10", "11-20", "not in top 20")
_LANDED_EDGES = (1, 3, 5, 10, 20)  # upper position of each bucket but the last
NDCG_CUTOFF = 10


@dataclass(frozen=True)
class Outcome:
    question_id: str
    positions: tuple[int, ...]  # ascending, 1-based: one per unit found (units one result holds share it)
    relevant: int               # units expected

    @property
    def first(self) -> int | None:
        return self.positions[0] if self.positions else None

    @property
    def needed(self) -> int:
        """Results a perfect ranking needs: one per distinct position found, one per unit not found."""
        return len(set(self.positions)) + self.relevant - len(self.positions)


def _discounts(length: int) -> np.ndarray:
    return 1.0 / np.log2(np.arange(2, length + 2, dtype=np.float64))


def score_matrix(first: np.ndarray, hits10: np.ndarray, needed: np.ndarray) -> dict[str, np.ndarray]:
    """Per-question metric arrays: ``found`` (bool), ``rr`` and ``ndcg_<cutoff>`` (``ndcg_10``).

    ``first``: (Q,) position of the first relevant result, 0 when none. ``hits10``: (Q, cutoff), 1.0
    where the result at position j + 1 holds a unit first found there (``outcome_arrays``; 10 columns
    unless a caller asks for nDCG at another depth). ``needed``: (Q,) results a perfect ranking needs
    (``Outcome.needed``).
    """
    cutoff = hits10.shape[1]
    found = first > 0
    rr = np.where(found, 1.0 / np.maximum(first, 1), 0.0)
    discounts = _discounts(cutoff)
    dcg = hits10 @ discounts
    ideal_cum = np.concatenate(([0.0], np.cumsum(discounts)))
    idcg = ideal_cum[np.minimum(needed, cutoff)]
    ndcg = np.divide(dcg, idcg, out=np.zeros_like(dcg), where=idcg > 0)
    return {"found": found, "rr": rr, f"ndcg_{cutoff}": ndcg}


def outcome_arrays(outcomes: Sequence[Outcome],
                   cutoff: int = NDCG_CUTOFF) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(first, hits, needed) arrays for ``score_matrix``; ``hits`` has ``cutoff`` columns (nDCG's depth)."""
    n = len(outcomes)
    first = np.zeros(n, dtype=np.int64)
    hits10 = np.zeros((n, cutoff), dtype=np.float64)
    needed = np.zeros(n, dtype=np.int64)
    for i, outcome in enumerate(outcomes):
        needed[i] = outcome.needed
        if outcome.positions:
            first[i] = outcome.positions[0]
            for p in outcome.positions:
                if p > cutoff:
                    break
                hits10[i, p - 1] = 1.0  # a result holding two units is still one result
    return first, hits10, needed


def recall_matrix(outcomes: Sequence[Outcome], cutoffs: Sequence[int] = CUTOFFS) -> dict[int, np.ndarray]:
    """Per cutoff k, (Q,) share of each question's units found at positions <= k (0 when it has none)."""
    n = len(outcomes)
    owner = np.fromiter((i for i, o in enumerate(outcomes) for _ in o.positions), dtype=np.int64)
    position = np.fromiter((p for o in outcomes for p in o.positions), dtype=np.int64)
    relevant = np.fromiter((o.relevant for o in outcomes), dtype=np.float64, count=n)
    out = {}
    for k in cutoffs:
        within = np.bincount(owner[position <= k], minlength=n).astype(np.float64)
        out[k] = np.divide(within, relevant, out=np.zeros(n), where=relevant > 0)
    return out


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


MEDIAN_CONFIDENCE = 0.95


def median_ms(entry: Mapping[str, Any]) -> float:
    """A ranked entry's median search time, or infinity when none was timed (so it sorts last)."""
    value = entry["summary"].get("median_ms")
    return float("inf") if value is None else value


def median_interval(times_ms: Sequence[float], confidence: float = MEDIAN_CONFIDENCE) -> tuple[float, float] | None:
    """A distribution-free interval holding the true median with at least ``confidence``: the order
    statistics x(l) and x(n+1-l) for the largest l with P(Binomial(n, 1/2) < l) <= (1 - confidence) / 2.
    None while n is too small for any such interval (n < 6 at 95%)."""
    ordered = sorted(float(t) for t in times_ms)
    n = len(ordered)
    tail = (1 - confidence) / 2
    below, l = 0.0, 0  # below = P(Binomial(n, 1/2) <= l - 1)
    while l < n and below + math.comb(n, l) / 2 ** n <= tail:
        below += math.comb(n, l) / 2 ** n
        l += 1
    if l == 0:
        return None
    return ordered[l - 1], ordered[n - l]


def median_margin(times_ms: Sequence[float], confidence: float = MEDIAN_CONFIDENCE) -> float | None:
    """How far the true median may lie from the sample's, as a share of it: the wider side of
    ``median_interval`` over the median (0.1: within +/-10%). None while no interval exists."""
    interval = median_interval(times_ms, confidence)
    median = float(np.median(np.asarray(times_ms, dtype=np.float64))) if times_ms else 0.0
    if interval is None or median <= 0:
        return None
    return max(median - interval[0], interval[1] - median) / median


def timing_summary(times_ms: Sequence[float]) -> dict[str, Any]:
    """The summary's time fields: how many searches were timed, their median and p95 in ms, and how
    precisely the median is known (``median_margin``, see there; None with fewer than 6 times)."""
    margin = median_margin(times_ms)
    return {"timed": len(times_ms), "median_ms": percentile_ms(times_ms, 50), "p95_ms": percentile_ms(times_ms, 95),
            "median_margin": None if margin is None else round(margin, 4)}


def summarise(outcomes: Sequence[Outcome], times_ms: Sequence[float] = ()) -> dict[str, Any]:
    """The report's ``summary`` of one setup: counts, found and recall shares, MRR, nDCG@10, landed, times.

    Without ``times_ms`` the time fields read 0 and None until ``timing_summary`` fills them."""
    n = len(outcomes)
    first, hits10, needed = outcome_arrays(outcomes)
    scores = score_matrix(first, hits10, needed)
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
        "recall": {str(k): (round(float(shares.mean()), 4) if n else 0.0) for k, shares in recall_matrix(outcomes).items()},
        MRR.summary_path[0]: round(float(scores["rr"].mean()), 4) if n else 0.0,
        NDCG_10.summary_path[0]: round(float(scores["ndcg_10"].mean()), 4) if n else 0.0,
        "landed": landed,
        "median_ms": timing["median_ms"],
        "p95_ms": timing["p95_ms"],
        "median_margin": timing["median_margin"],
    }
