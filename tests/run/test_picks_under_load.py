"""The picks hold on a busy machine (issue 39): the library's own timed pass, on a simulated clock with a
slow drift and bursts of load (``busy_machine``), drawn hundreds of times.

The old rule, the baseline it is measured against (``busy_machine.old_picks``): each setup timed in its
own pass, one after another; two setups tied on time when the 99% order-statistic intervals of their
medians overlap; a tier anchored at the fastest; inside it, the most found@10, then found@1, then key.
"""
from __future__ import annotations

import json
import sys
from collections import Counter as Tally
from datetime import datetime, timezone
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent.parent / "bench"))
from busy_machine import ISSUE_SETUPS, QUESTIONS, BusyMachine, SimulatedTarget
from busy_machine import old_picks
from evaluation.run import plan_run, rank_setup, time_setups, with_times
from evaluation.run.copying import copied
from evaluation.scoring.picks import choose_picks, rank_setups
from evaluation.scoring.time_pairs import told_apart
from evaluation.run.plan import PlanContext

DRAWS = 200
MOMENT = datetime(2026, 12, 3, 9, 0, tzinfo=timezone.utc)


@pytest.fixture(autouse=True)
def same_time_state(monkeypatch):
    """Each entry's ``time_state`` hashes the installed software's versions, read from the packages'
    metadata each time: the same in every draw, and most of a draw's seconds. Written once here."""
    import evaluation.run.side_by_side as side_by_side

    monkeypatch.setattr(side_by_side, "time_state", lambda plan, key: f"state of {key}")


@pytest.fixture(scope="module")
def issue_run(tmp_path_factory):
    """The issue's collection: its plan (every question timed, at most) and each setup's batch, ranked once."""
    questions = [f"question {n} about the api" for n in range(QUESTIONS)]
    path = tmp_path_factory.mktemp("busy") / "golden.jsonl"
    path.write_text("".join(json.dumps({"id": f"q{n}", "question": q, "expected": [f"d{n}"]}) + "\n"
                            for n, q in enumerate(questions)), encoding="utf-8")
    target = SimulatedTarget(ISSUE_SETUPS, questions)
    plan = plan_run(target, path, context=PlanContext(run_id="busy", created_at=MOMENT))
    ranked = {s.key: rank_setup(target, plan, s.key) for s in plan.setups}
    return target, plan, ranked


def draw(issue_run, seed: int, *, side_by_side: bool) -> list[dict]:
    """One evaluation's entries on a busy machine: every setup timed side by side, or each in its own pass."""
    target, plan, ranked = issue_run
    rng = np.random.default_rng(seed)
    target.factors = {q: float(np.exp(rng.normal(0, 0.25))) for q in target.questions}
    keys = plan.setup_keys
    target.machine = BusyMachine(rng, run_ms=sum(base for base, _, _ in ISSUE_SETUPS.values()) * QUESTIONS * 1.5)
    clock = target.machine.clock
    if side_by_side:
        times = time_setups({"sim": target}, plan, keys, clock=clock)
    else:
        times = {key: time_setups({"sim": target}, plan, [key], clock=clock)[key] for key in keys}
    ids = [q.id for q in plan.questions]
    return [with_times(copied(ranked[key]), times[key], question_ids=ids) for key in keys]


def new_picks(entries: list[dict]) -> tuple[str, str, str]:
    return tuple(choose_picks(rank_setups(entries)).values())  # type: ignore[return-value]


def test_side_by_side_pairs_give_one_pick_triple_in_hundreds_of_busy_draws_where_the_old_rule_gives_several(issue_run):
    new = Tally(new_picks(draw(issue_run, seed, side_by_side=True)) for seed in range(DRAWS))
    old = Tally()
    for seed in range(DRAWS):  # until the old rule gives a second triple
        old[old_picks(draw(issue_run, seed, side_by_side=False))] += 1
        if len(old) > 1:
            break

    # hybrid_both finds the most (17, 17 at 1: 15); of the 17-of-17 setups bge-small is 2x faster than
    # the fused ones, its hybrid 0.6 ms slower (equally fast: found@1 13 to 12); within 8 points (one
    # question), MiniLM is 1.8x faster than bge-small and its hybrid equally fast with it (12 to 11)
    assert new == {("sim.hybrid.bge-small+minilm-l6", "sim.hybrid.bge-small", "sim.hybrid.minilm-l6"): DRAWS}
    assert len(old) > 1, old  # under load the intervals widen, the tiers take in slower setups, found@1 wins


def test_a_real_twofold_difference_is_told_apart_in_every_busy_draw(issue_run):
    for seed in range(DRAWS):
        by_key = {s["key"]: s for s in draw(issue_run, 1000 + seed, side_by_side=True)}
        anchor = by_key["sim.dense.bge-small"]
        fused = ["sim.dense.bge-small+minilm-l6", "sim.hybrid.bge-small+minilm-l6"]  # 2x slower, found as many
        others = [by_key[k] for k in ["sim.hybrid.bge-small", *fused]]  # what the balance pick compares
        verdicts = {v.key: v for v in told_apart(anchor, others, equally_fast_ms=5.0, alpha=0.05)}
        assert all(verdicts[k].apart for k in fused), (seed, verdicts)
        assert not verdicts["sim.hybrid.bge-small"].apart  # 0.6 ms slower: under the floor
