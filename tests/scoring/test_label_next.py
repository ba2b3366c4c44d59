"""What to label next: the score of a question and of a result, by hand; symmetric in the tied setups."""
from __future__ import annotations

import math

import pytest

from evaluation.scoring.judging import Rule
from evaluation.scoring.label_next import (PRIOR_WEIGHT, Candidate, Labelled, Rates, calibrate, fused_positions,
                                           pair_weight, propose, question_score, result_scores, run_proposal)

RATES = Rates((0.5, 0.2, 0.1), 0.2)


def test_units_are_fused_by_reciprocal_rank_over_every_setup():
    # d2: 1/62 + 1/61 (second in A, first in B); d1: 1/61; d3: 1/62
    assert fused_positions({"A": ["d1", "d2"], "B": ["d2", "d3"]}, ["A", "B"]) == {"d2": 1, "d1": 2, "d3": 3}
    # a unit counts once a list, at its first position: d1's later chunks add nothing, so the tie with
    # d2 (1/61 each) goes to the first setup named
    assert fused_positions({"A": ["d1", "d1", "d1"], "B": ["d2"]}, ["B", "A"]) == {"d2": 1, "d1": 2}


def test_a_questions_score_is_the_chance_one_tied_setup_alone_finds_it():
    candidate = Candidate("c", "question", {"A": ["d1", "d2"], "B": ["d2", "d3"]})
    score, units = question_score(candidate, ["A", "B"], RATES, {("A", "B"): 1.0})
    # rates by fused position: d2 0.5, d1 0.2, d3 0.1
    a_alone = (1 - 0.5) * (1 - 0.1) * (1 - (1 - 0.2))  # nothing in B's top relevant, d1 relevant: 0.09
    b_alone = (1 - 0.5) * (1 - 0.2) * (1 - (1 - 0.1))  # 0.04
    assert score == pytest.approx(a_alone + b_alone)
    assert units == ["d1", "d3"]  # the units they disagree on, likeliest first


def test_the_score_does_not_depend_on_which_tied_setup_is_which():
    lists = {"A": ["d1", "d2", "d5"], "B": ["d2", "d3"], "C": ["d4"]}
    swapped = {"A": lists["B"], "B": lists["A"], "C": lists["C"]}
    weights = {("A", "B"): 0.7, ("A", "C"): 0.3, ("B", "C"): 0.3}
    here, _ = question_score(Candidate("c", "question", lists), ["A", "B", "C"], RATES, weights)
    there, _ = question_score(Candidate("c", "question", swapped), ["A", "B", "C"], RATES, weights)
    assert here == pytest.approx(there) and here > 0


def test_setups_returning_the_same_top_ten_leave_nothing_to_learn():
    score, units = question_score(Candidate("c", "question", {"A": ["d1", "d2"], "B": ["d2", "d1"]}), ["A", "B"],
                                  RATES, {("A", "B"): 1.0})
    assert score == 0 and units == []


def test_a_pair_weighs_how_far_one_more_discordant_question_moves_its_sign_statistic():
    # a_only 3, b_only 1: z = 2 / sqrt(4) = 1; one more either way: 3 / sqrt(5) or 1 / sqrt(5)
    assert pair_weight(3, 1) == pytest.approx((abs(3 / math.sqrt(5) - 1) + abs(1 / math.sqrt(5) - 1)) / 2)
    assert pair_weight(0, 0) == 1.0
    assert pair_weight(40, 38) < pair_weight(3, 1)


def test_rates_are_each_positions_share_relevant_pulled_toward_the_overall_share():
    labelled = [Labelled("q1", {"A": ["d1", "d2"]}, {"d1": 1}), Labelled("q2", {"A": ["d3", "d4"]}, {"d4": 1})]
    rates = calibrate(labelled, ["A"])
    overall = 2 / 4
    assert rates.overall == overall
    assert rates.at(1) == pytest.approx((1 + PRIOR_WEIGHT * overall) / (2 + PRIOR_WEIGHT))
    assert rates.at(3) == pytest.approx(overall)  # nothing seen there: the overall share


def test_a_result_to_judge_scores_when_its_label_would_change_which_of_a_pair_finds_the_question():
    discordant = Labelled("q1", {"A": ["d1", "d2"], "B": ["d2", "d9"]}, {"d9": 1})  # B finds it, A does not
    missed = Labelled("q2", {"A": ["d1"], "B": ["d3"], }, {"d9": 1})  # neither finds it
    both = Labelled("q3", {"A": ["d5"], "B": ["d5"]}, {"d9": 1})
    weights = {("A", "B"): 1.0}
    first = {r["result"]: r for r in result_scores(discordant, ["A", "B"], RATES, weights)}
    assert set(first) == {"d1", "d2"}  # relevant, either would make A find it too: no longer discordant
    assert first["d2"]["in"] == ["A", "B"] and first["d2"]["found_by"] == ["B"]
    second = {r["result"]: r for r in result_scores(missed, ["A", "B"], RATES, weights)}
    assert set(second) == {"d1", "d3"} and second["d1"]["in"] == ["A"]
    assert second["d1"]["score"] == pytest.approx(RATES.at(1))  # d1 fused first (1/61 against d3's 1/61, A first)
    assert result_scores(both, ["A", "B"], RATES, weights) == []  # d5 relevant: both find it, nothing moves


def test_nothing_is_proposed_unless_two_setups_are_tied():
    assert propose(["A"], ["A", "B"], []) is None
    assert run_proposal([{"key": "A"}, {"key": "B"}], [], {"groups": [["A"], ["B"]]}, Rule()) is None
    assert run_proposal([{"key": "A"}, {"key": "B"}], [], {"groups": [["A", "B"]]}, Rule("evidence")) is None


def test_the_proposal_ranks_questions_best_first_and_keeps_each_kind_apart():
    labelled = [Labelled("q1", {"A": ["d1"], "B": ["d2"]}, {"d1": 1})]
    candidates = [Candidate("same", "question", {"A": ["x"], "B": ["x"]}),
                  Candidate("split", "draft", {"A": ["x"], "B": ["y"]}),
                  Candidate("deep", "template", {"A": ["x", "z"], "B": ["x", "w"]})]
    proposal = propose(["A", "B"], ["A", "B"], labelled, candidates).to_dict()
    assert [r["question"] for r in proposal["questions"]] == ["split", "deep"]  # "same" can tell nothing
    assert proposal["questions"][0]["kind"] == "draft"
    assert [r["result"] for r in proposal["results"]] == ["d2"]  # q1: B's d2, relevant, would make B find it too
