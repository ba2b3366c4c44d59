"""Paired significance tests for two setups searched on the same questions.

Every test takes per-question values of two setups, paired by question, and works on the
differences ``d_i = other_i - reference_i``. The null hypothesis is that the two setups are
exchangeable on every question, so each non-zero ``d_i`` is as likely to be ``+|d_i|`` as ``-|d_i|``.

- ``exact_binary_p(better, worse)``: for a 0/1 metric (found@k) each non-zero ``d_i`` is +1 or -1. With
  ``m = better + worse`` questions that differ, the number of +1s under the null is Binomial(m, 1/2),
  so the two-sided p-value is ``sum of C(m, k) over k with |2k - m| >= |better - worse|, / 2**m``.
  That is the exact sign-flip permutation test on ``sum(d)`` (and the exact McNemar test), computed
  with integers: no sampling, no seed.
- ``sign_flip_p(d, rng, resamples)``: the same test on real values (reciprocal rank, nDCG@10). Exact
  over every sign pattern of the ``m`` non-zero differences when ``2**m <= resamples``; otherwise
  ``resamples`` seeded random patterns, ``p = (1 + patterns at least as extreme) / (1 + resamples)``,
  which is never 0 (Phipson and Smyth, 2010).
- ``paired_bootstrap(d, rng, resamples, level)``: percentile interval of ``mean(d)`` over ``resamples``
  resamplings of the questions with replacement (each resample keeps pairs together).
  ``paired_bootstraps`` gives many of them, each from a generator made afresh the same way, drawing
  the resampled questions once for all (the same numbers, bit for bit).
- ``questions_to_tell(better, worse, questions, alpha)``: how many questions the exact test above would
  need to call a found@10 difference of the size seen significant: the smallest N whose counts at
  the same rates (``better * N / questions`` and ``worse * N / questions``, rounded) give
  ``exact_binary_p <= alpha``; None when the two found as many (no number of questions would).
- ``holm(p_values)``: Holm's step-down adjustment for a family of tests: sort ascending, multiply the
  i-th smallest (0-based) by ``m - i``, carry the running maximum, cap at 1.
- ``trimmed_mean_test(d, trim, level)``: the one-sample trimmed t-test (Tukey and McLaughlin, 1963;
  Yuen's standard error) of ``mean = 0``: of the ``n`` values sorted, ``g = floor(trim * n)`` are cut
  at each end, leaving ``h = n - 2g``; the estimate is their mean, its standard error
  ``sqrt((n - 1) * s_w**2 / (h * (h - 1)))`` with ``s_w`` the standard deviation (ddof 1) of the values
  winsorized at the same ``g`` (each cut value set to the nearest kept one), the statistic estimate /
  standard error on ``h - 1`` degrees of freedom (Student's t: ``t_two_sided_p``, ``t_quantile``).
  ``scoring.time_pairs`` runs it on per-question log ratios of search times and says why.

numpy only: scipy would do the same (``binomtest``, ``permutation_test``, ``bootstrap``, ``t``; the tests use
it as the oracle), but measured here (a shared 2-core machine) it is 113 MB installed and
``import scipy.stats`` took 3.8-4.3 s after numpy's 0.4-0.5 s: a Function App's cold start would pay
that for four small loops.
"""
from __future__ import annotations

import math
from fractions import Fraction
from typing import Callable, NamedTuple, Sequence

import numpy as np

# A sum of floats can differ from an equal sum in the last bits depending on its order: patterns
# within this relative distance of the observed statistic count as "at least as extreme".
_TOLERANCE = 1e-9
_BLOCK_VALUES = 4_000_000  # floats held at once while resampling (about 32 MB)


