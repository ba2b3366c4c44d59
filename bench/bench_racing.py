"""Racing against ``--exhaustive``: what the race costs, and whether it names the exhaustive run's picks, on
every collection in bench/ (bench_shapes' five: short sections without headings, long pages, API
reference, mixed, the Python FAQ) and the shipped sample, each indexed with the engine's defaults (both
bundled models, the default chunking) and searched by every embedded setup, the three cross-encoder
reranked ones included: eleven setups, of which the reranked three race (``run.race``).

Per collection, in one process, the load printed beside every time:

1. The exhaustive run: ``evaluate(..., exhaustive=True, seed=0)``, every setup on every question, on a
   fresh target (no cache file: the cross-encoder scores every pair it is asked). Its wall time, and each
   setup's measured seconds per question: its batch's seconds over the questions in it (the first
   reranked setup pays for the pairs it scores, the next ones share them, as in any run), or for a
   setup whose timed pass searched every question (a golden file of 50 or fewer), its median timed search.
2. The race for real: ``evaluate(..., seed=0)`` on another fresh target. Its wall time against the
   exhaustive run's (the two alternate which goes first from one collection to the next), and which
   setups it stopped, checked against 3.
3. Ten seeded orders (``--trials``; the seed is the question order, ``run.race.race_order``): the race's
   decisions replayed by the library's own ``race.replay`` on the exhaustive run's per-question results
   (the engine gives a question the same results whatever the order), so each trial is the race that
   order would have run. Its cost: the searches (setup x question) each setup made, weighted by that
   setup's measured seconds per question, over the exhaustive run's; its picks: the exhaustive run's
   entries with the stopped setups as the race stops them (``race.stopped_entry``), assembled
   (``run.assemble``), so the same times decide both.

"In the exhaustive run's top tier" for a pick: it is the exhaustive run's ``finds_the_most``, or the paired
test the report makes against it (``versus_top``: exact sign test on found@10, Holm across the setups)
cannot tell the pick from it. The race's picks are also compared with the exhaustive run's, all three.

    python bench/bench_racing.py [--only NAME ...] [--questions 80] [--trials 10] [--no-wall]
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any, Callable, Mapping

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from _machine import load_averages
from _trials import collection_arguments, each_collection, median_range
from bench_shapes import CACHE as SHAPES_CACHE
from evaluation.run.plan import PlanContext
from evaluation.run.planned import Plan

OWN = SHAPES_CACHE.parent / "racing"  # this bench's collections and indexes (bench_shapes' are rewritten by others)
PICKS = ("finds_the_most", "best_for_balance", "best_for_time")


def timed_batches(target: Any) -> dict[str, list[float]]:
    """Wrap ``target.search_batch`` to add up, per setup key, [seconds, questions] of its batches."""
    spent: dict[str, list[float]] = {}
    original = target.search_batch

    def search_batch(setup: Any, questions: Any, depth: int, progress: Callable[[int], None] | None = None) -> Any:
        started = time.perf_counter()
        found = original(setup, questions, depth, progress=progress)
        mine = spent.setdefault(setup.key, [0.0, 0.0])
        mine[0] += time.perf_counter() - started
        mine[1] += len(questions)
        return found

    target.search_batch = search_batch
    return spent


def seconds_a_question(spent: Mapping[str, list[float]], keys: list[str],
                       timed: Mapping[str, float | None] | None = None) -> dict[str, float]:
    """Each setup's measured seconds per question of its batches; for a setup that batched nothing (its
    timed pass searched every question), its median timed search (``timed``: ms), else 0."""
    found = {}
    for key in keys:
        if key in spent and spent[key][1]:
            found[key] = spent[key][0] / spent[key][1]
        else:
            found[key] = ((timed or {}).get(key) or 0.0) / 1000
    return found


def in_top_tier(exhaustive: Mapping[str, Any], key: str | None) -> bool:
    """Whether ``key`` is the exhaustive run's top or a setup its paired test against the top cannot tell
    from it (see the module docstring)."""
    if key is None:
        return exhaustive["picks"]["finds_the_most"] is None
    if key == exhaustive["picks"]["finds_the_most"]:
        return True
    entry = next((s for s in exhaustive["setups"] if s["key"] == key), None)
    versus = (entry or {}).get("versus_top")
    return bool(versus) and bool(versus.get("tied"))


def race_trial(plan: Plan, exhaustive: Mapping[str, Any], costs: Mapping[str, float]) -> dict[str, Any]:
    """The race ``plan`` (its seed's order) would run, replayed on the exhaustive run's results (see the module
    docstring): the setups stopped (key -> look), each setup's searches, the weighted cost share, the picks."""
    from evaluation.run import assemble_report
    from evaluation.run.judged import timed_ids
    from evaluation.run.race import raced_through, replay, stopped_entry

    total = len(plan.questions)
    entries = [json.loads(json.dumps(s)) for s in exhaustive["setups"]]
    ranks = {s["key"]: s["ranks"] for s in entries if s.get("error") is None}
    searched = {s["key"]: total for s in entries}
    stopped: dict[str, int] = {}
    race = plan.race
    if race is not None:
        state = replay(plan, ranks, through=len(race.looks),
                       failed={s["key"] for s in entries if s.get("error") is not None})
        for key, (look, comparison) in state.stopped.items():
            stopped[key] = look
            searched[key] = len(timed_ids(plan, key)) + len(raced_through(plan, key, look))
            entries = [stopped_entry(plan, s, look, comparison) if s["key"] == key else s for s in entries]
    report = assemble_report(plan, entries)
    spent = sum(costs.get(key, 0.0) * n for key, n in searched.items())
    every = sum(costs.get(key, 0.0) * total for key in searched)
    return {"stopped": stopped, "searched": searched, "share": spent / every if every else 1.0,
            "searches": sum(searched.values()) / (total * len(searched)), "picks": report["picks"]}


def plan_for(target: Any, golden: Path, seed: int) -> Plan:
    from evaluation.run import plan_run
    from evaluation.run.race import plan_race

    plan = plan_run(target, golden, seed=seed, context=PlanContext(warn=lambda text: None))
    return plan.with_race(plan_race(plan))


def measure(name: str, corpus: Path, golden: Path, args: argparse.Namespace, first: str) -> dict[str, Any]:
    import warnings

    from evaluation import evaluate
    from evaluation.engine.index import IndexSettings, build_index, open_index
    from evaluation.engine.target import EmbeddedTarget

    folder = OWN / name / "index"
    started = time.perf_counter()
    manifest = build_index(corpus, folder, IndexSettings())
    built = time.perf_counter() - started
    index = open_index(folder)
    print(f"\n## {name}\n\n{manifest['corpus']['documents']} documents, {manifest['chunks']} chunks, models "
          f"{', '.join(index.models)} (index {'reused' if manifest.get('reused') else f'built in {built:.0f} s'}; "
          f"load {load_averages()})", flush=True)

    def fresh() -> Any:
        return EmbeddedTarget(index, cross_encoder=True, cache=False)

    runs: dict[str, Any] = {}
    for kind in ((first, "race" if first == "exhaustive" else "exhaustive") if not args.no_wall else ("exhaustive",)):
        target = fresh()
        spent = timed_batches(target)
        before = load_averages()
        started = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            report = evaluate(target, golden, seed=0, exhaustive=(kind == "exhaustive"), warn=lambda text: None)
        runs[kind] = {"report": report, "wall": time.perf_counter() - started, "spent": spent,
                      "load": f"{before} -> {load_averages()}"}
        print(f"{kind}: {runs[kind]['wall']:.0f} s (load {runs[kind]['load']})", flush=True)
    exhaustive = runs["exhaustive"]["report"]
    keys = [s["key"] for s in exhaustive["setups"]]
    costs = seconds_a_question(runs["exhaustive"]["spent"], keys,
                               {s["key"]: (s.get("summary") or {}).get("median_ms") for s in exhaustive["setups"]})
    target = fresh()
    trials = [race_trial(plan_for(target, golden, seed), exhaustive, costs) for seed in range(args.trials)]
    race = plan_for(target, golden, 0).race
    return {"name": name, "questions": len(exhaustive["question_ids"]), "exhaustive": exhaustive, "costs": costs,
            "runs": runs, "trials": trials, "raced": list(race.raced) if race is not None else []}


def print_collection(found: Mapping[str, Any]) -> None:
    exhaustive = found["exhaustive"]
    top = exhaustive["picks"]["finds_the_most"]
    print(f"\n{found['questions']} questions; exhaustive picks: "
          + ", ".join(f"{p} {exhaustive['picks'][p]}" for p in PICKS))
    print("\n| setup | found@10 | vs top (q) | tied with top | s / question | raced |")
    print("|---|---|---|---|---|---|")
    for s in sorted(exhaustive["setups"], key=lambda s: (s.get("rank") or 99, s["key"])):
        summary = s.get("summary") or {}
        versus = s.get("versus_top") or {}
        found10 = (versus.get("found@10") or {})
        gap = "" if s["key"] == top else f"{found10.get('better', 0) - found10.get('worse', 0):+d}"
        print(f"| {s['key']} | {summary.get('counts', {}).get('10')} | {gap} | "
              f"{'top' if s['key'] == top else ('yes' if versus.get('tied') else 'no')} | "
              f"{found['costs'][s['key']]:.4g} | {'yes' if s['key'] in found['raced'] else ''} |")
    print("\n| seed | stopped (look) | searches | weighted cost | finds_the_most | in top tier "
          "| all three picks the same |")
    print("|---|---|---|---|---|---|---|")
    for seed, trial in enumerate(found["trials"]):
        stopped = ", ".join(f"{k} ({look})" for k, look in trial["stopped"].items()) or "none"
        same = all(trial["picks"][p] == exhaustive["picks"][p] for p in PICKS)
        pick = trial["picks"]["finds_the_most"]
        print(f"| {seed} | {stopped} | {trial['searches']:.3f} | {trial['share']:.3f} | {pick} | "
              f"{'yes' if in_top_tier(exhaustive, pick) else 'NO'} | {'yes' if same else 'no'} |")
    runs = found["runs"]
    if "race" in runs:
        raced = runs["race"]["report"]
        real = (raced.get("race") or {}).get("stopped", [])
        replayed = sorted(found["trials"][0]["stopped"])
        ratio = runs["race"]["wall"] / runs["exhaustive"]["wall"]
        picks = ("the same" if raced["picks"] == runs["exhaustive"]["report"]["picks"]
                 else "differ (times: another timed pass)")
        print(f"\nthe race for real (seed 0): stopped {real or 'nothing'} (replayed: {replayed or 'nothing'}: "
              f"{'the same' if sorted(real) == replayed else 'DIFFERENT'}); wall {runs['race']['wall']:.0f} s against "
              f"{runs['exhaustive']['wall']:.0f} s exhaustive: {ratio:.2f}x "
              f"(loads {runs['race']['load']}; {runs['exhaustive']['load']}); picks {picks}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    collection_arguments(parser)
    parser.add_argument("--no-wall", action="store_true", help="no real race run: the trials and the costs only")
    args = parser.parse_args(argv)
    summary = each_collection(args, OWN, lambda name, corpus, golden, n: measure(
        name, corpus, golden, args, "exhaustive" if n % 2 == 0 else "race"), print_collection)
    print("\n## Summary\n")
    print("| collection | questions | setups (raced) | stopped in trials | finds_the_most in top tier "
          "| all picks the same | weighted cost, median (range) | wall race / exhaustive |")
    print("|---|---|---|---|---|---|---|---|")
    for found in summary:
        trials = found["trials"]
        top = sum(in_top_tier(found["exhaustive"], t["picks"]["finds_the_most"]) for t in trials)
        same = sum(all(t["picks"][p] == found["exhaustive"]["picks"][p] for p in PICKS) for t in trials)
        stopped = sum(bool(t["stopped"]) for t in trials)
        runs = found["runs"]
        wall = (f"{runs['race']['wall'] / runs['exhaustive']['wall']:.2f}" if "race" in runs else "not run")
        setups = f"{len(found['exhaustive']['setups'])} ({len(found['raced'])})"
        print(f"| {found['name']} | {found['questions']} | {setups} "
              f"| {stopped} of {len(trials)} | {top} of {len(trials)} | {same} of {len(trials)} | "
              f"{median_range(t['share'] for t in trials)} | {wall} |")
    print(f"\nload {load_averages()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
