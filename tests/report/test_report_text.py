"""The text report: the comparison with the top in the table, and the ties beside the picks."""
from __future__ import annotations

import pytest

from evaluation.store.run_report import RunReport
from evaluation.report.text import render_report, render_table, render_ties
from evaluation.scoring.comparison import SignificanceSettings, compare_with_top, pick_ties

from test_significance import QUESTIONS, entry, ranked

SETTINGS = SignificanceSettings(resamples=500)


def report_of(*entries, picks):
    ordered = ranked(*entries)
    for e in ordered:
        e.update(method_label=f"label of {e['key']}", error=None)
        e["summary"].update(found={"1": 0, "3": 0, "5": 0, "10": e["summary"]["counts"]["10"] / 36, "20": 0},
                            mrr=0.5, ndcg_10=0.5, p95_ms=e["summary"]["median_ms"])
    compare_with_top(ordered, QUESTIONS, SETTINGS)
    return {"id": "run", "created_at": "2026-11-30T00:00:00Z", "by": "doc", "depth": 20,
            "golden": {"labelled": 36, "source": "golden.jsonl", "sha256": "0" * 64},
            "rules": {"balance_points": 4, "time_points": 8}, "picks": picks, "setups": ordered,
            "significance": SETTINGS.describe(), "ties": pick_ties(picks, ordered, QUESTIONS, SETTINGS), "missing": {}}


def test_the_table_shows_each_setups_found_at_10_against_the_top_and_marks_significant_ones():
    report = report_of(entry("top", [1] * 36, median=50.0), entry("close", [1] * 34 + [None] * 2, median=20.0),
                       entry("poor", [1] * 20 + [None] * 16, median=1.0),
                       picks={"finds_the_most": "top", "best_for_balance": "close", "best_for_time": "close"})
    lines = {line.split()[1]: line for line in render_table(report).splitlines()[2:5]}
    assert lines["top"].rstrip().endswith("top")
    assert lines["close"].split()[-2:] == ["-2", "0.50"]  # p = 2 / 2**2 = 0.5, Holm: 0.5 * 1 (poor's is smaller)
    assert lines["poor"].split()[-3:] == ["-16", "6e-05", "*"]  # 2 / 2**16 * 2 = 6.1e-05


def test_a_faster_setup_the_test_cannot_tell_is_said_to_need_more_questions_never_to_lose_nothing():
    report = report_of(entry("top", [1] * 36, median=50.0), entry("close", [1] * 34 + [None] * 2, median=20.0),
                       entry("poor", [1] * 20 + [None] * 16, median=1.0),
                       picks={"finds_the_most": "top", "best_for_balance": "close", "best_for_time": "poor"})
    report["question_ids"] = QUESTIONS
    text = render_ties(report)
    # close misses 2 of 36, top none: p = 2 / 2**2 = 0.5. At those rates (2 worse in 36) the exact test
    # tells at 5 worse and none better (p = 2 / 2**5 = 0.0625 > 0.05, so 6: 2 / 64 = 0.031):
    # round(2 * N / 36) = 6 first at N = 99 (5.5 * 36 / 2)
    said = " ".join(" ".join(line.split()) for line in text.splitlines())  # the lines wrap at 100 columns
    # no time pairs and no floor in this report: the medians' ratio, 50 / 20 = 2.5, is said as its band
    assert ("Finds the most: close is between 2x and 3x faster than top and finds 2 questions fewer in the top 10, "
            "and 36 questions are too few to tell whether that is luck (telling a gap this size would take about 99 "
            "questions); p 0.50") in said
    assert "Best for balance: the one faster setup, poor, finds significantly fewer than close" in said
    assert "Best for time:     no setup is faster than poor" in text
    assert "noise" not in text and "as good" not in text and "loses nothing" not in text
    assert text not in render_report(report)  # the statistics are behind --details (the page and JSON hold them)
    assert text in render_report(report, details=True)
    versus = next(line for line in render_report(report, details=True).splitlines() if line.startswith("  close:"))
    assert versus.endswith("(found@10: finds 2 questions fewer in the top 10, and 36 questions are too few to tell "
                           "whether that is luck (telling a gap this size would take about 99 questions))")


