"""Tiers (Holm over every pair of exact paired tests), rank intervals and the detectable difference."""
from __future__ import annotations

import math
from statistics import NormalDist

import numpy as np
import pytest

from evaluation.scoring.significance import exact_binary_p
from evaluation.scoring.tiers import (detectable, found_matrix, pair_tests, rank_intervals, setup_tiers, tier_groups,
                                      tier_of)
from evaluation.settings import SignificanceSettings

QUESTIONS = [f"q{i}" for i in range(36)]
SETTINGS = SignificanceSettings(alpha=0.05, resamples=2000, seed=0)


def entry(key, found, first=None):
    """An entry whose question i is found at position 1 (found[i] true, or first[i] when given) or not at all."""
    ranks = {q: ((first[i] if first else 1) if hit else None)
             for i, (q, hit) in enumerate(zip(QUESTIONS, found, strict=True))}
    return {"key": key, "ranks": ranks, "error": None,
            "summary": {"questions": len(QUESTIONS), "counts": {"10": sum(map(bool, found)),
                                                                  "1": sum(1 for r in ranks.values() if r == 1)}}}


def test_two_setups_one_question_apart_of_36_share_a_tier_and_one_20_points_worse_does_not():
    top = entry("top", [1] * 30 + [0] * 6)
    near = entry("near", [1] * 29 + [0] * 7)  # one question fewer: p = 1 (1 of 1 pattern as extreme, twice)
    worse = entry("worse", [1] * 22 + [0] * 14)  # 8 questions fewer of 36 = 22 points; none better
    tiers = setup_tiers([top, near, worse], QUESTIONS, SETTINGS)
    assert tiers["groups"] == [["top", "near"], ["worse"]]
    by_pair = {(p["a"], p["b"]): p for p in tiers["pairs"]}
    assert by_pair[("top", "near")]["p"] == 1.0 and by_pair[("top", "near")]["separated"] is False
    # by hand: top-worse p = 2 / 2**8 = 0.0078125, near-worse p = 2 / 2**7 = 0.015625; Holm over the three
    # pairs: 3 * 0.0078125 = 0.0234375, 2 * 0.015625 = 0.03125, 1 * 1 = 1
    assert by_pair[("top", "worse")]["p_holm"] == pytest.approx(0.0234375)
    assert by_pair[("near", "worse")]["p_holm"] == pytest.approx(0.03125)
    assert by_pair[("top", "worse")]["separated"] and by_pair[("near", "worse")]["separated"]
    assert tier_of(tiers, "near") == 1 and tier_of(tiers, "worse") == 2


def test_holm_counts_every_pair_not_only_those_with_the_top():
    # four setups, six pairs: the top-to-fourth test (p = 2 / 2**7) is corrected by 6, not by 3 (the top's pairs)
    top = entry("top", [1] * 36)
    others = [entry(f"s{n}", [1] * 36) for n in (2, 3)]
    low = entry("low", [1] * 29 + [0] * 7)
    tiers = setup_tiers([top, *others, low], QUESTIONS, SETTINGS)
    assert len(tiers["pairs"]) == 6
    p = next(r for r in tiers["pairs"] if r["a"] == "top" and r["b"] == "low")
    assert p["p"] == pytest.approx(2 / 2 ** 7) and p["p_holm"] == pytest.approx(min(1, 6 * 2 / 2 ** 7))
    # 6 * 0.015625 = 0.09375 > 0.05: the run cannot separate them, though each pair alone would (0.0156)
    assert tiers["groups"] == [["top", "s2", "s3", "low"]]


def test_a_holm_p_value_at_alpha_separates_and_just_over_it_does_not():
    top, five = entry("top", [1] * 36), entry("five", [1] * 31 + [0] * 5)  # p = 2 / 2**5 = 0.0625 exactly
    at = setup_tiers([top, five], QUESTIONS, SignificanceSettings(alpha=0.0625, resamples=200))
    over = setup_tiers([top, five], QUESTIONS, SignificanceSettings(alpha=0.0624, resamples=200))
    assert at["groups"] == [["top"], ["five"]] and over["groups"] == [["top", "five"]]


