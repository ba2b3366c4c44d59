"""Azure AI Foundry's Document Retrieval metrics: ours exactly as azure-ai-evaluation's
DocumentRetrievalEvaluator computes them (the evaluator itself, run locally, is the oracle), and the
corrected forms (ir_measures is the oracle where one exists).

Hand-made fixtures write each expected number as arithmetic a reader can check; the same fixtures are
run through the evaluator. Tests that need azure-ai-evaluation skip when it is missing, and fail when
``REQUIRE_AZURE_EVALUATION=1`` (CI installs it from requirements-dev.txt).
"""
from __future__ import annotations

import math
import os

import ir_measures
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from ir_measures import Judged, nDCG

from evaluation.errors import UsageError, WrongValueError
from evaluation.measures import AZURE_EXACT, Measure, azure_corrected as corrected_measures, parse_azure_measure
from evaluation.scoring.azure_retrieval import (
    AZURE_THRESHOLDS, LabelRange, azure_corrected, azure_exact, corrected_thresholds, mean_scores, verdicts,
)

LOG3 = math.log2(3)  # the discount at rank 2
XDCG_NORM = 1 + 0.6 + 0.6 ** 2  # xdcg's denominator: three ranks discounted by 0.6
KEYS = ("ndcg@3", "xdcg@3", "fidelity", "top1_relevance", "top3_max_relevance", "holes", "holes_ratio")


def evaluator_class():
    try:
        from azure.ai.evaluation import DocumentRetrievalEvaluator
    except ImportError:
        message = "azure-ai-evaluation is not installed: pip install -r requirements-dev.txt"
        if os.environ.get("REQUIRE_AZURE_EVALUATION") == "1":
            pytest.fail(message)
        pytest.skip(message)
    return DocumentRetrievalEvaluator


@pytest.fixture(scope="module")
def oracle():
    """The evaluator's properties for (labels, retrieved, label range), one evaluator per range."""
    made = {}

    def properties(labels, retrieved, label_range=None):
        label_range = label_range or LabelRange()
        key = (label_range.low, label_range.high)
        if key not in made:
            made[key] = evaluator_class()(ground_truth_label_min=key[0], ground_truth_label_max=key[1])
        ground_truth = [{"document_id": d, "query_relevance_label": g} for d, g in labels.items()]
        out = made[key](retrieval_ground_truth=ground_truth,
                        retrieved_documents=[{"document_id": d, "relevance_score": s} for d, s in retrieved])
        return out["document_retrieval_properties"]

    return properties


def same(a: float, b: float) -> bool:
    return (math.isnan(a) and math.isnan(b)) or abs(a - b) <= 1e-9


