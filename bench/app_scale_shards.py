"""Sampled shards and saved runs for ``bench_app_scale.py``: the expensive setups at real sizes on 2 cores.

Why sample: a reranked shard of 50 questions takes about 3 minutes here (the cross-encoder's 8-9 pairs
a second, 30 pairs a question), and at 1,000 questions each of the three reranked setups has 20 shards:
measuring all 60 is 3 hours of a shared machine, 300 at 5,000 questions. ``--sample-shards N`` measures
N shards of every setup that has more than N (spread evenly: the first, the last, and the rest between,
so a drift across the batch shows), and every shard of the others; each unmeasured shard is scheduled at
the mean of its setup's measured shards, and the output says so with their spread. A bigger machine
runs the same command with ``--sample-shards 0`` (every shard measured).

Why save and combine: a locked timed run must stay under 25 minutes, so the setups are measured in
separate runs (``--only``, ``--save FILE``), and ``--combine FILE ...`` schedules their activities
together as one run: the fan-out in the order the files are given (the orchestrator's plan order when
given in that order), then every timed pass one after another.
"""
from __future__ import annotations

import json
import os
from pathlib import Path
from statistics import mean
from typing import Sequence

from bench_app_scale import GOAL_RATIO, Activity, simulated_wall

ACTIVITY_GOAL_SECONDS = 600.0  # the "no activity over 10 minutes on this machine"


def sampled(count: int, sample: int) -> list[int]:
    """Which of ``count`` shards are measured: all when ``sample`` is 0 or ``count`` is no more than it,
    else ``sample`` of them spread evenly from the first to the last (1: the first only)."""
    if sample <= 0 or count <= sample:
        return list(range(count))
    if sample == 1:
        return [0]
    return sorted({round(i * (count - 1) / (sample - 1)) for i in range(sample)})


def scheduled(key: str, measured: dict[int, float], count: int) -> list[Activity]:
    """The setup's ``count`` rank activities in shard order: each measured shard at its time, every other
    at the mean of the measured ones (``measured=False``). A setup with no shard (every rank reused) has none."""
    if not count:
        return []
    if not measured:
        raise ValueError(f"{key}: no shard measured")
    at_mean = mean(measured.values())
    return [Activity(f"rank {key} #{n + 1}", measured[n]) if n in measured
            else Activity(f"rank {key} #{n + 1} (at its setup's measured mean)", at_mean, measured=False)
            for n in range(count)]


def _shard_of(activity: Activity) -> tuple[str, int]:
    """(setup key, shard number from 1) of a rank activity named ``rank KEY #N`` (with or without a note)."""
    return activity.name.split(" ")[1], int(activity.name.split("#")[1].split(" ")[0])


def activity_lines(fan_out: Sequence[Activity], timing: Sequence[Activity]) -> list[str]:
    """Every activity's seconds, one line per setup in the run's order: each measured shard, how many
    more are scheduled at the measured mean (``--sample-shards``), and the setup's timed pass (or that
    it had none: times and sampled results reused, or its ranking failed)."""
    shards: dict[str, list[Activity]] = {}
    for activity in fan_out:
        shards.setdefault(_shard_of(activity)[0], []).append(activity)
    passes = {activity.name.split(" ", 1)[1]: activity for activity in timing}
    lines = []
    for key in dict.fromkeys([*shards, *passes]):
        measured = [a for a in shards.get(key, []) if a.measured]
        rest = [a for a in shards.get(key, []) if not a.measured]
        ranked = ", ".join(f"#{_shard_of(a)[1]} {a.seconds:.1f} s" for a in measured) or "no shard"
        if rest:
            ranked += f"; {len(rest)} more at the measured mean, {rest[0].seconds:.1f} s"
        timed = f"{passes[key].seconds:.1f} s" if key in passes else "none"
        lines.append(f"  {key}: rank {ranked}; timed pass {timed}")
    return lines