def _world(rng, n, k):
    """Found@10 of ``k`` setups on ``n`` questions, each setup's own rate, questions of varied difficulty."""
    ease = rng.random(n)
    rates = np.sort(rng.uniform(0.2, 0.95, size=k))[::-1]
    return (rng.random((n, k)) < (ease[:, None] * 0.5 + rates[None, :] * 0.5)).astype(np.float64)


def test_no_tier_holds_a_separated_pair_and_every_split_rests_on_a_separated_pair():
    rng = np.random.default_rng(3)
    checked_splits = 0
    for _ in range(60):
        n, k = int(rng.integers(20, 120)), int(rng.integers(2, 8))
        found = _world(rng, n, k)
        order = np.argsort(-found.sum(axis=0), kind="stable")
        found = found[:, order]
        keys = [f"s{i}" for i in range(k)]
        pairs = pair_tests(keys, found, 0.05)
        groups = tier_groups(keys, pairs)
        tier = {key: t for t, group in enumerate(groups) for key in group}
        separated = {(p["a"], p["b"]) for p in pairs if p["separated"]}
        assert sorted(tier) == sorted(keys) and all(groups)
        for a, b in separated:  # the better one of a separated pair sits in a higher tier
            assert tier[a] < tier[b] and found[:, keys.index(a)].sum() > found[:, keys.index(b)].sum()
        for key in keys:
            if tier[key] > 0:  # a split: some setup of the tier just above is separated above this one
                assert any((above, key) in separated for above in groups[tier[key] - 1])
                checked_splits += 1
    assert checked_splits > 20  # the worlds did split often enough to test the rule


def test_the_tiers_keep_their_family_wise_error_under_the_null():
    """Seeded simulation: runs in which no setup differs from another (every pair a true null) should
    separate some pair in at most alpha of them; here the worlds Holm must hold in, including two setups
    with the same rate finding mostly each other's misses beside six alike (where a shuffle of each
    question's values among all setups, as the randomized Tukey HSD does, separates them too often)."""
    rng = np.random.default_rng(48)
    runs, n, alpha = 400, 60, 0.05
    worlds = {"independent": lambda: (rng.random((n, 6)) < 0.6).astype(np.float64),
              "complementary": lambda: _complementary(rng, n)}
    for name, make in worlds.items():
        false = 0
        for _ in range(runs):
            found = make()
            keys = [f"s{i}" for i in range(found.shape[1])]
            false += any(p["separated"] for p in pair_tests(keys, found, alpha))
        bound = alpha + 2 * math.sqrt(alpha * (1 - alpha) / runs)
        assert false / runs <= bound, (name, false / runs)


def _complementary(rng, n):
    x = rng.random(n) < 0.5
    y = np.where(rng.random(n) < 0.8, ~x, rng.random(n) < 0.5)  # the same rate, mostly each other's misses
    z = rng.random(n) < 0.5
    return np.column_stack([x, y] + [z] * 6).astype(np.float64)


def test_setups_equal_on_every_question_share_their_ranks_and_a_setup_far_ahead_ranks_first():
    found10 = np.column_stack([np.ones(36), np.r_[np.ones(20), np.zeros(16)], np.r_[np.ones(20), np.zeros(16)]])
    ranks = rank_intervals(["a", "b", "c"], found10, found10, rng=np.random.default_rng(0), resamples=500,
                           level=0.95)
    assert ranks["a"] == {"low": 1, "high": 1, "first_share": 1.0}
    assert ranks["b"]["low"] == 2 and ranks["b"]["high"] == 3 and ranks["c"] == ranks["b"]
    assert ranks["b"]["first_share"] == 0.0


def test_first_shares_split_a_shared_first_place_and_add_up_to_one():
    rng = np.random.default_rng(1)
    found = (rng.random((36, 4)) < 0.7).astype(np.float64)
    ranks = rank_intervals(list("abcd"), found, found * 0, rng=np.random.default_rng(2), resamples=700, level=0.9)
    assert sum(r["first_share"] for r in ranks.values()) == pytest.approx(1.0, abs=1e-5)
    assert all(1 <= r["low"] <= r["high"] <= 4 for r in ranks.values())


