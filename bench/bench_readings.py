"""The quality table in both readings of a rank, on the five collections of ``bench_shapes.py``.

The same hits, judged twice at the doc grain (``evaluation/scoring/judging.py``): ``results`` (the
default, the baseline: positions count results as the engine returned them, so a document's later
chunks take places) and ``documents`` (trec_eval's reading: positions count distinct documents, each
at its best chunk). Among documents a first relevant position can only move up or stay, so found@k,
MRR and nDCG@10 can only rise; what this measures is by how much, on which shapes, and whether the
ranking's top (``finds_the_most`` without time: found@10, then found@1, then key) changes.

Each collection (``bench_shapes.build_collections``: short sections without headings, long pages,
API reference, mixed, the Python FAQ) is indexed with the engine's defaults (``IndexSettings()``:
both bundled embedding models, the default chunking). Collections and indexes live in this bench's
own folder (``OWN``): bench_shapes' folders are rewritten by every run of a bench that builds them,
with its own sizes (one such run, beside this one, left api-reference with 184 documents and 17
questions between the build and the search). Every setup of the embedded target runs but the
cross-encoder reranked ones (minutes per collection on 2 cores); ``--rerank`` adds
``hybrid_reranked.bge-small``. Each setup searches every question once, in a batch, 20 results deep.
Among documents, the top 10 are the first 10 distinct documents of those 20 results, so they reach
past the 10th result when a document has several chunks there (and 20 results may hold fewer than 10
documents: the exported TREC run holds the same, so trec_eval reads the same top 10); each collection
prints how many distinct documents a question's 20 results held.

    python bench/bench_readings.py [--only NAME ...] [--questions 80] [--rerank]
"""
from __future__ import annotations

import argparse
import hashlib
import sys
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from _machine import describe_machine, load_averages
from bench_shapes import CACHE as SHAPES_CACHE, SHAPES, build_collections

READINGS = ("results", "documents")  # the first is the baseline: the default reading
BASELINE = READINGS[0]
DEPTH = 20
RERANKED_KEPT = "local.hybrid_reranked.bge-small"  # the one reranked setup --rerank adds
OWN = SHAPES_CACHE.parent / "readings"  # this bench's collections and indexes (bench_shapes' are shared)


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@dataclass(frozen=True)
class SetupReadings:
    """One setup's summary in each reading, and how many questions' first relevant position differs."""

    key: str
    summaries: dict[str, dict]
    moved: int
    held: float  # distinct documents among a question's results, on average


def _short(key: str) -> str:
    return key.removeprefix("local.")


def top_of(rows: list[SetupReadings], reading: str) -> SetupReadings:
    """The ranking's top in ``reading``: found@10, then found@1, then key (``scoring.picks.rank_key``
    without a time tier: one batch per setup times nothing worth ranking)."""
    from evaluation.scoring.picks import rank_key

    return min(rows, key=lambda r: rank_key({"key": r.key, "summary": r.summaries[reading]}))


def rank_in(rows: list[SetupReadings], reading: str, key: str) -> int:
    from evaluation.scoring.picks import rank_key

    ordered = sorted(rows, key=lambda r: rank_key({"key": r.key, "summary": r.summaries[reading]}))
    return 1 + [r.key for r in ordered].index(key)


def measure(shape: str, corpus: Path, golden: Path, rerank: bool) -> tuple[list[SetupReadings], int, int]:
    """Every setup's summaries in both readings on one collection; also the questions and how many of
    them have a different first relevant position in at least one setup."""
    from evaluation.engine.index import IndexSettings, build_index, open_index
    from evaluation.engine.target import EmbeddedTarget
    from evaluation.golden import read_golden
    from evaluation.scoring.judging import Rule, judge
    from evaluation.scoring.metrics import summarise

    folder = corpus.parent / "index"
    started = time.perf_counter()
    manifest = build_index(corpus, folder, IndexSettings())
    built = time.perf_counter() - started
    questions = read_golden(golden).labelled
    texts = [q.question for q in questions]
    index = open_index(folder)
    documents, chunks = manifest["corpus"]["documents"], manifest["chunks"]
    print(f"\n## {shape}\n\n{documents} documents, {chunks} chunks ({chunks / documents:.1f} per document), "
          f"models {', '.join(index.models)}, {len(questions)} questions (corpus sha256 {_sha256(corpus)[:12]}; "
          f"index {'reused' if manifest.get('reused') else f'built in {built:.0f} s'}; load {load_averages()})",
          flush=True)
    target = EmbeddedTarget(index, cross_encoder=rerank, cache=False)
    setups = [s for s in target.setups() if s.ranker is None or s.key == RERANKED_KEPT]
    rules = {reading: Rule("doc", rank_among=reading) for reading in READINGS}
    rows, moved_any = [], set()
    started = time.perf_counter()
    for setup in setups:
        hits = target.search_batch(setup, texts, DEPTH)
        outcomes = {
            reading: [judge(q, h, rule) for q, h in zip(questions, hits, strict=True)]
            for reading, rule in rules.items()
        }
        moved = {a.question_id for a, b in zip(*outcomes.values(), strict=True) if a.first != b.first}
        moved_any |= moved
        held = sum(len({hit.doc_id for hit in found}) for found in hits) / max(1, len(hits))
        rows.append(SetupReadings(setup.key, {r: summarise(o) for r, o in outcomes.items()}, len(moved), held))
    held = [row.held for row in rows]
    print(f"{len(setups)} setups searched in {time.perf_counter() - started:.0f} s (load {load_averages()}); "
          f"a question's {DEPTH} results held {min(held):.1f}-{max(held):.1f} distinct documents "
          f"(mean per setup, lowest to highest)\n")
    return rows, len(questions), len(moved_any)


