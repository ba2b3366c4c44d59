"""Paired tests, intervals and Holm's correction, with hand-checkable arithmetic and scipy as the oracle."""
from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from evaluation.scoring.comparison import (SignificanceSettings, compare_with_top, correct_for_many, paired,
                                           pick_ties, versus)
from evaluation.scoring.significance import (MOST_QUESTIONS, _BLOCK_VALUES, _binary_p_float, exact_binary_p, holm,
                                            holm_factors, paired_bootstrap, paired_bootstraps, questions_to_tell,
                                            sign_flip_p)

SETTINGS = SignificanceSettings(alpha=0.05, resamples=2000, seed=0)


# -- the tests themselves ---------------------------------------------------------------------------

def test_the_exact_found_test_counts_sign_patterns_by_hand():
    assert exact_binary_p(0, 0) == 1.0  # nothing differs: every pattern is as extreme as none
    assert exact_binary_p(0, 5) == 2 / 32  # only all-minus and all-plus of 2**5 patterns
    # 1 better, 4 worse: m = 5, |b - w| = 3; k with |2k - 5| >= 3 are 0, 1, 4, 5: (1 + 5 + 5 + 1) / 32
    assert exact_binary_p(1, 4) == 12 / 32
    assert exact_binary_p(4, 1) == exact_binary_p(1, 4)  # two-sided


@pytest.mark.parametrize("better,worse", [(0, 1), (2, 9), (7, 7), (3, 12), (0, 30), (40, 25)])
def test_the_exact_found_test_agrees_with_scipys_binomial_test(better, worse):
    assert exact_binary_p(better, worse) == pytest.approx(stats.binomtest(better, better + worse, 0.5).pvalue,
                                                          rel=1e-12)


@pytest.mark.parametrize("better,worse", [(0, 1), (2, 9), (3, 12), (0, 30), (40, 25), (480, 530)])
def test_the_float_found_test_is_the_exact_one(better, worse):
    assert _binary_p_float(better, worse) == pytest.approx(exact_binary_p(better, worse), rel=1e-9)


def test_questions_to_tell_is_the_fewest_questions_at_the_same_rates_the_exact_test_calls_significant():
    # 3 worse of 17, none better: the test tells at 6 worse (p = 2/64 = 0.031; at 5, 2/32 = 0.0625), and
    # round(3 N / 17) = 6 first at N = 32 (5.5 * 17 / 3 = 31.2)
    assert questions_to_tell(0, 3, 17, 0.05) == 32
    assert exact_binary_p(0, round(3 * 32 / 17)) <= 0.05 < exact_binary_p(0, round(3 * 31 / 17))
    # already significant: the questions there are
    assert questions_to_tell(0, 6, 17, 0.05) == 17
    # 1 better, 4 worse of 17 (p 12/32): at 41, round(41/17) = 2 better and round(164/17) = 10 worse, p = 0.039
    assert questions_to_tell(1, 4, 17, 0.05) == 41
    assert exact_binary_p(2, 10) <= 0.05 < exact_binary_p(2, 9)
    assert questions_to_tell(4, 1, 17, 0.05) == 41  # two-sided: the direction does not matter
    assert questions_to_tell(3, 3, 17, 0.05) is None  # found as many: no number of questions tells
    assert questions_to_tell(450, 451, 1000, 0.05) == MOST_QUESTIONS  # a gap of 1 in 1,000: millions


def test_the_sign_flip_test_enumerates_every_pattern_when_few_questions_differ():
    d = [0.5, 0.25, -0.125, 0.0, 1.0]  # 4 non-zero: 2**4 = 16 patterns; observed |sum| = 1.625
    # |sum| >= 1.625 only for (+.5 +.25 +.125 +1) = 1.875, (+.5 +.25 -.125 +1) = 1.625 and their mirrors: 4/16
    assert sign_flip_p(d, rng=np.random.default_rng(0), resamples=10_000) == 4 / 16
    oracle = stats.permutation_test((np.array(d), np.zeros(5)), lambda x, y: np.mean(x - y), vectorized=False,
                                    permutation_type="samples", n_resamples=np.inf, alternative="two-sided")
    assert sign_flip_p(d, rng=np.random.default_rng(0)) == pytest.approx(oracle.pvalue)


