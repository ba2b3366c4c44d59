"""Keyword rules side by side: chunk BM25, whole-document BM25, and chunk lists that use the document's rank.

BM25 only (no model is loaded unless ``--vectors``): the corpus is chunked as the index chunks it,
chunk and document BM25s are built in memory, and each golden question is searched under every rule.
Judged at ``doc`` grain, and at ``evidence`` grain when the golden file has quotes (a chunk-level
check; whole-document rules return documents, so they have none). Baseline: chunk BM25, the
engine's keyword before issue 15. Then the shipped engine itself: a models-free index is built (the
document BM25's build time printed), its keyword results are checked to be the shipped rule's, and
single-search latency is compared with chunk BM25 alone.

``--vectors INDEX``: hybrid too, BM25 + each model's dense list fused (RRF k=60, 50 deep) with either
keyword list, reading the chunk vectors of an index built from the same corpus (any format: only
``chunks.jsonl`` and ``vectors/*.npy`` are read) and embedding the questions.

    python bench/bench_keyword.py [--corpus samples/corpus.jsonl] [--golden samples/golden.jsonl] [--vectors DIR]
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from fractions import Fraction
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np

from evaluation.engine.chunking import chunk_corpus
from evaluation.engine.corpus import read_corpus
from evaluation.engine.fusion import RRF_K, rrf, top_k
from evaluation.engine.index import (BM25_SETTINGS, DOCUMENT_BM25_SETTINGS, IndexSettings, bm25_tokenize,
                                     build_index, document_text, open_index)
from evaluation.engine.target import EmbeddedTarget
from evaluation.golden import read_golden
from evaluation.scoring.judging import judge
from evaluation.scoring.metrics import summarise
from evaluation.target import Hit

DEPTH = 20
POOL = 50  # the engine's fusion_candidates


def bm25(texts: list[str], settings: dict = BM25_SETTINGS):
    import bm25s

    retriever = bm25s.BM25(method=settings["method"], k1=settings["k1"], b=settings["b"])
    retriever.index(bm25_tokenize(texts), show_progress=False)
    return retriever


def scores_of(retriever, tokens: list[str], size: int) -> np.ndarray:
    ids = retriever.get_tokens_ids(tokens)
    return retriever.get_scores_from_ids(ids) if ids else np.zeros(size)


def ranks(scores: np.ndarray) -> dict[int, int]:
    """Every matched position's 1-based rank (equal scores in position order, as the engine cuts)."""
    matched = int(np.count_nonzero(scores > 0))
    return {i: r for r, (i, _) in enumerate(top_k(scores, matched), start=1)}


def fused(chunk_rank: dict[int, int], doc_of: np.ndarray, doc_rank: dict[int, int], *,
          best_only: bool = False) -> list[int]:
    """Matched chunks by 1/(k + chunk rank) + 1/(k + its document's rank), exact, ties in index order.
    ``best_only``: the document's term goes to its best chunk alone (one boosted chunk per document)."""
    best: dict[int, int] = {}
    for i, _ in sorted(chunk_rank.items(), key=lambda p: p[1]):
        best.setdefault(int(doc_of[i]), i)
    total = {}
    for i, r in chunk_rank.items():
        d = int(doc_of[i])
        boosted = d in doc_rank and (not best_only or best[d] == i)
        total[i] = Fraction(1, RRF_K + r) + (Fraction(1, RRF_K + doc_rank[d]) if boosted else 0)
    return sorted(total, key=lambda i: (-total[i], i))


