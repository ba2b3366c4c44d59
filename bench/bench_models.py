"""Raw model throughput: each bundled model alone, as evaluation/engine/models.py runs it, against naive batching.

Baseline, "naive: unsorted, padded to max_length": the same model and tokenizer, texts in the order
given, batches of 32 each padded to the model's max_tokens and run in one call. Ours (shipped):
texts sorted by length, each call padded to its own longest text; MiniLM runs as many rows per call
as fit 1024 tokens, bge-small and the cross-encoder one row per call because their int8 activation
scale spans the whole call (see evaluation/engine/graphs.py). For those two a third row shows sorted
batches of 32 in one call: the speed that rule gives up or gains.

Texts are real: passages cut at token boundaries from samples/corpus.jsonl (package READMEs), 64
tokens each, and 128 to 384 tokens (mean 256); cross-encoder pairs put a package summary before a
passage of that size. 2 threads, batch 32, median of 3 repeats after a warm-up.

    python bench/bench_models.py [--corpus samples/corpus.jsonl] [--threads 2] [--repeats 3]

``raw_embedder_throughput`` is imported by bench_engine.py to compare indexing with the model alone.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import time
from pathlib import Path
from typing import Callable, Sequence

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np

from _machine import describe_machine
from evaluation.engine import graphs, models

BATCH = 32
SHORT_TOKENS = 64
LONG_TOKENS = (128, 384)  # uniform, mean 256


def _median_seconds(run: Callable[[], object], repeats: int) -> float:
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        run()
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def raw_embedder_throughput(name: str, texts: Sequence[str], threads: int = 2, *,
                            batch_size: int = BATCH, repeats: int = 3) -> float:
    """Texts per second of ``load_embedder(name, threads=threads).embed_documents(texts)``:
    median of ``repeats`` runs over all the texts, after a warm-up on the first batch."""
    embedder = models.load_embedder(name, threads=threads)
    texts = list(texts)
    embedder.embed_documents(texts[:batch_size], batch_size=batch_size)
    seconds = _median_seconds(lambda: embedder.embed_documents(texts, batch_size=batch_size), repeats)
    return len(texts) / seconds


# --- real passages of a given token count ------------------------------------------------------

def _passages(corpus: Path, sizes: Sequence[int], tokenizer) -> list[str]:
    """One passage per size in ``sizes``: text between token boundaries, taken in turn from each
    document so neighbours in the list come from different READMEs. Sizes count [CLS] and [SEP]."""
    from tokenizers import Tokenizer

    docs = [json.loads(line)["text"] for line in corpus.read_text(encoding="utf-8").splitlines() if line.strip()]
    whole = Tokenizer.from_str(tokenizer.to_str())
    whole.no_truncation()
    encodings = whole.encode_batch(docs, add_special_tokens=False)
    cursors = [0] * len(docs)
    out: list[str] = []
    d, misses = 0, 0
    while len(out) < len(sizes):
        want = sizes[len(out)] - 2
        offsets, cursor = encodings[d].offsets, cursors[d]
        if cursor + want <= len(offsets):
            out.append(docs[d][offsets[cursor][0]:offsets[cursor + want - 1][1]])
            cursors[d], misses = cursor + want, 0
        else:
            misses += 1
            if misses > len(docs):
                raise SystemExit(f"{corpus}: not enough text for {len(sizes)} passages")
        d = (d + 1) % len(docs)
    return out


def _summaries(corpus: Path) -> list[str]:
    rows = [json.loads(line) for line in corpus.read_text(encoding="utf-8").splitlines() if line.strip()]
    return [r["title"] for r in rows if r.get("title")]


# --- the three ways of running a model ---------------------------------------------------------

Way = Callable[[list], object]


def _naive(model, infer: Callable) -> Way:
    """Unsorted, every batch padded to max_tokens, one call per batch."""
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_str(model._tokenizer.to_str())
    tokenizer.enable_padding(length=model.info.max_tokens)

    def run(items: list) -> None:
        for b in range(0, len(items), BATCH):
            infer(model._graph, *graphs._padded(tokenizer.encode_batch(items[b:b + BATCH])))
    return run


def _sorted_whole_batches(model, infer: Callable, *row_shape: int) -> Way:
    """Ours, but each batch of 32 in one call: faster or not, a row's output depends on its batch."""
    def run(items: list) -> None:
        out = np.zeros((len(items), *row_shape), dtype=np.float32)
        graphs._run_bucketed(items, tokenizer=model._tokenizer, batch_size=BATCH, rows_per_call=BATCH,
                             infer=infer, out=out, progress=None, graphs=model._sessions)
    return run


