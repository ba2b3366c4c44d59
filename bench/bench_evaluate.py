"""The main job end to end on the shipped sample: wall time and peak memory, split by stage.

Stages: indexing (chunking + BM25, then embedding the chunks), then ``evaluate``: embedding the
questions, reranking (cross-encoder), and searching (everything else: BM25, matmul, fusion, judging,
timing single searches). Embedding and reranking are measured by wrapping the model calls; searching
is the rest of ``evaluate``'s wall time. Then metric computation alone against pytrec_eval
(see bench_metrics.py). Baseline for the split: the whole run's wall time.

    python bench/bench_evaluate.py [--corpus samples/corpus.jsonl] [--golden samples/golden.jsonl]
"""
from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _machine import describe_machine, peak_rss_mib
from evaluation.engine import models
from evaluation.engine.index import build_index, open_index
from evaluation.engine.target import EmbeddedTarget
from evaluation import evaluate

spent: dict[str, float] = {"embedding documents": 0.0, "embedding questions": 0.0, "reranking": 0.0}


def timed_method(cls, name: str, bucket: str) -> None:
    original = getattr(cls, name)

    def wrapper(self, *args, **kwargs):
        t0 = time.perf_counter()
        try:
            return original(self, *args, **kwargs)
        finally:
            spent[bucket] += time.perf_counter() - t0

    setattr(cls, name, wrapper)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--corpus", default="samples/corpus.jsonl")
    parser.add_argument("--golden", default="samples/golden.jsonl")
    args = parser.parse_args()
    print(describe_machine())
    timed_method(models.Embedder, "embed_documents", "embedding documents")
    timed_method(models.Embedder, "embed_queries", "embedding questions")
    timed_method(models.CrossEncoder, "score_pairs", "reranking")

    with tempfile.TemporaryDirectory() as folder:
        whole = time.perf_counter()
        t0 = time.perf_counter()
        manifest = build_index(args.corpus, Path(folder) / "index")
        indexing = time.perf_counter() - t0
        t0 = time.perf_counter()
        report = evaluate(EmbeddedTarget(open_index(Path(folder) / "index")), args.golden)
        evaluating = time.perf_counter() - t0
        wall = time.perf_counter() - whole

    searching = evaluating - spent["embedding questions"] - spent["reranking"]
    print(f"sample: {manifest['corpus']['documents']} documents, {manifest['chunks']} chunks, "
          f"{report['golden']['labelled']} questions, {len(report['setups'])} setups, "
          f"{report['rules']['timed']} timed per setup")
    print(f"whole run: {wall:.1f} s wall, peak RSS {peak_rss_mib():.0f} MiB")
    rows = [("indexing: chunking + BM25", indexing - spent["embedding documents"]),
            ("indexing: embedding chunks", spent["embedding documents"]),
            ("evaluate: embedding questions", spent["embedding questions"]),
            ("evaluate: reranking", spent["reranking"]),
            ("evaluate: searching, judging, timing", searching)]
    for label, seconds in rows:
        print(f"  {label:40} {seconds:7.1f} s  {seconds / wall:6.1%} of the run")
    print("per setup (batch + timed singles):")
    for s in report["setups"]:
        summary = s["summary"] or {}
        print(f"  {s['key']:45} median {summary.get('median_ms')} ms, p95 {summary.get('p95_ms')} ms")

    from evaluation.report.text import render_table

    print(render_table(report))

    import bench_metrics

    golden, runs = bench_metrics.make_inputs(10_000, 100)
    ours_s, _ = bench_metrics.timed(bench_metrics.ours, golden, runs)
    oracle_s, _ = bench_metrics.timed(bench_metrics.oracle, golden, runs)
    print(f"metrics alone, 10,000 questions x 100 results: ours {ours_s * 1000:.0f} ms, "
          f"pytrec_eval {oracle_s * 1000:.0f} ms -> {oracle_s / ours_s:.2f}x (goal >= 2x)")


if __name__ == "__main__":
    main()
