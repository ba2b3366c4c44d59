"""The chunking and matrix runs put their techniques and experiments in tiers and say when the pick shares one."""
from __future__ import annotations

from html import escape

from evaluation.builds import chunking_report
from evaluation.builds.matrix import experiment_tiers
from evaluation.builds.results import BuildResult
from evaluation.report.builds.compare_page import chunking_section
from evaluation.report.builds.matrix_page import matrix_section
from evaluation.report.builds.text import compare_text, matrix_text

QUESTIONS = [f"q{i}" for i in range(36)]


def build(technique, right, chunks=100):
    outcomes = {q: i < right for i, q in enumerate(QUESTIONS)}
    return BuildResult(key=f"{technique}-500", technique=technique, size=500, letter="a", chunks=chunks,
                       seconds=1.0, outcomes=outcomes)


def test_techniques_one_question_apart_share_a_tier_and_one_22_points_behind_does_not():
    report = chunking_report([build("recursive", 30), build("markdown", 29), build("fixed", 22)])
    tiers = report["tiers"]
    assert tiers["groups"] == [["recursive", "markdown"], ["fixed"]]
    assert tiers["pick"] == {"technique": "recursive", "with": ["markdown"]}
    said = "The pick's technique (recursive) is in tier 1 with markdown: the paired tests cannot separate them."
    report.update({"golden": {"scored": 36}, "id": "r1"})
    assert said in compare_text(report)
    assert escape(said) in chunking_section({**report, "kind": "chunking"})


def test_a_pick_alone_in_its_tier_says_so():
    report = chunking_report([build("recursive", 36), build("fixed", 10)])
    report.update({"golden": {"scored": 36}, "id": "r1"})
    assert report["tiers"]["groups"] == [["recursive"], ["fixed"]]
    assert "(recursive) is alone in its tier" in compare_text(report)


def entry(xid, ndcg):
    return {"id": xid, "metrics": {"10": {"ndcg": ndcg}}, "chunking": "c", "method": "m", "embedder": None}


def test_matrix_experiments_are_tiered_on_each_questions_ndcg_best_first_as_the_view_ranks_them():
    strong, weak, twin = "a" * 64, "b" * 64, "c" * 64
    values = {strong: [1.0] * 30 + [0.0] * 6, weak: [0.0] * 30 + [1.0] * 6, twin: [1.0] * 30 + [0.0] * 6}
    entries = [entry(weak, 6 / 36), entry(strong, 30 / 36), entry(twin, 30 / 36), {"id": "d" * 64, "metrics": None}]
    tiers = experiment_tiers(entries, values, 10, 0.05)
    # strong and its twin: equal on every question; weak: 30 questions behind, 6 ahead (p far under 0.05 / 3)
    assert tiers["groups"] == [[strong, twin], [weak]] and tiers["pick"] == strong
    assert [p["difference"] for p in tiers["pairs"] if {p["a"], p["b"]} == {strong, weak}] == [round(24 / 36, 6)]
    report = {"kind": "matrix", "experiments": [], "queries": {"questions": 36, "format": "jsonl"}, "by": "doc",
              "labels": {"said": "labels are documents"}, "embedders": [], "gate": {"thresholds": [], "passed": True,
                                                                                   "missed": []},
              "top_k": [10], "tiers": tiers}
    said = f"The pick's experiment ({strong[:12]}) is in tier 1 with {twin[:12]}"
    assert said in matrix_text(report) and escape(said) in matrix_section(report)


def test_a_real_valued_pair_goes_the_way_of_its_mean_difference_not_of_its_count_of_questions_ahead():
    # "wide" is ahead by 1.0 on 10 questions, behind by 0.1 on 20: ahead on the mean (8 / 30), behind on the count
    wide, narrow = "w" * 64, "n" * 64
    values = {wide: [1.0] * 10 + [0.0] * 20, narrow: [0.0] * 10 + [0.1] * 20}
    tiers = experiment_tiers([entry(wide, 10 / 30), entry(narrow, 2 / 30)], values, 10, 0.05)
    [pair] = tiers["pairs"]
    assert (pair["a"], pair["a_only"], pair["b_only"]) == (wide, 10, 20) and pair["difference"] > 0
    assert pair["separated"] and tiers["groups"] == [[wide], [narrow]]


def test_a_matrix_with_nothing_that_ran_has_no_tiers():
    assert experiment_tiers([{"id": "x", "metrics": None}], {}, 10, 0.05) is None