def _measure(model: str, texts_label: str, items: list, unit: str, ways: list[tuple[str, Way]],
             repeats: int) -> None:
    """Print each way's rate and its ratio to the last way (the baseline)."""
    rates = {}
    for way, run in ways:
        run(items[:BATCH])  # warm-up
        rates[way] = len(items) / _median_seconds(lambda run=run: run(items), repeats)
    baseline = rates[ways[-1][0]]
    for way, _ in ways:
        print(f"{model:<20} {texts_label:<22} {way:<42} {rates[way]:6.1f} {unit}/s  "
              f"{rates[way] / baseline:5.2f}x")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--corpus", default=str(Path(__file__).resolve().parent.parent / "samples/corpus.jsonl"))
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--short", type=int, default=64, help="how many 64-token texts")
    parser.add_argument("--long", type=int, default=32, help="how many 128-384-token texts")
    args = parser.parse_args()
    corpus = Path(args.corpus)

    print(describe_machine())
    print("load average at start: " + " ".join(f"{x:.2f}" for x in os.getloadavg())
          + " (other processes on the machine slow every row)")
    bge = models.load_embedder("bge-small", threads=args.threads)
    rng = random.Random(0)
    short = _passages(corpus, [SHORT_TOKENS] * args.short, bge._tokenizer)
    long_sizes = [rng.randint(*LONG_TOKENS) for _ in range(args.long)]
    long = _passages(corpus, long_sizes, bge._tokenizer)
    summaries = _summaries(corpus)

    def tokens(texts: list[str]) -> float:  # as bge sees them, [CLS] and [SEP] included
        return statistics.mean(len(e.ids) for e in bge._tokenizer.encode_batch(texts))

    print(f"texts: {len(short)} passages cut at {SHORT_TOKENS} tokens (re-tokenised: mean {tokens(short):.1f}) "
          f"and {len(long)} cut at {LONG_TOKENS[0]}-{LONG_TOKENS[1]} (mean {tokens(long):.1f}) from "
          f"{corpus.name}; threads {args.threads}, batch {BATCH}, median of {args.repeats} after a warm-up")
    print(f"{'model':<20} {'texts':<22} {'way':<42} {'rate':>13}  vs naive")

    sets = [(f"{SHORT_TOKENS} tok", short), (f"{LONG_TOKENS[0]}-{LONG_TOKENS[1]} tok", long)]
    for name in models.available_embedders():
        embedder = models.load_embedder(name, threads=args.threads)
        one_row = embedder._spec.rows_per_call == 1
        ways: list[tuple[str, Way]] = [
            ("shipped: sorted, " + ("one text per call" if one_row else
                                    f"calls of <= {graphs._TOKENS_PER_CALL} tokens"),
             lambda items, embedder=embedder: embedder.embed_documents(items, batch_size=BATCH))]
        if one_row:
            ways.append((f"sorted, {BATCH} per call (batch-dependent)",
                         _sorted_whole_batches(embedder, embedder._vectors, embedder.dimensions)))
        ways.append(("naive: unsorted, padded to max_length", _naive(embedder, embedder._vectors)))
        for texts_label, texts in sets:
            _measure(name, texts_label, texts, "texts", ways, args.repeats)

    ce = models.load_cross_encoder(threads=args.threads)
    ways = [("shipped: sorted, one pair per call", lambda items: ce.score_pairs(items, batch_size=BATCH)),
            (f"sorted, {BATCH} per call (batch-dependent)", _sorted_whole_batches(ce, ce._logits)),
            ("naive: unsorted, padded to max_length", _naive(ce, ce._logits))]
    for texts_label, texts in sets:
        pairs = [(summaries[i % len(summaries)], t) for i, t in enumerate(texts)]
        _measure(ce.name, "summary + " + texts_label, pairs, "pairs", ways, args.repeats)
    print("load average at end: " + " ".join(f"{x:.2f}" for x in os.getloadavg()))


if __name__ == "__main__":
    main()
