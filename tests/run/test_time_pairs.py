"""Two setups' times compared in pairs (``scoring.time_pairs``): hand-made entries timed side by side, the
ratio and its interval read back, the floor, and the fallback for setups not timed side by side."""
from __future__ import annotations

import math

import pytest

from evaluation.scoring.significance import holm, trimmed_mean_test
from evaluation.scoring.time_pairs import compare_times, told_apart


def entry(key, times, time_pass="run/pass"):
    ordered = sorted(times)
    n = len(ordered)
    median = (ordered[(n - 1) // 2] + ordered[n // 2]) / 2
    return {"key": key, "times_ms": list(times), "time_pass": time_pass, "summary": {"median_ms": median}}


WOBBLE = [1.00, 1.03, 0.98, 1.05, 0.97, 1.01, 0.99, 1.04, 0.96, 1.02]  # the questions' own lengths


def test_a_pair_timed_side_by_side_keeps_its_ratio_its_interval_and_both_tests():
    fast = entry("fast", [10 * w for w in WOBBLE])
    slow = entry("slow", [20 * w * (1 + 0.01 * (i % 3 - 1)) for i, w in enumerate(WOBBLE)])  # 2x, -/+ 1%
    pair = compare_times(slow, fast, 5.0)  # either order: the faster by median comes first
    ratios = [math.log(s / f) for f, s in zip(fast["times_ms"], slow["times_ms"], strict=True)]
    estimate, low, high, p = trimmed_mean_test(ratios)
    assert (pair.faster, pair.slower, pair.questions) == ("fast", "slow", 10)
    assert (pair.ratio, pair.low, pair.high) == (round(math.exp(estimate), 4), round(math.exp(low), 4),
                                                 round(math.exp(high), 4))
    assert pair.ratio == pytest.approx(2.0, abs=0.01) and pair.p == p < 1e-6
    shift = math.log1p(5.0 / fast["summary"]["median_ms"])  # slower by more than 5 ms over the faster's median
    beyond = trimmed_mean_test([r - shift for r in ratios])
    assert pair.over_floor and pair.p_floor == pytest.approx(beyond[3] / 2)  # one-sided
    assert pair.difference_ms == pytest.approx(fast["summary"]["median_ms"] * (math.exp(estimate) - 1), abs=1e-3)
    assert pair.intervals_apart is None


def test_a_pair_under_the_floor_is_equally_fast_however_sure_the_test_is_that_they_differ():
    a, b = entry("a", [20 * w for w in WOBBLE]), entry("b", [24 * w for w in WOBBLE])  # 4 ms apart, every time
    pair = compare_times(a, b, 5.0)
    assert pair.p == 0.0 and not pair.over_floor and pair.p_floor > 0.5
    [verdict] = told_apart(a, [b], equally_fast_ms=5.0, alpha=0.05)
    assert (verdict.apart, verdict.why) == (False, "equally fast")
    [verdict] = told_apart(a, [b], equally_fast_ms=3.0, alpha=0.05)  # a 3 ms floor: 4 ms is shown
    assert (verdict.apart, verdict.why) == (True, "faster")


def test_setups_not_timed_in_the_same_pass_fall_back_to_the_intervals_of_their_medians():
    a = entry("a", [10 * w for w in WOBBLE], time_pass="run/one")
    b = entry("b", [30 * w for w in WOBBLE], time_pass="run/other")
    pair = compare_times(a, b, 5.0)
    assert (pair.questions, pair.ratio, pair.p, pair.p_floor) == (0, None, None, None)
    assert pair.intervals_apart and pair.difference_ms == pytest.approx(20.0, abs=0.5)
    [verdict] = told_apart(a, [b], equally_fast_ms=5.0, alpha=0.05)
    assert (verdict.apart, verdict.why, verdict.p_holm) == (True, "intervals apart", None)


def test_the_anchors_pairs_are_holm_corrected_together_and_a_clock_that_did_not_move_counts_its_step():
    anchor = entry("anchor", [10 * w for w in WOBBLE])
    others = [entry("twice", [20 * w for w in WOBBLE]),
              entry("noisy", [t * (2.5 if i % 2 else 1.0) for i, t in enumerate(anchor["times_ms"])]),
              entry("never", [0.0] * 5 + [30.0] * 5)]
    pairs = [compare_times(anchor, other, 5.0) for other in others]
    verdicts = told_apart(anchor, others, equally_fast_ms=5.0, alpha=0.05)
    assert [v.p_holm for v in verdicts] == [round(p, 6) for p in holm([p.p_floor for p in pairs])]
    assert all(math.isfinite(p.ratio) for p in pairs)  # 0.0 ms counts as 0.001 ms, not a division by zero


def test_a_setup_that_timed_more_searches_is_paired_on_its_first_ones_the_questions_both_timed():
    # both time the sample in the same order: the fast setup stopped after 6, so the slow one's first 6 are
    # the same questions; its later searches (here a burst at 10x) were of questions the other never timed
    fast = entry("fast", [10 * w for w in WOBBLE[:6]])
    slow = entry("slow", [20 * w for w in WOBBLE[:6]] + [200 * w for w in WOBBLE[6:]])
    pair = compare_times(fast, slow, 5.0)
    assert pair.questions == 6
    assert pair.ratio == pytest.approx(2.0, abs=1e-9)  # 20w / 10w on each shared question; its last 6 read ~16x


def test_a_clock_that_did_not_move_counts_one_step_of_a_microsecond_so_a_40x_ratio_reads_40x():
    # times are kept in ms to three places: a search under the clock's step reads 0.0 and counts as
    # 0.001 ms. 0.04 ms against it is 40 times as long (a step taken as 0.002 ms would read 20x)
    fast = entry("fast", [0.0] * 8)
    slow = entry("slow", [0.04] * 8)
    pair = compare_times(fast, slow, 0.0)
    assert pair.ratio == pytest.approx(0.04 / 0.001) and pair.questions == 8
    # the floor is measured from the same step: 0.05 ms over a 0.001 ms median is 51x, more than 40x
    assert compare_times(fast, slow, 0.03).over_floor and not compare_times(fast, slow, 0.05).over_floor