def test_the_exact_sign_flip_of_zeros_and_ones_is_the_exact_found_test():
    d = [1.0] * 2 + [-1.0] * 9 + [0.0] * 25
    assert sign_flip_p(d, rng=np.random.default_rng(0), resamples=4096) == pytest.approx(exact_binary_p(2, 9))


def test_the_sampled_sign_flip_is_close_to_the_exact_value_and_never_zero():
    d = [1.0] * 3 + [-1.0] * 17  # 20 differ: 2**20 > 5000 resamples, so patterns are drawn
    sampled = sign_flip_p(d, rng=np.random.default_rng(1), resamples=5000)
    assert sampled == pytest.approx(exact_binary_p(3, 17), abs=0.003)  # exact: 0.0026
    assert sign_flip_p([5.0] * 40, rng=np.random.default_rng(1), resamples=200) == 1 / 201  # (1 + 0) / (1 + 200)


def test_the_bootstrap_interval_of_a_constant_difference_is_that_difference():
    interval = paired_bootstrap(np.column_stack([np.full(9, 0.25), np.zeros(9)]), rng=np.random.default_rng(3),
                                resamples=500)
    assert interval.tolist() == [[0.25, 0.25], [0.0, 0.0]]


def test_bootstraps_drawn_once_for_many_are_each_ones_own_bit_for_bit():
    rng = np.random.default_rng(4)
    n = _BLOCK_VALUES // 700  # 700 resamples a block: 2,000 resamples are three blocks, the last one short
    many = [rng.normal(size=(n, 3)), rng.integers(-1, 2, size=(n, 2)).astype(float), rng.random(n),
            rng.random((9, 2)), np.zeros((0, 3)), rng.random((9, 1))]

    together = paired_bootstraps(many, rng_of=lambda: np.random.default_rng([7, 0]), resamples=2000, level=0.9)

    alone = [paired_bootstrap(d, rng=np.random.default_rng([7, 0]), resamples=2000, level=0.9) for d in many]
    assert [a.shape for a in together] == [(3, 2), (2, 2), (1, 2), (2, 2), (3, 2), (1, 2)]
    assert all(np.array_equal(t, a) for t, a in zip(together, alone, strict=True))  # every bit, not approximately
    assert not np.array_equal(together[3][:1], together[5])  # same rows and seed, other values: other numbers


def test_versus_gives_each_pairs_own_numbers_holm_corrected_across_them():
    rng = np.random.default_rng(9)
    top = entry("top", [int(r) for r in rng.integers(1, 4, size=36)])
    others = [
        entry(
            k,
            [int(r) if r < 15 else None for r in rng.integers(1, 20, size=36)],
            ndcg={q: float(v) for q, v in zip(QUESTIONS, rng.random(36), strict=True)},
        )
        for k in ("b", "c", "d")
    ]

    together = versus(top, [top, *others], QUESTIONS, SETTINGS)  # the reference itself is left out

    one_by_one = correct_for_many({o["key"]: paired(top, o, QUESTIONS, SETTINGS) for o in others}, SETTINGS)
    assert together == one_by_one and list(together) == ["b", "c", "d"]


def test_holm_matches_a_hand_computation():
    # sorted: 0.005 * 4 = 0.02, 0.01 * 3 = 0.03, 0.03 * 2 = 0.06, 0.04 * 1 = 0.04 -> carried up to 0.06
    assert holm([0.01, 0.04, 0.03, 0.005]) == pytest.approx([0.03, 0.06, 0.06, 0.02])
    assert holm([0.01, None, 0.04]) == pytest.approx([0.02, None, 0.04])  # None is no test: m = 2
    assert holm([0.6, 0.7]) == [1.0, 1.0]  # capped at 1
    assert holm([]) == []


def test_holm_factors_are_what_holm_multiplies_each_p_value_by():
    assert holm_factors([0.01, 0.04, 0.03, 0.005]) == [3, 1, 2, 4]  # as in the hand computation above
    assert holm_factors([0.01, None, 0.04]) == [2, None, 1]