SHIPPED = "c0 rrf(chunk, doc b=0) (shipped)"
RULES = ("a chunk BM25 (before)", "b whole-document BM25 b=0.75", "b0 whole-document BM25 b=0",
         "c rrf(chunk, doc b=0.75)", SHIPPED, "j0 rrf(chunk, doc b=0 on best chunk)",
         "e rrf(chunk, best-chunk doc)", "d documents by doc BM25 b=0, chunks within")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--corpus", default="samples/corpus.jsonl")
    parser.add_argument("--golden", default="samples/golden.jsonl")
    parser.add_argument("--vectors", type=Path, help="an index folder of the same corpus: measure hybrid too")
    args = parser.parse_args()
    corpus = read_corpus(args.corpus)
    chunks = chunk_corpus(corpus, IndexSettings().chunking)
    docs = list(corpus)
    doc_pos = {d.id: n for n, d in enumerate(docs)}
    doc_of = np.array([doc_pos[c.doc_id] for c in chunks])
    chunk_bm25 = bm25([c.indexed_text for c in chunks])
    doc_bm25 = bm25([document_text(d) for d in docs])
    doc_bm25_0 = bm25([document_text(d) for d in docs], DOCUMENT_BM25_SETTINGS)
    print(f"{args.corpus}: {len(docs)} documents, {len(chunks)} chunks")
    questions = read_golden(args.golden).labelled
    has_evidence = any(q.usable_evidence for q in questions)

    def chunk_hits(order: list[int]) -> list[Hit]:
        return [Hit(id=chunks[i].id, doc_id=chunks[i].doc_id, page=chunks[i].page, score=0.0, text=chunks[i].text)
                for i in order[:DEPTH]]

    def doc_hits(order: list[int]) -> list[Hit]:
        return [Hit(id=docs[d].id, doc_id=docs[d].id, page=None, score=0.0, text=docs[d].text) for d in order[:DEPTH]]

    results: dict[str, list[list[Hit]]] = {name: [] for name in RULES}
    keyword_lists: dict[str, list[list[int]]] = {"a": [], "c0": []}
    for tokens in bm25_tokenize([q.question for q in questions]):
        c_rank = ranks(scores_of(chunk_bm25, tokens, len(chunks)))
        d_rank = ranks(scores_of(doc_bm25, tokens, len(docs)))
        d0_rank = ranks(scores_of(doc_bm25_0, tokens, len(docs)))
        by_chunk = sorted(c_rank, key=c_rank.__getitem__)
        first: dict[int, int] = {}  # document -> rank of its best chunk
        for i in by_chunk:
            first.setdefault(int(doc_of[i]), c_rank[i])
        b_rank = {d: n for n, d in enumerate(sorted(first, key=lambda d: (first[d], d)), start=1)}
        shipped = fused(c_rank, doc_of, d0_rank)
        keyword_lists["a"].append(by_chunk[:POOL])
        keyword_lists["c0"].append(shipped[:POOL])
        for name, hits in zip(
            RULES,
            (
                chunk_hits(by_chunk),
                doc_hits(sorted(d_rank, key=d_rank.__getitem__)),
                doc_hits(sorted(d0_rank, key=d0_rank.__getitem__)),
                chunk_hits(fused(c_rank, doc_of, d_rank)),
                chunk_hits(shipped),
                chunk_hits(fused(c_rank, doc_of, d0_rank, best_only=True)),
                chunk_hits(fused(c_rank, doc_of, b_rank)),
                chunk_hits(sorted(c_rank, key=lambda i: (d0_rank.get(int(doc_of[i]), 1 << 30), c_rank[i]))),
            ),
            strict=True,
        ):
            results[name].append(hits)

    print(
        f"{len(questions)} questions, top {DEPTH}; doc grain"
        + (" | evidence grain (chunk-level)" if has_evidence else "")
    )
    head = f"{'found@1':>8} {'found@10':>9} {'MRR':>6} {'nDCG@10':>8}"
    print(f"  {'rule':44} {head}" + (f" | {head}" if has_evidence else ""))
    for name, hits in results.items():
        print(f"  {name:44}" + table_row(questions, hits, has_evidence, documents=name.startswith("b")))

    engine_check(corpus, chunks, questions, [[chunks[i].id for i in h] for h in keyword_lists["c0"]])
    if args.vectors:
        hybrid(args.vectors, chunks, questions, keyword_lists, has_evidence)


def table_row(questions, hits, has_evidence: bool, *, documents: bool = False) -> str:
    line = ""
    for grain in ("doc", "evidence") if has_evidence else ("doc",):
        if grain == "evidence":
            line += " |"
            if documents:
                continue  # whole documents: no chunk to judge
        s = summarise([judge(q, h, grain) for q, h in zip(questions, hits, strict=True)])
        line += f" {s['counts']['1']:>8} {s['counts']['10']:>9} {s['mrr']:6.3f} {s['ndcg_10']:8.3f}"
    return line


