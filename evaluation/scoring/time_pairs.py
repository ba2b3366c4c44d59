"""Which of two setups is faster: their searches timed side by side, compared in pairs, with a floor
under which time does not matter. ``scoring.picks`` builds its time tiers on ``told_apart``.

Side by side: a run times every setup in one interleaved pass (``run.side_by_side``): question 1 on
A, B, C, question 2 on B, C, A, ..., so each setup's i-th timed search (``times_ms[i]``) is the same
question, searched a moment before or after the other setups' i-th. Entries that were timed in the
same pass say so with the same ``time_pass``; two such setups are compared on the questions both
timed (the first ``min(n_a, n_b)``: every setup times the sample in the same order).

The test: per question, the log of the ratio of the two times, ``log(t_b / t_a)``, and the 20%
trimmed t-test of its mean (``significance.trimmed_mean_test``: of 10 ratios the 2 highest and 2
lowest are cut). Why it suits timings:

- skew: search times are right-skewed and multiplicative (a long question is slow on every setup,
  a busy core slows a search by a factor); their log ratio is not, and the pair's ratio is read
  back as "2.1x (1.9-2.3)";
- drift: load that comes and goes over the pass falls on both searches of a question alike, so the
  ratio cancels it; the rotation (and its reverse every other cycle) lets each setup of a pair go
  first equally often, so a rising load favours neither;
- outliers: a burst that lands on one search of a pair gives one wild ratio; trimming drops it from
  the estimate, and what stays in the winsorized spread makes the test more cautious, never less;
- ties at the clock's resolution: equal times give a log ratio of 0, which the test keeps as it is
  (a sign or signed-rank test has to drop it);
- small n (6-36 searches): a sign or signed-rank test on n ratios cannot give a one-sided p-value
  below ``1 / 2**n`` (1/64 at the 6 searches a reranked setup is timed on), so with Holm over four
  such pairs (4/64 > 0.05) not even a setup a hundred times slower could be told apart; a t-test on
  trimmed ratios can.

Simulated (``bench/bench_time_tests.py``, 300 draws of the issue's collection timed side by side by
this pass on a simulated busy machine: a slow drift of up to 1.9x, bursts of 1.5-3x load; each test
one-sided against the 5 ms floor, Holm over the balance pick's three pairs at 0.05): two setups 2x
slower than the anchor were both told apart in 85% of draws on 6 searches, 99.3% on 10 and all on
17 (the sign test 72%, 91%, 99.7%; Wilcoxon's signed-rank 72%, 91%, 99.7%; Student's t untrimmed 77%,
97%, 100%), and a setup 0.6 ms slower was never told apart (Wilcoxon once in 300 at 6 searches).

Two setups are *told apart* (one is faster) when the test shows the slower one slower by more than
the floor, ``equally_fast_ms``: the same test on the log ratios less ``log(1 + floor / the faster's
median)``, one-sided, Holm-corrected over the pairs the pick considers (``told_apart``), at ``alpha``.
A difference within the floor can never be shown, so such setups are *equally fast*, whatever the
test says of a smaller difference: it is one no caller sees beside a network round trip to a search
service (``settings.DEFAULT_EQUALLY_FAST_MS``). Testing against the floor, not against no difference,
keeps a pair of equally fast setups from being told apart when a busy machine inflates both their
times and the floor becomes a small share of them. Setups not timed side by side (times reused from
another run, a report from before side-by-side timing) fall back to the 99% order-statistic
intervals of their medians: told apart when the intervals do not overlap and the medians are more
than the floor apart.
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any, Mapping, Sequence

from .metrics import median_interval, median_ms
from .significance import holm, trimmed_mean_test

CLOCK_STEP_MS = 0.001  # times are kept in ms to three places: a search that read 0.0 took under this
TRIM = 0.2  # the share of log ratios cut at each end before the t-test (see the module docstring)
PAIR_LEVEL = 0.95  # the level of a pair's ratio interval, as the report keeps it
INTERVAL_CONFIDENCE = 0.99  # the fallback's intervals of the medians (setups not timed side by side)
TIME_TEST = ("20% trimmed t-test on the per-question log ratios of two setups timed side by side, "
             "Holm-corrected over the pairs a pick considers")
TIME_TIE_RULE = (f"tied on time unless the {TIME_TEST}, one-sided against the floor, shows one slower by more "
                 "than equally_fast_ms (setups not timed side by side: unless the 99% order-statistic intervals "
                 "of their medians do not overlap and the medians are more than equally_fast_ms apart)")


@dataclass(frozen=True)
class TimePair:
    """Two setups' times compared: ``faster`` has the lower median (then key). ``questions``: the
    searches compared side by side (0: not timed side by side). ``ratio``: how many times slower
    ``slower`` is, exp of the trimmed mean log ratio, with its ``PAIR_LEVEL`` interval ``low``-``high``;
    ``p`` the test's two-sided p-value that they are as fast; ``p_floor`` the same test's one-sided
    p-value that ``slower`` is slower by the floor or less (its log ratios less ``log(1 + floor /
    faster's median)``): at or under ``alpha``, it is shown slower by more; both before any correction
    (all None when not timed side by side, or on fewer than 3 questions). ``over_floor``: the estimate
    is beyond the floor. ``intervals_apart``: for setups not timed side by side, whether the fallback's
    intervals of their medians are apart (None for a pair compared side by side). ``difference_ms``:
    how many ms slower ``slower`` is: from the pairs when they were compared side by side (``faster``'s
    median x (``ratio`` - 1): drift and the questions' own lengths cancel in a pair, so two equally fast
    setups do not drift apart on a busy machine as their medians do), else the medians' difference;
    None when a median is missing."""

    faster: str
    slower: str
    questions: int
    ratio: float | None
    low: float | None
    high: float | None
    p: float | None
    p_floor: float | None
    over_floor: bool
    intervals_apart: bool | None
    difference_ms: float | None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def paired_times(a: Mapping[str, Any], b: Mapping[str, Any]) -> tuple[list[float], list[float]]:
    """The times ``a`` and ``b`` took on the same questions in the same side-by-side pass (``time_pass``),
    in timing order; two empty lists when they were not timed side by side."""
    if not a.get("time_pass") or a.get("time_pass") != b.get("time_pass"):
        return [], []
    times_a, times_b = list(a.get("times_ms") or []), list(b.get("times_ms") or [])
    n = min(len(times_a), len(times_b))
    return [float(t) for t in times_a[:n]], [float(t) for t in times_b[:n]]


def compare_times(a: Mapping[str, Any], b: Mapping[str, Any], equally_fast_ms: float) -> TimePair:
    """``a`` against ``b`` (ranked entries) with the floor ``equally_fast_ms``: see ``TimePair``. A time
    of 0 or less (a clock that did not move) counts as the clock's step, ``CLOCK_STEP_MS`` (one
    microsecond), so its log ratio is finite: 0.04 ms against 0.0 is 40x."""
    first, second = sorted((a, b), key=lambda s: (median_ms(s), s["key"]))
    times_fast, times_slow = paired_times(first, second)
    difference = median_ms(second) - median_ms(first)
    tested = shifted = None
    if times_fast:
        ratios = [math.log(max(slow, CLOCK_STEP_MS) / max(fast, CLOCK_STEP_MS)) for fast, slow in zip(times_fast,
                                                                                      times_slow, strict=True)]
        tested = trimmed_mean_test(ratios, trim=TRIM, level=PAIR_LEVEL)
        shift = math.log1p(equally_fast_ms / max(median_ms(first), CLOCK_STEP_MS))
        shifted = trimmed_mean_test([r - shift for r in ratios], trim=TRIM, level=PAIR_LEVEL)
    if tested is None or shifted is None:
        return TimePair(faster=first["key"], slower=second["key"], questions=len(times_fast), ratio=None, low=None,
                        high=None, p=None, p_floor=None,
                        over_floor=math.isfinite(difference) and difference > equally_fast_ms,
                        intervals_apart=not intervals_overlap(first, second), difference_ms=_rounded(difference))
    beyond = shifted.estimate  # the log ratio less the floor's: over 0, slower by more than the floor
    one_sided = shifted.p / 2 if beyond > 0 else 1 - shifted.p / 2
    paired = median_ms(first) * (math.exp(tested.estimate) - 1)
    return TimePair(faster=first["key"], slower=second["key"], questions=len(times_fast),
                    ratio=round(math.exp(tested.estimate), 4), low=round(math.exp(tested.low), 4),
                    high=round(math.exp(tested.high), 4), p=tested.p, p_floor=one_sided, over_floor=beyond > 0,
                    intervals_apart=None, difference_ms=_rounded(paired))


def _rounded(value: float) -> float | None:
    return round(value, 3) if math.isfinite(value) else None  # a setup never timed: no difference to keep


def slower_by_more(pair: TimePair, alpha: float, p_floor: float | None = None) -> bool:
    """Whether ``pair.slower`` is shown slower than ``pair.faster`` by more than the floor: side by side,
    the test against the floor (``pair.p_floor``, or a corrected one given) at or under ``alpha``;
    otherwise, their medians more than the floor apart and the fallback's intervals apart."""
    if pair.p_floor is None:
        return pair.over_floor and bool(pair.intervals_apart)
    return pair.over_floor and (pair.p_floor if p_floor is None else p_floor) <= alpha


def time_interval(setup: Mapping[str, Any]) -> tuple[float, float]:
    """Where the setup's true median time lies, for the fallback: the 99% order-statistic interval of
    its timed searches, their range when too few for one, the median alone without times."""
    times = [float(t) for t in setup.get("times_ms") or []]
    found = median_interval(times, INTERVAL_CONFIDENCE) if times else None
    if found is not None:
        return found
    if times:
        return min(times), max(times)
    return median_ms(setup), median_ms(setup)


def intervals_overlap(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    """Whether the fallback's intervals of ``a``'s and ``b``'s medians overlap (ends included)."""
    (a_low, a_high), (b_low, b_high) = time_interval(a), time_interval(b)
    return a_low <= b_high and b_low <= a_high


@dataclass(frozen=True)
class Verdict:
    """How ``key`` compares with a tier's anchor: ``apart`` (the anchor is faster by more than the floor),
    and why: ``"faster"`` or ``"cannot tell"`` (the paired test against the floor, ``p_holm`` its
    Holm-corrected p-value), ``"equally fast"`` (the estimate is within the floor), or ``"intervals
    apart"`` / ``"intervals overlap"`` (the fallback, for setups not timed side by side)."""

    key: str
    apart: bool
    why: str
    p_holm: float | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def told_apart(anchor: Mapping[str, Any], others: Sequence[Mapping[str, Any]], *, equally_fast_ms: float,
               alpha: float) -> list[Verdict]:
    """For each of ``others`` (in the order given), whether ``anchor`` (the fastest of them all, by
    median then key) is faster by more than the floor.

    Timed side by side with the anchor: when the test against the floor (``TimePair.p_floor``),
    Holm-corrected over every such pair here, is at or under ``alpha``. Otherwise: when their medians
    are more than the floor apart and the intervals of their medians do not overlap."""
    pairs = [compare_times(anchor, other, equally_fast_ms) for other in others]
    tested = [n for n, pair in enumerate(pairs) if pair.p_floor is not None]
    adjusted = {
        n: float(p) for n, p in zip(tested, holm([pairs[n].p_floor for n in tested]), strict=True) if p is not None
    }
    verdicts = []
    for n, (other, pair) in enumerate(zip(others, pairs, strict=True)):
        if n in adjusted:
            apart = slower_by_more(pair, alpha, adjusted[n])
            why = "faster" if apart else "cannot tell" if pair.over_floor else "equally fast"
            verdicts.append(Verdict(other["key"], apart, why, round(adjusted[n], 6)))
        else:
            apart = slower_by_more(pair, alpha)
            why = ("intervals apart" if apart else "equally fast" if not pair.over_floor else "intervals overlap")
            verdicts.append(Verdict(other["key"], apart, why))
    return verdicts


def time_pairs(ranked: Sequence[Mapping[str, Any]], equally_fast_ms: float) -> list[dict[str, Any]]:
    """Every pair of ranked setups compared (``TimePair.to_dict``), in rank order of the first then the
    second: the report's ``time_pairs``, so "2.1x faster (1.9-2.3)" can be read back for any two."""
    return [compare_times(a, b, equally_fast_ms).to_dict() for n, a in enumerate(ranked) for b in ranked[n + 1:]]
