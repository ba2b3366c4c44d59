"""bench/bench_rerank_depth.py's arithmetic: depths parsed, unique pairs counted, rank changes against the baseline."""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent.parent / "bench"))
import bench_rerank_depth as bench


def test_depths_are_read_deepest_first_without_repeats():
    assert bench.depths("10, 30,15,10") == [30, 15, 10]


@pytest.mark.parametrize("text", ["", "ten", "0,10", "10,-5"])
def test_depths_refuse_what_is_not_a_list_of_positive_whole_numbers(text):
    with pytest.raises(argparse.ArgumentTypeError):
        bench.depths(text)


def test_unique_pairs_count_computed_and_cached_but_not_shared():
    report = {"cache": {"pairs_computed": 435, "pairs_cached": 2186, "pairs_shared": 2779}}
    assert bench.unique_pairs(report) == 2621
    assert bench.unique_pairs({}) == 0


def test_rank_changes_count_each_direction_and_treat_not_found_as_worst():
    baseline = {"ranks": {"a": 3, "b": 1, "c": None, "d": 2, "e": None, "f": 5, "g": 4, "h": 6}}
    setup = {"ranks": {"a": 1, "b": 4, "c": 9, "d": None, "e": None, "f": 2, "g": None, "h": 3}}
    # better: a 3->1, c not found->9, f 5->2, h 6->3; worse: b 1->4, d 2->not found, g 4->not found
    assert bench.rank_changes(setup, baseline) == (4, 3)
    assert bench.rank_changes(baseline, baseline) == (0, 0)


def test_versus_baseline_is_the_depth_minus_the_baseline_question_by_question():
    baseline = {"key": "s", "ranks": {"a": 1, "b": 3, "c": None, "d": 12}}
    shallower = {"key": "s", "ranks": {"a": 1, "b": None, "c": 5, "d": 12}}
    compared = bench.versus_baseline(shallower, baseline)
    assert compared["questions"] == 4
    # found@10: baseline finds a, b; the shallower depth finds a, c: one better (c), one worse (b)
    assert compared["found@10"]["difference"] == (2 - 2) / 4
    assert (compared["found@10"]["better"], compared["found@10"]["worse"]) == (1, 1)
    assert compared["found@10"]["p"] == 1.0
    # reciprocal ranks: b 1/3 -> 0, c 0 -> 1/5; a and d unchanged
    assert compared["mrr"]["difference"] == round((0 - 1 / 3 + 1 / 5 - 0) / 4, 6)
    low, high = compared["mrr"]["interval"]
    assert low <= compared["mrr"]["difference"] <= high
    assert compared["ndcg_10"] is None  # the entries kept no per-question nDCG@10


def test_versus_baseline_compares_only_the_questions_both_ranked():
    baseline = {"key": "s", "ranks": {"a": 1, "b": 2}}
    setup = {"key": "s", "ranks": {"a": 1, "b": 2, "extra": None}}
    assert bench.versus_baseline(setup, baseline)["questions"] == 2


def test_verdict_is_noise_while_every_interval_holds_zero_and_a_loss_before_a_gain():
    holds = {"questions": 80, "found@10": {"interval": [-0.05, 0.0]}, "mrr": {"interval": [-0.02, 0.03]},
             "ndcg_10": None}
    assert bench.verdict(holds) == "noise"
    loses = {**holds, "mrr": {"interval": [-0.04, -0.001]}}
    assert bench.verdict(loses) == "loss"
    gains = {**holds, "found@10": {"interval": [0.0125, 0.05]}}
    assert bench.verdict(gains) == "gain"
    assert bench.verdict({**gains, "mrr": {"interval": [-0.04, -0.001]}}) == "loss"


def test_difference_prints_found_at_10_in_points_and_mrr_as_a_share():
    compared = {"found@10": {"difference": -0.025, "interval": [-0.0625, 0.0], "p": 0.25},
                "mrr": {"difference": 0.0123, "interval": [-0.004, 0.0291], "p": 0.1234}}
    assert bench.difference(compared, "found@10", True) == "-2.5 [-6.2, +0.0] p 0.25"
    assert bench.difference(compared, "mrr", False) == "+0.012 [-0.004, +0.029] p 0.12"
    assert bench.difference({"mrr": None}, "mrr", False) == ""


def _write_report(work: Path, depth: int, index: str, held_depth: int) -> None:
    report = {"targets": {"local": {"index": index, "rerank_candidates": held_depth}}, "setups": []}
    (work / f"depth-{depth}.out").write_text(json.dumps(report), encoding="utf-8")


def test_saved_report_reads_back_a_report_of_the_same_index_and_depth(tmp_path):
    _write_report(tmp_path, 20, str(tmp_path / "index"), 20)
    assert bench.saved_report(tmp_path, 20, tmp_path / "index", tmp_path / "golden.jsonl")["setups"] == []


@pytest.mark.parametrize("index, held_depth, says", [("other", 20, "made on the index"), ("index", 30, "at depth 30")])
def test_saved_report_refuses_another_collection_or_depth(tmp_path, index, held_depth, says):
    _write_report(tmp_path, 20, str(tmp_path / index), held_depth)
    with pytest.raises(SystemExit, match=says):
        bench.saved_report(tmp_path, 20, tmp_path / "index", tmp_path / "golden.jsonl")


def test_saved_report_says_how_to_make_a_missing_one(tmp_path):
    with pytest.raises(SystemExit, match="run once without --reuse"):
        bench.saved_report(tmp_path, 15, tmp_path / "index", tmp_path / "golden.jsonl")
