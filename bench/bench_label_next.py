"""Label next, simulated: how many labels it takes to decide the top of the ranking when they are added
in the order ``evaluation.scoring.label_next`` proposes, against random order (the baseline).

Collections: the five of ``bench_shapes.py`` (short sections without headings, long pages, API
reference, mixed, the Python FAQ), written with up to ``--questions`` questions (default 400: as many
as each holds, 361, 131, 359, 400 and 65; more questions let the tests separate more) under this
bench's own folder (``OWN``), each indexed with the
engine's defaults (both bundled embedding models, the default chunking). Every question is searched
once, 20 results deep, by each setup of a set; no cross-encoder. Two sets: ``three`` (keyword.bm25,
dense.bge-small, hybrid.bge-small) and ``cheap`` (every setup but the reranked ones: eight). A label
is a question's expected document, read from the golden file; the units are documents (the doc
grain, positions among results, as a run's default).

For each of ``--seeds`` seeds (default 20): a random ``--start`` share of the questions (default
0.25) is labelled; the rest are candidates whose text the team has and whose label it does not. The
same start is then completed twice, one label at a time: in the proposed order (after each label the
tiers are computed again and, when the top tier holds two or more setups, ``propose`` ranks the
candidates by their lists alone and the best is labelled; when it holds one, or no candidate scores,
the next is taken at random), and in random order. After each label the tiers are those of the
report (``scoring.tiers``: Holm over every pair, alpha 0.05).

Counted: the labels added until the answer is decided and stays decided for every later label. What
"decided" means is fixed by every label: when with all of them the top two setups (found@10, then
found@1, then key) sit in different tiers, it is "the top two separate" (in different tiers, the
first above); otherwise "the tier settles" (the top tier is the one all the labels give). Printed per
collection and set: the questions, the full-label tiers, the criterion, and for each order the median
labels with the 25th-75th percentiles and the range over the seeds, and the median of the paired
per-seed ratio proposed / random.

    python bench/bench_label_next.py [--only NAME ...] [--sets three cheap] [--seeds 20] [--start 0.25]
"""
from __future__ import annotations

import argparse
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from _machine import describe_machine, load_averages
from bench_shapes import CACHE as SHAPES_CACHE, SHAPES, build_collections

from evaluation.scoring.label_next import Candidate, Labelled, finds, propose
from evaluation.scoring.tiers import pair_tests, tier_groups

OWN = SHAPES_CACHE.parent / "label_next"
DEPTH = 20
ALPHA = 0.05
SETS = {"three": ("local.keyword.bm25", "local.dense.bge-small", "local.hybrid.bge-small"), "cheap": None}


@dataclass
class World:
    """One collection searched by one set of setups: every question's lists and labels."""

    setups: list[str]
    questions: list[Labelled]
    found10: np.ndarray  # (questions x setups)
    found1: np.ndarray
    candidates: list[Candidate]  # each question as a candidate (its lists, no label), made once


