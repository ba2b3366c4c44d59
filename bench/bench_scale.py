"""Scale curve: index and evaluate wall time and peak memory at about 1k, 10k and 100k chunks, 100 and 1,000 questions.

The corpus and questions come from ``bench/scale_corpus.py`` (sections of eleven Debian documentation
packages; a question is a section's unique heading, its section the expected document). For each
size, each stage runs as its own process, as ``bench_vectrixdb.py`` does (wall time, peak RSS from
``wait4``, load average before and after): ``python -m evaluation index`` (one embedding model,
``--models``, default minilm-l6, the cheaper one), then ``evaluate --json --no-cache`` on every setup
but the reranked ones for each question count. The reranked setups are linear in questions at the
cross-encoder's pair rate: at the first size, ``evaluate --only '*hybrid_reranked*' --timed 0`` runs
on a few question counts (``--rerank-questions``), and the marginal pairs per second between counts
give the rate (constant between two pairs of counts when the cost is linear) and the projection to
1,000 questions. The table ends with the ratio to issue 15's goal: 100k chunks x 1,000 questions in
under 10 minutes and 4 GB.

    python bench/bench_scale.py [--sizes 1k,10k,100k] [--questions 100,1000] [--models minilm-l6]
        [--rerank-questions 10,20,40] [--out DIR] [--quick]
"""
from __future__ import annotations

import argparse
import json
import re
import shutil
import sys
from itertools import pairwise
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import python_docs
import scale_corpus
from _machine import describe_machine
from bench_vectrixdb import Stage, load, run_stage

GOAL_SECONDS = 600
GOAL_MIB = 4096
from evaluation.engine.target import RERANK_CANDIDATES  # noqa: E402  evaluate's default: pairs per question per reranked setup
QUICK = {"sizes": [150], "questions": [5, 10], "rerank": [1, 2]}
DEFAULT_OUT = scale_corpus.CACHE / "scale"


def size(text: str) -> int:
    """``1k`` -> 1000, ``100k`` -> 100000, ``2500`` -> 2500."""
    match = re.fullmatch(r"\s*(\d+)\s*([kK]?)\s*", text)
    if not match or int(match.group(1)) == 0:
        raise argparse.ArgumentTypeError(f"{text!r} is not a size: write 1000, 1k or 100k")
    return int(match.group(1)) * (1000 if match.group(2) else 1)


def sizes(text: str) -> list[int]:
    return [size(part) for part in text.split(",") if part.strip()]


def _evaluate(index: Path, golden: Path, *extra: str) -> list[str]:
    return [sys.executable, "-m", "evaluation", "evaluate", "--index", str(index), "--golden", str(golden),
            "--json", "--quiet", "--no-cache", *extra]


def _golden(folder: Path, golden: list[dict], count: int) -> Path:
    path = folder / f"golden-{count}.jsonl"
    python_docs.write_jsonl(path, golden[:count])
    return path


def found_at_10(report: dict) -> dict[str, float | None]:
    return {s["key"]: ((s.get("summary") or {}).get("found") or {}).get("10") for s in report["setups"]}


def pair_rate(points: list[tuple[int, float]]) -> list[float]:
    """Marginal pairs per second between consecutive (pairs, seconds) points: equal when linear."""
    return [(p2 - p1) / (s2 - s1) if s2 > s1 else float("inf") for (p1, s1), (p2, s2) in pairwise(points)]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=sizes, default=[1000, 10000, 100000],
                        help="chunks per corpus, comma-separated (default 1k,10k,100k)")
    parser.add_argument("--questions", type=sizes, default=[100, 1000],
                        help="questions per evaluate, comma-separated (default 100,1000)")
    parser.add_argument("--models", default="minilm-l6", help="embedding models of the index (default minilm-l6)")
    parser.add_argument("--rerank-questions", type=sizes, default=[10, 20, 40],
                        help="question counts for the cross-encoder's pair rate, at the first size "
                             "(default 10,20,40; empty: skip)")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help=f"work folder (default {DEFAULT_OUT})")
    parser.add_argument("--quick", action="store_true",
                        help=f"a smoke run: {QUICK['sizes'][0]} chunks, {QUICK['questions']} questions, "
                             f"pair rate on {QUICK['rerank']} questions")
    args = parser.parse_args(argv)
    if args.quick:
        args.sizes, args.questions, args.rerank_questions = QUICK["sizes"], QUICK["questions"], QUICK["rerank"]
    print(describe_machine())
    print(f"load average (1, 5, 15 min) before: {load()}")
    # --quick: Python's docs alone (parsed in about 15 s), so the smoke run needs no download
    sources = [scale_corpus.python_source()] if args.quick else scale_corpus.all_sources()
    pool = scale_corpus.read_pool(sources)
    print(f"pool: {len(pool)} sections, {sum(r['metadata']['chunks'] for r in pool)} chunks, from "
          + ", ".join(f"{s.package} {s.version}" for s in sources))
    rows: list[dict] = []
    rerank: list[tuple[int, int, Stage]] = []
    for n_chunks in args.sizes:
        folder = args.out / f"chunks-{n_chunks}"
        docs, golden = scale_corpus.choose(pool, n_chunks, max(args.questions + (args.rerank_questions or [0])))
        corpus, _ = scale_corpus.write(folder, docs, golden)
        index = folder / "index"
        if index.exists():
            shutil.rmtree(index)
        print(f"\n{n_chunks} chunks: {len(docs)} documents, {len(golden)} questions available")
        built = run_stage(f"index {n_chunks}", [sys.executable, "-m", "evaluation", "index", str(corpus),
                                                "--out", str(index), "--models", args.models, "--quiet"],
                          folder / "index.log")
        chunks = json.loads((index / "manifest.json").read_text(encoding="utf-8"))["chunks"]
        for count in args.questions:
            golden_path = _golden(folder, golden, count)
            stage = run_stage(f"evaluate {min(count, len(golden))} q",
                              _evaluate(index, golden_path, "--skip", "*hybrid_reranked*"),
                              folder / f"evaluate-{count}.log")
            rows.append({"chunks": chunks, "documents": len(docs), "questions": min(count, len(golden)),
                         "index": built, "evaluate": stage, "found": found_at_10(stage.json())})
        if n_chunks == args.sizes[0]:
            for count in args.rerank_questions or []:
                golden_path = _golden(folder, golden, count)
                stage = run_stage(f"reranked {min(count, len(golden))} q",
                                  _evaluate(index, golden_path, "--only", "*hybrid_reranked*", "--timed", "0"),
                                  folder / f"reranked-{count}.log")
                rerank.append((chunks, min(count, len(golden)), stage))
    print_table(rows)
    print_rerank(rerank)
    print(f"\nload average after: {load()}")
    return 0


