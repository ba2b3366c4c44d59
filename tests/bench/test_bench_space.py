"""bench/bench_space.py's replay: the exhaustive run's values put back in question order, and a trial
replayed on them is the halving a real run makes with that seed (the same stops, the same pick)."""
from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent.parent / "bench"))
import bench_space as bench

from evaluation.builds.runner import scratch
from evaluation.builds.settings import BuildPlace
from evaluation.engine.corpus import read_corpus
from evaluation.golden import read_golden
from evaluation.space import plan_halving, run_halving, space_of
from evaluation.space.searching import SpaceSearcher

ROOT = Path(__file__).resolve().parent.parent.parent
AXES = {"sizes": [300, 600], "overlaps": [0], "models": ["hash"], "methods": ["keyword", "dense", "hybrid"],
        "depths": [10, 50], "rrf_k": [1, 60]}


def test_a_trial_replayed_on_the_exhaustive_values_is_the_halving_a_real_run_makes(tmp_path):
    space = space_of(AXES)
    corpus = read_corpus(ROOT / "samples" / "corpus.jsonl")
    questions = list(read_golden(ROOT / "samples" / "golden.jsonl").labelled)
    exhaustive, _, _ = bench.live(space, corpus, questions, seed=5, exhaustive=True, alpha=0.05,
                                  cache=tmp_path / "v.sqlite")
    columns = bench.by_question(exhaustive)
    keys = [s.key for s in space.setups()]
    with scratch(BuildPlace(cache=tmp_path / "v.sqlite")) as where:
        searcher = SpaceSearcher(space.setups(), corpus, questions, where)
        assert searcher(keys[:3], [0, 7]) == {key: [columns[key][0], columns[key][7]] for key in keys[:3]}
        for seed in (0, 2):
            real = run_halving(plan_halving(keys, len(questions), seed=seed), searcher)
            replayed = bench.trial(keys, columns, seed, 0.05)
            assert replayed.rounds == real.rounds and replayed.pick() == real.pick()


def test_the_baseline_is_the_rule_before_one_test_per_setup():
    """``bonferroni_trial`` gives what 2983c15's ``run_halving`` (Bonferroni over the space, each setup's own
    pair process against the round's leader) gave on these columns, seeds 0-4 (its cost, pick and stops,
    taken from that commit); and on the same values, one test per setup costs no more in any order."""
    import random

    rng = random.Random(11)
    n, keys = 120, [f"s{i}" for i in range(60)]
    ease = [rng.random() for _ in range(n)]
    columns = {k: [1.0 if (e + rng.gauss(0, 0.15)) < 0.2 + 0.6 * rng.random() ** 0.3 else 0.0 for e in ease]
               for k in keys}
    before = [bench.bonferroni_trial(keys, columns, seed, 0.05) for seed in range(5)]
    assert [(round(b["share"], 6), b["pick"], b["stopped"]) for b in before] == [
        (0.985556, "s6", 2), (0.992778, "s6", 1), (1.0, "s6", 0), (1.0, "s6", 0), (1.0, "s6", 0)]
    for seed, b in enumerate(before):
        now = bench.trial(keys, columns, seed, 0.05)
        assert sum(len(v) for v in now.values.values()) / (len(keys) * n) <= b["share"]
        assert now.plan.budgets[0] < b["budgets"][0]
