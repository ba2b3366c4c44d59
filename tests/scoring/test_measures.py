"""Measures by their printed names: parsing gives the measure back, and the table says where a report keeps it."""
from __future__ import annotations

import pytest

from evaluation.errors import UsageError
from evaluation.measures import CUTOFFS, FOUND_10, MEASURES, MRR, NDCG_10, Measure, every_measure, parse, parse_measure
from evaluation.scoring.comparison import METRICS, TIE_METRIC
from evaluation.scoring.metrics import Outcome, summarise


@pytest.mark.parametrize("measure", MEASURES, ids=str)
def test_every_measure_parses_back_from_its_printed_name(measure):
    assert parse_measure(str(measure)) == measure


@pytest.mark.parametrize("text, measure", [
    ("found@10", Measure("found", 10)), ("FOUND@1", Measure("found", 1)), ("hit_rate@5", Measure("hit_rate", 5)),
    ("nDCG@10", Measure("nDCG", 10)), ("ndcg@10", Measure("nDCG", 10)), ("MRR", Measure("MRR")),
                                           ("mrr", Measure("MRR")),
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
    from evaluation.store.run_report import RunReport

    rules = parse_fail_under(["hit_rate@5=0.7", "MRR=0.5", "nDCG@10=0.9", "found@1=0.3"])
    assert rules == [("hit_rate@5", 0.7), ("mrr", 0.5), ("ndcg@10", 0.9), ("found@1", 0.3)]
    summary = {"found": {"1": 1 / 3, "5": 2 / 3}, "mrr": 0.5, "ndcg_10": 0.85}
    report = {"picks": {"finds_the_most": "t.keyword.bm25"}, "setups": [{"key": "t.keyword.bm25", "summary": summary}]}
    # 2/3 < 0.7 and 0.85 < 0.9 miss; 0.5 >= 0.5 and 1/3 >= 0.3 are met
    assert missed_thresholds(RunReport.from_json(report), rules) == [
        "hit_rate@5 of t.keyword.bm25 is 0.6667, under 0.7 by 0.03333",  # 0.7 - 2/3
        "ndcg@10 of t.keyword.bm25 is 0.85, under 0.9 by 0.05",
    ]


# -- one parser for every measure there is -----------------------------------------------------------

EVERY = every_measure(range(1, 21))


@pytest.mark.parametrize("measure", EVERY, ids=str)
def test_every_measure_there_is_parses_back_from_its_printed_name_in_any_case(measure):
    assert parse(str(measure)) == measure
    assert parse(str(measure).upper()) == measure == parse(f"  {str(measure).lower()} ")


def test_every_measure_walks_each_family_at_each_cut_off_once():
    names = [str(m) for m in EVERY]
    assert len(names) == len(set(names))
    # found, hit_rate, precision, recall, MRR and nDCG at each k from 1 to 20, MRR over all results, nDCG@10 once,
    # Azure's seven exact ones and its seven corrected ones at each k (top1_relevance takes none: once)
    assert len(names) == 6 * 20 + 1 + 7 + 6 * 20 + 1
    assert {"recall@7", "precision@7", "found@7", "hit_rate@7", "MRR@7", "nDCG@7", "MRR", "azure.ndcg@3",
            "azure_corrected.holes@7", "azure_corrected.top1_relevance"} <= set(names)


def test_each_use_reads_its_measures_through_the_one_parser_and_refuses_the_others():
    from evaluation.measures import parse_at_k, parse_azure_measure

    # a report holds recall@k at its cut-offs: read from the summary it always had
    summary = summarise([Outcome("a", (1, 4), 2), Outcome("b", (), 1)])
    assert parse_measure("recall@5") == parse("recall@5") == Measure("recall", 5)
    assert parse_measure("Recall@1").of(summary) == summary["recall"]["1"] == (1 / 2 + 0) / 2
    assert parse_at_k("precision@5") == parse("precision@5") and parse_at_k("recall@7") == parse("recall@7")
    assert parse_azure_measure("azure.fidelity") == parse("AZURE.FIDELITY")
    for use, text in [(parse_measure, "precision@5"), (parse_measure, "recall@7"), (parse_at_k, "MRR"),
                      (parse_at_k, "azure.ndcg@3"), (parse_azure_measure, "nDCG@3")]:
        parse(text)  # a measure there is ...
        with pytest.raises(UsageError):
            use(text)  # ... that this use has no number for


@pytest.mark.parametrize("text, says",
                         [("recal@10", 'Did you mean "recall@k"?'), ("precison@5", 'Did you mean "precision@k"?'),
                                        ("azure.fidelty", 'Did you mean "azure.fidelity"?'),
                                        ("found@0", 'Did you mean "found@k"?'),
                                        ("found@05", 'Did you mean "found@k"?'), ("nDCG", 'Did you mean "nDCG@k"?')])
def test_a_name_that_is_no_measure_at_all_is_refused_with_every_family_and_the_closest(text, says):
    with pytest.raises(UsageError, match="is not a measure; the measures are found@k, hit_rate@k, precision@k, "
                                         "recall@k, MRR@k, nDCG@k, MRR, azure.ndcg@3") as refused:
        parse(text)
    assert says in str(refused.value)


def test_a_matrix_keeps_each_measure_at_k_under_the_key_scoring_writes():
    from evaluation.measures import AT_K_KEYS, at_k
    from evaluation.scoring.at_k import question_at

    assert [str(m) for m in at_k(5)] == ["hit_rate@5", "precision@5", "recall@5", "MRR@5", "nDCG@5"]
    assert [m.at_k_key for m in at_k(5)] == list(AT_K_KEYS) == list(question_at(Outcome("a", (1,), 1), 5))
    metrics = {"5": dict(zip(AT_K_KEYS, (1.0, 0.2, 0.5, 1.0, 0.9), strict=True))}
    assert [m.at_k_of(metrics) for m in at_k(5)] == [1.0, 0.2, 0.5, 1.0, 0.9]
    assert parse("found@5").at_k_of(metrics) == 1.0 and at_k(3)[0].at_k_of(metrics) is None
    assert parse("recall@5").at_k_of(None) is None  # a failed experiment has no metrics


def test_found_at_k_counts_its_questions_and_no_other_measure_is_counted():
    summary = summarise([Outcome("a", (1,), 1), Outcome("b", (4,), 1), Outcome("c", (), 1)])
    assert FOUND_10.at(5).count_of(summary) == summary["counts"]["5"] == 2  # a at 1, b at 4
    with pytest.raises(ValueError, match="only found@k"):
        MRR.count_of(summary)


def test_evaluate_fail_under_reads_recall_at_k_from_the_summary_as_every_other_measure():
    from evaluation.cli.evaluate_cmd import missed_thresholds, parse_fail_under
    from evaluation.store.run_report import RunReport

    rules = parse_fail_under(["recall@5=0.75", "Recall@20=0.5"])
    summary = {"recall": {"5": 2 / 3, "20": 0.5}}
    report = {"picks": {"finds_the_most": "t.keyword.bm25"}, "setups": [{"key": "t.keyword.bm25", "summary": summary}]}
    # 2/3 < 0.75 misses by 0.75 - 2/3; 0.5 >= 0.5 is met
    assert missed_thresholds(RunReport.from_json(report), rules) == [
        "recall@5 of t.keyword.bm25 is 0.6667, under 0.75 by 0.08333"]
