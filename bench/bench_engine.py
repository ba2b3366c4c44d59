"""Embedded engine benchmark: indexing throughput against the raw model, and per-setup latency.

Baseline for indexing: the embedding models alone (``raw_embedder_throughput`` from bench_models) on
the very same chunk texts, in the same process. Goal: indexing within 1.5x of the models' own time.
Latency: every golden question searched one at a time as a caller would (no cache), median and p95,
and batch throughput (questions/s) with a fresh target so no cache is warm.

    python bench/bench_engine.py [--corpus samples/corpus.jsonl] [--golden samples/golden.jsonl]
"""
from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np

from _machine import describe_machine, peak_rss_mib
from evaluation.engine.chunking import chunk_corpus
from evaluation.engine.corpus import read_corpus
from evaluation.engine.index import IndexSettings, build_index, open_index
from evaluation.engine.target import EmbeddedTarget
from evaluation.golden import read_golden


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--corpus", default="samples/corpus.jsonl")
    parser.add_argument("--golden", default="samples/golden.jsonl")
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    from bench_models import raw_embedder_throughput

    print(describe_machine())
    corpus = read_corpus(args.corpus)
    settings = IndexSettings()
    chunks = chunk_corpus(corpus, settings.chunking)
    words = sum(len(c.indexed_text.split()) for c in chunks)
    print(f"corpus: {args.corpus}: {len(corpus)} documents, {len(chunks)} chunks, "
          f"{words / len(chunks):.0f} words per chunk on average")

    texts = [c.indexed_text for c in chunks]
    raw_seconds = 0.0
    for name in settings.resolved_models():
        rate = raw_embedder_throughput(name, texts, threads=args.threads)
        raw_seconds += len(texts) / rate
        print(f"  raw model {name}: {rate:.1f} chunks/s")

    with tempfile.TemporaryDirectory() as folder:
        started = time.perf_counter()
        manifest = build_index(corpus, Path(folder) / "index", settings, threads=args.threads)
        seconds = time.perf_counter() - started
        print(f"indexing: {len(chunks) / seconds:.1f} chunks/s ({seconds:.1f} s, all models), "
              f"models alone {raw_seconds:.1f} s -> ratio {seconds / raw_seconds:.2f}x the raw models "
              f"(goal <= 1.5x); peak RSS {peak_rss_mib():.0f} MiB")
        assert manifest["chunks"] == len(chunks)

        questions = [q.question for q in read_golden(args.golden).labelled]
        target = EmbeddedTarget(open_index(Path(folder) / "index"), threads=args.threads)
        print(f"latency over {len(questions)} golden questions, one at a time (no cache), then batch:")
        print(f"  {'setup':45} {'median ms':>9} {'p95 ms':>8} {'batch q/s':>10} {'single q/s':>10}")
        for setup in target.setups():
            target.search(setup, questions[0], 20)  # warm-up
            times = []
            for q in questions:
                t0 = time.perf_counter()
                target.search(setup, q, 20)
                times.append((time.perf_counter() - t0) * 1000)
            fresh = EmbeddedTarget(target.index, threads=args.threads)
            t0 = time.perf_counter()
            fresh.search_batch(setup, questions, 20)
            batch_rate = len(questions) / (time.perf_counter() - t0)
            median = statistics.median(times)
            print(f"  {setup.key:45} {median:9.1f} {float(np.percentile(times, 95)):8.1f} "
                  f"{batch_rate:10.1f} {1000 / median:10.1f}")


if __name__ == "__main__":
    main()
