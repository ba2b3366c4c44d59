"""Metric computation alone: 10,000 questions x 100 results, ours against pytrec_eval, same process.

Baseline: pytrec_eval (trec_eval's C code behind a Python binding) computing recip_rank,
ndcg_cut_10 and success_1/3/5/10/20 from the same run and qrels, including building its evaluator
and averaging its per-question results. Ours: judging every result (``judge`` at the doc grain) and
``summarise``. Both end to end from the same Python inputs. Goal: at least 2x faster, no JIT.

    python bench/bench_metrics.py [--questions 10000] [--results 100]
"""
from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _machine import describe_machine
from evaluation.golden import Question
from evaluation.scoring.judging import judge
from evaluation.scoring.metrics import summarise
from evaluation.target import Hit

MEASURES = {"recip_rank", "ndcg_cut_10", "success_1", "success_3", "success_5", "success_10", "success_20"}


def make_inputs(questions: int, results: int, seed: int = 0):
    rng = random.Random(seed)
    corpus = [f"doc{i}" for i in range(5000)]
    golden, runs = [], []
    for n in range(questions):
        expected = tuple(rng.sample(corpus, rng.randint(1, 3)))
        ranking = rng.sample(corpus, results)
        if rng.random() < 0.7 and expected[0] not in ranking:  # most questions find something
            ranking[rng.randrange(results)] = expected[0]  # (each document once: no duplicates)
        golden.append(Question(id=f"q{n}", question=f"question {n}", expected=expected))
        runs.append([Hit(id=d, doc_id=d, page=None, score=float(results - i)) for i, d in enumerate(ranking)])
    return golden, runs


def ours(golden, runs):
    return summarise([judge(q, hits, "doc") for q, hits in zip(golden, runs, strict=True)])


def oracle(golden, runs):
    import pytrec_eval

    qrels = {q.id: {d: 1 for d in q.expected} for q in golden}
    run = {q.id: {h.id: h.score for h in hits} for q, hits in zip(golden, runs, strict=True)}
    per_question = pytrec_eval.RelevanceEvaluator(qrels, MEASURES).evaluate(run)
    return {m: statistics.fmean(v[m] for v in per_question.values()) for m in MEASURES}


def timed(fn, *args, repeats=5):
    best = []
    result = None
    for _ in range(repeats):
        t0 = time.perf_counter()
        result = fn(*args)
        best.append(time.perf_counter() - t0)
    return statistics.median(best), result


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--questions", type=int, default=10_000)
    parser.add_argument("--results", type=int, default=100)
    args = parser.parse_args()
    print(describe_machine())
    golden, runs = make_inputs(args.questions, args.results)
    print(f"input: {args.questions} questions x {args.results} results, no ties")
    ours_s, summary = timed(ours, golden, runs)
    oracle_s, means = timed(oracle, golden, runs)
    assert abs(summary["mrr"] - round(means["recip_rank"], 4)) < 1e-4, (summary["mrr"], means["recip_rank"])
    assert abs(summary["ndcg_10"] - round(means["ndcg_cut_10"], 4)) < 1e-4
    print(f"  pytrec_eval (baseline): {oracle_s * 1000:8.1f} ms (median of 5)")
    print(f"  ours:                   {ours_s * 1000:8.1f} ms (median of 5)")
    print(f"  speed-up: {oracle_s / ours_s:.2f}x (goal >= 2x); MRR {summary['mrr']} = {means['recip_rank']:.4f}, "
          f"nDCG@10 {summary['ndcg_10']} = {means['ndcg_cut_10']:.4f}")


if __name__ == "__main__":
    main()