# name, labels, retrieved [(id, score)], label range, the evaluator's numbers (as arithmetic)
FIXTURES = [
    ("ranked_by_score_not_by_list_order",  # b's score is higher, so b ranks first: grades [1, 4, 0]
     {"a": 4, "b": 1, "c": 0}, [("a", 1.0), ("b", 2.0), ("z", 0.5)], LabelRange(0, 4),
     {"ndcg@3": (1 + 15 / LOG3) / (15 + 1 / LOG3), "xdcg@3": (25 * 1 + 25 * 4 * 0.6) / XDCG_NORM,
      "fidelity": (3 + 31) / (31 + 3), "top1_relevance": 1, "top3_max_relevance": 4, "holes": 1, "holes_ratio": 1 / 3}),
    ("equal_scores_keep_the_list_order",  # a stable sort: b (listed first) stays first
     {"a": 4, "b": 2}, [("b", 1.0), ("a", 1.0)], LabelRange(0, 4),
     {"ndcg@3": (3 + 15 / LOG3) / (15 + 3 / LOG3), "xdcg@3": (25 * 2 + 25 * 4 * 0.6) / XDCG_NORM,
      "fidelity": (7 + 31) / (31 + 7), "top1_relevance": 2, "top3_max_relevance": 4, "holes": 0, "holes_ratio": 0}),
    ("a_document_listed_twice_keeps_its_first_place_but_its_last_score",  # a: 9 then 1, so a is ranked at 1
     {"a": 4, "b": 1}, [("a", 9.0), ("b", 5.0), ("a", 1.0)], LabelRange(0, 4),
     {"ndcg@3": (1 + 15 / LOG3) / (15 + 1 / LOG3), "xdcg@3": (25 * 1 + 25 * 4 * 0.6) / XDCG_NORM,
      "fidelity": 1.0, "top1_relevance": 1, "top3_max_relevance": 4, "holes": 0, "holes_ratio": 0 / 3}),
    ("an_unlabelled_document_is_grade_0_and_a_hole_and_repeats_dilute_the_ratio",  # z twice: 1 hole over 3 items
     {"a": 4}, [("z", 3.0), ("z", 2.0), ("a", 1.0)], LabelRange(0, 4),
     {"ndcg@3": (0 + 15 / LOG3) / 15, "xdcg@3": (0 + 25 * 4 * 0.6) / XDCG_NORM, "fidelity": 31 / 31,
      "top1_relevance": 0, "top3_max_relevance": 4, "holes": 1, "holes_ratio": 1 / 3}),
    ("nothing_retrieved_is_all_zero",
     {"a": 4}, [], LabelRange(0, 4),
     {"ndcg@3": 0, "xdcg@3": 0, "fidelity": 0, "top1_relevance": 0, "top3_max_relevance": 0, "holes": 0,
      "holes_ratio": 0}),
    ("nothing_relevant_retrieved_is_zero_but_the_holes",  # b is labelled 0, x is a hole
     {"a": 4, "b": 0}, [("b", 2.0), ("x", 1.0)], LabelRange(0, 4),
     {"ndcg@3": 0, "xdcg@3": 0, "fidelity": 0, "top1_relevance": 0, "top3_max_relevance": 0, "holes": 1,
      "holes_ratio": 1 / 2}),
    ("fidelity_counts_every_retrieved_document_however_deep",  # a comes 5th: nDCG@3 0, fidelity 1
     {"a": 4}, [("x", 9.0), ("y", 8.0), ("z", 7.0), ("w", 6.0), ("a", 5.0)], LabelRange(0, 4),
     {"ndcg@3": 0 / 15, "xdcg@3": 0, "fidelity": 31 / 31, "top1_relevance": 0, "top3_max_relevance": 0, "holes": 4,
      "holes_ratio": 4 / 5}),
    # Labels 0-12: weights 3, 7, 15, ... (2**(g+1) - 1) in numeric order meet the counts in text order
    # "1", "10", "11", "12", "2", ...: grade 10's count gets 7 (grade 2's weight), grade 2's gets 63 (grade 5's).
    ("labels_0_12_fidelity_pairs_grade_10_with_grade_2s_weight",
     {"a": 10, "b": 2}, [("a", 1.0)], LabelRange(0, 12),
     {"ndcg@3": 1023 / (1023 + 3 / LOG3), "xdcg@3": 25 * 10 / XDCG_NORM, "fidelity": 7 / (7 + 63),
      "top1_relevance": 10, "top3_max_relevance": 10, "holes": 0, "holes_ratio": 0}),
    ("labels_0_12_fidelity_pairs_grade_2_with_grade_5s_weight",
     {"a": 10, "b": 2}, [("b", 1.0)], LabelRange(0, 12),
     {"ndcg@3": 3 / (1023 + 3 / LOG3), "xdcg@3": 25 * 2 / XDCG_NORM, "fidelity": 63 / (7 + 63),
      "top1_relevance": 2, "top3_max_relevance": 2, "holes": 0, "holes_ratio": 0}),
    ("labels_0_12_xdcg_runs_past_100",  # 25 * 12 at rank 1
     {"a": 12}, [("a", 1.0)], LabelRange(0, 12),
     {"ndcg@3": 1.0, "xdcg@3": 25 * 12 / XDCG_NORM, "fidelity": 8191 / 8191, "top1_relevance": 12,
      "top3_max_relevance": 12, "holes": 0, "holes_ratio": 0}),
    ("labels_1_5_the_minimum_gains_in_ndcg_but_fidelity_is_nan",  # fidelity counts grades from 2 only: 0 / 0
     {"a": 1}, [("a", 1.0)], LabelRange(1, 5),
     {"ndcg@3": 1 / 1, "xdcg@3": 25 * 1 / XDCG_NORM, "fidelity": math.nan, "top1_relevance": 1,
      "top3_max_relevance": 1, "holes": 0, "holes_ratio": 0}),
]


