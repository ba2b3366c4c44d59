"""The cross-encoder's work in one evaluate, this tree against a baseline tree, interleaved in one run.

Each run is its own process: ``evaluate`` of the embedded engine over one index (the shipped sample's by
default, built once under the bench cache) on the golden file, with no cache file (a cold run: every
query vector and pair score computed in that run), the selected setups only (``--only``, default the
reranked ones, where the time goes). The process counts every cross-encoder call by what asked for it:
a setup's **warm-up** before the timed pass, a **timed** search, or a **batch** (the rest), with its
pairs and seconds. Runs alternate baseline, this tree, this tree, baseline, ... (``--rounds`` of each),
so load that comes and goes lands on both; the load average is printed beside each run.

Then the runs' numbers are compared: every setup's ranks, nDCG@10, results (ids and scores) and summary
(its times aside), and the report's cache counts, between every run and the first baseline run; any
difference is printed and makes the bench exit 1. Baseline: the tree at ``--baseline`` (a revision of
this repository, unpacked with ``git archive``; default ``main``).

    python3 bench/bench_rerank_work.py [--baseline REV] [--rounds 1] [--only '*rerank*'] [--questions N]
        [--index DIR --golden FILE]
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(1, str(ROOT))

STAGES = ("warm-up", "timed", "batch")
# What one run does, in the tree given first: counted cross-encoder calls around a real evaluate. It
# touches only names both trees have (CrossEncoder.score_pairs, EmbeddedTarget.search, and warm_up when
# the tree has one), so any two revisions since the engine's cache compare.
RUNNER = r'''
import json, sys, time
tree, index, golden, only, questions = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5])
sys.path.insert(0, tree)
from evaluation import evaluate
from evaluation.engine import models
from evaluation.engine.index import open_index
from evaluation.engine.target import EmbeddedTarget
from evaluation.golden import read_golden

work = {stage: {"pairs": 0, "calls": 0, "seconds": 0.0} for stage in ("warm-up", "timed", "batch")}
stage = ["batch"]
score_pairs = models.CrossEncoder.score_pairs

def counted(self, pairs, **options):
    started = time.perf_counter()
    try:
        return score_pairs(self, pairs, **options)
    finally:
        mine = work[stage[0]]
        mine["pairs"] += len(pairs); mine["calls"] += 1; mine["seconds"] += time.perf_counter() - started

models.CrossEncoder.score_pairs = counted
searched = set()
search = EmbeddedTarget.search
has_warm_up = hasattr(EmbeddedTarget, "warm_up")

def as_stage(name, run):
    stage[0] = name
    try:
        return run()
    finally:
        stage[0] = "batch"

def searching(self, setup, question, depth):
    first = setup.key not in searched
    searched.add(setup.key)
    name = "warm-up" if first and not has_warm_up else "timed"
    return as_stage(name, lambda: search(self, setup, question, depth))

EmbeddedTarget.search = searching
if has_warm_up:
    warm_up = EmbeddedTarget.warm_up
    EmbeddedTarget.warm_up = lambda self, *a: as_stage("warm-up", lambda: warm_up(self, *a))
target = EmbeddedTarget(open_index(index), cache=False)
asked = read_golden(golden).labelled
asked = asked[:questions] if questions else asked
started = time.perf_counter()
report = evaluate(target, asked, only=[p for p in only.split(",") if p])
seconds = time.perf_counter() - started
print(json.dumps({"seconds": seconds, "work": work, "report": report}))
'''
# Summary fields that are times, or follow from them (how many searches the timed pass made).
TIMES = ("timed", "median_ms", "p95_ms", "median_margin")


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def unpack(revision: str, into: Path) -> Path:
    """The tree of ``revision`` of this repository, unpacked under ``into``."""
    tree = into / revision.replace("/", "_")
    tree.mkdir(parents=True)
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", revision], check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(tree)], input=archive, check=True)
    return tree


def sample_index() -> Path:
    """The shipped sample indexed with the bundled models, under the bench cache (built once)."""
    from evaluation.engine.index import build_index

    folder = Path.home() / ".cache" / "retrieval-eval-bench" / "sample-index"
    build_index(ROOT / "samples" / "corpus.jsonl", folder, progress=True)
    return folder


def run_once(tree: Path, index: Path, golden: Path, only: str, questions: int) -> dict[str, Any]:
    before = load()
    done = subprocess.run([sys.executable, "-c", RUNNER, str(tree), str(index), str(golden), only, str(questions)],
                          check=True, capture_output=True, text=True, cwd=tree)
    found = json.loads(done.stdout.strip().splitlines()[-1])
    found["load"] = f"{before} -> {load()}"
    return found


def numbers(report: dict[str, Any]) -> dict[str, Any]:
    """What a report says that no clock decides: per setup its ranks, nDCG@10, results and summary
    without its times, and the cache counts."""
    found: dict[str, Any] = {"cache": report.get("cache")}
    for setup in report["setups"]:
        summary = {k: v for k, v in (setup.get("summary") or {}).items() if k not in TIMES}
        found[setup["key"]] = {"ranks": setup.get("ranks"), "ndcg_10": setup.get("ndcg_10"),
                               "results": setup.get("results"), "summary": summary, "error": setup.get("error")}
    return found


def differences(first: dict[str, Any], other: dict[str, Any]) -> list[str]:
    lines = []
    for key in sorted(set(first) | set(other)):
        a, b = first.get(key), other.get(key)
        if a == b:
            continue
        if not isinstance(a, dict) or not isinstance(b, dict):
            lines.append(f"{key}: {a} against {b}")
            continue
        for part in sorted(set(a) | set(b)):
            if a.get(part) != b.get(part):
                shown = json.dumps(a.get(part))[:120], json.dumps(b.get(part))[:120]
                lines.append(f"{key} {part}: {shown[0]} against {shown[1]}")
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--baseline", default="main", help="the revision to compare with (default main)")
    parser.add_argument("--rounds", type=int, default=1, help="runs of each tree (default 1)")
    parser.add_argument("--only", default="*rerank*", help="setups to run, comma-separated patterns "
                                                           "(default '*rerank*'; '' for every setup)")
    parser.add_argument("--questions", type=int, default=0, help="the golden file's first N questions (0: all)")
    parser.add_argument("--index", type=Path, help="an index folder (default: the sample's, built once)")
    parser.add_argument("--golden", type=Path, default=ROOT / "samples" / "golden.jsonl")
    args = parser.parse_args(argv)

    from _machine import describe_machine

    print(describe_machine())
    index = args.index or sample_index()
    with tempfile.TemporaryDirectory(prefix="rerank-work-") as scratch:
        trees = {"baseline": unpack(args.baseline, Path(scratch)), "this tree": ROOT}
        head = subprocess.run(["git", "-C", str(ROOT), "log", "-1", "--format=%h"], capture_output=True,
                              text=True).stdout.strip()
        print(f"baseline {args.baseline}; this tree {head} (with what is not committed); index {index}; "
              f"golden {args.golden}{f' (first {args.questions})' if args.questions else ''}; setups {args.only!r}")
        order = [name for r in range(args.rounds)
                 for name in (("baseline", "this tree") if r % 2 == 0 else ("this tree", "baseline"))]
        runs = []
        print(f"\n{'run':>3}  {'code':10} {'wall s':>7}  " + "  ".join(f"{s + ': pairs, calls, s':>26}" for s in STAGES)
              + f"  {'CE s':>6} {'pairs/s':>7}  load before -> after")
        for n, name in enumerate(order, start=1):
            found = run_once(trees[name], index, args.golden, args.only, args.questions)
            work = found["work"]
            pairs = sum(w["pairs"] for w in work.values())
            ce = sum(w["seconds"] for w in work.values())
            print(f"{n:>3}  {name:10} {found['seconds']:7.1f}  "
                  + "  ".join(f"{work[s]['pairs']:>12} {work[s]['calls']:>5} {work[s]['seconds']:7.1f}" for s in STAGES)
                  + f"  {ce:6.1f} {pairs / ce if ce else 0:7.2f}  {found['load']}", flush=True)
            runs.append((name, found))

    print("\nmedians (ratio = this tree / baseline; under 1 is less)")
    for measure, of in (("wall s", lambda f: f["seconds"]),
                        ("cross-encoder s", lambda f: sum(w["seconds"] for w in f["work"].values())),
                        ("cross-encoder pairs", lambda f: sum(w["pairs"] for w in f["work"].values())),
                        ("seconds a pair", lambda f: sum(w["seconds"] for w in f["work"].values())
                         / max(1, sum(w["pairs"] for w in f["work"].values())))):
        base = statistics.median(of(f) for name, f in runs if name == "baseline")
        mine = statistics.median(of(f) for name, f in runs if name == "this tree")
        print(f"  {measure:22} baseline {base:10.3f}  this tree {mine:10.3f}  ratio {mine / base if base else 0:.3f}")

    first = numbers(next(f for name, f in runs if name == "baseline")["report"])
    failed = 0
    for n, (name, found) in enumerate(runs, start=1):
        lines = differences(first, numbers(found["report"]))
        if lines:
            failed += 1
            print(f"\nrun {n} ({name}) differs from the first baseline run in {len(lines)} place(s):")
            for line in lines[:20]:
                print(f"  {line}")
    if not failed:
        print(f"\nnumbers: every run's ranks, nDCG@10, results (ids and scores), summaries (times aside) and "
              f"cache counts equal the first baseline run's ({len(runs)} runs)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
