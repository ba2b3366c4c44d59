"""Retrieval metrics over judged questions, computed for all questions at once with numpy.

A question's ``Outcome`` (see ``judging``, which also says how a run reads a rank: among results or
among documents) holds the 1-based position at which each of its relevant units (graded ``min_grade``
or more; a document, page, chunk or quote) was first found, and how many relevant units it has. At
the doc and chunk grains one result is one unit; at the evidence grain one result may hold two
quotes, which then share its position. Graded questions also carry each found unit's grade
(``gains``) and every judged grade (``ideal``). From those:

- found@k    share of questions with a relevant result at position <= k (k in 1, 3, 5, 10, 20).
- recall@k   mean over questions of (relevant units found at positions <= k) / (relevant units).
- MRR        mean over questions of 1 / (position of the first relevant result); 0 when none came back.
- nDCG@10    DCG / ideal DCG, as trec_eval's ndcg_cut_10: DCG = sum over the positions p <= 10 holding a
             unit first found there of gain / log2(p + 1), the gain being the unit's grade (1 for a
             binary label; a result holding two quotes counts once, gain 1); the ideal DCG is that of
             every judged grade above 0 in descending order (binary: one relevant result at each
             position 1..min(needed, 10), ``needed`` = distinct positions found + units not found).
- judged@10  share of the positions in the top 10 whose unit is judged (any grade, 0 included), over
             the positions there are (a question with 3 results: of 3), 0 with none: ir_measures' Judged@10.
- holes@10   distinct unjudged units in the top 10: what nobody labelled, which a run cannot score.
- landed     how many questions had their first relevant result first, at 2-3, 4-5, 6-10, 11-20,
             or not in the top 20.

So a perfect ranking scores 1.0 on found@k, MRR and nDCG@10 at every grain, and recall@k once k
reaches the results the question needs (as in trec_eval, a question with two expected documents has
recall@1 of at most 1/2). At the doc and chunk grains every number equals trec_eval's (success_k,
recip_rank, recall_k, ndcg_cut_10; relevance level ``min_grade``) on the run ``report.trec`` exports
for the same reading, whatever the grades; tests/scoring/test_oracle_graded.py holds that against
pytrec_eval, ir_measures and ranx.

Rules: positions count results (or units) as they came back, so a target's order decides ties (the
embedded engine orders equal scores by position in the index). A question with no results, or with
nothing relevant in them, scores 0 on every metric and lands "not in top 20". Questions without any
relevant unit are not scored at all (the caller leaves them out). Times: median and 95th percentile
(linear interpolation between closest ranks, numpy's default) of the timed searches, in milliseconds.
"""
from __future__ import annotations

import math

from dataclasses import dataclass
from typing import Any, Mapping, Sequence

import numpy as np

from ..measures import CUTOFFS, MRR, NDCG_10

HOLES_CUTOFF = 10  # judged@k and holes@k are counted in the top 10, where nDCG looks
LANDED = ("first", "2-3", "4-5", "6-10", "11-20", "not in top 20")
_LANDED_EDGES = (1, 3, 5, 10, 20)  # upper position of each bucket but the last
NDCG_CUTOFF = 10


@dataclass(frozen=True)
class Outcome:
    question_id: str
    positions: tuple[int, ...]  # ascending, 1-based: one per relevant unit found (units one result holds share it)
    relevant: int               # relevant units
    gains: tuple[tuple[int, int], ...] | None = None  # graded: (position, grade) per found unit graded above 0
    ideal: tuple[int, ...] | None = None  # graded: every judged grade above 0, best first
    judged: float | None = None  # share of the top HOLES_CUTOFF positions holding a judged unit (None: not counted)
    holes: tuple[str, ...] | None = None  # the distinct unjudged units in the top HOLES_CUTOFF

    @property
    def first(self) -> int | None:
        return self.positions[0] if self.positions else None

    @property
    def needed(self) -> int:
        """Results a perfect ranking needs: one per distinct position found, one per unit not found."""
        return len(set(self.positions)) + self.relevant - len(self.positions)

    def to_json(self) -> list[Any]:
        """``[positions, relevant]`` (the binary form working files have always kept), then ``gains``,
        ``ideal``, ``judged`` and ``holes`` up to the last one given."""
        extra = [None if self.gains is None else [list(g) for g in self.gains],
                 None if self.ideal is None else list(self.ideal), self.judged,
                 None if self.holes is None else list(self.holes)]
        while extra and extra[-1] is None:
            extra.pop()
        return [list(self.positions), self.relevant, *extra]

    @classmethod
    def from_json(cls, question_id: str, value: Sequence[Any]) -> Outcome:
        """``to_json``'s list back as the outcome (a two-item list: an outcome kept before grades)."""
        positions, relevant, *extra = value
        gains, ideal, judged, holes = (list(extra) + [None] * 4)[:4]
        return cls(question_id, tuple(positions), relevant,
                   None if gains is None else tuple((int(p), int(g)) for p, g in gains),
                   None if ideal is None else tuple(ideal), judged, None if holes is None else tuple(holes))


