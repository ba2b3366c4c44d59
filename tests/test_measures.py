"""Measures by their printed names: parsing gives the measure back, and the table says where a report keeps it."""
from __future__ import annotations

import pytest

from evaluation.errors import UsageError
from evaluation.measures import CUTOFFS, FOUND_10, MEASURES, MRR, NDCG_10, Measure, parse_measure
from evaluation.scoring.comparison import METRICS, TIE_METRIC
from evaluation.scoring.metrics import Outcome, summarise


@pytest.mark.parametrize("measure", MEASURES, ids=str)
def test_every_measure_parses_back_from_its_printed_name(measure):
    assert parse_measure(str(measure)) == measure


@pytest.mark.parametrize("text, measure", [
    ("found@10", Measure("found", 10)), ("FOUND@1", Measure("found", 1)), ("hit_rate@5", Measure("hit_rate", 5)),
    ("nDCG@10", Measure("nDCG", 10)), ("ndcg@10", Measure("nDCG", 10)), ("MRR", Measure("MRR")), ("mrr", Measure("MRR")),
    (" found@20 ", Measure("found", 20)),
])
def test_a_measure_is_read_in_any_case(text, measure):
    assert parse_measure(text) == measure


@pytest.mark.parametrize("text, says", [
    ("found@7", 'Did you mean "found@5"?'),      # a cut-off a report does not hold (difflib's closest)
    ("found@010", 'Did you mean "found@10"?'),   # written another way than any cut-off
    ("nDCG@5", 'Did you mean "nDCG@10"?'),
    ("MRR@10", 'Did you mean "MRR"?'),
    ("recal@10", "the measures are found@1, found@3"),
    ("found@", "is not a measure a report holds"),
])
def test_a_name_that_is_no_measure_is_refused_with_the_closest(text, says):
    with pytest.raises(UsageError, match="is not a measure a report holds") as refused:
        parse_measure(text)
    assert says in str(refused.value)


def test_each_measure_reads_the_summary_key_the_report_has_always_had():
    # question a first at 1, b first at 4, c not found: found@1 = 1/3, found@5 = 2/3, MRR = (1 + 1/4 + 0) / 3
    summary = summarise([Outcome("a", (1,), 1), Outcome("b", (4,), 1), Outcome("c", (), 1)])
    assert parse_measure("found@1").of(summary) == summary["found"]["1"] == round(1 / 3, 4)
    assert parse_measure("hit_rate@5").of(summary) == summary["found"]["5"] == round(2 / 3, 4)
    assert MRR.of(summary) == summary["mrr"] == round((1 + 1 / 4) / 3, 4)
    assert NDCG_10.of(summary) == summary["ndcg_10"]
    assert [m.summary_path for m in MEASURES[:len(CUTOFFS)]] == [("found", str(k)) for k in CUTOFFS]


def test_the_comparison_keeps_its_report_keys():
    assert METRICS == ("found@10", "mrr", "ndcg_10") and TIE_METRIC == "found@10" == FOUND_10.versus_key
    assert parse_measure("hit_rate@10").versus_key == "found@10"


def test_fail_under_reads_every_measure_by_name_and_checks_the_summary_key_it_names():
    from evaluation.cli.evaluate_cmd import missed_thresholds, parse_fail_under

    rules = parse_fail_under(["hit_rate@5=0.7", "MRR=0.5", "nDCG@10=0.9", "found@1=0.3"])
    assert rules == [("hit_rate@5", 0.7), ("mrr", 0.5), ("ndcg@10", 0.9), ("found@1", 0.3)]
    summary = {"found": {"1": 1 / 3, "5": 2 / 3}, "mrr": 0.5, "ndcg_10": 0.85}
    report = {"picks": {"finds_the_most": "t.keyword.bm25"}, "setups": [{"key": "t.keyword.bm25", "summary": summary}]}
    # 2/3 < 0.7 and 0.85 < 0.9 miss; 0.5 >= 0.5 and 1/3 >= 0.3 are met
    assert missed_thresholds(report, rules) == ["hit_rate@5 of t.keyword.bm25 is 0.6667, under 0.7 by 0.03333",  # 0.7 - 2/3
                                                "ndcg@10 of t.keyword.bm25 is 0.85, under 0.9 by 0.05"]
