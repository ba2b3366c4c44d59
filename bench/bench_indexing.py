"""Indexing: ways of running both embedding models over every chunk, against "sequential, 2 threads each".

Baseline, "sequential, 2 threads each": what build_index did before issue 15, one model after the other,
each session with 2 intra-op threads. Candidates:

- "sequential, 1 thread each": the same with 1 thread (how well one row per call uses a second thread);
- "concurrent, 1 thread each" (shipped, ``models.embed_documents_together``): each model in its own
  Python thread at once, one intra-op thread each (onnxruntime releases the GIL in a run); a thread
  whose model is done runs the other model's remaining calls on the same session;
- "concurrent, no helping": as shipped until 2026-12-01, each thread runs only its own model, so
  the slower model (bge-small) ends alone on one core.

- "sequential, a session per core": each model in turn, its calls spread over one-thread sessions,
  one per core (``models.Embedder(pooled=True)``, as the cross-encoder runs). Run 2026-12-01 at load
  9-10 (others shared the cores): 0.78 of the baseline's speed, "concurrent" 0.72, and 953 MiB peak
  against 578 (a second session of each model), so embedders keep one session each.

A shared queue of both models' calls (two workers, longest call first) was measured too, at commit
f1e982b, and dropped: more CPU and more memory than one thread per model (see README.md).

Each candidate runs in its own process (so peak RSS is its own) over the sample's chunk texts, after
loading the models; wall time, CPU time of the process (all threads) and peak RSS are printed with the
load averages before and after, and every candidate's vectors are compared bit for bit with the
baseline's. Then a whole ``build_index`` as shipped, for the share of the build outside the models.

    python bench/bench_indexing.py [--corpus samples/corpus.jsonl] [--only NAME ...]
"""
from __future__ import annotations

import argparse
import functools
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np

from _machine import describe_machine, load_averages, peak_rss_mib

BASELINE = "sequential, 2 threads each"
POOLED = "sequential, a session per core"
NO_HELPING = "concurrent, no helping"
CANDIDATES = (BASELINE, "sequential, 1 thread each", "concurrent, 1 thread each", NO_HELPING, POOLED)


def _texts(corpus: str) -> list[str]:
    from evaluation.engine.chunking import chunk_corpus
    from evaluation.engine.corpus import read_corpus
    from evaluation.engine.index import IndexSettings

    return [c.indexed_text for c in chunk_corpus(read_corpus(corpus), IndexSettings().chunking)]


@functools.lru_cache(maxsize=None)
def _pooled(name: str):
    from evaluation.engine import model_catalog, models

    return models.Embedder(model_catalog._SPECS[name], threads=2, pooled=True)


def _embed(candidate: str, texts: list[str], names: tuple[str, ...]) -> list[np.ndarray]:
    from evaluation.engine.models import embed_documents_together, load_embedder

    if candidate == BASELINE:
        return [load_embedder(n, threads=2).embed_documents(texts) for n in names]
    if candidate == POOLED:  # each model in turn, its calls spread over one one-thread session per core
        return [_pooled(n).embed_documents(texts) for n in names]
    embedders = [load_embedder(n, threads=1) for n in names]
    if candidate == "sequential, 1 thread each":
        return [e.embed_documents(texts) for e in embedders]
    if candidate == "concurrent, 1 thread each":
        return embed_documents_together(embedders, texts)
    if candidate == NO_HELPING:
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(max_workers=len(embedders)) as pool:
            return list(pool.map(lambda e: e.embed_documents(texts), embedders))
    raise SystemExit(f"unknown candidate {candidate!r}; one of {', '.join(CANDIDATES)}")


def _child(candidate: str, corpus: str, out: str) -> None:
    from evaluation.engine.index import IndexSettings

    names = IndexSettings().resolved_models()
    texts = _texts(corpus)
    _embed(candidate, texts[:4], names)  # loads the sessions and warms them up
    load_before = load_averages()
    wall, cpu = time.perf_counter(), time.process_time()
    vectors = _embed(candidate, texts, names)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    for name, array in zip(names, vectors, strict=True):
        np.save(Path(out) / f"{name}.npy", array)
    print(json.dumps({"candidate": candidate, "chunks": len(texts), "wall": wall, "cpu": cpu,
                      "rss": peak_rss_mib(), "load_before": load_before, "load_after": load_averages()}))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--corpus", default="samples/corpus.jsonl")
    parser.add_argument("--only", nargs="*", choices=CANDIDATES, help="run only these (the baseline always runs)")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--out", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        return _child(args.child, args.corpus, args.out)

    print(describe_machine())
    wanted = [c for c in CANDIDATES if not args.only or c == BASELINE or c in args.only]
    results, baseline_dir = {}, None
    with tempfile.TemporaryDirectory() as scratch:
        for candidate in wanted:
            out = Path(scratch) / str(len(results))
            out.mkdir()
            run = subprocess.run([sys.executable, __file__, "--corpus", args.corpus, "--child", candidate,
                                  "--out", str(out)], capture_output=True, text=True, check=True)
            row = json.loads(run.stdout.strip().splitlines()[-1])
            baseline_dir = baseline_dir or out
            row["same"] = all(np.array_equal(np.load(f), np.load(baseline_dir / f.name)) for f in out.glob("*.npy"))
            results[candidate] = row
            print(f"  {candidate}: {row['wall']:.1f} s wall (load {row['load_before']} -> {row['load_after']})",
                  flush=True)
        base = results[BASELINE]
        print(f"embedding {base['chunks']} chunks of {args.corpus} with both models; "
              f"ratio = baseline wall / candidate wall (above 1 is faster)")
        print(f"  {'candidate':30} {'wall s':>7} {'CPU s':>7} {'RSS MiB':>8} {'ratio':>6}  vectors  load before -> "
              f"after")
        for candidate, row in results.items():
            print(f"  {candidate:30} {row['wall']:7.1f} {row['cpu']:7.1f} {row['rss']:8.0f} "
                  f"{base['wall'] / row['wall']:6.2f}  {'same' if row['same'] else 'DIFFER'}     "
                  f"{row['load_before']} -> {row['load_after']}")

        from evaluation.engine.index import build_index

        load_before, started = load_averages(), time.perf_counter()
        build_index(args.corpus, Path(scratch) / "index", threads=2)
        print(f"whole build_index as shipped (threads=2): {time.perf_counter() - started:.1f} s "
              f"(load {load_before} -> {load_averages()})")


if __name__ == "__main__":
    main()