def searched(shape: str, corpus: Path, golden: Path) -> dict[str, World]:
    """Each set's World for one collection (the index built or reused)."""
    from evaluation.engine.index import IndexSettings, build_index, open_index
    from evaluation.engine.target import EmbeddedTarget
    from evaluation.golden import read_golden
    from evaluation.scoring.judging import ranked_units, result_units

    started = time.perf_counter()
    manifest = build_index(corpus, corpus.parent / "index", IndexSettings())
    built = time.perf_counter() - started
    questions = read_golden(golden).labelled
    target = EmbeddedTarget(open_index(corpus.parent / "index"), cross_encoder=False, cache=False)
    cheap = [s for s in target.setups() if s.ranker is None]
    units: dict[str, list[list[str]]] = {}
    started = time.perf_counter()
    for setup in cheap:
        hits = target.search_batch(setup, [q.question for q in questions], DEPTH)
        units[setup.key] = [ranked_units(result_units(q, h, "doc"), "results") for q, h in zip(questions, hits,
                                                                                                  strict=True)]
    print(f"\n## {shape}\n\n{manifest['corpus']['documents']} documents, {manifest['chunks']} chunks, "
          f"{len(questions)} questions (index {'reused' if manifest.get('reused') else f'built in {built:.0f} s'}); "
          f"{len(cheap)} setups searched in {time.perf_counter() - started:.0f} s (load {load_averages()})", flush=True)
    worlds = {}
    for name, keys in SETS.items():
        keys = list(keys) if keys else [s.key for s in cheap]
        labelled = [Labelled(str(q.id), {k: units[k][i] for k in keys}, q.judgements) for i, q in enumerate(questions)]
        found10 = np.array([[finds(q, k) for k in keys] for q in labelled], dtype=np.float64)
        found1 = np.array([[bool(q.units[k]) and q.judgements.get(q.units[k][0], 0) >= 1 for k in keys]
                           for q in labelled], dtype=np.float64)
        worlds[name] = World(keys, labelled, found10, found1,
                             [Candidate(str(i), "question", q.units) for i, q in enumerate(labelled)])
    return worlds


def tiers_of(world: World, rows: list[int]) -> list[list[str]]:
    """The report's tiers on the labelled ``rows``: setups ranked by found@10, then found@1, then key."""
    f10, f1 = world.found10[rows].sum(axis=0), world.found1[rows].sum(axis=0)
    order = sorted(range(len(world.setups)), key=lambda i: (-f10[i], -f1[i], world.setups[i]))
    keys = [world.setups[i] for i in order]
    return tier_groups(keys, pair_tests(keys, world.found10[rows][:, order], ALPHA))


def decided_rule(world: World):
    """``(criterion name, decided(tiers) -> bool)`` fixed by every label (see the module docstring)."""
    every = list(range(len(world.questions)))
    full = tiers_of(world, every)
    f10, f1 = world.found10.sum(axis=0), world.found1.sum(axis=0)
    first, second = sorted(world.setups, key=lambda k: (-f10[world.setups.index(k)], -f1[world.setups.index(k)], k))[:2]

    def tier(groups: list[list[str]], key: str) -> int:
        return next(n for n, group in enumerate(groups) if key in group)

    if tier(full, first) < tier(full, second):
        return "top two separate", full, lambda groups: tier(groups, first) < tier(groups, second)
    return "tier settles", full, lambda groups: sorted(groups[0]) == sorted(full[0])


def decisions(world: World, start: list[int], order: str, rng: np.random.Generator, decided,
              batch: int) -> list[bool]:
    """Whether the answer is decided after each label added to ``start`` (index 0: before any), labels
    taken ``batch`` at a time in ``order``: ``proposed`` (the proposal made once a batch, its best
    first, random when the top tier holds one setup or nothing scores) or ``random``."""
    labelled = list(start)
    left = [i for i in range(len(world.questions)) if i not in set(start)]
    if order == "random":
        rng.shuffle(left)
    history = [decided(tiers_of(world, labelled))]
    while left:
        picks = list(range(min(batch, len(left))))
        if order == "proposed":
            groups = tiers_of(world, labelled)
            proposal = None
            if len(groups[0]) > 1:
                proposal = propose(groups[0], [world.questions[i] for i in labelled],
                                   [world.candidates[i] for i in left], results=False)
            ranked = [left.index(int(row["question"])) for row in proposal.questions] if proposal else []
            rest = [n for n in rng.permutation(len(left)).tolist() if n not in set(ranked)]
            picks = (ranked + rest)[:batch]
        taken = [left[n] for n in picks]
        for question in taken:
            labelled.append(question)
            history.append(decided(tiers_of(world, labelled)))
        left = [q for q in left if q not in set(taken)]
    return history


def first_and_for_good(history: list[bool]) -> tuple[int, int]:
    """Labels added until the answer is first decided, and until it is decided for every later label."""
    first = next(n for n, ok in enumerate(history) if ok)  # the last label decides it by construction
    return first, max((n for n, ok in enumerate(history) if not ok), default=-1) + 1


