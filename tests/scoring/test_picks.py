"""Ranking and picks on hand-made setups: found@10 counts and median times written out, and timed
searches drawn from known distributions for the time ties."""
from __future__ import annotations

import numpy as np
import pytest

from evaluation.scoring.picks import (allowed_shortfall, choose_picks, frontier, neighbours, rank_setups,
                                      time_tie_tiers, time_tiers)
from evaluation.scoring.time_pairs import intervals_overlap, time_interval


def setup(key, found10, found1=0, median=10.0, questions=25, error=None, **shape):
    entry = {"key": key, "target": shape.get("target", "local"), "engine": shape.get("engine", "embedded"),
             "retrieval": shape.get("retrieval", "hybrid"), "ranker": shape.get("ranker"),
             "models": shape.get("models", []), "error": error}
    entry["summary"] = None if error else {
        "questions": questions, "counts": {"1": found1, "3": found1, "5": found1, "10": found10, "20": found10},
        "median_ms": median}
    return entry


def picks_of(setups, **rules):
    return choose_picks(rank_setups(setups), **rules)


def test_ranks_by_found_at_10_then_found_at_1_then_median_time_then_key():
    setups = [setup("d", 20, 5, 1.0), setup("c", 21, 5, 9.0), setup("b", 21, 6, 9.0), setup("a", 21, 6, 9.0),
              setup("e", 21, 6, 3.0)]
    assert [s["key"] for s in rank_setups(setups)] == ["e", "a", "b", "c", "d"]
    assert [s["rank"] for s in setups] == [5, 4, 3, 2, 1]


def test_balance_is_inclusive_at_four_points_counted_in_whole_questions():
    # 25 questions: 96% = 24/25 is the most, 92% = 23/25 is exactly 4 points (1 question) fewer.
    setups = [setup("best", 24, median=100.0), setup("edge", 23, median=20.0), setup("below", 22, median=5.0)]
    picks = picks_of(setups, balance=4, time_points=8)
    assert allowed_shortfall(4, 25) == 1  # 4 * 25 / 100 = 1
    assert picks["finds_the_most"] == "best"
    assert picks["best_for_balance"] == "edge"
    assert allowed_shortfall(8, 25) == 2  # 8 * 25 / 100 = 2: 22/25 is in
    assert picks["best_for_time"] == "below"


def test_points_that_do_not_make_a_whole_question_allow_none():
    # 20 questions: 4 points is 0.8 of a question -> 0 questions allowed.
    assert allowed_shortfall(4, 20) == 0
    setups = [setup("best", 19, median=50.0, questions=20), setup("one-less", 18, median=1.0, questions=20)]
    picks = picks_of(setups, balance=4, time_points=8)
    assert picks["best_for_balance"] == "best"
    assert allowed_shortfall(8, 20) == 1  # 8 * 20 / 100 = 1.6 -> 1
    assert picks["best_for_time"] == "one-less"


def test_shortfall_is_exact_at_fifty_questions():
    assert allowed_shortfall(4, 50) == 2  # 4 * 50 / 100 = 2 exactly, no float drift


def test_all_three_picks_may_be_one_setup():
    picks = picks_of([setup("only", 10, median=3.0), setup("slow", 5, median=9.0)])
    assert picks == {"finds_the_most": "only", "best_for_balance": "only", "best_for_time": "only"}


def test_equal_times_within_reach_go_to_the_better_ranked_setup():
    setups = [setup("top", 24, 10, median=8.0), setup("tied-b", 23, 9, median=2.0), setup("tied-a", 23, 9, median=2.0)]
    picks = picks_of(setups)
    assert picks["best_for_balance"] == "tied-a"  # same found and time: key breaks the tie in rank


def test_a_failing_setup_is_never_ranked_nor_picked():
    setups = [setup("broken", 0, error="RuntimeError: boom"), setup("works", 3, median=50.0)]
    picks = picks_of(setups)
    assert set(picks.values()) == {"works"}
    assert setups[0]["rank"] is None


def test_nothing_ran_means_no_picks():
    assert picks_of([setup("broken", 0, error="x")]) == {
        "finds_the_most": None, "best_for_balance": None, "best_for_time": None}


def test_frontier_keeps_setups_nothing_beats_on_both_found_and_time():
    setups = [setup("most", 24, median=100.0), setup("fast", 20, median=2.0), setup("dominated", 19, median=50.0),
              setup("middle", 22, median=30.0)]
    assert frontier(rank_setups(setups)) == ["most", "middle", "fast"]


def test_frontier_keeps_every_setup_tied_on_both_found_and_time():
    # "twin-a" and "twin-b" find 22 in 30 ms each: neither beats the other, so both stay; "slower"
    # ties them on found but not on time, so it is beaten
    setups = [setup("most", 24, median=100.0), setup("twin-b", 22, median=30.0), setup("twin-a", 22, median=30.0),
              setup("slower", 22, median=31.0), setup("fast", 20, median=2.0)]
    assert frontier(rank_setups(setups)) == ["most", "twin-a", "twin-b", "fast"]


