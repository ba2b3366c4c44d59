"""bench/scale_corpus.py on a slice of Python's docs: sizes by chunk count, known-item questions, the same every
time."""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path

import pytest

from evaluation.engine.chunking import chunk_corpus
from evaluation.engine.corpus import read_corpus
from evaluation.golden import check_golden

sys.path.insert(0, str(Path(__file__).resolve().parent.parent.parent / "bench"))
import python_docs
import scale_corpus

HTML = python_docs.HTML
PAGES = ("shutil", "threading", "queue", "pickle", "random", "os.path", "json", "csv")
pytestmark = pytest.mark.skipif(not (HTML / "library" / "shutil.html").is_file(),
                                reason=f"python3.11-doc is not installed ({HTML})")


@pytest.fixture(scope="module")
def pool(tmp_path_factory: pytest.TempPathFactory) -> list[dict]:
    """Eight library pages as the whole pool: parses and chunks in about a second, no model needed."""
    root = tmp_path_factory.mktemp("html")
    (root / "library").mkdir()
    for page in PAGES:
        (root / "library" / f"{page}.html").symlink_to(HTML / "library" / f"{page}.html")
    return scale_corpus.pool_rows([scale_corpus.Source("python", root, "python3.11-doc", "test", ("library",))])


def _chunks(docs: list[dict]) -> int:
    return sum(d["metadata"]["chunks"] for d in docs)


def test_a_size_is_the_fewest_sections_in_hash_order_whose_chunks_reach_it(pool):
    total = _chunks(pool)
    target = total // 3
    docs, _ = scale_corpus.choose(pool, target, 10)
    assert _chunks(docs) >= target
    by_hash = sorted(docs, key=lambda d: scale_corpus._sha(d["id"]))
    assert _chunks(docs) - by_hash[-1]["metadata"]["chunks"] < target  # one section fewer falls short
    assert [d["id"] for d in docs] == [d["id"] for d in pool if d in docs]  # kept in pool order


def test_the_chunk_counts_are_the_ones_the_index_will_report(pool, tmp_path):
    docs, golden = scale_corpus.choose(pool, _chunks(pool) // 2, 10)
    corpus_path, _ = scale_corpus.write(tmp_path, docs, golden)
    assert len(chunk_corpus(read_corpus(corpus_path))) == _chunks(docs)  # what `index` chunks, default settings


def test_every_question_is_a_unique_heading_whose_section_is_in_the_corpus(pool, tmp_path):
    docs, golden = scale_corpus.choose(pool, _chunks(pool) // 4, 1000)
    held = {d["id"]: d for d in docs}
    headings = [scale_corpus.fold(r["metadata"]["heading"]) for r in pool]
    assert 0 < len(golden) < len(docs)
    for question in golden:
        (expected,) = question["expected"]
        assert expected in held
        assert question["question"] == held[expected]["metadata"]["heading"]
        assert headings.count(scale_corpus.fold(question["question"])) == 1  # one right answer in the whole pool
        assert len(question["question"].split()) >= scale_corpus.MIN_QUESTION_WORDS
    corpus_path, golden_path = scale_corpus.write(tmp_path, docs, golden)
    report = check_golden(golden_path, corpus=read_corpus(corpus_path))
    assert not report.errors and not report.warnings


def test_the_same_pool_in_any_order_gives_the_same_files_and_sizes_nest(pool, tmp_path):
    shuffled = pool[:]
    random.Random(15).shuffle(shuffled)
    small = scale_corpus.choose(pool, _chunks(pool) // 4, 5)
    big = scale_corpus.choose(pool, _chunks(pool) // 2, 10)
    again = scale_corpus.choose(shuffled, _chunks(pool) // 2, 10)
    assert sorted(d["id"] for d in again[0]) == sorted(d["id"] for d in big[0])
    assert again[1] == big[1]
    assert {d["id"] for d in small[0]} < {d["id"] for d in big[0]}
    files = [scale_corpus.write(tmp_path / name, *chosen) for name, chosen in (("a", big), ("b", big))]
    assert [p.read_bytes() for p in files[0]] == [p.read_bytes() for p in files[1]]
    first = [json.loads(line) for line in files[0][1].read_text(encoding="utf-8").splitlines()]
    assert first[:2] == scale_corpus.choose(pool, _chunks(pool) // 2, 2)[1]  # 2 questions start the 10


def test_a_heading_two_sections_share_or_of_two_words_asks_nothing():
    def row(doc_id: str, heading: str) -> dict:
        return {"id": doc_id, "metadata": {"heading": heading, "chunks": 1}}

    pool = [row("a/x", "Thread-Local Data"), row("a/y", "How to copy files"), row("b/y", "How  to COPY files"),
            row("c/z", "Deleting a directory tree")]
    assert scale_corpus.question_headings(pool) == {"c/z": "Deleting a directory tree"}