def exact_binary_p(better: int, worse: int) -> float:
    """Two-sided exact sign-flip p-value for a 0/1 metric, from the questions that differ.

    ``better``: questions the other setup found and the reference did not; ``worse``: the reverse.
    ``exact_binary_p(0, 0) == 1``; ``exact_binary_p(0, 5) == 2 / 32``.
    """
    if better < 0 or worse < 0:
        raise ValueError("better and worse count questions: zero or more")
    m, gap = better + worse, abs(better - worse)
    extreme = sum(math.comb(m, k) for k in range(m + 1) if abs(2 * k - m) >= gap)
    return float(Fraction(extreme, 2 ** m))


MOST_QUESTIONS = 100_000  # past this, say "more than": no golden file a team writes is larger


def questions_to_tell(better: int, worse: int, questions: int, alpha: float) -> int | None:
    """The questions ``exact_binary_p`` needs to call ``better`` against ``worse`` (seen over
    ``questions``) significant at ``alpha``, at the same rates (see the module docstring); None when
    ``better == worse``; ``MOST_QUESTIONS`` when even that many would not.

    The p-value falls as N grows at fixed rates (but for rounding steps), so the search doubles N
    until the test tells, then halves the gap: about 2 log2(N) tests, each the exact p-value in
    floats (``_binary_p_float``: exact integers took 1.9 s at 4,000 differing questions, 25 s at 10,000).
    ``questions_to_tell(0, 3, 17, 0.05) == 32``: 6 of 32 questions worse, none better, p = 2/64.
    """
    if better == worse:
        return None
    if questions <= 0 or better < 0 or worse < 0 or better + worse > questions:
        raise ValueError("better and worse count questions among the questions compared")

    def tells(n: int) -> bool:
        return _binary_p_float(round(better * n / questions), round(worse * n / questions)) <= alpha

    if tells(questions):
        return questions
    low, high = questions, questions * 2
    while not tells(high):
        if high >= MOST_QUESTIONS:
            return MOST_QUESTIONS
        low, high = high, min(high * 2, MOST_QUESTIONS)
    while high - low > 1:
        middle = (low + high) // 2
        low, high = (low, middle) if tells(middle) else (middle, high)
    return high


def _binary_p_float(better: int, worse: int) -> float:
    """``exact_binary_p`` in floats: 2 P(X <= min(better, worse)) for X ~ Binomial(m, 1/2), capped at 1
    (the two tails are mirror images), summed in logs so m of a million does not underflow."""
    m, low = better + worse, min(better, worse)
    if better == worse:
        return 1.0
    k = np.arange(low, dtype=np.float64)
    logs = np.concatenate(([0.0], np.cumsum(np.log((m - k) / (k + 1)))))  # log C(m, 0..low)
    top = logs.max()
    return float(min(1.0, 2 * np.exp(top + np.log(np.exp(logs - top).sum()) - m * math.log(2))))