@pytest.mark.parametrize("name, labels, retrieved, label_range, expected", FIXTURES, ids=[f[0] for f in FIXTURES])
def test_exact_form_gives_the_hand_arithmetic(name, labels, retrieved, label_range, expected):
    ours = azure_exact(labels, retrieved, label_range).properties()
    assert list(ours) == list(KEYS)
    assert all(same(ours[k], expected[k]) for k in KEYS), {k: (ours[k], expected[k]) for k in KEYS}


@pytest.mark.parametrize("name, labels, retrieved, label_range, expected", FIXTURES, ids=[f[0] for f in FIXTURES])
def test_the_evaluator_gives_the_same_hand_arithmetic(oracle, name, labels, retrieved, label_range, expected):
    theirs = oracle(labels, retrieved, label_range)
    assert all(same(theirs[k], expected[k]) for k in KEYS), {k: (theirs[k], expected[k]) for k in KEYS}


def test_where_the_evaluator_divides_by_zero_the_exact_ndcg_is_nan(oracle):
    # labels -2..2: the ideal top three are all 0 (gain 0), and d (-1, gain 2**-1 - 1) is retrieved
    labels, retrieved, label_range = {"a": 0, "b": 0, "c": 0, "d": -1}, [("d", 1.0)], LabelRange(-2, 2)
    with pytest.raises(ZeroDivisionError):
        oracle(labels, retrieved, label_range)
    ours = azure_exact(labels, retrieved, label_range).properties()
    assert math.isnan(ours["ndcg@3"]) and ours["top1_relevance"] == -1
    # corrected grades count from the minimum, -2: d (-1) gains 2**1 - 1 = 1 at rank 1; the ideal is a, b, c
    # (0 each) gaining 2**2 - 1 = 3 at ranks 1-3
    assert azure_corrected(labels, retrieved, 3, label_range).properties()["ndcg@3"] == pytest.approx(
        1 / (3 + 3 / LOG3 + 3 / 2), abs=1e-12)


def test_a_question_without_labels_or_with_a_label_out_of_range_is_refused_as_the_evaluator_refuses_it(oracle):
    evaluator_class()  # skips when azure-ai-evaluation is missing
    from azure.ai.evaluation._exceptions import EvaluationException

    with pytest.raises(EvaluationException, match="at least one item"):
        oracle({}, [("a", 1.0)])
    with pytest.raises(WrongValueError, match="at least one labelled document"):
        azure_exact({}, [("a", 1.0)])
    with pytest.raises(EvaluationException, match="greater than the configured maximum"):
        oracle({"a": 5}, [("a", 1.0)])
    with pytest.raises(WrongValueError, match="label 5 is outside the label range 0-4"):
        azure_exact({"a": 5}, [("a", 1.0)])
    with pytest.raises(WrongValueError, match="label range"):
        azure_corrected({"a": -1}, [], 3)


@pytest.mark.parametrize("low, high", [(0, 0), (3, 2), (-4, -1)])
def test_a_label_range_without_a_grade_above_its_minimum_and_from_1_is_refused(low, high):
    with pytest.raises(WrongValueError, match="is not one"):
        LabelRange(low, high)


# -- against the evaluator on random graded runs ----------------------------------------------------

RANGES = [LabelRange(0, 4), LabelRange(0, 12), LabelRange(1, 5), LabelRange(-2, 2), LabelRange(0, 1)]