# -- setups compared with the top -------------------------------------------------------------------

QUESTIONS = [f"q{i}" for i in range(36)]


def entry(key, ranks, median=10.0, ndcg=None):
    """A report entry as run_setup makes it, for the fields the comparison reads."""
    ranks = dict(zip(QUESTIONS, ranks, strict=True))
    found = sum(1 for r in ranks.values() if r and r <= 10)
    if ndcg is None:  # one relevant unit per question: nDCG@10 = 1 / log2(rank + 1)
        ndcg = {q: (1 / math.log2(r + 1) if r and r <= 10 else 0.0) for q, r in ranks.items()}
    return {"key": key, "ranks": ranks, "ndcg_10": ndcg, "error": None, "rank": None,
            "summary": {"questions": 36, "counts": {"10": found, "1": sum(1 for r in ranks.values() if r == 1)},
                        "median_ms": median}}


def ranked(*entries):
    for position, e in enumerate(entries, start=1):
        e["rank"] = position
    return list(entries)


def test_identical_setups_are_never_significant():
    rng = np.random.default_rng(11)
    for _ in range(5):
        ranks = [int(r) if r <= 20 else None for r in rng.integers(1, 30, size=36)]
        a, b = entry("a", ranks), entry("b", list(ranks))
        result = versus(a, [b], QUESTIONS, SETTINGS)["b"]
        for metric in ("found@10", "mrr", "ndcg_10"):
            assert result[metric]["difference"] == 0 and result[metric]["interval"] == [0.0, 0.0]
            assert result[metric]["p"] == 1.0 and result[metric]["p_holm"] == 1.0
        assert result["tied"] is True


def test_a_large_real_difference_is_significant():
    top = entry("top", [1] * 36)
    weak = entry("weak", [1] * 6 + [None] * 30)  # 30 questions lost, none gained
    result = versus(top, [weak], QUESTIONS, SETTINGS)["weak"]
    assert result["found@10"]["worse"] == 30 and result["found@10"]["better"] == 0
    assert result["found@10"]["difference"] == pytest.approx(-30 / 36, abs=1e-6)
    assert result["found@10"]["p"] == pytest.approx(2 / 2 ** 30)  # all-minus or all-plus of 2**30
    assert result["found@10"]["interval"][1] < 0 and result["mrr"]["interval"][1] < 0
    assert result["mrr"]["p"] == pytest.approx(1 / 2001)  # no random pattern reaches |sum| = 30: (1 + 0) / (1 + 2000)
    assert result["tied"] is False


def test_holm_is_applied_across_the_setups_compared_with_the_top():
    top = entry("top", [1] * 36)
    five = entry("five", [1] * 31 + [None] * 5)  # p = 2 / 2**5 = 0.0625
    six = entry("six", [1] * 30 + [None] * 6)  # p = 2 / 2**6 = 0.03125
    ten = entry("ten", [1] * 26 + [None] * 10)  # p = 2 / 2**10 = 0.001953125
    compare_with_top(ranked(top, five, six, ten), QUESTIONS, SETTINGS)
    # by hand: 0.001953125 * 3 = 0.005859375; 0.03125 * 2 = 0.0625; 0.0625 * 1 = 0.0625 (max so far 0.0625)
    assert ten["versus_top"]["found@10"]["p_holm"] == pytest.approx(0.005859375)
    assert six["versus_top"]["found@10"]["p_holm"] == pytest.approx(0.0625)
    assert five["versus_top"]["found@10"]["p_holm"] == pytest.approx(0.0625)
    assert six["versus_top"]["found@10"]["p"] == pytest.approx(0.03125)  # significant alone, not after Holm
    assert [e["versus_top"]["tied"] for e in (five, six, ten)] == [True, True, False]
    assert top["versus_top"] is None and ten["versus_top"]["top"] == "top"


