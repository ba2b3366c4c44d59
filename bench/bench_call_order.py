"""One-row graph calls longest first against shortest first, on the cross-encoder's real pairs.

The int8 cross-encoder runs one (question, passage) pair per call (``engine/graphs.py``), and a batch's
calls are spread over its one-thread sessions (two on 2 cores). In order of length, shortest first (the
baseline, before 2026-12-04), the longest call ran last while the other session sat idle; longest
first leaves the short calls for the end. Each reranked search scores its 20 candidates as one batch,
so this times, per question, ``score_pairs`` of the pairs ``local.hybrid_reranked.bge-small`` reranks
for it (the sample's first ``--questions``), both orders alternating ``--rounds`` times in one process,
and checks every logit is the same bit for bit in both orders. On a loaded machine the other session's
idle time goes to other processes, so the wall times cannot tell the orders apart there; the bench
therefore also times every call alone on one session (best of two) and schedules those times on the
sessions in each order (list scheduling, what ``_Sessions.map`` does): the makespan ratio is what the
order changes on quiet cores.

    python3 bench/bench_call_order.py [--index DIR] [--questions 12] [--rounds 3]
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(1, str(ROOT))

from _machine import describe_machine  # noqa: E402

from evaluation.engine import graphs, models  # noqa: E402
from evaluation.engine.index import open_index  # noqa: E402
from evaluation.engine.target import EmbeddedTarget  # noqa: E402
from evaluation.golden import read_golden  # noqa: E402

ORDERS = {"shortest first (baseline)": False, "longest first": True}


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--index", type=Path, default=Path.home() / ".cache" / "retrieval-eval-bench" / "sample-index",
                        help="an index of the sample (default: bench_rerank_work's, built there)")
    parser.add_argument("--questions", type=int, default=12)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args(argv)
    print(describe_machine())
    if not args.index.is_dir():
        from evaluation.engine.index import build_index

        build_index(ROOT / "samples" / "corpus.jsonl", args.index, progress=True)
    index = open_index(args.index)
    target = EmbeddedTarget(index, cache=False)
    setup = next(s for s in target.setups() if s.key == "local.hybrid_reranked.bge-small")
    asked = [q.question for q in read_golden(ROOT / "samples" / "golden.jsonl").labelled[: args.questions]]
    searches = [[(q, index.chunks[i].indexed_text) for i, _ in target._fused(setup, [q], cached=True, counts=None)[0]
                 [: target.rerank_candidates]] for q in asked]
    encoder = models.load_cross_encoder()
    encoder.score_pairs(searches[0][:4])  # loading and the first run, out of the clock
    print(f"{len(searches)} searches of {target.rerank_candidates} pairs, {len(encoder._sessions.graphs)} sessions")
    seconds: dict[str, list[float]] = {name: [] for name in ORDERS}
    logits: dict[str, list[np.ndarray]] = {}
    print(f"\n{'round':>5}  {'order':26} {'seconds':>8}  load before -> after")
    for r in range(args.rounds):
        for name in (list(ORDERS) if r % 2 == 0 else list(ORDERS)[::-1]):
            graphs._LONGEST_FIRST = ORDERS[name]
            before = load()
            started = time.perf_counter()
            logits[name] = [encoder.score_pairs(pairs) for pairs in searches]
            seconds[name].append(time.perf_counter() - started)
            print(f"{r + 1:>5}  {name:26} {seconds[name][-1]:8.2f}  {before} -> {load()}", flush=True)
    graphs._LONGEST_FIRST = True
    base, mine = (statistics.median(seconds[name]) for name in ORDERS)
    print(f"\nmedian: shortest first {base:.2f} s, longest first {mine:.2f} s; ratio {mine / base:.3f}")
    same = all(np.array_equal(a, b) for a, b in zip(*logits.values(), strict=True))
    print(f"logits: {'the same bit for bit' if same else 'DIFFERENT'} in both orders")
    simulated = {name: 0.0 for name in ORDERS}
    graph, sessions = encoder._sessions.graphs[0], len(encoder._sessions.graphs)
    for pairs in searches:
        timed = []
        for encoding in encoder._tokenizer.encode_batch(pairs):
            row = graphs._padded([encoding])
            took = []
            for _ in range(2):
                started = time.perf_counter()
                encoder._logits(graph, *row)
                took.append(time.perf_counter() - started)
            timed.append((len(encoding.ids), min(took)))
        timed.sort()
        for name, longest_first in ORDERS.items():
            simulated[name] += makespan([t for _, t in (timed[::-1] if longest_first else timed)], sessions)
    base, mine = simulated.values()
    print(f"simulated on {sessions} sessions from each call's time alone: shortest first {base:.2f} s, longest first "
          f"{mine:.2f} s; ratio {mine / base:.3f}")
    return 0 if same else 1


def makespan(seconds: list[float], sessions: int) -> float:
    """When the last of ``seconds`` (calls, in order) ends, each call going to the first free session."""
    import heapq

    free = [0.0] * sessions
    for took in seconds:
        heapq.heappush(free, heapq.heappop(free) + took)
    return max(free)


if __name__ == "__main__":
    sys.exit(main())
