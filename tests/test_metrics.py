"""Metrics against an external oracle (ir_measures over pytrec_eval) and by hand on edge cases."""
import math
import random

import ir_measures
import pytest
from ir_measures import RR, Success, nDCG

from evaluation.scoring.metrics import Outcome, landed_bucket, summarise


def outcome_from(ranking, relevant, qid="q"):
    positions = tuple(i for i, doc in enumerate(ranking, start=1) if doc in relevant)
    return Outcome(qid, positions, len(relevant))


def random_case(rng, questions=200, corpus=60):
    qrels, run, outcomes = {}, {}, []
    for n in range(questions):
        qid = f"q{n}"
        relevant = set(rng.sample(range(corpus), rng.randint(1, 4)))
        ranking = rng.sample(range(corpus), rng.randint(0, 30))  # distinct docs: no ties, some empty
        qrels[qid] = {f"d{d}": 1 for d in relevant}
        # Strictly decreasing scores: trec_eval's own sort keeps this order exactly.
        run[qid] = {f"d{d}": float(100 - i) for i, d in enumerate(ranking)}
        outcomes.append(outcome_from(ranking, relevant, qid))
    return qrels, run, outcomes


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_metrics_equal_the_oracle_on_runs_without_ties(seed):
    qrels, run, outcomes = random_case(random.Random(seed))
    # ir_measures leaves out questions with no results; score them as 0 like we do by giving the
    # oracle an entry per question (an empty ranking counts 0 in every measure).
    oracle = ir_measures.calc_aggregate([RR, nDCG @ 10, Success @ 1, Success @ 3, Success @ 5, Success @ 10,
                                         Success @ 20], qrels, {q: r or {"none": 0.0} for q, r in run.items()})
    ours = summarise(outcomes)
    assert ours["mrr"] == pytest.approx(round(oracle[RR], 4), abs=1e-4)
    assert ours["ndcg_10"] == pytest.approx(round(oracle[nDCG @ 10], 4), abs=1e-4)
    for k in (1, 3, 5, 10, 20):
        assert ours["found"][str(k)] == pytest.approx(oracle[Success @ k], abs=1e-4)


def test_ndcg_by_hand_two_relevant_found_at_1_and_3():
    # DCG = 1/log2(2) + 1/log2(4) = 1 + 0.5; ideal for 2 relevant = 1 + 1/log2(3)
    summary = summarise([Outcome("q", (1, 3), 2)])
    assert summary["ndcg_10"] == round((1 + 0.5) / (1 + 1 / math.log2(3)), 4)
    assert summary["mrr"] == 1.0


def test_relevant_results_past_10_do_not_count_for_ndcg_but_do_for_mrr():
    summary = summarise([Outcome("q", (11,), 1)])
    assert summary["ndcg_10"] == 0.0
    assert summary["mrr"] == round(1 / 11, 4)
    assert summary["counts"] == {"1": 0, "3": 0, "5": 0, "10": 0, "20": 1}


def test_a_question_with_no_results_scores_zero_and_lands_nowhere():
    summary = summarise([Outcome("q", (), 3)])
    assert summary["mrr"] == 0 and summary["ndcg_10"] == 0
    assert summary["counts"]["20"] == 0
    assert summary["landed"]["not in top 20"] == 1


def test_empty_and_partial_inputs_never_fail():
    # Every combination of: no questions, no times, some found, none found.
    for outcomes in ([], [Outcome("a", (), 1)], [Outcome("a", (2,), 1), Outcome("b", (), 2)]):
        for times in ([], [5.0], [1.0, 2.0, 3.0]):
            summary = summarise(outcomes, times)
            assert summary["questions"] == len(outcomes)
            assert summary["timed"] == len(times)
            assert sum(summary["landed"].values()) == len(outcomes)
            assert (summary["median_ms"] is None) == (not times)


def test_counts_shares_and_landed_on_four_questions():
    outcomes = [Outcome("a", (1,), 1), Outcome("b", (2,), 1), Outcome("c", (7,), 1), Outcome("d", (), 1)]
    summary = summarise(outcomes, [10.0, 20.0, 30.0, 40.0])
    assert summary["counts"] == {"1": 1, "3": 2, "5": 2, "10": 3, "20": 3}
    assert summary["found"]["10"] == 3 / 4
    assert summary["mrr"] == round((1 + 1 / 2 + 1 / 7 + 0) / 4, 4)
    assert summary["landed"] == {"first": 1, "2-3": 1, "4-5": 0, "6-10": 1, "11-20": 0, "not in top 20": 1}
    assert summary["median_ms"] == 25.0  # (20 + 30) / 2
    assert summary["p95_ms"] == pytest.approx(30 + 0.85 * 10)  # rank 0.95 * 3 = 2.85, between 30 and 40


@pytest.mark.parametrize("first,bucket", [(1, "first"), (2, "2-3"), (3, "2-3"), (5, "4-5"), (6, "6-10"),
                                          (10, "6-10"), (11, "11-20"), (20, "11-20"), (21, "not in top 20"),
                                          (None, "not in top 20")])
def test_landed_buckets_edges(first, bucket):
    assert landed_bucket(first) == bucket
