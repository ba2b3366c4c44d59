"""How much of the cross-encoder's work a warm save's changed questions are: the (question, passage)
pairs one reranked setup sends it in ``bench_app_scale.py``'s cold and warm runs, in tokens.

The cross-encoder's scores are stubbed out (zeros: no model runs, so this takes seconds), which changes
the order of its results but not which pairs it is given: the candidates come from the hybrid first stage
before it. Tokens are counted by the cross-encoder's own tokenizer, on the pairs as given (the question is
clipped to its budget inside ``score_pairs``, which is stubbed too). The cross-encoder's time follows its
tokens (``bench/README.md``), so the warm share of tokens is what the warm run's reranking must cost,
against the goal's 0.1 of the cold run. Baseline: the cold run's pairs.

    python bench/bench_warm_pairs.py --index .index/corpus-XXXX --golden samples/golden.jsonl \\
        [--questions 100] [--setup local.hybrid_reranked.bge-small]
"""
from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path
from typing import Sequence

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--index", type=Path, required=True)
    parser.add_argument("--golden", type=Path, required=True)
    parser.add_argument("--questions", type=int, default=100)
    parser.add_argument("--setup", default="local.hybrid_reranked.bge-small")
    args = parser.parse_args(argv)
    import numpy as np

    import bench_app_scale as scale
    from evaluation.engine import models

    sent: dict[str, list[tuple[str, str]]] = {"cold": [], "warm": []}
    run = {"now": "cold"}

    def stubbed(self, pairs, *, batch_size: int = 32):  # score_pairs' signature
        pairs = list(pairs)
        sent[run["now"]].extend(pairs)
        return np.zeros(len(pairs), dtype=np.float32)

    real = models.CrossEncoder.score_pairs
    models.CrossEncoder.score_pairs = stubbed
    rows = scale.questions_of(args.golden, args.questions)
    try:
        with tempfile.TemporaryDirectory() as work:
            cache = Path(work) / "cache.sqlite"
            cold = scale.run_once(args.index, rows, cache, only=[args.setup], shard_seconds=180.0, earlier=None,
                                  workdir=Path(work))
            run["now"] = "warm"
            scale.run_once(args.index, scale.warm_questions(rows, cold[2]), cache, only=[args.setup],
                           shard_seconds=180.0, earlier=cold[2], workdir=Path(work))
    finally:
        models.CrossEncoder.score_pairs = real  # the real scores again for whoever runs next in this process
    tokenizer = models.load_cross_encoder()._tokenizer
    totals = {}
    for name in ("cold", "warm"):
        lengths = np.array([len(e.ids) for e in tokenizer.encode_batch(sent[name])] or [0])
        totals[name] = int(lengths.sum())
        print(f"{name}: {len(sent[name])} pairs; tokens a pair: mean {lengths.mean():.1f}, median "
              f"{np.median(lengths):.0f}; {totals[name]} tokens in all")
    print(f"warm / cold tokens: {totals['warm'] / max(totals['cold'], 1):.3f} "
          f"({args.questions} questions, 10% changed, {args.setup})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
