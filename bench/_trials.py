"""The frame of the benches that replay seeded trials on an exhaustive run, collection by collection
(``bench_racing``: the race; ``bench_space``: successive halving): the collections they run on (bench_shapes'
five and the shipped sample) and the flags that size them, the loop that measures and prints each one, and
the cost column of their summaries."""
from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any, Callable, Iterable

from _machine import describe_machine, load_averages
from bench_shapes import SHAPES, build_collections

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = "sample"
COLLECTIONS = (*SHAPES, SAMPLE)
Measure = Callable[[str, Path, Path, int], dict[str, Any]]


def collection_arguments(parser: argparse.ArgumentParser) -> None:
    """``--only``, ``--questions``, ``--documents``, ``--faq-documents`` and ``--trials``."""
    parser.add_argument("--only", nargs="*", choices=COLLECTIONS, help="these collections only")
    parser.add_argument("--questions", type=int, default=80, help="questions per collection at most (default 80)")
    parser.add_argument("--documents", type=int, default=500, help="documents per collection at most (default 500)")
    parser.add_argument("--faq-documents", type=int, default=800, help="python-faq's documents at most (default 800)")
    parser.add_argument("--trials", type=int, default=10, help="seeded question orders per collection (default 10)")


def collection_files(names: list[str], args: argparse.Namespace, own: Path) -> dict[str, tuple[Path, Path]]:
    """(corpus, golden file) of each collection in ``names``, in that order: bench_shapes' built in ``own`` (a
    folder of the bench's own, as bench_shapes' are rewritten by others), the sample as it is shipped."""
    shapes = [n for n in names if n != SAMPLE]
    found = build_collections(shapes, args.questions, args.documents, args.faq_documents, own) if shapes else {}
    if SAMPLE in names:
        found[SAMPLE] = (ROOT / "samples" / "corpus.jsonl", ROOT / "samples" / "golden.jsonl")
    return {name: found[name] for name in names if name in found}


def each_collection(args: argparse.Namespace, own: Path, measure: Measure,
                    show: Callable[[dict[str, Any]], None]) -> list[dict[str, Any]]:
    """The machine and the load printed, then each collection ``args.only`` names (every one by default)
    measured (``measure(name, corpus, golden file, its place from 0)``) and shown: what each measured, for the
    summary."""
    print(describe_machine())
    print(f"load {load_averages()}; baseline: --exhaustive (every setup on every question)", flush=True)
    found = []
    for n, (name, (corpus, golden)) in enumerate(collection_files(list(args.only or COLLECTIONS), args, own).items()):
        measured = measure(name, corpus, golden, n)
        show(measured)
        found.append(measured)
    return found


def median_range(values: Iterable[float]) -> str:
    """``0.412 (0.300-0.515)``: the median (of an even count, the upper middle one) and the range."""
    ordered = sorted(values)
    return f"{ordered[len(ordered) // 2]:.3f} ({ordered[0]:.3f}-{ordered[-1]:.3f})"