@st.composite
def graded_runs(draw, ranges=tuple(RANGES)):
    """(labels, retrieved, range): up to 8 labelled documents, a list of up to 10 items drawn from them and
    from unlabelled ones, with repeats, and scores from a few values so ties are common."""
    label_range = draw(st.sampled_from(ranges))
    docs = [f"d{i}" for i in range(draw(st.integers(1, 8)))]
    labelled = draw(st.lists(st.sampled_from(docs), min_size=1, unique=True))
    labels = {d: draw(st.integers(label_range.low, label_range.high)) for d in labelled}
    pool = docs + ["x1", "x2", "x3"]
    retrieved = draw(st.lists(st.tuples(st.sampled_from(pool), st.sampled_from([0.0, 0.5, 1.0, 2.0, 3.5, 7.0])),
                              max_size=10))
    return labels, retrieved, label_range


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(graded_runs())
def test_exact_form_equals_the_evaluator_on_random_graded_runs(oracle, run):
    labels, retrieved, label_range = run
    ours = azure_exact(labels, retrieved, label_range)
    try:
        theirs = oracle(labels, retrieved, label_range)
    except ZeroDivisionError:
        assert math.isnan(ours.properties()["ndcg@3"])
        return
    assert all(same(ours.properties()[k], theirs[k]) for k in KEYS), (ours.properties(), theirs)
    assert {str(m): ok for m, ok in verdicts(ours).items()} == {f"azure.{k}": theirs[f"{k}_passed"] for k in KEYS}


def test_the_exact_thresholds_are_the_evaluators_and_a_grade_never_passes_50(oracle):
    theirs = oracle({"a": 4}, [("a", 1.0)])  # a perfect answer
    assert AZURE_THRESHOLDS == {k: theirs[f"{k}_threshold"] for k in KEYS}
    passed = {str(m): ok for m, ok in verdicts(azure_exact({"a": 4}, [("a", 1.0)])).items()}
    assert passed["azure.top1_relevance"] is False is theirs["top1_relevance_passed"]  # grade 4 < 50
    corrected = {str(m): ok for m, ok in verdicts(azure_corrected({"a": 4}, [("a", 1.0)], 3)).items()}
    assert corrected["azure_corrected.top1_relevance"] is True and corrected["azure_corrected.max_relevance@3"] is True


def test_corrected_grade_thresholds_sit_at_the_middle_of_the_label_range():
    assert corrected_thresholds(5, LabelRange(0, 4))[Measure("azure_corrected.top1_relevance")] == 2
    assert corrected_thresholds(5, LabelRange(0, 12))[Measure("azure_corrected.max_relevance", 5)] == 6
    assert corrected_thresholds(5, LabelRange(1, 5))[Measure("azure_corrected.top1_relevance")] == 3
    # grade 5 of 0-12 is under the middle (6): fails; on 0-4's scale it would pass (>= 2)
    scores = azure_corrected({"a": 5}, [("a", 1.0)], 5, LabelRange(0, 12))
    assert verdicts(scores)[Measure("azure_corrected.top1_relevance")] is False


# -- corrected --------------------------------------------------------------------------------------

def test_corrected_ranks_the_list_order_with_each_document_at_its_first_place():
    # the exact form ranks b first (a's last score is 1); corrected: a (4) then b (1), the ideal order
    labels, retrieved = {"a": 4, "b": 1}, [("a", 9.0), ("b", 5.0), ("a", 1.0)]
    got = azure_corrected(labels, retrieved, 3).properties()
    assert got["ndcg@3"] == 1.0 and got["top1_relevance"] == 4 and got["holes_ratio@3"] == 0 / 2
    assert azure_exact(labels, retrieved).properties()["top1_relevance"] == 1


def test_corrected_fidelity_holes_and_xdcg_stop_at_k():
    # x a y b, k = 2: the top two are x (hole) and a (4); b (1) is below the cut-off
    got = azure_corrected({"a": 4, "b": 1}, [("x", 4.0), ("a", 3.0), ("y", 2.0), ("b", 1.0)], 2).properties()
    assert got == pytest.approx({
        "ndcg@2": (15 / LOG3) / (15 + 1 / LOG3),
        "xdcg@2": 100 * (0 + (4 / 4) * 0.6) / (1 + 0.6),
        "fidelity@2": 31 / (31 + 3),
        "top1_relevance": 0,
        "max_relevance@2": 4,
        "holes@2": 1,
        "holes_ratio@2": 1 / 2,
    }, abs=1e-12)


def test_corrected_fidelity_pairs_each_grade_with_its_own_weight_at_labels_0_12():
    labels = {"a": 10, "b": 2}  # weights 2**11 - 1 = 2047 and 2**3 - 1 = 7
    a_only = azure_corrected(labels, [("a", 1.0)], 3, LabelRange(0, 12)).properties()
    b_only = azure_corrected(labels, [("b", 1.0)], 3, LabelRange(0, 12)).properties()
    assert a_only["fidelity@3"] == 2047 / 2054 and b_only["fidelity@3"] == 7 / 2054


