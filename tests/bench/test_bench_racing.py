"""bench/bench_racing.py's arithmetic: a trial replayed on the exhaustive run's results is the race a real run
makes with that seed (the same setups stopped, the same searches), its cost weighted by each setup's
seconds a question, and "in the top tier" read from the exhaustive run's paired tests."""
from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent.parent / "bench"))
import bench_racing as bench

from evaluation import evaluate
from fakes import write_golden
from test_race import BEHIND, N, RERANKED, Costly, answers, rows


def golden_and_target(tmp_path):
    return write_golden(tmp_path, rows()), Costly("t", answers(BEHIND), held={f"d{i}" for i in range(N)})


def test_a_trial_replayed_on_the_exhaustive_results_is_the_race_a_real_run_makes_with_its_seed(tmp_path):
    golden, target = golden_and_target(tmp_path)
    exhaustive = evaluate(target, golden, exhaustive=True)
    for seed in (0, 3):
        raced = evaluate(target, golden, seed=seed)
        trial = bench.race_trial(bench.plan_for(target, golden, seed), exhaustive,
                                 dict.fromkeys(raced["race"]["searched"], 1.0))

        assert sorted(trial["stopped"]) == raced["race"]["stopped"] == [RERANKED]
        assert trial["searched"] == raced["race"]["searched"]
        assert trial["share"] == sum(trial["searched"].values()) / (4 * N) == trial["searches"]
        assert trial["picks"] == raced["picks"]


def test_the_cost_share_weighs_each_setup_s_searches_by_its_seconds_a_question(tmp_path):
    golden, target = golden_and_target(tmp_path)
    exhaustive = evaluate(target, golden, exhaustive=True)
    plan = bench.plan_for(target, golden, 0)
    # only the reranked setup costs anything: the share is the part of the questions it searched
    trial = bench.race_trial(plan, exhaustive, {RERANKED: 2.0})
    assert trial["share"] == trial["searched"][RERANKED] / N < 1


def test_a_pick_is_in_the_top_tier_when_it_is_the_top_or_the_paired_test_cannot_tell_it_from_the_top():
    exhaustive = {"picks": {"finds_the_most": "a"},
                  "setups": [{"key": "a", "versus_top": None}, {"key": "b", "versus_top": {"tied": True}},
                             {"key": "c", "versus_top": {"tied": False}}]}
    assert [bench.in_top_tier(exhaustive, key) for key in ("a", "b", "c")] == [True, True, False]


def test_each_setup_s_seconds_a_question_are_its_batches_seconds_over_their_questions_else_its_median_search():
    spent = {"x": [3.0, 6.0], "y": [0.0, 0.0]}
    assert bench.seconds_a_question(spent, ["x", "y", "z"]) == {"x": 0.5, "y": 0.0, "z": 0.0}
    assert bench.seconds_a_question(spent, ["x", "y"], {"x": 900.0, "y": 20.0}) == {"x": 0.5, "y": 0.02}
