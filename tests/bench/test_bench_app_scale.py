"""bench/bench_app_scale.py's schedule and questions: the numbers it prints rest on these."""
from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent.parent / "bench"))

from bench_app_scale import Activity, changed, questions_of, simulated_wall
from conftest import SAMPLES


def test_the_fan_out_fills_every_slot_and_the_timed_passes_follow_one_after_another():
    fan_out = [Activity("a", 10), Activity("b", 10), Activity("c", 10), Activity("d", 4)]
    timing = [Activity("t1", 2), Activity("t2", 3)]

    # one instance, 2 slots: a|b at 0-10, c on the first freed at 10-20, d on the other at 10-14
    assert simulated_wall(fan_out, timing, 1) == 20 + 2 + 3
    # two instances: all four at once, the longest ends at 10
    assert simulated_wall(fan_out, timing, 2) == 10 + 5
    assert simulated_wall(fan_out, timing, 100) == 10 + 5
    # in order: the 30 s activity waits for a slot behind two of 1 s
    assert simulated_wall([Activity("x", 1), Activity("y", 1), Activity("z", 30)], [], 1) == 1 + 30


def test_questions_are_asked_again_in_numbered_variants_and_ten_percent_change(tmp_path):
    golden = tmp_path / "golden.jsonl"
    golden.write_text('{"id": "q1", "question": "a?", "expected": ["d1"]}\n'
                      '{"id": "q2", "question": "b?", "expected": ["d2"]}\n', encoding="utf-8")

    rows = questions_of(golden, 5)

    assert [r["id"] for r in rows] == ["q1-0", "q2-0", "q1-1", "q2-1", "q1-2"]
    assert len({r["question"] for r in rows}) == 5 and rows[4]["expected"] == ["d1"]
    twenty = questions_of(golden, 20)
    assert sum(a["question"] != b["question"] for a, b in zip(twenty, changed(twenty, 0.1), strict=True)) == 20 // 10
    sample = frozenset(r["id"] for r in twenty[:10])
    kept = changed(twenty, 0.1, sample)
    assert [r["id"] for r, k in zip(twenty, kept, strict=True) if r != k] == ["q1-5",
                                                                              "q2-7"]  # 2 of the 10 outside, spread


def test_a_warm_run_the_apps_way_searches_only_the_changed_questions_and_the_profile_counts_its_steps(
        sample_index, tmp_path):
    from app_profile import Profiler
    from bench_app_scale import run_once, warm_questions

    rows = questions_of(SAMPLES / "golden.jsonl", 80)  # 50 of them timed (the default sample)
    options = {"only": ["local.keyword.bm25"], "shard_seconds": 180.0, "workdir": tmp_path}
    cold = run_once(sample_index, rows, tmp_path / "cache.sqlite", earlier=None, **options)
    profiler, around = Profiler(), []
    profiler.install()
    try:
        warm = run_once(sample_index, warm_questions(rows, cold[2]),
                        tmp_path / "cache.sqlite", earlier=cold[2], profiler=profiler, around=around, **options)
    finally:
        profiler.uninstall()

    [setup] = warm[2]["setups"]
    assert len(setup["ranked_in"]) == 80 - 8  # 10% of 80 asked in other words (none sampled): searched here
    assert [a.name for a in warm[0]] == ["rank local.keyword.bm25 #1"] and warm[1] == []  # settled: not timed
    assert [a.name for a in around] == ["plan", "save"]
    assert [a.name for a in cold[1]] == ["time local.keyword.bm25"]  # the timed passes alone, as before
    table = profiler.table("warm")
    assert "| rank local.keyword.bm25 | 1 |" in table and "| plan | 1 |" in table and "| save | 1 |" in table
    import evaluation.run.one_setup as one_setup

    assert not hasattr(one_setup._judged, "__wrapped__")  # the wrappers are gone again


def test_save_with_a_warm_run_keeps_the_cold_runs_activities_and_both_runs_get_a_cache_per_setup(
        sample_index, tmp_path, monkeypatch, capsys):
    import json

    import bench_app_scale

    calls = []
    real = bench_app_scale.run_once

    def recorded(*args, **kwargs):
        calls.append(kwargs)
        return real(*args, **kwargs)

    monkeypatch.setattr(bench_app_scale, "run_once", recorded)
    saved = tmp_path / "cold.json"

    assert bench_app_scale.main(["--index", str(sample_index), "--golden", str(SAMPLES / "golden.jsonl"),
                                 "--questions", "80", "--instances", "1", "--only", "local.keyword.bm25",
                                 "--cache-per-setup", "--save", str(saved)]) == 0

    out = capsys.readouterr().out
    assert "  warm: " in out and "warm / cold activity-seconds" in out  # --save no longer means cold only
    assert [call["cache_per_setup"] for call in calls] == [True, True]  # cold and warm alike
    run = json.loads(saved.read_text(encoding="utf-8"))
    # the cold run's: its one shard and its timed pass (the warm run, settled, has no timed pass)
    assert run["questions"] == 80
    assert [a["name"] for a in run["fan_out"]] == ["rank local.keyword.bm25 #1"]
    assert [a["name"] for a in run["timing"]] == ["time local.keyword.bm25"]
    assert "    local.keyword.bm25: rank #1 " in out and "; timed pass none" in out  # every activity listed
