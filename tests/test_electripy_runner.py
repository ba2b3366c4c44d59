"""ElectriPy's RAG evaluation runner, as its users write it: its documented command with only the
program's name changed (``electripy rag eval`` is ``python3 -m evaluation matrix``), its files as they are.

The corpus and queries are ``test_matrix``'s (three documents, three queries); every run uses the fake
(hash) embedder, so no model loads and each test takes about a second.
"""
from __future__ import annotations

import csv
import json
import subprocess
import sys
from pathlib import Path

from test_matrix import write

ROOT = Path(__file__).parent.parent


def rag_eval(arguments: list[str]) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "evaluation", "matrix", "--quiet", *arguments], cwd=ROOT,
                          capture_output=True, text=True, timeout=300)


def test_the_documented_command_with_the_fake_embedder_runs_and_writes_both_reports(tmp_path):
    corpus, queries = write(tmp_path)
    out_json, out_csv = tmp_path / "out.json", tmp_path / "out.csv"

    done = rag_eval(["--corpus", str(corpus), "--queries", str(queries), "--top-k", "3,5,10", "--chunk-size", "500",
                     "--chunk-overlap", "100", "--embedder", "fake", "--report-json", str(out_json),
                     "--report-csv", str(out_csv)])

    assert done.returncode == 0, done.stderr
    report = json.loads(out_json.read_text(encoding="utf-8"))
    assert [e["name"] for e in report["embedders"]] == ["hash"]  # ElectriPy's fake is our hash embedder
    assert report["embedders"][0]["real_model"] is False
    rows = list(csv.DictReader(out_csv.open(encoding="utf-8")))
    # 1 chunk variant x 1 embedder x 2 methods (dense, hybrid) = 2 experiments, one CSV row per experiment and k
    assert len(report["experiments"]) == 1 * 1 * 2 and len(rows) == 2 * 3
