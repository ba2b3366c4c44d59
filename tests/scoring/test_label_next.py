"""What to label next: the score of a question and of a result, by hand; symmetric in the tied setups."""
from __future__ import annotations

import math

import pytest

import numpy as np

from evaluation.scoring.judging import Rule
from evaluation.scoring.label_next import (Candidate, Labelled, RelevanceModel, fit_relevance, pair_weight, propose,
                                           question_score, result_scores, run_proposal, unit_features, weights)

# rate(u) = sigmoid(-2 + 2 / (u's position in A)): at A's 1st, sigmoid(0) = 0.5; 2nd, sigmoid(-1) = 0.2689;
# not in A's list, sigmoid(-2) = 0.1192 (features per setup: in the list, in the top 10, 1 / position)
MODEL = RelevanceModel(("A", "B"), np.array([-2.0, 0, 0, 2.0, 0, 0, 0]))


def sigmoid(x):
    return 1 / (1 + math.exp(-x))


def test_each_unit_is_described_by_where_each_setup_puts_it():
    b = ["d3", *[f"x{n}" for n in range(8)], "d4", "d2"]  # d4 tenth, d2 eleventh
    listed, features = unit_features({"A": ["d1", "d1", "d2"], "B": b}, ("A", "B"))
    assert listed[:4] == ["d1", "d2", "d3", "x0"]
    assert features[0].tolist() == [1, 1, 1.0, 0, 0, 0]  # d1: first in A (its later chunk adds nothing)
    assert features[1].tolist() == [1, 1, 1 / 3, 1, 0, 1 / 11]  # d2: third in A, eleventh in B (past its top 10)
    assert features[listed.index("d4")].tolist() == [0, 0, 0, 1, 1, 1 / 10]  # tenth: in the top 10


def test_a_questions_score_is_the_chance_one_tied_setup_alone_finds_it():
    candidate = Candidate("c", "question", {"A": ["d1", "d2"], "B": ["d2", "d3"]})
    score, units = question_score(candidate, MODEL, {("A", "B"): 1.0})
    d1, d2, d3 = sigmoid(0), sigmoid(-1), sigmoid(-2)
    a_alone = (1 - d2) * (1 - d3) * d1  # nothing in B's top relevant, d1 (A's alone) relevant
    b_alone = (1 - d1) * (1 - d2) * d3  # nothing in A's top relevant, d3 relevant
    assert score == pytest.approx(a_alone + b_alone)
    assert units == ["d1", "d3"]  # the units they disagree on, likeliest first


def test_a_template_row_counts_its_named_document_relevant_for_sure():
    template = Candidate("t", "template", {"A": ["d1", "d2"], "B": ["d2", "d3"]}, known={"d3": 1})
    assert question_score(template, MODEL, {("A", "B"): 1.0})[0] == pytest.approx(1.0)  # B alone finds d3


def swapped(question):
    units = {"A": question.units["B"], "B": question.units["A"]}
    if isinstance(question, Labelled):
        return Labelled(question.id, units, question.judgements)
    return Candidate(question.id, question.kind, units)


def test_the_score_does_not_depend_on_which_tied_setup_is_which():
    rng = np.random.default_rng(4)
    labelled = []
    for n in range(40):
        a, b = [f"d{x}" for x in rng.permutation(30)[:12]], [f"d{x}" for x in rng.permutation(30)[:12]]
        labelled.append(Labelled(f"q{n}", {"A": a, "B": b}, {a[0] if n % 3 else b[2]: 1}))
    candidate = Candidate("c", "question", {"A": ["d1", "d2", "d5"], "B": ["d2", "d3"]})
    here, _ = question_score(candidate, fit_relevance(labelled, ("A", "B")), {("A", "B"): 0.7})
    there, _ = question_score(swapped(candidate), fit_relevance([swapped(q) for q in labelled], ("A", "B")),
                              {("A", "B"): 0.7})
    assert here == pytest.approx(there, rel=1e-6) and here > 0


def test_the_fitted_model_learns_where_the_labels_put_the_relevant_units():
    # 30 questions whose relevant unit is always A's first and never in B's list
    labelled = [Labelled(f"q{n}", {"A": [f"r{n}", f"x{n}", f"y{n}"], "B": [f"x{n}", f"z{n}"]}, {f"r{n}": 1})
                for n in range(30)]
    model = fit_relevance(labelled, ("A", "B"))
    rates = model.rates(Candidate("c", "question", {"A": ["new", "x", "y"], "B": ["x", "z"]}))
    assert rates["new"] > 0.7 and max(rates["x"], rates["y"], rates["z"]) < 0.2  # the ridge keeps it off 1
    nothing = fit_relevance([Labelled("q", {"A": ["x"]}, {"r": 1})], ("A",))
    assert nothing.weights is None and nothing.rate == 0.0  # no relevant unit listed: a constant 0