def _discounts(length: int) -> np.ndarray:
    return 1.0 / np.log2(np.arange(2, length + 2, dtype=np.float64))


def score_matrix(first: np.ndarray, gains: np.ndarray, ideal_dcg: np.ndarray) -> dict[str, np.ndarray]:
    """Per-question metric arrays: ``found`` (bool), ``rr`` and ``ndcg_<cutoff>`` (``ndcg_10``).

    ``first``: (Q,) position of the first relevant result, 0 when none. ``gains``: (Q, cutoff), the gain
    of the unit first found at position j + 1 (0 where none; ``outcome_arrays``; 10 columns unless a
    caller asks for nDCG at another depth). ``ideal_dcg``: (Q,) the DCG of a perfect ranking at that depth.
    """
    cutoff = gains.shape[1]
    found = first > 0
    rr = np.where(found, 1.0 / np.maximum(first, 1), 0.0)
    dcg = gains @ _discounts(cutoff)
    ndcg = np.divide(dcg, ideal_dcg, out=np.zeros_like(dcg), where=ideal_dcg > 0)
    return {"found": found, "rr": rr, f"ndcg_{cutoff}": ndcg}


def outcome_arrays(outcomes: Sequence[Outcome],
                   cutoff: int = NDCG_CUTOFF) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(first, gains, ideal DCG) arrays for ``score_matrix``; ``gains`` has ``cutoff`` columns (nDCG's depth)."""
    n = len(outcomes)
    first = np.zeros(n, dtype=np.int64)
    gains = np.zeros((n, cutoff), dtype=np.float64)
    ideal_dcg = np.zeros(n, dtype=np.float64)
    discounts = _discounts(cutoff)
    ideal_cum = np.concatenate(([0.0], np.cumsum(discounts)))
    for i, outcome in enumerate(outcomes):
        if outcome.positions:
            first[i] = outcome.positions[0]
        if outcome.gains is None:  # binary: gain 1 where a unit was first found; a result holding two is one result
            for p in outcome.positions:
                if p > cutoff:
                    break
                gains[i, p - 1] = 1.0
            ideal_dcg[i] = ideal_cum[min(outcome.needed, cutoff)]
        else:
            for p, grade in outcome.gains:
                if p <= cutoff:
                    gains[i, p - 1] = grade
            best = np.asarray((outcome.ideal or ())[:cutoff], dtype=np.float64)
            ideal_dcg[i] = float(best @ discounts[:len(best)])
    return first, gains, ideal_dcg


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


def judged_summary(outcomes: Sequence[Outcome]) -> dict[str, Any]:
    """``judged_10`` (mean share of the top 10 positions holding a judged unit, ``Outcome.judged``) and
    ``holes_10`` (mean distinct unjudged units in the top 10), over the questions that counted them; None
    when none did (the evidence grain, or an entry kept before grades)."""
    counted = [o for o in outcomes if o.judged is not None and o.holes is not None]
    if not counted:
        return {"judged_10": None, "holes_10": None}
    return {"judged_10": round(sum(o.judged or 0.0 for o in counted) / len(counted), 4),
            "holes_10": round(sum(len(o.holes or ()) for o in counted) / len(counted), 4)}


def landed_bucket(first: int | None) -> str:
    if not first:
        return LANDED[-1]
    for name, edge in zip(LANDED[:-1], _LANDED_EDGES, strict=True):  # the last bucket has no edge
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
    statistics x(k) and x(n+1-k) for the largest k with P(Binomial(n, 1/2) < k) <= (1 - confidence) / 2.
    None while n is too small for any such interval (n < 6 at 95%)."""
    ordered = sorted(float(t) for t in times_ms)
    n = len(ordered)
    tail = (1 - confidence) / 2
    below, k = 0.0, 0  # below = P(Binomial(n, 1/2) <= k - 1)
    while k < n and below + math.comb(n, k) / 2 ** n <= tail:
        below += math.comb(n, k) / 2 ** n
        k += 1
    if k == 0:
        return None
    return ordered[k - 1], ordered[n - k]


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
    """The report's ``summary`` of one setup: counts, found and recall shares, MRR, nDCG@10, landed,
    judged@10 and holes@10, times.

    Without ``times_ms`` the time fields read 0 and None until ``timing_summary`` fills them."""
    n = len(outcomes)
    first, gains, ideal_dcg = outcome_arrays(outcomes)
    scores = score_matrix(first, gains, ideal_dcg)
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
        "recall": {
            str(k): (round(float(shares.mean()), 4) if n else 0.0) for k, shares in recall_matrix(outcomes).items()
        },
        MRR.summary_path[0]: round(float(scores["rr"].mean()), 4) if n else 0.0,
        NDCG_10.summary_path[0]: round(float(scores["ndcg_10"].mean()), 4) if n else 0.0,
        "landed": landed,
        **judged_summary(outcomes),
        "median_ms": timing["median_ms"],
        "p95_ms": timing["p95_ms"],
        "median_margin": timing["median_margin"],
    }