def print_table(rows: list[dict]) -> None:
    setups = list(dict.fromkeys(key for row in rows for key in row["found"]))
    print("\nevery setup but the reranked ones, over all questions (each stage its own process; "
          f"goal: {GOAL_SECONDS} s and {GOAL_MIB} MiB at 100k chunks x 1,000 questions)")
    print(
        f"  {'chunks':>7} {'docs':>6} {'qs':>5} {'index s':>8} {'chunks/s':>8} {'MiB':>5} {'eval s':>7} {'MiB':>5}"
        f" {'eval/goal':>9} {'both/goal':>9} {'RSS/goal':>8}   "
        + "  ".join(f"{k.split('.', 1)[1]:>18}" for k in setups)
    )
    for row in rows:
        built, stage = row["index"], row["evaluate"]
        both = built.seconds + stage.seconds
        peak = max(built.peak_mib, stage.peak_mib)
        found = "  ".join(
            f"{'-' if row['found'].get(k) is None else format(row['found'][k], '.1%'):>18}" for k in setups
        )
        print(f"  {row['chunks']:7} {row['documents']:6} {row['questions']:5} {built.seconds:8.1f} "
              f"{row['chunks'] / built.seconds:8.1f} {built.peak_mib:5.0f} {stage.seconds:7.1f} {stage.peak_mib:5.0f}"
              f" {stage.seconds / GOAL_SECONDS:8.2f}x {both / GOAL_SECONDS:8.2f}x {peak / GOAL_MIB:7.2f}x   {found}")
    print("  load before -> after per stage:")
    for row in rows:
        print(f"    {row['chunks']} chunks: index {row['index'].load_before} -> {row['index'].load_after}; "
              f"evaluate {row['questions']} q {row['evaluate'].load_before} -> {row['evaluate'].load_after}")


def print_rerank(rerank: list[tuple[int, int, Stage]]) -> None:
    if not rerank:
        return
    points = [(questions * RERANK_CANDIDATES, stage.seconds) for _, questions, stage in rerank]
    rates = pair_rate(points)
    print(f"\nreranked setups (evaluate --only '*hybrid_reranked*' --timed 0 --no-cache, {rerank[0][0]} chunks, "
          f"{RERANK_CANDIDATES} pairs a question)")
    for (_, questions, stage), (pairs, _) in zip(rerank, points, strict=True):
        print(f"  {questions:5} questions {pairs:6} pairs {stage.seconds:7.1f} s  peak RSS {stage.peak_mib:5.0f} MiB  "
              f"load {stage.load_before} -> {stage.load_after}")
    if rates:
        print("  marginal pair rate between counts: " + ", ".join(f"{r:.1f} pairs/s" for r in rates))
        rate = rates[-1]
        fixed = points[-1][1] - points[-1][0] / rate
        print(f"  projection at 1,000 questions: {fixed:.0f} s fixed + 1000 x {RERANK_CANDIDATES} / {rate:.1f} = "
              f"{fixed + 1000 * RERANK_CANDIDATES / rate:,.0f} s ({(fixed + 1000 * RERANK_CANDIDATES / rate) / 60:.0f} "
              f"min) "
              "per set of vectors' reranked setups, batch (pairs shared between them)")


if __name__ == "__main__":
    sys.exit(main())