def test_the_fit_is_the_penalized_likelihoods_optimum():
    """At the weights returned, the gradient of the log loss plus 1.0 / 2 * |w|^2 (every weight but the
    intercept) is zero: the logistic regression the docstring states, solved, not approximated."""
    rng = np.random.default_rng(7)
    labelled = []
    for n in range(60):
        a, b = [f"d{x}" for x in rng.permutation(40)[:15]], [f"d{x}" for x in rng.permutation(40)[:15]]
        relevant = a[int(rng.integers(0, 4))] if rng.random() < 0.6 else b[int(rng.integers(0, 12))]
        labelled.append(Labelled(f"q{n}", {"A": a, "B": b}, {relevant: 1}))
    model = fit_relevance(labelled, ("A", "B"))
    rows, y = [], []
    for q in labelled:
        listed, features = unit_features(q.units, ("A", "B"))
        rows.append(features)
        y += [float(u in q.judgements) for u in listed]
    x = np.column_stack([np.ones(len(y)), np.vstack(rows)])
    p = 1 / (1 + np.exp(-x @ model.weights))
    gradient = x.T @ (p - np.array(y)) + np.r_[0.0, 1.0 * model.weights[1:]]
    assert np.abs(gradient).max() < 1e-6


def test_setups_returning_the_same_top_ten_leave_nothing_to_learn():
    score, units = question_score(Candidate("c", "question", {"A": ["d1", "d2"], "B": ["d2", "d1"]}), MODEL,
                                  {("A", "B"): 1.0})
    assert score == 0 and units == []


def test_the_pairs_are_the_top_setup_against_each_other_tied_one():
    assert list(weights(["top", "b", "c"], [])) == [("top", "b"), ("top", "c")]


def test_a_pair_weighs_how_far_one_more_discordant_question_moves_its_sign_statistic():
    # a_only 3, b_only 1: z = 2 / sqrt(4) = 1; one more either way: 3 / sqrt(5) or 1 / sqrt(5)
    assert pair_weight(3, 1) == pytest.approx((abs(3 / math.sqrt(5) - 1) + abs(1 / math.sqrt(5) - 1)) / 2)
    assert pair_weight(0, 0) == 1.0
    assert pair_weight(40, 38) < pair_weight(3, 1)


def test_a_result_to_judge_scores_when_its_label_would_change_which_of_a_pair_finds_the_question():
    discordant = Labelled("q1", {"A": ["d1", "d2"], "B": ["d2", "d9"]}, {"d9": 1})  # B finds it, A does not
    missed = Labelled("q2", {"A": ["d1"], "B": ["d3"], }, {"d9": 1})  # neither finds it
    both = Labelled("q3", {"A": ["d5"], "B": ["d5"]}, {"d9": 1})
    pairs = {("A", "B"): 1.0}
    first = {r["result"]: r for r in result_scores(discordant, MODEL, pairs)}
    assert set(first) == {"d1", "d2"}  # relevant, either would make A find it too: no longer discordant
    assert first["d2"]["in"] == ["A", "B"] and first["d2"]["found_by"] == ["B"]
    second = {r["result"]: r for r in result_scores(missed, MODEL, pairs)}
    assert set(second) == {"d1", "d3"} and second["d1"]["in"] == ["A"]
    assert second["d1"]["score"] == pytest.approx(sigmoid(0))  # d1, first in A: its rate, one pair moved
    assert result_scores(both, MODEL, pairs) == []  # d5 relevant: both find it, nothing moves


def test_nothing_is_proposed_unless_two_setups_are_tied():
    assert propose(["A"], []) is None
    assert run_proposal([{"key": "A"}, {"key": "B"}], [], {"groups": [["A"], ["B"]]}, Rule()) is None
    assert run_proposal([{"key": "A"}, {"key": "B"}], [], {"groups": [["A", "B"]]}, Rule("evidence")) is None


def test_the_proposal_ranks_questions_best_first_and_keeps_each_kind_apart():
    labelled = [Labelled("q1", {"A": ["d1"], "B": ["d2"]}, {"d1": 1})]
    candidates = [Candidate("same", "question", {"A": ["x"], "B": ["x"]}),
                  Candidate("split", "draft", {"A": ["x"], "B": ["y"]}),
                  Candidate("deep", "template", {"A": ["x", "z"], "B": ["x", "w"]})]
    proposal = propose(["A", "B"], labelled, candidates).to_dict()
    assert [r["question"] for r in proposal["questions"]] == ["split", "deep"]  # "same" can tell nothing
    assert proposal["questions"][0]["kind"] == "draft"
    assert [r["result"] for r in proposal["results"]] == ["d2"]  # q1: B's d2, relevant, would make B find it too