def test_a_setup_that_times_nothing_is_beaten_by_an_equal_one_that_does():
    # no median counts as slowest (infinite): equal found@10 and a measured time beat it
    setups = [setup("timed", 22, median=30.0), setup("untimed", 22, median=None)]
    assert frontier(rank_setups(setups)) == ["timed"]


def test_neighbours_are_one_change_away():
    hybrid_both = setup("local.hybrid.a+b", 1, models=["a", "b"])
    hybrid_a = setup("local.hybrid.a", 1, models=["a"])
    reranked = setup("local.hybrid_reranked.a+b", 1, models=["a", "b"], ranker="cross-encoder")
    vector_both = setup("local.dense.a+b", 1, models=["a", "b"], retrieval="dense")
    azure = setup("idx.hybrid.a+b", 1, models=["a", "b"], target="idx", engine="azure-ai-search")
    everything = [hybrid_both, hybrid_a, reranked, vector_both, azure]
    assert neighbours(hybrid_both, everything) == ["local.hybrid.a", "local.hybrid_reranked.a+b", "idx.hybrid.a+b"]
    assert neighbours(hybrid_a, everything) == ["local.hybrid.a+b"]


def test_negative_points_are_refused():
    with pytest.raises(ValueError):
        allowed_shortfall(-1, 10)


def timed(key, found10, times, found1=5, questions=25):
    """An entry as a run makes it: its timed searches kept, the median theirs."""
    entry = setup(key, found10, found1, median=float(np.median(times)), questions=questions)
    entry["times_ms"] = [round(float(t), 3) for t in times]
    return entry


def test_the_same_evaluation_with_timings_from_one_distribution_gives_one_pick_every_time():
    # five setups, found@10 24, 23, 23, 22, 21 of 25: all within 8 points (2 questions) but "d", and
    # every setup's 30 timed searches drawn from the same lognormal around 10 ms, 300 times over
    rng = np.random.default_rng(20)
    found = {"top": 24, "a": 23, "b": 23, "c": 22, "d": 21}
    picks, fastest = set(), set()
    for _ in range(300):
        setups = [timed(key, f, 10 * np.exp(rng.normal(0, 0.3, 30))) for key, f in found.items()]
        picks.add(tuple(picks_of(setups).values()))
        fastest.add(min((s for s in setups if s["summary"]["counts"]["10"] >= 22),
                        key=lambda s: s["summary"]["median_ms"])["key"])
    # the rule before time ties took the fastest median within the points: noise chose among four
    assert fastest == {"top", "a", "b", "c"}
    assert picks == {("top", "top", "top")}  # all tied on time: within each tier, the most found


def test_a_real_threefold_difference_in_time_picks_the_faster():
    rng = np.random.default_rng(3)
    for _ in range(100):
        slow = timed("top", 24, 30 * np.exp(rng.normal(0, 0.3, 30)))
        fast = timed("fast", 23, 10 * np.exp(rng.normal(0, 0.3, 30)))
        assert picks_of([slow, fast]) == {"finds_the_most": "top", "best_for_balance": "fast", "best_for_time": "fast"}


def test_time_intervals_are_the_order_statistics_of_the_timed_searches_or_their_range_when_few():
    times = list(range(1, 31))  # 1..30 ms
    # 99%: the largest l with P(Binomial(30, 1/2) < l) <= 0.005 is 8: x(8) = 8 ms and x(30 + 1 - 8) = 23 ms
    assert time_interval(timed("x", 1, times)) == (8.0, 23.0)
    assert time_interval(timed("x", 1, [5.0, 9.0, 7.0])) == (5.0, 9.0)  # 3 searches: too few, their range
    assert time_interval(setup("x", 1, median=4.0)) == (4.0, 4.0)  # no times kept: the median alone
    assert intervals_overlap(timed("a", 1, times), timed("b", 1, [23.0] * 10))  # ends touch: tied
    assert not intervals_overlap(timed("a", 1, times), timed("b", 1, [23.5] * 10))


def test_inside_the_fastest_tier_setups_within_the_floor_go_by_found_then_found_at_1_then_key():
    base = list(range(1, 31))
    setups = [timed("top", 25, [t + 100 for t in base]),             # 101..130 ms: its own tier
              timed("quick", 23, base, found1=4),                    # the fastest median, 15.5 ms
              timed("steady", 24, [t + 1 for t in base], found1=2),  # 16.5 ms: tied with quick
              timed("same", 24, [t + 2 for t in base], found1=2)]    # 17.5 ms: tied with quick too
    picks = picks_of(setups, balance=4, time_points=8)
    # quick is fastest, but steady and same are tied with it and find 24 to its 23: equal on found@10
    # and found@1, the key decides ("same" < "steady"); top (101-130 ms) is in no tie with them
    assert picks["best_for_time"] == "same" and picks["best_for_balance"] == "same"
    assert time_tie_tiers(rank_setups(setups), balance=4, time_points=8)["best_for_time"] == ["same", "steady", "quick"]