def spread(values: list[int]) -> str:
    q1, median, q3 = np.percentile(values, [25, 50, 75])
    return f"{median:g} ({q1:g}-{q3:g}; {min(values)}-{max(values)})"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", nargs="*", choices=SHAPES, help="these collections only")
    parser.add_argument("--sets", nargs="*", choices=tuple(SETS), default=list(SETS), help="setup sets (default both)")
    parser.add_argument("--seeds", type=int, default=20)
    parser.add_argument("--start", type=float, default=0.25, help="share of the questions labelled at the start")
    parser.add_argument("--batch", type=int, default=5, help="labels added per proposal (default 5)")
    parser.add_argument("--questions", type=int, default=400)
    parser.add_argument("--documents", type=int, default=500)
    parser.add_argument("--faq-documents", type=int, default=800)
    args = parser.parse_args(argv)
    print(describe_machine())
    print(f"load {load_averages()}; {args.seeds} seeds, {args.start:.0%} labelled at the start, {args.batch} labels "
          f"a proposal, alpha {ALPHA}; baseline: random order", flush=True)
    built = build_collections(list(args.only or SHAPES), args.questions, args.documents, args.faq_documents, OWN)
    table = []
    for shape, (corpus, golden) in built.items():
        worlds = searched(shape, corpus, golden)
        for name in args.sets:
            world = worlds[name]
            n = len(world.questions)
            begin = max(2, round(args.start * n))
            criterion, full, decided = decided_rule(world)
            counts = {k: int(world.found10[:, i].sum()) for i, k in enumerate(world.setups)}
            shown = " | ".join(", ".join(f"{k.removeprefix('local.')} {counts[k]}" for k in group) for group in full)
            print(f"\n{name} ({len(world.setups)} setups), found@10 of {n} by tier with every label: {shown}",
                  flush=True)
            if len(full) == 1:
                print("nothing to decide: with every label the tests separate none of them")
                table.append((shape, name, n, len(world.setups), "none: one tier", None, n - begin))
                continue
            started = time.perf_counter()
            results: dict[str, list[tuple[int, int]]] = {"proposed": [], "random": []}
            for seed in range(args.seeds):
                rng = np.random.default_rng([seed, 48])
                start = sorted(rng.choice(n, size=begin, replace=False).tolist())
                for order in results:
                    history = decisions(world, start, order, np.random.default_rng([seed, 1]), decided, args.batch)
                    results[order].append(first_and_for_good(history))
            print(f"criterion: {criterion}; labels added to {begin}, first decided / decided for good: "
                  + "; ".join(f"{order} {spread([r[0] for r in rows])} / {spread([r[1] for r in rows])}"
                              for order, rows in results.items())
                  + f" ({time.perf_counter() - started:.0f} s, load {load_averages()})", flush=True)
            table.append((shape, name, n, len(world.setups), criterion, results, n - begin))
    print("\n| collection | setups | questions | criterion | to add | measure | proposed: median (IQR; range) "
          "| random: median (IQR; range) | fewer (medians) |\n|---|---|---|---|---|---|---|---|---|")
    for shape, name, n, k, criterion, results, left in table:
        if results is None:
            print(f"| {shape} | {name} ({k}) | {n} | {criterion} | {left} | - | - | - | - |")
            continue
        for m, measure in enumerate(("first decided", "decided for good")):
            p, r = (np.median([row[m] for row in results[o]]) for o in ("proposed", "random"))
            fewer = f"{1 - p / r:.0%}" if r else "n/a"
            print(f"| {shape} | {name} ({k}) | {n} | {criterion} | {left} | {measure} "
                  f"| {spread([row[m] for row in results['proposed']])} "
                  f"| {spread([row[m] for row in results['random']])} | {fewer} |")
    print(f"\nload {load_averages()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