def sample_lines(fan_out: Sequence[Activity]) -> list[str]:
    """One line per setup with an unmeasured shard: how many shards, which were measured, their times,
    mean and spread, and how many are scheduled at that mean."""
    by_setup: dict[str, list[tuple[int, Activity]]] = {}
    for activity in fan_out:
        key, number = _shard_of(activity)
        by_setup.setdefault(key, []).append((number, activity))
    lines = []
    for key, shards in by_setup.items():
        measured = [(n, a.seconds) for n, a in shards if a.measured]
        if len(measured) == len(shards):
            continue
        seconds = [s for _, s in measured]
        lines.append(f"  {key}: {len(shards)} shards, {len(measured)} measured "
                     f"({', '.join(f'#{n} {s:.1f} s' for n, s in measured)}); mean {mean(seconds):.1f} s, "
                     f"spread {min(seconds):.1f}-{max(seconds):.1f} s; {len(shards) - len(measured)} "
                     f"scheduled at the mean")
    return lines


def schedule_lines(fan_out: Sequence[Activity], timing: Sequence[Activity], instances: Sequence[int]) -> list[str]:
    """The run's activity-seconds, its longest activity against the 10-minute goal, and the simulated
    wall on each count of ``instances`` against the longest activity plus the timing pass."""
    measured = [a for a in list(fan_out) + list(timing) if a.measured]
    longest = max(fan_out, key=lambda a: a.seconds)
    longest_measured = max(measured, key=lambda a: a.seconds)
    timing_pass = sum(a.seconds for a in timing)
    baseline = longest.seconds + timing_pass
    lines = [f"  {len(fan_out)} rank activities ({sum(not a.measured for a in fan_out)} at their setup's "
             f"measured mean), {len(timing)} timed passes, {sum(a.seconds for a in list(fan_out) + list(timing)):.1f} "
             f"activity-seconds; longest activity {longest.seconds:.1f} s ({longest.name}); timing pass "
             f"{timing_pass:.1f} s",
             f"  longest measured activity {longest_measured.seconds:.1f} s ({longest_measured.name}) = "
             f"{longest_measured.seconds / ACTIVITY_GOAL_SECONDS:.2f} of the {ACTIVITY_GOAL_SECONDS:.0f} s goal "
             f"(no activity over 10 minutes)"]
    for n in instances:
        wall = simulated_wall(fan_out, timing, n)
        lines.append(f"    {n:>4} instances: wall {wall:8.1f} s = {wall / baseline:.2f}x "
                     f"(longest activity + timing pass, goal <= {GOAL_RATIO}x)")
    return lines


def save(path: Path, questions: int, fan_out: Sequence[Activity], timing: Sequence[Activity],
         load: tuple[float, float]) -> None:
    """One run's activities as JSON, for ``--combine``."""
    path.write_text(json.dumps({"questions": questions, "load": list(load),
                                "fan_out": [a.__dict__ for a in fan_out],
                                "timing": [a.__dict__ for a in timing]}, indent=1), encoding="utf-8")


def combined(paths: Sequence[Path]) -> tuple[int, list[Activity], list[Activity], list[list[float]]]:
    """The saved runs of ``paths`` as one: (questions, fan-out in file order, timed passes, loads).
    Runs of different question counts are refused: their activities are not one run's."""
    runs = [json.loads(Path(p).read_text(encoding="utf-8")) for p in paths]
    counts = {run["questions"] for run in runs}
    if len(counts) != 1:
        raise SystemExit(f"--combine: the runs hold {sorted(counts)} questions; give runs of one count")
    fan_out = [Activity(**a) for run in runs for a in run["fan_out"]]
    timing = [Activity(**a) for run in runs for a in run["timing"]]
    return counts.pop(), fan_out, timing, [run["load"] for run in runs]


def print_combined(paths: Sequence[Path], instances: Sequence[int]) -> None:
    questions, fan_out, timing, loads = combined(paths)
    print(f"\n{questions} questions, {len(paths)} runs combined ({', '.join(os.path.basename(str(p)) for p in paths)}; "
          f"load {', '.join(f'{a:.1f}->{b:.1f}' for a, b in loads)})")
    for line in activity_lines(fan_out, timing) + sample_lines(fan_out) + schedule_lines(fan_out, timing, instances):
        print(line)