def test_a_pick_tied_on_time_names_the_setups_it_was_chosen_among():
    report = report_of(entry("top", [1] * 36, median=50.0), entry("close", [1] * 34 + [None] * 2, median=20.0),
                       picks={"finds_the_most": "top", "best_for_balance": "top", "best_for_time": "close"})
    report["ties_on_time"] = {"finds_the_most": ["top"], "best_for_balance": ["top", "close"],
                              "best_for_time": ["close"]}
    lines = render_report(report).splitlines()
    balance = lines.index(next(line for line in lines if line.startswith("  Best for balance:")))
    time = lines.index(next(line for line in lines if line.startswith("  Best for time:")))
    said = " ".join(" ".join(line.split()) for line in lines[balance:time])
    # the reason that decided, not the rule: close is the tier's fastest and finds fewer
    assert said == ("Best for balance: the same setup as finds the most: close, the fastest within 4 points (1 "
                    "question) of the most, is tied with it on time (their medians' 99% intervals overlap) and finds "
                    "2 questions fewer than it (34 against 36 of 36)")


def test_a_report_made_before_the_comparisons_renders_without_them():
    report = report_of(entry("top", [1] * 36), picks={"finds_the_most": "top", "best_for_balance": "top",
                                                        "best_for_time": "top"})
    for key in ("significance", "ties"):
        del report[key]
    del report["setups"][0]["versus_top"]
    text = render_report(report)
    assert "cannot tell" not in text and "Versus the top" not in text and "vs top" not in text
    assert render_table(report).splitlines()[2].split()[-1] == "10"  # the row ends at p95 ms


def test_a_report_saved_before_the_refactor_prints_the_text_it_printed_then():
    import json
    from pathlib import Path

    from evaluation.golden.texts import question_texts
    from evaluation.report.text import render_questions, render_report

    saved = Path(__file__).parent.parent / "fixtures" / "page"
    report = json.loads((saved / "report.json").read_text(encoding="utf-8"))
    texts = question_texts((saved / "golden.jsonl").read_bytes(), report)
    expected = (saved / "report.txt").read_text(encoding="utf-8")
    assert render_report(report) + "\n" + render_questions(report, texts) == expected


def test_a_damaged_tie_verdict_whose_key_is_not_a_name_is_passed_over_not_a_crash():
    """A kept report whose ``time_tests`` names a setup with a list (found by tests/store/test_kept_files_fuzz.py)
    reads: that verdict names no setup, the others still say why."""
    from evaluation.report.time_words import tie_words

    report = {"time_tests": {"best_for_time": {"anchor": "a", "tied": [{"key": [], "why": "equally fast"},
                                                                         {"key": "b", "why": "cannot tell"}]}},
              "rules": {}}
    assert tie_words(RunReport.from_json(report), "best_for_time", "a", "b", {"a": 1, "b": 2}) == \
        "the paired test cannot tell them apart"


@pytest.mark.parametrize("tied", [True, 1, "b", {"key": "b"}, None])
def test_a_damaged_tie_verdict_list_that_is_no_list_is_the_fallback_not_a_crash(tied):
    """``time_tests.<pick>.tied`` edited to ``true`` (found by tests/store/test_kept_files_fuzz.py: the page
    and ``runs import`` ended in "this is a bug") holds no verdict: the words every report before the tests had."""
    from evaluation.report.time_words import tie_words

    report = {"time_tests": {"best_for_time": {"anchor": "a", "tied": tied}}, "rules": {}}
    assert tie_words(RunReport.from_json(report), "best_for_time", "a", "b", {"a": 1, "b": 2}) == \
        "their medians' 99% intervals overlap"


def test_the_text_fits_100_columns_and_wide_restores_every_column():
    # a key of 41 characters (the sample's longest) leaves no room beside the numbers at 100 columns: it stands
    # on its own line, its numbers under the headers on the next; --wide puts it back on one line with p95
    long = "local.hybrid_reranked.bge-small+minilm-l6"
    report = report_of(entry("top", [1] * 36, median=50.0), entry(long, [1] * 34 + [None] * 2, median=20.0),
                       picks={"finds_the_most": "top", "best_for_balance": long, "best_for_time": long})
    report["golden"]["source"] = "/a/long/path/to/a/golden/file/the/team/keeps/beside/its/documents/golden.jsonl"
    for setup in report["setups"]:  # every share 100%: the widest cells a found@k column holds
        setup["summary"]["found"] = {k: 1.0 for k in ("1", "3", "5", "10", "20")}
    text = render_report(report)
    assert all(len(line) <= 100 for line in text.splitlines()), max(text.splitlines(), key=len)
    table = render_table(report, details=False)
    header, _, first, key_line, numbers = table.splitlines()[:5]
    assert header.split() == ["#", "setup", "found@1", "@3", "@5", "@10", "@20", "MRR", "nDCG@10", "median", "ms"]
    assert key_line.split() == ["2", long] and numbers.split()[-1] == "20" and numbers.startswith(" " * 10)
    wide = render_table(report, details=False, wide=True).splitlines()
    assert "found@3" in wide[0] and wide[0].endswith("p95 ms") and any(line.split()[1] == long for line in wide[2:])
