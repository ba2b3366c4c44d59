"""golden_template: seeded rows to fill in, by document or by pages spread through the corpus."""
from __future__ import annotations

import json
from itertools import pairwise
from pathlib import Path

import pytest

from evaluation.engine.corpus import read_corpus
from evaluation.errors import GoldenFileError, UsageError
from evaluation.golden import read_golden
from evaluation.golden import check_golden
from evaluation.golden.template import golden_template

WORDS = " ".join(f"w{i}" for i in range(30))  # 30 words: enough to write a question about


def write_corpus(tmp_path: Path, rows: list[dict]) -> Path:
    path = tmp_path / "corpus.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


@pytest.fixture
def documents(tmp_path):
    return write_corpus(tmp_path, [{"id": f"doc{i:02}.md", "text": f"Document {i}. {WORDS}"} for i in range(20)])


@pytest.fixture
def paged(tmp_path):
    # Two documents of 10 pages each; pages 1 and 10 of a.pdf are near-empty (a cover, a blank page).
    a = ["Cover"] + [f"a page {n} {WORDS}" for n in range(2, 10)] + [""]
    b = [f"b page {n} {WORDS}" for n in range(1, 11)]
    return write_corpus(tmp_path, [{"id": "a.pdf", "text": "\f".join(a)}, {"id": "b.pdf", "text": "\f".join(b)},
                                   {"id": "notes.md", "text": f"Notes. {WORDS}"}])


def test_same_seed_writes_the_same_rows(documents, tmp_path):
    first = golden_template(documents, tmp_path / "one.jsonl", n=5, seed=7)
    second = golden_template(documents, tmp_path / "two.jsonl", n=5, seed=7)
    assert first == second
    assert (tmp_path / "one.jsonl").read_bytes() == (tmp_path / "two.jsonl").read_bytes()
    assert golden_template(documents, tmp_path / "three.jsonl", n=5, seed=8) != first


def test_by_doc_samples_distinct_documents_in_corpus_order(documents, tmp_path):
    rows = golden_template(documents, tmp_path / "golden.jsonl", n=5, seed=0)
    expected = [row["expected"][0] for row in rows]
    assert len(rows) == 5 and len(set(expected)) == 5 and expected == sorted(expected)
    assert [row["id"] for row in rows] == ["q1", "q2", "q3", "q4", "q5"]
    assert all(row["question"] == "" for row in rows)


def test_the_hint_shows_the_first_25_words_with_whitespace_folded(tmp_path):
    corpus = write_corpus(tmp_path, [{"id": "a.md", "text": "  Title\n\n  " + WORDS}])
    (row,) = golden_template(corpus, tmp_path / "golden.jsonl", n=1)
    assert row["hint"] == "Title " + " ".join(f"w{i}" for i in range(24)) + " …"  # 1 + 24 = 25 words


def test_by_page_spreads_rows_evenly_and_skips_near_empty_pages(paged, tmp_path):
    rows = golden_template(paged, tmp_path / "golden.jsonl", n=4, seed=3, by="page")
    expected = [row["expected"][0] for row in rows]
    # 8 usable pages of a.pdf + 10 of b.pdf + notes.md as one page = 19; every 19/4 = 4.75th of them
    usable = ([f"a.pdf#page={n}" for n in range(2, 10)] + [f"b.pdf#page={n}" for n in range(1, 11)] + ["notes.md"])
    positions = [usable.index(item) for item in expected]
    assert positions[0] < 4.75 and all(4 <= later - earlier <= 5 for earlier, later in pairwise(positions))
    assert "a.pdf#page=1" not in expected and "a.pdf#page=10" not in expected
    assert len(golden_template(paged, tmp_path / "all.jsonl", n=50, by="page")) == 19


def test_the_template_file_checks_as_rows_waiting_for_questions(documents, tmp_path):
    path = tmp_path / "golden.jsonl"
    golden_template(documents, path, n=3)
    result = check_golden(path, read_corpus(documents))
    assert (result.rows, result.unfilled, result.ready) == (3, 3, 0)
    assert [w.message.split(";")[0] for w in result.warnings] == ["3 template rows waiting for a question (lines 1-3)"]


def test_filling_one_question_makes_the_file_ready(documents, tmp_path):
    path = tmp_path / "golden.jsonl"
    golden_template(documents, path, n=3)
    lines = path.read_text(encoding="utf-8").splitlines()
    row = json.loads(lines[1])
    lines[1] = json.dumps({**row, "question": "What does document two say?"})
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    golden = read_golden(path)
    assert [q.id for q in golden.questions] == ["q2"] and golden.unfilled == 2


def test_an_existing_file_is_not_replaced_unless_asked(documents, tmp_path):
    path = tmp_path / "golden.jsonl"
    path.write_text('{"question": "Written by hand?", "expected": ["doc01.md"]}\n', encoding="utf-8")
    with pytest.raises(GoldenFileError, match="already exists"):
        golden_template(documents, path, n=2)
    assert path.read_text(encoding="utf-8").startswith('{"question": "Written by hand?"')
    assert len(golden_template(documents, path, n=2, overwrite=True)) == 2


def test_a_corpus_object_serves_as_well_as_a_path(documents, tmp_path):
    from_path = golden_template(documents, tmp_path / "a.jsonl", n=4, seed=1)
    assert golden_template(read_corpus(documents), tmp_path / "b.jsonl", n=4, seed=1) == from_path


@pytest.mark.parametrize("n, by", [(0, "doc"), (3, "chapter")])
def test_arguments_that_do_not_fit_are_usage_errors(documents, tmp_path, n, by):
    with pytest.raises(UsageError):
        golden_template(documents, tmp_path / "golden.jsonl", n=n, by=by)


def test_a_corpus_of_near_empty_pages_cannot_be_sampled_by_page(tmp_path):
    corpus = write_corpus(tmp_path, [{"id": "a.pdf", "text": "Cover\fBlank"}])
    with pytest.raises(GoldenFileError, match='sample by "doc" instead'):
        golden_template(corpus, tmp_path / "golden.jsonl", by="page")