def test_corrected_xdcg_is_100_for_the_top_grade_of_any_range():
    for label_range in (LabelRange(0, 4), LabelRange(0, 12), LabelRange(1, 5)):
        top = {"a": label_range.high, "b": label_range.high, "c": label_range.high}
        got = azure_corrected(top, [("a", 3.0), ("b", 2.0), ("c", 1.0)], 3, label_range).properties()
        assert got["xdcg@3"] == pytest.approx(100.0)
    # one document at the top of 0-12, then nothing: 100 / (1 + 0.6 + 0.36), where the exact form gives 300 / 1.96
    assert azure_corrected({"a": 12}, [("a", 1.0)], 3, LabelRange(0, 12)).properties()["xdcg@3"] == pytest.approx(
        100 / XDCG_NORM)


def test_corrected_grades_count_from_the_range_minimum():
    # labels 1-5: a at 1 is not relevant; b (3) is 2 above the minimum: gain 2**2 - 1, weight 2**3 - 1.
    # Retrieved: a, then x (unlabelled, read as the minimum 1): nothing relevant in the top 3.
    got = azure_corrected({"a": 1, "b": 3}, [("a", 2.0), ("x", 1.0)], 3, LabelRange(1, 5)).properties()
    assert got["ndcg@3"] == 0.0 and got["fidelity@3"] == 0.0
    assert got["top1_relevance"] == 1 and got["max_relevance@3"] == 1 and got["holes@3"] == 1
    found = azure_corrected({"a": 1, "b": 3}, [("b", 2.0)], 3, LabelRange(1, 5)).properties()
    assert found["ndcg@3"] == 1.0 and found["fidelity@3"] == 7 / 7 and found["xdcg@3"] == pytest.approx(
        100 * (2 / 4) / XDCG_NORM)


def test_a_question_with_nothing_relevant_to_find_reads_0_as_trec_eval_reads_it():
    got = azure_corrected({"a": 0}, [("a", 1.0)], 3).properties()
    assert got["ndcg@3"] == 0.0 and got["fidelity@3"] == 0.0 and got["holes@3"] == 0


def test_corrected_at_3_equals_the_exact_form_where_the_evaluator_is_right():
    # distinct documents, scores falling with the list, at most three of them, labels 0-4 or 0-9
    @settings(max_examples=400, deadline=None)
    @given(graded_runs(ranges=(LabelRange(0, 4), LabelRange(0, 9))))
    def check(run):
        labels, retrieved, label_range = run
        clean = [(d, float(10 - i)) for i, d in enumerate(dict.fromkeys(d for d, _ in retrieved))][:3]
        exact = list(azure_exact(labels, clean, label_range).values)
        corrected = list(azure_corrected(labels, clean, 3, label_range).values)
        exact[1] *= 4 / label_range.high  # xdcg: 25 * g is 100 * g / 4, right only for labels 0-4 (fix 6)
        assert all(same(a, b) for a, b in zip(exact, corrected, strict=True)), (exact, corrected)

    check()


def test_corrected_ndcg_and_holes_ratio_equal_ir_measures_on_random_graded_runs():
    # ir_measures: nDCG with gains 2**g - 1 (trec_eval's nDCG with the exponential gain); Judged@k is the
    # share of the top k that is labelled, so holes_ratio@k = 1 - Judged@k
    @settings(max_examples=300, deadline=None)
    @given(graded_runs(ranges=(LabelRange(0, 4), LabelRange(0, 12))), st.integers(1, 10))
    def check(run, k):
        labels, retrieved, label_range = run
        ranked = list(dict.fromkeys(d for d, _ in retrieved))
        got = azure_corrected(labels, retrieved, k, label_range).properties()
        qrels = [ir_measures.Qrel("q", d, g) for d, g in labels.items()]
        scored = [ir_measures.ScoredDoc("q", d, float(len(ranked) - i)) for i, d in enumerate(ranked)]
        ndcg = nDCG(gains={g: 2 ** g - 1 for g in range(label_range.high + 1)}) @ k
        theirs = {m.measure: m.value for m in ir_measures.iter_calc([ndcg, Judged @ k], qrels, scored)}
        if not ranked:  # ir_measures leaves out a question with nothing retrieved; it scores 0 here
            assert got[f"ndcg@{k}"] == 0 and got[f"holes_ratio@{k}"] == 0
            return
        assert same(got[f"ndcg@{k}"], theirs[ndcg]) and same(got[f"holes_ratio@{k}"], 1 - theirs[Judged @ k])

    check()