def engine_check(corpus, chunks, questions, expected_ids: list[list[str]]) -> None:
    """Build a models-free index, check its keyword lists are the shipped rule's, time the searches."""
    texts = [q.question for q in questions]
    with tempfile.TemporaryDirectory() as folder:
        started = time.perf_counter()
        build_index(corpus, Path(folder) / "index", IndexSettings(models=()))
        build_seconds = time.perf_counter() - started
        started = time.perf_counter()
        bm25([c.indexed_text for c in chunks])
        chunk_seconds = time.perf_counter() - started
        started = time.perf_counter()
        bm25([document_text(d) for d in corpus], DOCUMENT_BM25_SETTINGS)
        doc_seconds = time.perf_counter() - started
        print(f"engine: a models-free index in {build_seconds:.2f} s; BM25 build (tokenise + index) of the "
              f"chunks {chunk_seconds:.2f} s, of the documents {doc_seconds:.2f} s")
        index = open_index(Path(folder) / "index")
        target = EmbeddedTarget(index, cross_encoder=False, cache=False, fusion_candidates=POOL)
        keyword = next(s for s in target.setups() if s.method == "keyword")
        got = [[h.id for h in hits] for hits in target.search_batch(keyword, texts, POOL)]
        same = sum(g == e for g, e in zip(got, expected_ids, strict=True))
        print(f"  engine keyword lists equal to the shipped rule's: {same}/{len(texts)}")

        def chunk_only(question: str) -> list:  # the engine's keyword before issue 15
            tokens = bm25_tokenize([question])[0]
            ids = index.bm25.get_tokens_ids(tokens)
            if not ids:
                return []
            scores = index.bm25.get_scores_from_ids(ids)
            return top_k(scores, min(DEPTH, int(np.count_nonzero(scores > 0))))

        for name, search in (("chunk BM25 (before)", chunk_only),
                             ("shipped keyword", lambda question: target.search(keyword, question, DEPTH))):
            search(texts[0])
            times = []
            for _ in range(3):
                for question in texts:
                    started = time.perf_counter()
                    search(question)
                    times.append((time.perf_counter() - started) * 1000)
            print(f"  {name:22} median {statistics.median(times):6.2f} ms, p95 "
                  f"{float(np.percentile(times, 95)):6.2f} ms "
                  f"over {len(times)} searches")


def hybrid(folder: Path, chunks, questions, keyword_lists: dict[str, list[list[int]]], has_evidence: bool) -> None:
    from evaluation.engine.models import load_embedder

    stored = [json.loads(line)["id"] for line in (folder / "chunks.jsonl").open(encoding="utf-8")]
    if stored != [c.id for c in chunks]:
        raise SystemExit(f"{folder}: its chunks are not this corpus's")
    texts = [q.question for q in questions]
    lists = {}
    for path in sorted((folder / "vectors").glob("*.npy")):
        vectors = np.load(path)
        queries = load_embedder(path.stem, threads=1).embed_queries(texts)
        lists[path.stem] = [[i for i, _ in top_k(row, POOL)] for row in queries @ vectors.T]
    print(f"hybrid (BM25 list + dense, RRF k={RRF_K}, {POOL} deep), vectors from {folder}")
    print(f"  {'keyword list, models':44} {'found@1':>8} {'found@10':>9} {'MRR':>6} {'nDCG@10':>8}")
    combos = [(m,) for m in lists] + ([tuple(lists)] if len(lists) > 1 else [])
    for combo in combos:
        for name, keyword in keyword_lists.items():
            hits = []
            for n in range(len(texts)):
                order = [i for i, _ in rrf([keyword[n]] + [lists[m][n] for m in combo], k=RRF_K)][:DEPTH]
                hits.append([Hit(id=chunks[i].id, doc_id=chunks[i].doc_id, page=chunks[i].page, score=0.0,
                                 text=chunks[i].text) for i in order])
            print(f"  {name + ', ' + '+'.join(combo):44}" + table_row(questions, hits, has_evidence))


if __name__ == "__main__":
    main()
