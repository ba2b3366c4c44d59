"""How often the tiers separate setups that do not differ: the report's rule (Holm over every pair of
exact paired found@10 tests, ``evaluation.scoring.tiers``) against the randomized Tukey HSD over
questions (Carterette 2012: each question's values shuffled among all the setups, the range of the
setups' means as the null), in simulated runs where every pair is a true null.

Worlds (found@10 per question, 0 or 1):

- ``independent``: 6 setups, each question found at 60% by each, independently.
- ``alike``: 6 setups equal on every question but for 10% of questions each redraws (nearly the
  same setup six times).
- ``complementary``: 8 setups; two find half the questions each, mostly each other's misses (80% of
  questions one finds exactly what the other misses), the other six are one setup copied. Every pair
  has the same rate, but the setups are not exchangeable on a question, which the shuffle assumes.

Prints, per world, the share of runs with at least one separation (the family-wise error; alpha 0.05)
and its 95% Wilson interval. Seeded; about a minute on 2 cores.

    python bench/bench_tier_error.py [--runs 2000] [--questions 60] [--shuffles 500]
"""
from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from _machine import describe_machine, load_averages

from evaluation.scoring.tiers import pair_tests

ALPHA = 0.05


def independent(rng: np.random.Generator, n: int) -> np.ndarray:
    return (rng.random((n, 6)) < 0.6).astype(np.float64)


def alike(rng: np.random.Generator, n: int) -> np.ndarray:
    base = rng.random(n) < 0.6
    redraw = rng.random((n, 6)) < 0.1
    return np.where(redraw, rng.random((n, 6)) < 0.6, base[:, None]).astype(np.float64)


def complementary(rng: np.random.Generator, n: int) -> np.ndarray:
    x = rng.random(n) < 0.5
    y = np.where(rng.random(n) < 0.8, ~x, rng.random(n) < 0.5)
    z = rng.random(n) < 0.5
    return np.column_stack([x, y] + [z] * 6).astype(np.float64)


WORLDS = {"independent": independent, "alike": alike, "complementary": complementary}


def holm_separates(found: np.ndarray) -> bool:
    keys = [str(i) for i in range(found.shape[1])]
    return any(p["separated"] for p in pair_tests(keys, found, ALPHA))


def tukey_separates(found: np.ndarray, rng: np.random.Generator, shuffles: int) -> bool:
    """Randomized Tukey HSD: some pair's |difference of means| reaches the null range with p <= alpha."""
    n, k = found.shape
    shuffled = rng.permuted(np.broadcast_to(found, (shuffles, n, k)).copy(), axis=2)
    means = shuffled.mean(axis=1)
    ranges = means.max(axis=1) - means.min(axis=1)
    observed = found.mean(axis=0)
    widest = observed.max() - observed.min()  # the pair most likely separated
    p = (1 + np.count_nonzero(ranges >= widest - 1e-12)) / (1 + shuffles)
    return bool(p <= ALPHA)


def wilson(hits: int, runs: int) -> tuple[float, float]:
    z = 1.959964
    share = hits / runs
    centre = (share + z * z / (2 * runs)) / (1 + z * z / runs)
    reach = z * math.sqrt(share * (1 - share) / runs + z * z / (4 * runs * runs)) / (1 + z * z / runs)
    return centre - reach, centre + reach


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=2000)
    parser.add_argument("--questions", type=int, default=60)
    parser.add_argument("--shuffles", type=int, default=500)
    args = parser.parse_args(argv)
    print(describe_machine())
    print(f"load {load_averages()}; {args.runs} runs a world, {args.questions} questions, alpha {ALPHA}, "
          f"Tukey with {args.shuffles} shuffles\n")
    print("| world | setups | Holm over every pair (the tiers) | randomized Tukey HSD |\n|---|---|---|---|")
    for name, make in WORLDS.items():
        rng = np.random.default_rng([48, len(name)])
        holm = tukey = 0
        for _ in range(args.runs):
            found = make(rng, args.questions)
            holm += holm_separates(found)
            tukey += tukey_separates(found, rng, args.shuffles)
        cells = []
        for hits in (holm, tukey):
            low, high = wilson(hits, args.runs)
            cells.append(f"{hits / args.runs:.3f} [{low:.3f}, {high:.3f}]")
        print(f"| {name} | {make(rng, 2).shape[1]} | {cells[0]} | {cells[1]} |", flush=True)
    print(f"\nload {load_averages()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