# -- the mean over questions, and the names ----------------------------------------------------------

def test_the_mean_leaves_out_nan_as_the_evaluators_pandas_mean_does():
    with_nan = azure_exact({"a": 1}, [("a", 1.0)], LabelRange(1, 5))  # fidelity NaN, nDCG 1
    plain = azure_exact({"a": 4}, [("z", 2.0), ("a", 1.0)], LabelRange(1, 5))  # nDCG 15 / LOG3 / 15, fidelity 1
    means = mean_scores([with_nan, plain])
    assert means[Measure("azure.ndcg", 3)] == pytest.approx((1 + (15 / LOG3) / 15) / 2)
    assert means[Measure("azure.fidelity")] == 1.0  # (NaN left out) 1 / 1
    assert means[Measure("azure.holes_ratio")] == (0 + 1 / 2) / 2
    assert mean_scores([with_nan])[Measure("azure.fidelity")] is None
    with pytest.raises(WrongValueError, match="different measures"):
        mean_scores([with_nan, azure_corrected({"a": 1}, [], 3, LabelRange(1, 5))])


@pytest.mark.parametrize("measure", [*AZURE_EXACT, *corrected_measures(1), *corrected_measures(10)], ids=str)
def test_every_azure_measure_parses_back_from_its_printed_name(measure):
    assert parse_azure_measure(str(measure)) == measure
    assert parse_azure_measure(str(measure).upper()) == measure


def test_the_exact_measures_are_the_evaluators_property_names():
    assert [str(m) for m in AZURE_EXACT] == [f"azure.{k}" for k in KEYS]
    assert list(azure_corrected({"a": 1}, [], 5).properties()) == [
        "ndcg@5", "xdcg@5", "fidelity@5", "top1_relevance", "max_relevance@5", "holes@5", "holes_ratio@5"]


@pytest.mark.parametrize("text, says", [
    ("azure.ndcg@5", 'use "azure_corrected.ndcg@5"'),  # the evaluator's k is 3
    ("azure.top3_max_relevanc", 'Did you mean "azure.top3_max_relevance"?'),
    ("azure_corrected.fidelity", 'Did you mean "azure_corrected.fidelity@k"?'),
    ("azure_corrected.ndcg@0", "k a whole number from 1"),
    ("azure_corrected.top1_relevance@3", 'Did you mean "azure_corrected.top1_relevance"?'),
    ("nDCG@10", "is not an Azure retrieval measure"),
])
def test_a_name_that_is_no_azure_measure_is_refused_with_the_closest(text, says):
    with pytest.raises(UsageError, match="is not an Azure retrieval measure") as refused:
        parse_azure_measure(text)
    assert says in str(refused.value)


def test_a_binary_golden_files_label_range_is_azures_0_to_4_not_0_to_its_highest_grade():
    # every label 1 (a list of expected ids): the grades fit Azure's default range, 0-4, so a relevant
    # document first has xdcg 100 x 1/4 over the three discounts: 12.8. Taken from the highest grade (0-1),
    # the same ranking would read 100 / 1.96 = 51, as if every document were graded the best
    from evaluation.scoring.azure_retrieval import label_range_of, setup_azure_summary

    summary = setup_azure_summary([({"a.md": 1, "c.md": 1}, ["a.md", "b.md"])])
    assert summary["label_range"] == "0-4"
    assert summary["corrected"]["xdcg@3"] == round(100 * (1 / 4) / XDCG_NORM, 4) == 12.7551
    assert summary["exact"]["xdcg@3"] == round(25 * 1 / XDCG_NORM, 4)
    assert label_range_of([0, 1, 1]) == LabelRange(0, 4) and label_range_of([0, 3, 12]) == LabelRange(0, 12)