def test_setups_that_find_as_many_and_are_tied_on_time_rank_by_key_not_by_their_medians():
    times = list(range(1, 31))
    setups = [timed("b", 20, [t - 0.5 for t in times]), timed("a", 20, times), timed("c", 20, [t + 60 for t in times])]
    assert [s["key"] for s in rank_setups(setups)] == ["a", "b", "c"]  # b's median is faster, but tied with a
    assert time_tie_tiers(rank_setups(setups))["finds_the_most"] == ["a", "b"]


def side_by_side(key, found10, times, found1=5, questions=25):
    """An entry timed in the same side-by-side pass as the others made with it: its i-th time is the same
    question as theirs."""
    entry = timed(key, found10, times, found1=found1, questions=questions)
    entry["time_pass"] = "run/pass"
    return entry


def wobble(ms, n=12):
    """``n`` times around ``ms`` (-/+ 2%, the same pattern for every setup: the same questions)."""
    return [ms * (1 + 0.02 * ((i % 3) - 1)) for i in range(n)]


def test_tiers_do_not_chain_through_overlapping_intervals():
    # not timed side by side: the fallback. 99% intervals of 30 searches are order statistics 8 and 23:
    # a: 10-12 ms, b: 11.5-13 ms, c: 12.5-14 ms. a overlaps b, b overlaps c, a does not overlap c
    def spread(low, high):
        return [low] * 8 + [(low + high) / 2] * 14 + [high] * 8

    a, b, c = (timed(k, 20, spread(lo, hi)) for k, lo, hi in [("a", 10, 12), ("b", 11.5, 13), ("c", 12.5, 14)])
    assert [time_interval(s) for s in (a, b, c)] == [(10, 12), (11.5, 13), (12.5, 14)]
    tiers = time_tiers([c, b, a], equally_fast_ms=0)
    assert [[s["key"] for s in tier] for tier in tiers] == [["a", "b"], ["c"]]  # c is not tied with a through b


def test_tiers_side_by_side_do_not_chain_through_setups_within_the_floor():
    # a 10 ms, b 14 ms, c 18 ms on the same questions: a-b and b-c are 4 ms apart (under the 5 ms
    # floor), a-c 8 ms, which the paired test shows slower by more than the floor
    a, b, c = (side_by_side(k, 20, wobble(ms)) for k, ms in [("a", 10.0), ("b", 14.0), ("c", 18.0)])
    tiers = time_tiers([c, b, a], equally_fast_ms=5.0)
    assert [[s["key"] for s in tier] for tier in tiers] == [["a", "b"], ["c"]]


def test_time_tiers_are_made_among_setups_that_find_as_many_not_across_every_setup():
    # "b" and "a" find 20 of 25 and are 2 ms apart (equally fast), so they rank by key: a, then b.
    # "quick" finds 15 and is 4 ms faster than b (equally fast) but 6 ms faster than a (slower by more):
    # tiers made across every setup would put b in quick's tier and a in the next, ranking b first
    quick = side_by_side("quick", 15, wobble(16.0))
    b, a = side_by_side("b", 20, wobble(20.0)), side_by_side("a", 20, wobble(22.0))
    assert [s["key"] for s in rank_setups([quick, b, a])] == ["a", "b", "quick"]
    assert [[s["key"] for s in t] for t in time_tiers([quick, b, a])] == [["quick", "b"], ["a"]]  # the wrong way


def test_inside_a_tier_a_time_pick_takes_the_setup_shown_faster_not_the_one_with_more_found_at_1():
    # both find 24 of 25; "slow" finds more at 1 and is 2x slower on every question. A tier holding
    # both (the anchor's Holm correction over many pairs could leave it there) is made by hand here:
    # inside it the setup shown faster by more than the floor wins, whatever the other finds at 1
    fast = side_by_side("fast", 24, wobble(20.0), found1=10)
    slow = side_by_side("slow", 24, wobble(40.0), found1=20)
    from evaluation.scoring.picks import _time_pick

    assert _time_pick([fast, slow], 5.0, 0.05)["key"] == "fast"
    assert _time_pick([fast, slow], 25.0, 0.05)["key"] == "slow"  # 20 ms apart, under a 25 ms floor: found@1


def test_setups_under_the_floor_are_equally_fast_and_the_pick_goes_by_what_they_find():
    # the shipped sample's case: keyword 0.48 ms finds one question fewer than keyword_documents 1.1 ms
    keyword = side_by_side("keyword", 23, wobble(0.48))
    documents = side_by_side("keyword_documents", 24, wobble(1.1))
    top = side_by_side("hybrid", 24, wobble(20.0), found1=9)
    ranked = rank_setups([keyword, documents, top])
    assert choose_picks(ranked)["best_for_balance"] == "keyword_documents"  # 0.6 ms never decides
    assert choose_picks(ranked, equally_fast_ms=0)["best_for_balance"] == "keyword"  # without the floor it would
