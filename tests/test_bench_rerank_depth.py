"""bench/bench_rerank_depth.py's arithmetic: depths parsed, unique pairs counted, rank changes against the baseline."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))
import bench_rerank_depth as bench  # noqa: E402


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