def _pair(summaries: dict[str, dict], value) -> str:
    return " / ".join(value(summaries[r]) for r in READINGS)


def print_collection(rows: list[SetupReadings], n: int, moved_any: int) -> None:
    print(f"Each cell: {' / '.join(READINGS)}; diff = {READINGS[1]} - {BASELINE} (the baseline). "
          f"found@{DEPTH} among {BASELINE}: every relevant document in the {DEPTH} results, the most found@10 "
          f"among {READINGS[1]} can reach. moved: questions whose first relevant position differs.\n")
    print(f"| setup | found@1 | found@10 | found@{DEPTH} ({BASELINE}) | MRR | diff | nDCG@10 | diff | moved |\n"
          "|---|---|---|---|---|---|---|---|---|")
    for row in rows:
        s, b, other = row.summaries, row.summaries[BASELINE], row.summaries[READINGS[1]]
        found1, found10 = _pair(s, lambda x: str(x["counts"]["1"])), _pair(s, lambda x: str(x["counts"]["10"]))
        mrr, ndcg = _pair(s, lambda x: f"{x['mrr']:.3f}"), _pair(s, lambda x: f"{x['ndcg_10']:.3f}")
        mrr_diff, ndcg_diff = other["mrr"] - b["mrr"], other["ndcg_10"] - b["ndcg_10"]
        print(f"| {_short(row.key)} | {found1} | {found10} (of {n}) | {b['counts'][str(DEPTH)]} "
              f"| {mrr} | {mrr_diff:+.3f} | {ndcg} | {ndcg_diff:+.3f} | {row.moved} |")
    tops = {reading: top_of(rows, reading) for reading in READINGS}
    print()
    for reading, top in tops.items():
        s = top.summaries[reading]
        print(f"top ({reading}): {_short(top.key)}, found@10 {s['counts']['10']}/{n}, found@1 {s['counts']['1']}/{n}")
    base, other = tops[BASELINE], tops[READINGS[1]]
    if base.key == other.key:
        print("the top is the same in both readings")
    else:
        s, t = base.summaries[READINGS[1]], other.summaries[BASELINE]
        print(f"the top differs: {_short(base.key)} ranks #{rank_in(rows, READINGS[1], base.key)} among "
              f"{READINGS[1]} (found@10 {s['counts']['10']}/{n}, found@1 {s['counts']['1']}/{n}); "
              f"{_short(other.key)} ranks #{rank_in(rows, BASELINE, other.key)} among {BASELINE} "
              f"(found@10 {t['counts']['10']}/{n}, found@1 {t['counts']['1']}/{n})")
    print(f"questions with a different first relevant position: {moved_any} of {n} in at least one setup; "
          f"{base.moved} in the top setup ({_short(base.key)})")


def largest(rows: list[SetupReadings], metric: str) -> str:
    row = max(rows, key=lambda r: (abs(r.summaries[READINGS[1]][metric] - r.summaries[BASELINE][metric]), r.key))
    diff = row.summaries[READINGS[1]][metric] - row.summaries[BASELINE][metric]
    return f"{diff:+.3f} ({_short(row.key)})" if diff else "0 (every setup)"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", nargs="*", choices=SHAPES, help="these collections only")
    parser.add_argument("--questions", type=int, default=80, help="questions per collection at most (default 80)")
    parser.add_argument("--documents", type=int, default=500, help="documents per collection at most (default 500)")
    parser.add_argument("--faq-documents", type=int, default=800,
                        help="python-faq's documents at most, its questions' expected ones always in (default 800)")
    parser.add_argument("--rerank", action="store_true",
                        help=f"also {_short(RERANKED_KEPT)} (the cross-encoder: minutes per collection)")
    args = parser.parse_args(argv)
    print(describe_machine())
    print(f"load {load_averages()}; baseline: the {BASELINE!r} reading (the default); judged at doc grain, "
          f"{DEPTH} results per question", flush=True)
    built = build_collections(list(args.only or SHAPES), args.questions, args.documents, args.faq_documents, OWN)
    summary = []
    for shape, (corpus, golden) in built.items():
        rows, n, moved_any = measure(shape, corpus, golden, args.rerank)
        print_collection(rows, n, moved_any)
        tops = [top_of(rows, reading).key for reading in READINGS]
        summary.append((shape, n, tops, largest(rows, "mrr"), largest(rows, "ndcg_10")))
    print(f"\n## Summary (diff = {READINGS[1]} - {BASELINE}, the largest in size over setups)\n")
    print(f"| collection | questions | top ({READINGS[0]}) | top ({READINGS[1]}) | same? | MRR diff | nDCG@10 diff |")
    print("|---|---|---|---|---|---|---|")
    for shape, n, tops, mrr, ndcg in summary:
        print(f"| {shape} | {n} | {_short(tops[0])} | {_short(tops[1])} | {'yes' if tops[0] == tops[1] else 'no'} "
              f"| {mrr} | {ndcg} |")
    print(f"\nload {load_averages()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