def test_the_rank_bootstrap_is_seeded_by_the_runs_seed():
    rng = np.random.default_rng(9)
    found = (rng.random((36, 5)) < 0.6).astype(np.float64)
    entries = [{"key": f"s{i}", "ranks": {q: (1 if found[j, i] else None) for j, q in enumerate(QUESTIONS)}}
               for i in range(5)]
    once = setup_tiers(entries, QUESTIONS, SETTINGS)["ranks"]
    again = setup_tiers(entries, QUESTIONS, SETTINGS)["ranks"]
    other = setup_tiers(entries, QUESTIONS, SignificanceSettings(alpha=0.05, resamples=2000, seed=1))["ranks"]
    assert once == again
    assert [r["first_share"] for r in once.values()] != [r["first_share"] for r in other.values()]


def test_the_detectable_difference_is_the_paired_normal_formula_over_the_square_root_of_the_questions():
    # two setups, 36 questions, 6 found by the first alone: the differences' variance (ddof 1) is
    # (6 * (5/6)**2 + 30 * (1/6)**2) / 35 = 1/7, and for two setups 2 V_E is exactly that variance
    found = np.column_stack([np.r_[np.ones(6), np.zeros(30)], np.zeros(36)])
    found[6:20] = 1  # both find 14 more: nothing changes in the differences
    got = detectable(found, 0.05, 1)
    z = NormalDist().inv_cdf
    share = (z(0.975) + z(0.8)) * math.sqrt(1 / 7) / math.sqrt(36)  # 2.8016 * 0.3780 / 6 = 0.1765
    assert got["sd"] == pytest.approx(math.sqrt(1 / 7), abs=1e-6)
    assert got["points"] == pytest.approx(100 * share, abs=0.01) and got["questions"] == pytest.approx(36 * share,
                                                                                                       abs=0.01)
    assert got["one_pair"] == {"points": got["points"], "questions": got["questions"]}  # one pair: the same level
    wider = detectable(found, 0.05, 28)  # 28 pairs: each asked for 0.05 / 28
    assert wider["points"] == pytest.approx(100 * (z(1 - 0.05 / 56) + z(0.8)) * math.sqrt(1 / 7) / 6, abs=0.01)
    assert detectable(np.ones((36, 3)), 0.05, 3) is None  # no spread to plan from
    assert detectable(np.ones((36, 1)), 0.05, 1) is None


def test_each_pick_names_the_other_setups_of_its_tier():
    top, near = entry("top", [1] * 30 + [0] * 6), entry("near", [1] * 29 + [0] * 7)
    worse = entry("worse", [1] * 22 + [0] * 14)
    tiers = setup_tiers([top, near, worse], QUESTIONS, SETTINGS,
                        {"finds_the_most": "top", "best_for_balance": "near", "best_for_time": "worse"})
    assert tiers["picks"] == {"finds_the_most": ["near"], "best_for_balance": ["top"], "best_for_time": []}


def test_found_at_1_comes_from_the_first_position():
    e = entry("a", [1, 1, 0] + [0] * 33, first=[1, 4, 1] + [1] * 33)
    assert found_matrix([e], QUESTIONS, cutoff=1)[:3, 0].tolist() == [1.0, 0.0, 0.0]
    assert found_matrix([e], QUESTIONS)[:3, 0].tolist() == [1.0, 1.0, 0.0]


def test_nothing_ran_no_tiers():
    assert setup_tiers([], QUESTIONS, SETTINGS) is None
    assert exact_binary_p(0, 0) == 1.0


def test_found_at_1_orders_setups_that_find_as_many_in_their_top_10_as_the_ranking_does():
    found10 = np.ones((36, 2))
    found1 = np.column_stack([np.ones(36), np.zeros(36)])  # the second finds every question, never first
    ranks = rank_intervals(["first", "third"], found10, found1, rng=np.random.default_rng(0), resamples=300, level=0.95)
    assert (ranks["first"]["low"], ranks["first"]["high"]) == (1, 1)
    assert (ranks["third"]["low"], ranks["third"]["high"]) == (2, 2)


def test_pair_p_values_are_the_exact_tests_summed_in_integers_while_few_differ_and_in_floats_past():
    from evaluation.scoring.tiers import EXACT_UP_TO, _binary_p

    assert all(_binary_p(a, b) == exact_binary_p(a, b) for a, b in ((5, 0), (200, 199), (EXACT_UP_TO - 3, 3)))
    for a, b in ((EXACT_UP_TO, 1), (900, 700), (250, 200)):
        assert _binary_p(a, b) == pytest.approx(exact_binary_p(a, b), rel=1e-9)
