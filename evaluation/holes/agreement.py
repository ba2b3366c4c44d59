"""How far a judge agrees with people: Cohen's kappa (plain and weighted) with its interval, the
confusion matrix it is computed from, and Kendall's tau-b between two orders of the same setups.

Kappa, for a confusion matrix ``n[i][j]`` (rows: the people's grade i, columns: the judge's grade j;
``p = n / N``, row margins ``r_i``, column margins ``c_j``) and agreement weights ``w[i][j]`` (1 on the
diagonal):

    p_o = sum_ij w_ij p_ij          observed agreement
    p_e = sum_ij w_ij r_i c_j       agreement expected by chance: BOTH raters' margins
    kappa = (p_o - p_e) / (1 - p_e)

Plain kappa has ``w = identity`` (a grade agrees only with itself); weighted kappa credits a near miss,
quadratically: ``w_ij = 1 - (i - j)^2 / (K - 1)^2`` over the K grades of the scale (Fleiss & Cohen's
weights, for which weighted kappa equals the intraclass correlation: a judge who says 2 for a 3 is
nearly right, one who says 0 is not). On a binary scale both are the same number.

Interval: the large-sample standard error of Fleiss, Cohen & Everitt (1969), for any weights,

    w̄_i = sum_j c_j w_ij,   w̄_j = sum_i r_i w_ij
    var = [sum_ij p_ij (w_ij - (w̄_i + w̄_j)(1 - kappa))^2 - (kappa - p_e (1 - kappa))^2] / (N (1 - p_e)^2)

and kappa +/- z * sqrt(var), clipped to [-1, 1]. Why analytic rather than a bootstrap: it is a formula a
reader can check (statsmodels' ``cohens_kappa`` gives the same numbers: tests/holes/test_agreement.py),
it is deterministic, and it is defined on a slice where a bootstrap resample would lose a grade (a few
0s among many 1s) and give no kappa at all; its coverage is measured in the tests (noisy judges over
many seeds: the 95% interval holds the kappa computed analytically from the flip rate in >= 90% of
them at 100 pairs). Kappa is None when ``p_e`` is 1: every label (the people's and the judge's) of one
grade, where agreement beyond chance is not defined; the caller says why.

Kendall's tau-b between two scores of the same setups (``x``, ``y``; ties in either allowed):
``(C - D) / sqrt((n0 - T_x)(n0 - T_y))`` with C and D the concordant and discordant pairs, n0 = n(n-1)/2,
T_x, T_y the pairs tied in x, in y (scipy.stats.kendalltau's default, its oracle in the tests). None when
either side ties every pair.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from statistics import NormalDist
from typing import Callable, Sequence

import numpy as np

WEIGHTS = ("plain", "quadratic")


def confusion(people: Sequence[int], judge: Sequence[int], grades: Sequence[int]) -> list[list[int]]:
    """Counts by (people's grade, judge's grade), rows and columns in ``grades``' order."""
    if len(people) != len(judge):
        raise ValueError(f"{len(people)} people's grades against {len(judge)} of the judge's")
    where = {grade: n for n, grade in enumerate(grades)}
    table = [[0] * len(grades) for _ in grades]
    for mine, theirs in zip(people, judge, strict=True):
        table[where[mine]][where[theirs]] += 1
    return table


def agreement_weights(size: int, weights: str) -> np.ndarray:
    """``w[i][j]``: 1 where grades i and j agree, and (quadratic) ``1 - (i - j)^2 / (K - 1)^2`` between."""
    if weights not in WEIGHTS:
        raise ValueError(f"weights {weights!r}: one of {', '.join(WEIGHTS)}")
    if weights == "plain" or size < 2:
        return np.eye(size)
    steps = np.arange(size, dtype=np.float64)
    return 1.0 - (steps[:, None] - steps[None, :]) ** 2 / (size - 1) ** 2


