"""A space of 344 setups searched by successive halving against ``--exhaustive``, on the collections in
bench/ (bench_shapes' and the shipped sample, built as bench_racing builds them, in a folder of this
bench's own).

The space (``SPACE``): techniques fixed and sentence x sizes 400 and 800 characters x overlaps 0 and 80
(8 chunkings) x models bge-small and minilm-l6 x methods keyword, dense and hybrid x hybrid depths 10,
20, 30, 50 x RRF k 1, 10, 30, 60, 100: per chunking 1 keyword + 2 x (1 dense + 20 hybrid) = 43 setups,
344 in all, over 16 builds (one embedding per chunking x model). No cross-encoder: on 2 cores its
seconds a question times 16 builds would make the exhaustive run take hours.

Per collection, in one process, the load printed beside every time:

1. The exhaustive run: every setup on every question (``space.halving`` with one round), its builds'
   vectors kept in this bench's cache file (``--cache``): its wall time (cold: the embedding included
   the first time), each setup's found@10 per question, and the exhaustive best and top tier
   (``halving.top_tier``: the exact sign test against the best, Holm over the other 343).
2. Successive halving for real (seed 0) and the exhaustive run again, both with the vectors cached (so
   both pay for cutting, BM25, loading vectors and searching, not for embedding): the wall-time ratio.
3. Ten seeded orders (``--trials``): successive halving replayed on the exhaustive per-question values
   (the engine gives a question the same results whatever the order, as bench_racing does), each trial
   the run that order would have made: its cost (setup x question searches over 344 x questions), its
   pick, whether the pick is in the exhaustive run's top tier, whether it is the exhaustive best. The
   same ten orders replayed by the named baseline, the rule before 87e6701 (``bonferroni_trial``: each
   running setup's own paired test against the round's leader, Bonferroni over every setup of the space),
   on the same values: the cost of both rules in the same run.

The exhaustive per-question values are kept beside the cache (``exhaustive.json``: keys and found@10 in
question order; scores and ids only, no text) for a later look at them.

    python bench/bench_space.py [--only NAME ...] [--questions 80] [--trials 10] [--alpha 0.05]
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from _machine import load_averages
from _trials import collection_arguments, each_collection, median_range
from bench_shapes import CACHE as SHAPES_CACHE

OWN = SHAPES_CACHE.parent / "space"
SPACE = {"techniques": ["fixed", "sentence"], "sizes": [400, 800], "overlaps": [0, 80],
         "models": ["bge-small", "minilm-l6"], "methods": ["keyword", "dense", "hybrid"],
         "depths": [10, 20, 30, 50], "rrf_k": [1, 10, 30, 60, 100]}


def live(space: Any, corpus: Any, questions: list, *, seed: int, exhaustive: bool, alpha: float,
         cache: Path) -> tuple[Any, float, int]:
    """One real run (what ``search_space`` does, keeping the state): (its halving state, wall seconds,
    engine searches)."""
    from evaluation.builds.runner import scratch
    from evaluation.builds.settings import BuildPlace
    from evaluation.space import plan_halving, run_halving
    from evaluation.space.searching import SpaceSearcher

    setups = space.setups()
    plan = plan_halving([s.key for s in setups], len(questions), seed=seed, alpha=alpha, exhaustive=exhaustive)
    started = time.perf_counter()
    with scratch(BuildPlace(cache=cache)) as where:
        searcher = SpaceSearcher(setups, corpus, questions, where)
        state = run_halving(plan, searcher)
    return state, time.perf_counter() - started, searcher.searches


def by_question(state: Any) -> dict[str, list[float]]:
    """An exhaustive state's values put back in question order (they are kept in the run's order)."""
    order = state.plan.order
    columns = {}
    for key, values in state.values.items():
        row = [0.0] * len(order)
        for position, index in enumerate(order):
            row[index] = values[position]
        columns[key] = row
    return columns


def trial(keys: list[str], columns: dict[str, list[float]], seed: int, alpha: float) -> Any:
    from evaluation.space import plan_halving, run_halving

    n = len(next(iter(columns.values())))
    return run_halving(plan_halving(keys, n, seed=seed, alpha=alpha),
                       lambda asked, indices: {key: [columns[key][i] for i in indices] for key in asked})


def bonferroni_trial(keys: list[str], columns: dict[str, list[float]], seed: int, alpha: float) -> dict[str, Any]:
    """The baseline: successive halving as it was before 87e6701, replayed on ``columns``. Budgets doubling
    from the first look at which capital ``len(keys) / alpha`` can be reached; after each round but the
    last, each running setup's own pair process against the round's leader (``racing.compare``, family
    every setup). Gives the share of setup x question searches, the pick and how many stopped."""
    from evaluation.scoring.racing import RaceRule, compare, earliest_stop, seeded_shuffle

    n = len(next(iter(columns.values())))
    rule = RaceRule(population=n, margin=0, alpha=alpha, family=len(keys))
    first = earliest_stop(population=n, margin=0, alpha=alpha, family=rule.family)
    budgets = []
    while first is not None and first < n:
        budgets.append(first)
        first *= 2
    budgets.append(n)
    order = seeded_shuffle(range(n), seed)
    drawn = {key: [columns[key][i] for i in order] for key in keys}
    running, ran = list(keys), {key: n for key in keys}
    for budget in budgets[:-1]:
        totals = {key: sum(drawn[key][:budget]) for key in running}
        leader = min(running, key=lambda key: (-totals[key], keys.index(key)))
        for key in list(running):
            if key != leader and compare(key, leader, drawn[key][:budget], drawn[leader][:budget], rule,
                                         bounds=False).stops:
                running.remove(key)
                ran[key] = budget
    pick = min(running, key=lambda key: (-sum(drawn[key]), keys.index(key)))
    return {"share": sum(ran.values()) / (len(keys) * n), "pick": pick, "stopped": len(keys) - len(running),
            "budgets": tuple(budgets)}


def measure(name: str, corpus_path: Path, golden_path: Path, args: argparse.Namespace) -> dict[str, Any]:
    from evaluation.engine.corpus import read_corpus
    from evaluation.golden import read_golden
    from evaluation.space import space_of, top_tier

    space = space_of(SPACE, source="bench_space.SPACE")
    corpus, questions = read_corpus(corpus_path), list(read_golden(golden_path).labelled)
    keys = [s.key for s in space.setups()]
    cache = OWN / name / "vectors.sqlite"
    cache.parent.mkdir(parents=True, exist_ok=True)
    print(f"\n## {name}\n\n{len(corpus)} documents, {len(questions)} questions; {space.describe()}", flush=True)
    before = load_averages()
    exhaustive, cold, searches = live(space, corpus, questions, seed=0, exhaustive=True, alpha=args.alpha, cache=cache)
    print(f"exhaustive, first: {cold:.0f} s, {searches:,} engine searches (load {before} -> {load_averages()})",
          flush=True)
    columns = by_question(exhaustive)
    (cache.parent / "exhaustive.json").write_text(json.dumps({"keys": keys, "found": columns}), encoding="utf-8")
    best = exhaustive.pick()
    tier = top_tier(columns, best, alpha=args.alpha)
    walls: dict[str, float] = {}
    for kind in ("halving", "exhaustive") if args.wall else ():
        before = load_averages()
        _, walls[kind], searches = live(space, corpus, questions, seed=0, exhaustive=kind == "exhaustive",
                                        alpha=args.alpha, cache=cache)
        print(f"{kind}, vectors cached: {walls[kind]:.1f} s, {searches:,} engine searches "
              f"(load {before} -> {load_averages()})", flush=True)
    trials = []
    for seed in range(args.trials):
        state = trial(keys, columns, seed, args.alpha)
        searched = sum(len(v) for v in state.values.values())
        before = bonferroni_trial(keys, columns, seed, args.alpha)
        trials.append({"seed": seed, "pick": state.pick(), "share": searched / (len(keys) * len(questions)),
                       "stopped": len(state.stops), "in_tier": state.pick() in tier, "best": state.pick() == best,
                       "budgets": state.plan.budgets,
                       "before": {**before, "in_tier": before["pick"] in tier, "best": before["pick"] == best}})
    return {"name": name, "questions": len(questions), "setups": len(keys), "builds": len(space.builds()),
            "best": best, "best_found": int(sum(columns[best])), "tier": len(tier), "cold": cold, "walls": walls,
            "trials": trials}


def print_collection(found: dict[str, Any]) -> None:
    rounds = ", ".join(map(str, found["trials"][0]["budgets"]))
    before = ", ".join(map(str, found["trials"][0]["before"]["budgets"]))
    print(f"\nexhaustive best {found['best']} (found@10 {found['best_found']} of {found['questions']}); its top "
          f"tier {found['tier']} of {found['setups']} setups; rounds at {rounds} (Bonferroni before: {before})")
    print("\n| seed | stopped | cost (setup x question) | pick | in top tier | the exhaustive best "
          "| Bonferroni before: stopped | cost | pick in top tier |")
    print("|---|---|---|---|---|---|---|---|---|")
    for t in found["trials"]:
        b = t["before"]
        print(f"| {t['seed']} | {t['stopped']} | {t['share']:.3f} | {t['pick']} | {'yes' if t['in_tier'] else 'NO'} "
              f"| {'yes' if t['best'] else 'no'} | {b['stopped']} | {b['share']:.3f} "
              f"| {'yes' if b['in_tier'] else 'NO'} |")


def _ratio(trials: list[dict[str, Any]]) -> str:
    """The median over the trials of each order's cost now over its cost under the baseline."""
    ratios = sorted(t["share"] / t["before"]["share"] for t in trials)
    return f"{ratios[len(ratios) // 2]:.3f}" if ratios else "-"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    collection_arguments(parser)
    parser.add_argument("--alpha", type=float, default=0.05,
                        help="the chance the exhaustive best is stopped, at most (default 0.05)")
    parser.add_argument("--no-wall", dest="wall", action="store_false", help="no timed halving and exhaustive runs")
    args = parser.parse_args(argv)
    summary = each_collection(args, OWN, lambda name, corpus, golden, n: measure(name, corpus, golden, args),
                              print_collection)
    print("\n## Summary\n")
    print("| collection | questions | setups (builds) | rounds at | pick in top tier | pick the exhaustive best "
          "| cost, median (range) | Bonferroni before: cost, median (range) | cost ratio, now / before "
          "| wall halving / exhaustive (vectors cached) | exhaustive, first (s) |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for found in summary:
        trials = found["trials"]
        walls = found["walls"]
        wall = (f"{walls['halving']:.1f} / {walls['exhaustive']:.1f} s = {walls['halving'] / walls['exhaustive']:.2f}"
                if walls else "not run")
        print(f"| {found['name']} | {found['questions']} | {found['setups']} ({found['builds']}) "
              f"| {', '.join(map(str, trials[0]['budgets']))} | {sum(t['in_tier'] for t in trials)} of {len(trials)} "
              f"| {sum(t['best'] for t in trials)} of {len(trials)} "
              f"| {median_range(t['share'] for t in trials)} | {median_range(t['before']['share'] for t in trials)} "
              f"| {_ratio(trials)} | {wall} | {found['cold']:.0f} |")
    print(f"\nload {load_averages()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
