"""bench/app_scale_shards.py: which shards a sampled run measures, how the rest are scheduled, saved runs."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent.parent / "bench"))

from app_scale_shards import (activity_lines, combined, sample_lines, sampled, save, schedule_lines,
                              scheduled)
from bench_app_scale import Activity, simulated_wall


def test_a_sample_is_the_first_the_last_and_evenly_between():
    assert sampled(20, 3) == [0, 10, 19]  # round(1 * 19 / 2) = round(9.5) = 10 (even rounding)
    assert sampled(20, 2) == [0, 19]
    assert sampled(20, 1) == [0]
    assert sampled(100, 5) == [0, 25, 50, 74, 99]  # round(i * 99 / 4): 0, 24.75, 49.5, 74.25, 99
    assert sampled(3, 3) == [0, 1, 2] and sampled(2, 3) == [0, 1]  # no more shards than the sample: all
    assert sampled(20, 0) == list(range(20))  # 0: every shard measured


def test_unmeasured_shards_are_scheduled_at_the_mean_of_the_measured_ones_in_shard_order():
    activities = scheduled("local.x", {0: 100.0, 2: 200.0}, 4)

    assert [a.seconds for a in activities] == [100.0, (100 + 200) / 2, 200.0, (100 + 200) / 2]
    assert [a.measured for a in activities] == [True, False, True, False]
    assert [a.name.split(" (")[0] for a in activities] == [f"rank local.x #{n}" for n in (1, 2, 3, 4)]
    assert scheduled("local.x", {}, 0) == []  # every rank reused: no activity
    with pytest.raises(ValueError):
        scheduled("local.x", {}, 4)


def test_the_sample_line_names_the_measured_shards_their_mean_and_spread():
    fan_out = [Activity("rank local.cheap #1", 5.0)] + scheduled("local.r", {0: 170.0, 10: 190.0, 19: 180.0}, 20)

    lines = sample_lines(fan_out)

    assert lines == ["  local.r: 20 shards, 3 measured (#1 170.0 s, #11 190.0 s, #20 180.0 s); mean 180.0 s, "
                     "spread 170.0-190.0 s; 17 scheduled at the mean"]


def test_every_activity_is_listed_by_setup_with_its_timed_pass_and_the_shards_at_the_mean_counted():
    fan_out = ([Activity("rank local.cheap #1", 5.0)] + scheduled("local.r", {0: 170.0, 3: 190.0}, 4)
               + [Activity("rank local.settled #1", 2.0)])
    timing = [Activity("time local.cheap", 1.5), Activity("time local.r", 20.0)]

    lines = activity_lines(fan_out, timing)

    assert lines == ["  local.cheap: rank #1 5.0 s; timed pass 1.5 s",
                     # shards 2 and 3 unmeasured, at (170 + 190) / 2 = 180
                     "  local.r: rank #1 170.0 s, #4 190.0 s; 2 more at the measured mean, 180.0 s; timed pass 20.0 s",
                     "  local.settled: rank #1 2.0 s; timed pass none"]  # times and sampled results reused
    assert activity_lines([], [Activity("time local.x", 3.0)]) == ["  local.x: rank no shard; timed pass 3.0 s"]


def test_the_ten_minute_goal_is_read_on_measured_activities_and_the_wall_on_all():
    fan_out = [Activity("rank a #1", 300.0),
               Activity("rank a #2 (at its setup's measured mean)", 700.0, measured=False)]
    timing = [Activity("time a", 20.0)]

    lines = schedule_lines(fan_out, timing, [1])

    assert "longest measured activity 300.0 s (rank a #1) = 0.50 of the 600 s goal" in lines[1]
    # one instance of 2 slots: both at once, 700 s, then the timed pass: (700 + 20) / (700 + 20) = 1.00x
    assert lines[2] == f"       1 instances: wall {simulated_wall(fan_out, timing, 1):8.1f} s = 1.00x " \
                       "(longest activity + timing pass, goal <= 1.5x)"


def test_saved_runs_combine_in_the_order_given_and_runs_of_other_sizes_are_refused(tmp_path):
    save(tmp_path / "a.json", 1000, [Activity("rank a #1", 1.0)], [Activity("time a", 2.0)], (1.0, 2.0))
    save(tmp_path / "b.json", 1000, scheduled("b", {0: 3.0}, 2), [Activity("time b", 4.0)], (2.0, 3.0))
    save(tmp_path / "c.json", 5000, [Activity("rank c #1", 1.0)], [], (1.0, 1.0))

    questions, fan_out, timing, loads = combined([tmp_path / "a.json", tmp_path / "b.json"])

    assert questions == 1000 and loads == [[1.0, 2.0], [2.0, 3.0]]
    assert [(a.name, a.seconds, a.measured) for a in fan_out] == [
        ("rank a #1", 1.0, True), ("rank b #1", 3.0, True), ("rank b #2 (at its setup's measured mean)", 3.0, False)]
    assert [a.name for a in timing] == ["time a", "time b"]
    with pytest.raises(SystemExit, match="1000, 5000"):
        combined([tmp_path / "a.json", tmp_path / "c.json"])
