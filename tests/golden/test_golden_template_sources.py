"""golden_template beyond one corpus: a target's documents, several sources in one file, page hints that
say which page, its printed number and its heading, drafts from a writer, and rows returned unwritten."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from evaluation.engine.index import IndexSettings, build_index
from evaluation.engine.target import EmbeddedTarget
from evaluation.errors import GoldenFileError, UsageError
from evaluation.golden import read_golden
from evaluation.golden.pages import printed_page_number
from evaluation.golden.template import golden_template

WORDS = " ".join(f"w{i}" for i in range(30))


def write_corpus(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


@pytest.fixture
def report(tmp_path):
    """A three-page report: a cover, then pages printed 1 and 2 under Markdown headings."""
    pages = ["Annual report 2026\nCover",
             f"# Results\n\n## Retention\n\nKeys are rotated every 90 days. {WORDS}\n\n1",
             f"Retention goes on here. {WORDS}\n- 2 -"]
    return write_corpus(tmp_path / "corpus.jsonl", [{"id": "report.pdf", "text": "\f".join(pages)},
                                                    {"id": "notes.md", "text": f"# Notes\n\nShort notes. {WORDS}"}])


def test_page_hints_name_the_page_its_printed_number_its_heading_and_how_it_starts(report, tmp_path):
    rows = golden_template(report, n=10, by="page")
    assert [r["expected"] for r in rows] == [["report.pdf#page=2"], ["report.pdf#page=3"], ["notes.md"]]
    assert rows[0]["hint"] == ('report.pdf, page 2 (printed 1), under "Results > Retention": # Results ## Retention '
                               "Keys are rotated every 90 days. " + " ".join(f"w{i}" for i in range(25 - 10)) + " …")
    assert rows[1]["hint"].startswith('report.pdf, page 3 (printed 2), under "Results > Retention": Retention goes on')
    assert rows[2]["hint"].startswith('notes.md, under "Notes": # Notes Short notes.')


@pytest.mark.parametrize("page, printed", [
    ("text\n\n41", "41"), ("41\ntext", "41"), ("text\nPage 7 of 200", "7"), ("text\n- 12 -", "12"),
    ("xii\nPreface text", "xii"), ("text\n12 / 40", "12"),
    ("text with 41 in it", None), ("text\n0", None), ("text\nIv", None), ("text\nmixed 4 words", None),
])
def test_the_printed_number_is_a_header_or_footer_line_that_is_only_a_page_number(page, printed):
    assert printed_page_number(page) == printed


def test_without_a_path_the_rows_are_returned_and_nothing_is_written(report, tmp_path):
    rows = golden_template(report, n=1)
    assert rows == [{"id": "q1", "question": "", "expected": ["notes.md"],
                     "hint": "# Notes Short notes. " + " ".join(f"w{i}" for i in range(25 - 4)) + " …"}]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["corpus.jsonl"]


def test_an_existing_file_is_never_written_over_by_default(report, tmp_path):
    path = tmp_path / "golden.jsonl"
    path.write_text('{"question": "Checked by hand?", "expected": ["notes.md"]}\n', encoding="utf-8")
    with pytest.raises(GoldenFileError, match="already exists"):
        golden_template(report, path, n=2)
    assert path.read_text(encoding="utf-8") == '{"question": "Checked by hand?", "expected": ["notes.md"]}\n'


def test_a_writer_drafts_each_question_from_the_text_and_marks_it_draft(report, tmp_path):
    seen = []

    def writer(text: str) -> str:
        seen.append(text)
        return f"  What does {text.split()[0]}\n say? "

    path = tmp_path / "golden.jsonl"
    rows = golden_template(report, path, n=2, by="page", writer=writer)
    # 3 usable pages (the cover has 4 words), every 3/2-th from a seeded start: page 3 and notes.md
    assert [r["expected"] for r in rows] == [["report.pdf#page=3"], ["notes.md"]]
    assert [r["question"] for r in rows] == ["What does Retention say?", "What does # say?"]
    assert all(r["draft"] is True for r in rows) and seen[0].startswith("Retention goes on here.")
    golden = read_golden(path)
    assert [q.id for q in golden.draft_rows] == ["q1", "q2"] and golden.unfilled == 0


def test_a_writer_that_returns_no_question_stops_the_template_before_anything_is_written(report, tmp_path):
    with pytest.raises(GoldenFileError, match=r"the writer gave '' for notes.md; a writer returns the question"):
        golden_template(report, tmp_path / "golden.jsonl", n=1, writer=lambda text: "")
    assert not (tmp_path / "golden.jsonl").exists()
    with pytest.raises(UsageError, match="writer must be a callable"):
        golden_template(report, n=1, writer="a model")


def test_a_list_samples_several_collections_into_one_file(tmp_path):
    a = write_corpus(tmp_path / "a.jsonl", [{"id": f"a{i}.md", "text": f"A {i}. {WORDS}"} for i in range(3)])
    b = write_corpus(tmp_path / "b.jsonl", [{"id": f"b{i}.md", "text": f"B {i}. {WORDS}"} for i in range(3)])
    rows = golden_template([a, b], tmp_path / "golden.jsonl", n=50)
    assert [r["expected"][0] for r in rows] == ["a0.md", "a1.md", "a2.md", "b0.md", "b1.md", "b2.md"]
    assert [r["id"] for r in rows] == [f"q{i}" for i in range(1, 7)]  # one numbering across the file
    four = golden_template([a, b], n=4, seed=5)
    assert len(four) == 4 and four == golden_template([a, b], n=4, seed=5)


def bm25_index(corpus: Path, folder: Path) -> EmbeddedTarget:
    build_index(corpus, folder, IndexSettings(models=()))
    return EmbeddedTarget(folder, cache=False, cross_encoder=False)


def test_a_target_gives_the_documents_of_the_corpus_its_index_was_built_from(report, tmp_path):
    target = bm25_index(report, tmp_path / "index")
    assert golden_template(target, n=10, by="page") == golden_template(report, n=10, by="page")
    assert golden_template(target, n=10) == golden_template(report, n=10)


def test_a_target_whose_corpus_is_gone_is_sampled_from_its_own_chunks(report, tmp_path):
    target = bm25_index(report, tmp_path / "index")
    from_corpus = golden_template(report, n=10, by="page")
    report.unlink()
    rows = golden_template(target, n=10, by="page")
    assert [r["expected"] for r in rows] == [r["expected"] for r in from_corpus]
    # the chunks hold headings apart from their text, so the hint opens on the page's words
    assert rows[0]["hint"].startswith('report.pdf, page 2 (printed 1), under "Results > Retention": Keys are rotated')
    assert [r["expected"] for r in golden_template(target, n=10)] == [["report.pdf"], ["notes.md"]]


def test_what_is_neither_a_corpus_nor_a_target_is_a_sentence(tmp_path):
    with pytest.raises(UsageError, match="golden_template samples a corpus .* not dict"):
        golden_template({"a": "text"}, n=1)
    with pytest.raises(UsageError, match="the list given is empty"):
        golden_template([], n=1)
