"""Picks on a busy machine (issue 39): the same evaluation run four times while two busy loops keep the
cores busy, on collections of different shapes, with the timed pass side by side (after) and with the
baseline named ``one-pass-each`` (before: each setup timed in its own pass, one after another, tied on
time when the 99% intervals of their medians overlap, found@1 deciding inside a tier;
``busy_machine.old_picks``).

Collections: ``sample`` (the shipped sample: 36 questions over short how-to pages) and
``api-reference`` (``bench_shapes``' scikit-learn API sections: the issue's shape, 184 sections and 17
questions by default), each indexed with the default models (bge-small, MiniLM-L6) under the bench
cache. Setups: every embedded setup but the reranked ones (``evaluate --skip '*rerank*'``, as in the
issue). Each run: the ranks are searched once per collection (they do not move with load); then, with
the busy loops running, the timed pass side by side and the one-pass-each passes, in alternating order
from run to run so a load that drifts favours neither. Printed per run: the load, each pass's wall
time, and the pick triple of each rule; then the table of every collection's triples, and the timed
pass's cost after over before (the ratio the issue bounds: it must not grow by more than a small share).

    python bench/bench_busy_picks.py [--runs 4] [--busy 2] [--only sample api-reference]
"""
from __future__ import annotations

import argparse
import contextlib
import os
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Iterator

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from _machine import describe_machine
from busy_machine import old_picks
from evaluation.run.plan import PlanContext

ROOT = Path(__file__).resolve().parent.parent
COLLECTIONS = ("sample", "api-reference")
BASELINE = "one-pass-each"


def load() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


@contextlib.contextmanager
def busy_loops(count: int) -> Iterator[list[int]]:
    """``count`` processes spinning on a core each, ended (by their own pids) when the block ends."""
    loops = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(count)]
    try:
        time.sleep(0.5)  # let the scheduler spread them
        yield [p.pid for p in loops]
    finally:
        for loop in loops:
            loop.terminate()
        for loop in loops:
            loop.wait()


def collection_files(name: str, questions: int, documents: int) -> tuple[Path, Path]:
    """(corpus, golden) of one collection (see the module docstring)."""
    if name == "sample":
        return ROOT / "samples" / "corpus.jsonl", ROOT / "samples" / "golden.jsonl"
    import bench_shapes

    return bench_shapes.build_collections([name], questions, documents)[name]


def evaluate_busy(name: str, corpus: Path, golden: Path, runs: int, busy: int) -> list[dict]:
    """Every run's pick triples and timed-pass seconds, before and after, on one collection."""
    from evaluation.engine.index import build_index, open_index
    from evaluation.engine.target import EmbeddedTarget
    from evaluation.run import plan_run, rank_setup, time_setups, with_times
    from evaluation.run.copying import copied
    from evaluation.scoring.picks import choose_picks, rank_setups

    folder = ROOT / ".index" / "test-sample" if name == "sample" else corpus.parent / "index"  # the tests' sample index
    started = time.perf_counter()
    build_index(corpus, folder)
    target = EmbeddedTarget(open_index(folder), cross_encoder=False, cache=False)
    plan = plan_run(target, golden,
                    context=PlanContext(run_id=f"busy-{name}"))  # no cross-encoder: the --skip "*rerank*" setups
    keys = plan.setup_keys
    ids = [q.id for q in plan.questions]
    ranked = {key: rank_setup(target, plan, key) for key in keys}  # loads every model: no timed pass pays it
    print(f"{name}: {len(plan.questions)} questions, {len(plan.timed_question_ids)} sampled, {len(keys)} setups "
          f"(index and ranks in {time.perf_counter() - started:.0f} s)", flush=True)
    found = []
    for run in range(runs):
        with busy_loops(busy):
            before_load = load()
            passes = {}
            for way in (("after", "before") if run % 2 == 0 else ("before", "after")):
                began = time.perf_counter()
                if way == "after":
                    times = time_setups({target.name: target}, plan, keys)
                else:
                    times = {key: time_setups({target.name: target}, plan, [key])[key] for key in keys}
                passes[way] = (times, time.perf_counter() - began)
            after_load = load()
        entries = {way: [with_times(copied(ranked[key]), times[key], question_ids=ids) for key in keys]
                   for way, (times, _) in passes.items()}
        row = {"collection": name, "run": run + 1, "load": f"{before_load} -> {after_load}",
               "after": tuple(choose_picks(rank_setups(entries["after"])).values()),
               "before": old_picks(entries["before"]),
               "seconds": {way: seconds for way, (_, seconds) in passes.items()},
               "medians": {way: {s["key"]: s["summary"]["median_ms"] for s in entries[way]} for way in entries}}
        found.append(row)
        print(f"  run {row['run']} (load {row['load']}): timed pass {row['seconds']['after']:.1f} s side by side, "
              f"{row['seconds']['before']:.1f} s {BASELINE}", flush=True)
        print(f"    after : {' | '.join(row['after'])}", flush=True)
        print(f"    before: {' | '.join(row['before'])}", flush=True)
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=4, help="evaluations per collection (default 4)")
    parser.add_argument("--busy", type=int, default=2, help="busy loops kept running meanwhile (default 2)")
    parser.add_argument("--only", nargs="*", choices=COLLECTIONS, help="these collections only")
    parser.add_argument("--questions", type=int, default=17, help="api-reference's questions (default 17)")
    parser.add_argument("--documents", type=int, default=184, help="api-reference's documents (default 184)")
    args = parser.parse_args(argv)
    print(describe_machine(), flush=True)
    print(f"load before: {load()} (pid {os.getpid()}, {args.busy} busy loops during each run)", flush=True)
    rows = []
    for name in args.only or COLLECTIONS:
        corpus, golden = collection_files(name, args.questions, args.documents)
        rows += evaluate_busy(name, corpus, golden, args.runs, args.busy)
    print("\n| collection | run | load (1, 5, 15 min) | picks after (side by side, paired) | picks before "
          f"({BASELINE}) |\n|---|---|---|---|---|")
    for row in rows:
        print(f"| {row['collection']} | {row['run']} | {row['load']} | {' / '.join(row['after'])} | "
              f"{' / '.join(row['before'])} |")
    print("\n| collection | distinct triples after | distinct triples before | timed pass after / before |"
          "\n|---|---|---|---|")
    for name in dict.fromkeys(r["collection"] for r in rows):
        mine = [r for r in rows if r["collection"] == name]
        after = Counter(r["after"] for r in mine)
        before = Counter(r["before"] for r in mine)
        cost = sum(r["seconds"]["after"] for r in mine) / sum(r["seconds"]["before"] for r in mine)
        print(f"| {name} | {len(after)} of {len(mine)} | {len(before)} of {len(mine)} | {cost:.2f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
