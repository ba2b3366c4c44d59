"""bench/_trials.py, the frame bench_racing and bench_space share: each named collection measured in the
order named, given its place (bench_racing alternates which run goes first by it), and the summaries' cost
column as the median and the range."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent.parent / "bench"))
import _trials as trials


def test_each_named_collection_is_measured_in_order_with_its_place_and_shown(tmp_path, capsys):
    parser = argparse.ArgumentParser()
    trials.collection_arguments(parser)
    args = parser.parse_args(["--only", "sample", "--trials", "3"])
    measured, shown = [], []

    def measure(name, corpus, golden, n):
        measured.append((name, corpus.name, golden.name, n))
        return {"name": name}

    found = trials.each_collection(args, tmp_path, measure, shown.append)

    assert measured == [("sample", "corpus.jsonl", "golden.jsonl", 0)] and shown == found == [{"name": "sample"}]
    assert args.trials == 3 and args.questions == 80  # the flags both benches take, with their defaults
    assert "baseline: --exhaustive" in capsys.readouterr().out
    assert list(tmp_path.iterdir()) == []  # the sample is read where it is shipped: nothing built


def test_the_cost_column_is_the_median_and_the_range():
    assert trials.median_range([0.5, 0.1, 0.3]) == "0.300 (0.100-0.500)"
    assert trials.median_range([0.4, 0.1, 0.3, 0.2]) == "0.300 (0.100-0.400)"  # an even count: the upper middle