@dataclass(frozen=True)
class Kappa:
    """Kappa over ``pairs`` labels with its interval at ``confidence`` (``value`` None: not defined)."""

    weights: str
    pairs: int
    value: float | None
    low: float | None
    high: float | None
    standard_error: float | None
    observed: float  # p_o
    expected: float  # p_e
    confidence: float = 0.95

    def to_json(self) -> dict:
        def cut(value: float | None) -> float | None:
            return None if value is None else round(value, 4)
        return {"weights": self.weights, "pairs": self.pairs, "value": cut(self.value),
                "interval": None if self.low is None else [cut(self.low), cut(self.high)],
                "standard_error": cut(self.standard_error), "observed": cut(self.observed),
                "expected": cut(self.expected), "confidence": self.confidence}


def kappa(table: Sequence[Sequence[int]], weights: str = "plain", confidence: float = 0.95) -> Kappa:
    """Cohen's kappa of a confusion matrix (rows: people, columns: judge) and its interval (the module)."""
    counts = np.asarray(table, dtype=np.float64)
    n = float(counts.sum())
    w = agreement_weights(counts.shape[0], weights)
    if n == 0:
        return Kappa(weights, 0, None, None, None, None, 0.0, 0.0, confidence)
    p = counts / n
    rows, cols = p.sum(axis=1), p.sum(axis=0)
    observed = float((w * p).sum())
    expected = float((w * np.outer(rows, cols)).sum())  # both raters' margins
    if expected >= 1 - 1e-12:
        return Kappa(weights, int(n), None, None, None, None, observed, expected, confidence)
    value = (observed - expected) / (1 - expected)
    w_row = w @ cols          # w̄_i = sum_j c_j w_ij
    w_col = rows @ w          # w̄_j = sum_i r_i w_ij
    spread = (p * (w - (w_row[:, None] + w_col[None, :]) * (1 - value)) ** 2).sum()
    variance = (spread - (value - expected * (1 - value)) ** 2) / (n * (1 - expected) ** 2)
    error = math.sqrt(max(variance, 0.0))
    z = NormalDist().inv_cdf(0.5 + confidence / 2)
    return Kappa(weights, int(n), value, max(-1.0, value - z * error), min(1.0, value + z * error), error,
                 observed, expected, confidence)


def kendall_tau_b(x: Sequence[float], y: Sequence[float]) -> float | None:
    """Kendall's tau-b of two scores of the same items (the module docstring); None when undefined."""
    if len(x) != len(y):
        raise ValueError(f"{len(x)} scores against {len(y)}")
    concordant = discordant = tied_x = tied_y = 0
    n = len(x)
    for i in range(n):
        for j in range(i + 1, n):
            dx, dy = x[i] - x[j], y[i] - y[j]
            if dx == 0:
                tied_x += 1
            if dy == 0:
                tied_y += 1
            if dx and dy:
                if (dx > 0) == (dy > 0):
                    concordant += 1
                else:
                    discordant += 1
    pairs = n * (n - 1) // 2
    if pairs == 0 or tied_x == pairs or tied_y == pairs:
        return None
    return (concordant - discordant) / math.sqrt((pairs - tied_x) * (pairs - tied_y))


def tau_interval(score_x: Callable[[np.ndarray], Sequence[float]], score_y: Callable[[np.ndarray], Sequence[float]],
                 questions: int, *, resamples: int = 1000, seed: int = 0,
                 confidence: float = 0.95) -> tuple[float, float] | None:
    """A percentile bootstrap interval of tau-b over questions: each resample draws ``questions`` question
    positions with replacement, ``score_x(drawn)`` and ``score_y(drawn)`` give every setup's two scores on
    them. Resamples where tau is undefined are left out; None when every one is."""
    rng = np.random.default_rng(seed)
    taus = []
    for _ in range(resamples):
        drawn = rng.integers(0, questions, size=questions)
        tau = kendall_tau_b(list(score_x(drawn)), list(score_y(drawn)))
        if tau is not None:
            taus.append(tau)
    if not taus:
        return None
    tail = (1 - confidence) / 2 * 100
    low, high = np.percentile(np.asarray(taus), [tail, 100 - tail])
    return float(low), float(high)