def sign_flip_p(differences: Sequence[float] | np.ndarray, *, rng: np.random.Generator,
                resamples: int = 10_000) -> float:
    """Two-sided sign-flip permutation p-value of ``sum(differences)`` (see the module docstring)."""
    d = np.asarray(differences, dtype=np.float64)
    d = d[d != 0]
    m = d.shape[0]
    if m == 0:
        return 1.0
    observed = abs(float(d.sum()))
    bar = observed - _TOLERANCE * max(1.0, observed)
    if 2 ** m <= resamples:
        signs = ((np.arange(2 ** m)[:, None] >> np.arange(m)) & 1) * 2 - 1  # every pattern, once
        extreme = int(np.count_nonzero(np.abs(signs @ d) >= bar))
        return extreme / 2 ** m
    extreme, done, total = 0, 0, float(d.sum())
    block = max(1, _BLOCK_VALUES // m)
    while done < resamples:
        size = min(block, resamples - done)
        # a pattern of signs s = 2b - 1 from bits b; sum(s * d) = 2 (b @ d) - sum(d), on float BLAS
        packed = rng.integers(0, 256, size=(size, (m + 7) // 8), dtype=np.uint8)  # 8 fair bits a draw
        bits = np.unpackbits(packed, axis=1, count=m).astype(np.float64)
        extreme += int(np.count_nonzero(np.abs(2 * (bits @ d) - total) >= bar))
        done += size
    return (1 + extreme) / (1 + resamples)


def paired_bootstrap(differences: Sequence | np.ndarray, *, rng: np.random.Generator, resamples: int = 10_000,
                     level: float = 0.95) -> np.ndarray:
    """Percentile interval of the mean of each column of ``differences`` (questions x metrics).

    Returns an array of shape (metrics, 2): the ``(1 - level) / 2`` and ``(1 + level) / 2`` percentiles
    (numpy's linear interpolation) of the resampled means. A 1-d input is one metric.
    """
    return paired_bootstraps([differences], rng_of=lambda: rng, resamples=resamples, level=level)[0]


def paired_bootstraps(many: Sequence[Sequence | np.ndarray], *, rng_of: Callable[[], np.random.Generator],
                      resamples: int = 10_000, level: float = 0.95) -> list[np.ndarray]:
    """``[paired_bootstrap(d, rng=rng_of(), ...) for d in many]``, the same numbers bit for bit, with
    the resampled questions drawn once for every matrix with as many rows.

    ``rng_of`` makes a generator afresh, as a caller seeding each pair alike does (``comparison``:
    ``default_rng([seed, 0])`` for every pair): each would then draw the same questions block by block,
    since what a block draws depends only on the stream and the number of questions. So one generator
    per number of questions draws each block once and every matrix's columns are averaged over it,
    with the same arithmetic, in the same order, as one matrix alone.
    """
    matrices = []
    for differences in many:
        d = np.asarray(differences, dtype=np.float64)
        matrices.append(d.reshape(-1, 1) if d.ndim == 1 else d)
    out: list[np.ndarray | None] = [None] * len(matrices)
    tail = (1 - level) / 2 * 100
    for n in dict.fromkeys(d.shape[0] for d in matrices):
        group = [i for i, d in enumerate(matrices) if d.shape[0] == n]
        if n == 0:
            for i in group:
                out[i] = np.zeros((matrices[i].shape[1], 2))
            continue
        rng = rng_of()
        means = [np.empty((resamples, matrices[i].shape[1])) for i in group]
        # gathering from 1-d arrays: no (size, n, k) copy
        columns = [[np.ascontiguousarray(matrices[i][:, j]) for j in range(matrices[i].shape[1])] for i in group]
        block = max(1, _BLOCK_VALUES // n)
        done = 0
        while done < resamples:
            size = min(block, resamples - done)
            picks = rng.integers(0, n, size=(size, n))  # the same resampled questions for every metric
            for kept, of_matrix in zip(means, columns, strict=True):
                for j, column in enumerate(of_matrix):
                    kept[done:done + size, j] = column[picks].mean(axis=1)
            done += size
        for i, kept in zip(group, means, strict=True):
            out[i] = np.percentile(kept, [tail, 100 - tail], axis=0).T
    return out  # type: ignore[return-value]


def holm_factors(p_values: Sequence[float | None]) -> list[int | None]:
    """What Holm multiplies each p-value by (``m - i`` for the i-th smallest, 0-based; ties in the order
    given), in the order given; ``None`` stays ``None``. A test corrected this way tells at ``alpha``
    only when its own p is at or under ``alpha / factor``."""
    tested = [(p, i) for i, p in enumerate(p_values) if p is not None]
    factors: list[int | None] = [None] * len(p_values)
    for rank, (_, i) in enumerate(sorted(tested)):
        factors[i] = len(tested) - rank
    return factors


def holm(p_values: Sequence[float | None]) -> list[float | None]:
    """Holm-adjusted p-values, in the order given; ``None`` (no test) stays ``None`` and is not counted."""
    tested = [(p, i) for i, p in enumerate(p_values) if p is not None]
    m = len(tested)
    adjusted: list[float | None] = [None] * len(p_values)
    running = 0.0
    for rank, (p, i) in enumerate(sorted(tested)):
        running = max(running, min(1.0, (m - rank) * p))
        adjusted[i] = running
    return adjusted


def t_two_sided_p(t: float, df: int) -> float:
    """P(|T| >= |t|) for Student's t on ``df`` (a whole number, 1 or more) degrees of freedom, in closed
    form (Abramowitz and Stegun 26.7.3 and 26.7.4, a finite sum in ``cos(theta)**2`` with ``theta =
    atan(|t| / sqrt(df))``): no special functions, exact to rounding. ``t`` infinite: 0; nan: 1."""
    if isinstance(df, bool) or not isinstance(df, int) or df < 1:
        raise ValueError(f"degrees of freedom must be a whole number, 1 or more, not {df!r}")
    t = abs(float(t))
    if math.isnan(t):
        return 1.0
    if math.isinf(t):
        return 0.0
    theta = math.atan(t / math.sqrt(df))
    c2 = math.cos(theta) ** 2
    total, term = 1.0, 1.0
    if df % 2:
        for k in range(1, (df - 1) // 2):
            term *= c2 * (2 * k) / (2 * k + 1)
            total += term
        inside = (2 / math.pi) * (theta + (math.sin(theta) * math.cos(theta) * total if df > 1 else 0.0))
    else:
        for k in range(1, df // 2):
            term *= c2 * (2 * k - 1) / (2 * k)
            total += term
        inside = math.sin(theta) * total
    return min(1.0, max(0.0, 1.0 - inside))


def t_quantile(level: float, df: int) -> float:
    """The ``t`` with ``P(|T| <= t) = level`` on ``df`` degrees of freedom (the two-sided critical value:
    ``t_quantile(0.95, 9)`` is 2.262), by bisection on ``t_two_sided_p`` to 1e-12."""
    if not 0 < level < 1:
        raise ValueError(f"level must be between 0 and 1, not {level!r}")
    low, high = 0.0, 1.0
    while t_two_sided_p(high, df) > 1 - level:
        high *= 2
    while high - low > 1e-12 * max(1.0, high):
        middle = (low + high) / 2
        low, high = (middle, high) if t_two_sided_p(middle, df) > 1 - level else (low, middle)
    return (low + high) / 2


class TrimmedTest(NamedTuple):
    """A trimmed t-test of ``mean = 0``: the trimmed mean, its interval, and the two-sided p-value."""

    estimate: float
    low: float
    high: float
    p: float


def trimmed_mean_test(values: Sequence[float] | np.ndarray, *, trim: float = 0.2,
                      level: float = 0.95) -> TrimmedTest | None:
    """``TrimmedTest(estimate, low, high, p)`` of the trimmed t-test of ``mean = 0`` (see the module docstring):
    the trimmed mean, its ``level`` interval (estimate -/+ ``t_quantile(level, h - 1)`` standard
    errors) and the two-sided p-value. None with fewer than 3 values (no spread to judge by). Values
    all equal once winsorized: a standard error of 0, so p is 0 when the estimate is not 0, else 1,
    and the interval is the estimate alone."""
    x = np.sort(np.asarray(values, dtype=np.float64))
    n = x.shape[0]
    if n < 3:
        return None
    if not 0 <= trim < 0.5:
        raise ValueError(f"trim must be a share from 0 to under 0.5, not {trim!r}")
    g = int(math.floor(trim * n))
    h = n - 2 * g
    kept = x[g:n - g]
    estimate = float(kept.mean())
    winsorized = np.clip(x, kept[0], kept[-1])
    error = math.sqrt((n - 1) * float(winsorized.var(ddof=1)) / (h * (h - 1)))
    if error <= 1e-12 * max(1.0, abs(estimate)):
        return TrimmedTest(estimate, estimate, estimate, 0.0 if estimate != 0 else 1.0)
    reach = t_quantile(level, h - 1) * error
    return TrimmedTest(estimate, estimate - reach, estimate + reach, t_two_sided_p(estimate / error, h - 1))