def test_a_p_value_at_alpha_is_significant_and_just_over_it_is_within_noise():
    top, five = entry("top", [1] * 36), entry("five", [1] * 31 + [None] * 5)  # p = 2 / 2**5 = 0.0625 exactly
    assert versus(top, [five], QUESTIONS, SignificanceSettings(alpha=0.0625, resamples=200))["five"]["tied"] is False
    assert versus(top, [five], QUESTIONS, SignificanceSettings(alpha=0.0624, resamples=200))["five"]["tied"] is True


def test_the_same_seed_gives_the_same_p_values_and_intervals_twice():
    rng = np.random.default_rng(5)
    ndcg_a = {q: float(v) for q, v in zip(QUESTIONS, rng.random(36), strict=True)}
    ndcg_b = {q: float(v) for q, v in zip(QUESTIONS, rng.random(36),
                                          strict=True)}  # 36 differ: 2**36 patterns, so drawn
    a = entry("a", [1] * 36, ndcg=ndcg_a)
    b = entry("b", [2] * 30 + [1] * 6, ndcg=ndcg_b)
    first = versus(a, [b], QUESTIONS, SignificanceSettings(resamples=2000, seed=7))
    again = versus(a, [b], QUESTIONS, SignificanceSettings(resamples=2000, seed=7))
    other = versus(a, [b], QUESTIONS, SignificanceSettings(resamples=2000, seed=8))
    assert first == again
    assert first["b"]["ndcg_10"]["interval"] != other["b"]["ndcg_10"]["interval"]  # the seed is used


def test_a_pair_gives_the_same_numbers_whatever_else_is_compared():
    top, b, c = entry("top", [1] * 36), entry("b", [2] * 20 + [1] * 16), entry("c", [1] * 35 + [None])
    alone = versus(top, [b], QUESTIONS, SETTINGS)["b"]
    together = versus(top, [c, b], QUESTIONS, SETTINGS)["b"]
    assert alone["mrr"]["interval"] == together["mrr"]["interval"] and alone["mrr"]["p"] == together["mrr"]["p"]


def test_an_entry_without_per_question_ndcg_is_compared_on_the_rest():
    old = entry("old", [1] * 36)
    del old["ndcg_10"]
    result = versus(entry("top", [1] * 36), [old], QUESTIONS, SETTINGS)["old"]
    assert result["ndcg_10"] is None and result["found@10"]["p"] == 1.0


# -- ties beside the picks --------------------------------------------------------------------------

def test_each_pick_names_the_fastest_setup_tied_with_it_within_noise():
    top = entry("top", [1] * 36, median=50.0)
    close = entry("close", [1] * 34 + [None] * 2, median=20.0)  # 2 fewer: p = 2 / 4 = 0.5, tied
    quick = entry("quick", [1] * 33 + [None] * 3, median=5.0)  # 3 fewer: p = 2 / 8 = 0.25, tied
    poor = entry("poor", [1] * 20 + [None] * 16, median=1.0)  # 16 fewer: p = 2 / 65536, not tied
    as_slow = entry("as-slow", [1] * 35 + [None], median=50.0)  # as slow as the top: not faster, not listed
    ordered = ranked(top, as_slow, close, quick, poor)
    ties = pick_ties({"finds_the_most": "top", "best_for_balance": "close", "best_for_time": "quick"}, ordered,
                     QUESTIONS, SETTINGS)
    assert [row["key"] for row in ties["finds_the_most"]["faster"]] == ["poor", "quick", "close"]  # fastest first
    assert ties["finds_the_most"]["tied"] is True and ties["finds_the_most"]["with"] == "quick"
    assert ties["best_for_balance"]["with"] == "quick"
    # quick vs poor: 13 fewer, p = 2 / 2**13; Holm over the 4 setups compared with quick: * 4, under 0.05
    poor_row = ties["best_for_time"]["faster"][0]
    assert poor_row["p"] == pytest.approx(2 / 2 ** 13) and poor_row["p_holm"] == pytest.approx(4 * 2 / 2 ** 13)
    assert ties["best_for_time"] == {"pick": "quick", "median_ms": 5.0, "tied": False, "with": None,
                                     "faster": [poor_row]}


def test_no_pick_no_ties():
    assert pick_ties({"finds_the_most": None}, [], QUESTIONS, SETTINGS) == {"finds_the_most": None}


