"""Metrics at any k (hit rate, precision, recall, MRR@k, nDCG@k) against ir_measures, and by hand."""
from __future__ import annotations

import math
import random

import ir_measures
import pytest
from ir_measures import P, R, RR, Success, nDCG

from evaluation.golden import Question
from evaluation.scoring.at_k import per_question_at, question_at, summarise_at
from evaluation.scoring.judging import judge
from evaluation.scoring.metrics import Outcome, summarise
from evaluation.target import Hit

# ir_measures' pytrec_eval provider, named: trec_eval's order for ties. Its RR@k reads 0 for every run
# (checked: a relevant result first gives RR@1 = 0.0), and the msmarco provider it would pick instead
# breaks ties in another order; so MRR@k's oracle is trec_eval's RR on the run cut to its first k.
ORACLE = ir_measures.pytrec_eval
KS = (1, 3, 5, 7, 10)  # 7: no cut-off of our summaries, so nothing here leans on CUTOFFS


def trec_order(scores: dict[str, float]) -> list[str]:
    """The order trec_eval ranks a run in: score descending, ties by docno descending."""
    return sorted(scores, key=lambda docno: (scores[docno], docno), reverse=True)


def random_case(seed: int, questions: int = 150, chunks: int = 40):
    rng = random.Random(seed)
    qrels, run, cases = {}, {}, []
    for n in range(questions):
        qid = f"q{n}"
        relevant = [f"c{i:02d}" for i in rng.sample(range(chunks), rng.randint(1, 6))]  # several relevant ids
        retrieved = rng.sample(range(chunks), rng.randint(0, 15))  # some questions get nothing back
        scores = {f"c{i:02d}": float(rng.randint(0, 4)) for i in retrieved}  # five scores: many ties
        qrels[qid] = {c: 1 for c in relevant}
        run[qid] = scores
        hits = [
            Hit(id=c, doc_id=c.rstrip("0123456789"), score=scores[c], text="", page=None) for c in trec_order(scores)
        ]
        cases.append((Question(id=qid, question="?", expected=tuple(relevant)), hits))
    return qrels, run, cases


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_each_metric_at_each_k_equals_ir_measures_on_random_runs_with_ties(seed):
    qrels, run, cases = random_case(seed)
    assert any(len(set(s.values())) < len(s) for s in run.values())  # tied scores
    assert any(len(q.expected) > 1 for q, _ in cases)
    outcomes = [judge(question, hits, "chunk") for question, hits in cases]
    measures = {"hit_rate": Success, "precision": P, "recall": R, "ndcg": nDCG}
    wanted = [m @ k for m in measures.values() for k in KS]
    # ir_measures leaves a question with no results out; an entry that is never relevant scores it 0, as we do.
    oracle_run = {q: r or {"none": 0.0} for q, r in run.items()}
    per_question = {(m.query_id, str(m.measure)): m.value for m in ORACLE.iter_calc(wanted, qrels, oracle_run)}
    aggregate = ORACLE.calc_aggregate(wanted, qrels, oracle_run)
    ours = summarise_at(outcomes, KS)
    rows = {row["id"]: row for row in per_question_at(outcomes, KS)}
    for name, measure in measures.items():
        for k in KS:
            assert ours[str(k)][name] == pytest.approx(aggregate[measure @ k], abs=5e-5), (name, k)
            for qid in run:
                assert rows[qid]["at"][str(k)][name] == pytest.approx(per_question[(qid, str(measure @ k))],
                                                                       abs=1e-12), (name, k, qid)
    for k in KS:
        cut = {q: {d: r[d] for d in trec_order(r)[:k]} or {"none": 0.0} for q, r in run.items()}
        rr = {m.query_id: m.value for m in ORACLE.iter_calc([RR], qrels, cut)}
        assert ours[str(k)]["mrr"] == pytest.approx(sum(rr.values()) / len(rr), abs=5e-5), k
        for qid in run:
            assert rows[qid]["at"][str(k)]["mrr"] == pytest.approx(rr[qid], abs=1e-12), (k, qid)


def graded_case(seed: int, questions: int = 150, chunks: int = 40):
    """``random_case`` with grades 0-4 (0: judged, not relevant), at least one relevant id a question."""
    rng = random.Random(seed)
    qrels, run, cases = {}, {}, []
    for n in range(questions):
        qid = f"q{n}"
        labelled = [f"c{i:02d}" for i in rng.sample(range(chunks), rng.randint(1, 6))]
        grades = {c: rng.randint(0, 4) for c in labelled}
        grades[labelled[0]] = rng.randint(1, 4)
        retrieved = rng.sample(range(chunks), rng.randint(0, 15))
        scores = {f"c{i:02d}": float(rng.randint(0, 4)) for i in retrieved}
        qrels[qid], run[qid] = grades, scores
        hits = [Hit(id=c, doc_id=c, score=scores[c], text="", page=None) for c in trec_order(scores)]
        cases.append((Question(id=qid, question="?", expected=grades), hits))
    return qrels, run, cases


@pytest.mark.parametrize("seed", [0, 1])
def test_graded_ndcg_at_each_k_is_trec_evals_ndcg_cut_with_the_grades_as_gains(seed):
    # the matrix's nDCG@k is the retrieval report's nDCG@10 at depth k: one name, one number in every view
    qrels, run, cases = graded_case(seed)
    assert any(len(set(g.values())) > 1 for g in qrels.values())  # grades that differ within a question
    outcomes = [judge(question, hits, "chunk") for question, hits in cases]
    oracle_run = {q: r or {"none": 0.0} for q, r in run.items()}
    per_question = {(m.query_id, str(m.measure)): m.value
                    for m in ORACLE.iter_calc([nDCG @ k for k in KS], qrels, oracle_run)}
    rows = {row["id"]: row for row in per_question_at(outcomes, KS)}
    for k in KS:
        for qid in run:
            assert rows[qid]["at"][str(k)]["ndcg"] == pytest.approx(per_question[(qid, str(nDCG @ k))],
                                                                    abs=1e-12), (k, qid)
    # at depth 10 it is the report's own nDCG@10 (``metrics.summarise``), to its four places
    assert summarise_at(outcomes, [10])["10"]["ndcg"] == summarise(outcomes)["ndcg_10"]


