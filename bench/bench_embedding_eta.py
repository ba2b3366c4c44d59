"""How truthful the embedding bar's ETA is: counting texts (the baseline, before issue 21) against
counting characters (``embed_together.text_work``, shipped), and counting tokens as each model reads them (cut
at its limit; what a model's time grows with, at the price of tokenizing every text twice), on the same
run of the real models.

The sample's chunks are embedded as ``build_index`` embeds them (both default models at once, one
thread each); at every progress call the wall clock, the texts done and the characters done are
kept. A bar's ETA at a frame is ``elapsed * (total - done) / done``; the bench prints, for each
counting rule, the ETA it would have shown when 10%, 25%, 50% and 75% of the wall time had passed,
against the time really left (a ratio of 1.00 is the truth), and the largest gap between the share
it read done and the share of the time spent. Wall-clock: the load averages say what else ran.

    python bench/bench_embedding_eta.py [--corpus samples/corpus.jsonl] [--models bge-small minilm-l6]
"""
from __future__ import annotations

import argparse
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _machine import describe_machine, load_averages

BASELINE = "texts"
RULES = (BASELINE, "characters", "tokens")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", default="samples/corpus.jsonl")
    parser.add_argument("--models", nargs="+", default=["bge-small", "minilm-l6"])
    args = parser.parse_args()

    from evaluation.engine import embed_together, models
    from evaluation.engine.chunking import chunk_corpus
    from evaluation.engine.corpus import read_corpus
    from evaluation.engine.index import IndexSettings

    texts = [c.indexed_text for c in chunk_corpus(read_corpus(args.corpus), IndexSettings().chunking)]
    embedders = [models.load_embedder(name, threads=1) for name in args.models]
    tokens = [sum(len(e._tokenizer.encode(t).ids) for e in embedders) / len(embedders) for t in texts]
    weights = {BASELINE: [1] * len(texts), "characters": [models.text_work(t) for t in texts], "tokens": tokens}
    print(describe_machine())
    print(f"{len(texts)} chunks of {args.corpus} ({min(map(len, texts))}-{max(map(len, texts))} characters), "
          f"models {', '.join(args.models)} at once; load before {load_averages()}")

    frames: list[tuple[float, dict[str, int]]] = []
    done = {rule: 0 for rule in RULES}

    recording = threading.Lock()

    def advance(positions: list[int]) -> None:  # what embed_documents_together's threads report
        with recording:
            for rule in RULES:
                done[rule] += sum(weights[rule][i] for i in positions)
            frames.append((time.perf_counter() - start, dict(done)))

    start = time.perf_counter()
    original = embed_together._CallQueue.run_next

    def run_next(self, told):
        return original(self, lambda positions: (told(positions), advance(positions)))

    embed_together._CallQueue.run_next = run_next
    try:
        models.embed_documents_together(embedders, texts)
    finally:
        embed_together._CallQueue.run_next = original
    wall = frames[-1][0]
    totals = {rule: sum(weights[rule]) * len(embedders) for rule in RULES}
    print(f"wall {wall:.1f} s; load after {load_averages()}\n")
    print(f"{'counting':<17}" + "".join(f"{'ETA/left at ' + str(p) + '%':>18}" for p in (10, 25, 50, 75))
          + f"{'largest gap':>14}")
    for rule in RULES:
        cells = []
        for share in (0.10, 0.25, 0.50, 0.75):
            elapsed, counts = next(f for f in frames if f[0] >= share * wall)
            eta = elapsed * (totals[rule] - counts[rule]) / max(1, counts[rule])
            cells.append(f"{eta / (wall - elapsed):>18.2f}")
        gap = max(abs(counts[rule] / totals[rule] - elapsed / wall) for elapsed, counts in frames)
        name = rule + (" (baseline)" if rule == BASELINE else "")
        print(f"{name:<17}" + "".join(cells) + f"{gap * 100:>13.0f}%")


if __name__ == "__main__":
    main()
