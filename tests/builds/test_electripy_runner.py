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

ROOT = Path(__file__).parent.parent.parent


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


class Sentences:
    """A chunker of one's own (ElectriPy's ChunkerPort): one chunk per sentence."""

    name = "sentences"

    def chunk(self, text):
        return [sentence.strip() + "." for sentence in text.split(".") if sentence.strip()]


class Letters:
    """An embedder of one's own (ElectriPy's EmbeddingPort): how often each letter occurs."""

    name = "letters"

    def __init__(self):
        self.texts = 0

    def embed(self, texts):
        self.texts += len(texts)
        return [[text.lower().count(letter) + 0.01 for letter in "abcdefghijklmnopqrstuvwxyz"] for text in texts]


def test_a_chunker_and_an_embedder_of_ones_own_plug_into_the_matrix(tmp_path):
    from evaluation.builds import matrix_csv, run_matrix
    from test_matrix import CORPUS

    corpus, queries = write(tmp_path)
    letters = Letters()
    report = run_matrix(corpus, queries, chunker=Sentences(), embedder=letters, top_k=(1, 3), methods=("dense",))

    [experiment] = report["experiments"]
    sentences = sum(len(Sentences().chunk(row["text"])) for row in CORPUS)  # doc-1: 4, doc-2: 2, doc-3: 1
    assert (experiment["chunking"], experiment["embedder"], experiment["chunks"]) == ("own:sentences", "own:letters",
                                                                                       sentences)
    assert letters.texts >= sentences + 3  # every chunk embedded, and the 3 queries, by the embedder given
    assert report["embedders"][0]["real_model"] is False and report["variants"] == [{"technique": "own:sentences"}]
    assert matrix_csv(report).splitlines()[1].split(",")[1:4] == ["own:sentences", "", ""]  # no size or overlap