def test_a_grade_1_result_first_and_a_grade_3_second_is_not_a_perfect_ndcg():
    # the case: counting every relevant id as 1, this ranking is perfect (1.000); with the grades
    # it is not, because the grade-3 document belongs first
    question = Question(id="q", question="?", expected={"low": 1, "high": 3})
    hits = [Hit(id=d, doc_id=d, page=None, score=1.0) for d in ("low", "high")]
    at = question_at(judge(question, hits, "doc"), 10)
    dcg = 1 / math.log2(2) + 3 / math.log2(3)
    ideal = 3 / math.log2(2) + 1 / math.log2(3)
    assert at["ndcg"] == pytest.approx(dcg / ideal) and at["ndcg"] < 0.9


def test_precision_divides_by_k_even_when_fewer_results_came_back():
    # one result back, and it is relevant: P@5 = 1/5, not 1/1
    assert question_at(Outcome("q", (1,), 1), 5)["precision"] == 1 / 5


def test_mrr_at_k_is_zero_when_the_first_relevant_result_is_past_k():
    outcome = Outcome("q", (4,), 1)
    assert question_at(outcome, 3)["mrr"] == 0.0
    assert question_at(outcome, 5)["mrr"] == 1 / 4


def test_precision_recall_and_ndcg_by_hand_for_two_of_three_found_at_2_and_4():
    at = question_at(Outcome("q", (2, 4), 3), 3)
    assert at["precision"] == 1 / 3                              # only position 2 is within 3
    assert at["recall"] == 1 / 3
    ideal = 1 + 1 / math.log2(3) + 1 / math.log2(4)           # three relevant could fill positions 1..3
    assert at["ndcg"] == pytest.approx((1 / math.log2(3)) / ideal)
    assert at["hit_rate"] == 1.0 and at["mrr"] == 1 / 2


def test_macro_averages_weigh_every_question_the_same():
    summary = summarise_at([Outcome("a", (1,), 1), Outcome("b", (), 4)], [1])
    assert summary["1"] == {"hit_rate": (1 + 0) / 2, "precision": (1 + 0) / 2, "recall": (1 + 0) / 2,
                            "mrr": (1 + 0) / 2, "ndcg": (1 + 0) / 2}


@pytest.mark.parametrize("text, printed, key",
                         [("hit_rate@5", "hit_rate@5", "hit_rate"), ("found@5", "found@5", "hit_rate"),
                                                ("Precision@3", "precision@3", "precision"),
                                                ("mrr@10", "MRR@10", "mrr"),
                                                ("NDCG@7", "nDCG@7", "ndcg"), ("recall@1", "recall@1", "recall")])
def test_an_at_k_measure_reads_under_both_spellings_and_its_name_reads_back(text, printed, key):
    from evaluation.measures import parse_at_k

    measure = parse_at_k(text)
    assert (str(measure), measure.at_k_key) == (printed, key)
    assert parse_at_k(str(measure)) == measure


@pytest.mark.parametrize("text", ["hit_rat@5", "found@05", "mrr", "precision@0", "ndcg@x"])
def test_a_name_that_is_no_at_k_measure_is_refused_with_the_list(text):
    from evaluation.errors import UsageError
    from evaluation.measures import parse_at_k

    with pytest.raises(UsageError, match="the measures are found@k, hit_rate@k, precision@k"):
        parse_at_k(text)


def test_one_result_holding_two_expected_units_reads_one_for_precision_and_recall():
    # the first result holds both quotes the question expects: precision counts results (1 of 1), recall
    # counts units (2 of 2); a precision over units would read 2, a recall over results 1/2
    question = Question(id="q", question="?", expected=("a",),
                        evidence=("signing keys are rotated", "every ninety days exactly"))
    hits = [Hit(id="a:0", doc_id="a", page=None, score=1.0,
                text="Signing keys are rotated every ninety days exactly by the vault."),
            Hit(id="b:0", doc_id="b", page=None, score=0.5, text="Nothing to see.")]
    outcome = judge(question, hits, "evidence")

    assert outcome.positions == (1, 1) and outcome.relevant == 2
    assert question_at(outcome, 1)["precision"] == 1.0 and question_at(outcome, 1)["recall"] == 1.0
    assert question_at(outcome, 2)["precision"] == 0.5 and question_at(outcome, 2)["recall"] == 1.0
    # two units in two results: each result counts for precision, each unit for recall
    apart = Outcome("q", (1, 2), 3)
    assert question_at(apart, 2) == {"hit_rate": 1.0, "precision": 2 / 2, "recall": 2 / 3, "mrr": 1.0,
                                     "ndcg": pytest.approx((1 + 1 / math.log2(3)) / (1 + 1 / math.log2(3)))}


def test_a_cut_off_of_zero_or_below_is_a_sentence_not_a_division_by_zero():
    from evaluation.scoring.at_k import check_cutoffs

    for bad in (0, -1):
        with pytest.raises(ValueError, match="a cut-off is a whole number of results from 1"):
            check_cutoffs([bad])