def test_questions_to_tell_is_the_holm_corrected_tests_for_each_setup_compared_with_the_top():
    top = entry("top", [1] * 36)
    close = entry("close", [1] * 33 + [None] * 3)   # 3 worse: p = 2 / 8 = 0.25, the larger p: Holm factor 1
    poorer = entry("poorer", [1] * 31 + [None] * 5)  # 5 worse: p = 2 / 32 = 0.0625, the smaller: factor 2
    result = versus(top, [close, poorer], QUESTIONS, SETTINGS)
    # close at 0.05: 6 worse tells (2 / 64); round(3 N / 36) = 6 first at N = 66 (5.5 * 12)
    assert result["close"]["found@10"]["questions_to_tell"] == questions_to_tell(0, 3, 36, 0.05) == 66
    # poorer at 0.05 / 2 = 0.025: 7 worse tells (2 / 128 = 0.0156; 6 gives 0.031); round(5 N / 36) = 7 first at
    # N = 47 (6.5 * 36 / 5 = 46.8), where uncorrected 6 worse would do at N = 40 (5.5 * 36 / 5 = 39.6)
    assert result["poorer"]["found@10"]["questions_to_tell"] == 47
    assert questions_to_tell(0, 5, 36, 0.05) == 40
    ties = pick_ties({"finds_the_most": "top"}, ranked(entry("top", [1] * 36, median=50.0),
                                                     entry("close", [1] * 33 + [None] * 3, median=10.0),
                                                     entry("poorer", [1] * 31 + [None] * 5, median=5.0)),
                     QUESTIONS, SETTINGS)["finds_the_most"]
    assert {row["key"]: row["questions_to_tell"] for row in ties["faster"]} == {"poorer": 47, "close": 66}


def test_student_t_p_values_and_critical_values_match_scipy():
    from scipy import stats

    from evaluation.scoring.significance import t_quantile, t_two_sided_p

    for df in (1, 2, 3, 4, 5, 9, 16, 35):
        for t in (0.0, 0.3, 1.0, 2.5, 7.0, 40.0):
            assert t_two_sided_p(t, df) == pytest.approx(2 * stats.t.sf(t, df), abs=1e-12)
            assert t_two_sided_p(-t, df) == t_two_sided_p(t, df)
        assert t_quantile(0.95, df) == pytest.approx(stats.t.ppf(0.975, df), rel=1e-9)
    assert t_two_sided_p(float("inf"), 3) == 0.0 and t_two_sided_p(float("nan"), 3) == 1.0
    with pytest.raises(ValueError):
        t_two_sided_p(1.0, 0)


def test_the_trimmed_mean_test_cuts_a_fifth_at_each_end_and_winsorizes_the_spread():
    from scipy import stats
    from scipy.stats import mstats

    from evaluation.scoring.significance import trimmed_mean_test

    values = [1, 2, 3, 4, 100, 5, 6, 7, 8, 9]  # n = 10: g = 2 cut at each end, h = 6 kept
    estimate, low, high, p = trimmed_mean_test(values)
    assert estimate == (3 + 4 + 5 + 6 + 7 + 8) / 6 == stats.trim_mean(values, 0.2)  # 100 is cut, not averaged
    winsorized = np.asarray(mstats.winsorize(np.array(values, dtype=float), limits=(0.2, 0.2)))
    assert sorted(winsorized) == [3, 3, 3, 4, 5, 6, 7, 8, 8, 8]
    error = math.sqrt(9 * winsorized.var(ddof=1) / (6 * 5))  # Yuen: (n - 1) s_w**2 / (h (h - 1))
    assert p == pytest.approx(2 * stats.t.sf(estimate / error, 5))
    reach = stats.t.ppf(0.975, 5) * error
    assert (low, high) == (pytest.approx(estimate - reach), pytest.approx(estimate + reach))
    assert trimmed_mean_test([0.2, 0.2, 0.2, 0.2]) == (0.2, 0.2, 0.2, 0.0)  # no spread, not 0: shown
    assert trimmed_mean_test([0.0] * 6)[3] == 1.0 and trimmed_mean_test([1.0, 2.0]) is None
