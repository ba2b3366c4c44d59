"""Pages come from form feeds, and an empty page is still a page: a text starting "\\f\\f" begins on
page 3, and "a\\f\\fb" has b on page 3. Chunking, judging, the golden check and the template agree."""
from __future__ import annotations

import json

import pytest

from evaluation.engine.chunking import chunk_document
from evaluation.engine.corpus import Document, read_corpus
from evaluation.engine.index import IndexSettings, build_index, open_index
from evaluation.engine.target import EmbeddedTarget
from evaluation.golden import Question, check_golden, golden_template
from evaluation.scoring.judging import judge

WORDS = " ".join(f"word{n}" for n in range(30))  # enough words for a template row
# pages: 1 "", 2 "", 3 keys, 4 "", 5 retention
LEADING_AND_EMPTY = "\f\fKeys are rotated every ninety days by the vault.\f\fRetention lasts seven years."


def test_leading_and_empty_pages_keep_their_numbers():
    document = Document("r.pdf", LEADING_AND_EMPTY)
    assert document.pages == ("", "", "Keys are rotated every ninety days by the vault.", "",
                              "Retention lasts seven years.")
    chunks = chunk_document(document)
    assert [(c.page, c.text) for c in chunks] == [(3, "Keys are rotated every ninety days by the vault."),
                                                  (5, "Retention lasts seven years.")]


@pytest.mark.parametrize("strategy", ["structure", "fixed", "recursive"])
def test_every_strategy_numbers_pages_from_the_first_form_feed_on(strategy):
    from evaluation.engine.chunking import ChunkSettings

    chunks = chunk_document(Document("r.pdf", "one\f\fthree\f\f\ffive " + WORDS), ChunkSettings(strategy=strategy))
    assert [(c.page, c.text.split()[0]) for c in chunks] == [(1, "one"), (3, "three"), (6, "five")]


@pytest.fixture
def paged_corpus(tmp_path):
    path = tmp_path / "corpus.jsonl"
    rows = [{"id": "r.pdf", "text": LEADING_AND_EMPTY},
            {"id": "t.pdf", "text": f"\f\f\f{WORDS}"}]  # only page 4 has words
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def test_an_expected_page_after_empty_pages_is_found_by_search_and_judged_on_its_page(paged_corpus, tmp_path):
    build_index(paged_corpus, tmp_path / "index", IndexSettings(models=()))
    target = EmbeddedTarget(open_index(tmp_path / "index"), cross_encoder=False)
    keyword = target.setups()[0]
    hits = target.search(keyword, "how often are keys rotated", 20)
    assert [(h.doc_id, h.page) for h in hits] == [("r.pdf", 3)]
    assert judge(Question("?", ("r.pdf#page=3",), id="q"), hits, "doc").positions == (1,)
    assert judge(Question("?", ("r.pdf#page=1",), id="q"), hits, "doc").positions == ()


def test_the_golden_check_counts_empty_pages_when_it_finds_the_last_page(paged_corpus, tmp_path):
    golden = tmp_path / "golden.jsonl"
    golden.write_text('{"question": "How long is retention?", "expected": ["r.pdf#page=5"]}\n'
                      '{"question": "What is on page six?", "expected": ["r.pdf#page=6"]}\n', encoding="utf-8")
    result = check_golden(golden, read_corpus(paged_corpus))
    assert [(w.line, w.message) for w in result.warnings] == [
        (2, '"r.pdf#page=6" is past the last page of "r.pdf" (5 pages); check the page number'),
        # and, for the file as a whole, what that costs a run (issue 46: labels no run can find are said)
        (None, "1 of 2 questions (50%, more than 20%) names nothing the corpus holds as a run can find it: they "
               "score 0 in every setup, so the picks rest on the other 1; check their labels (the warnings above "
               "say why)")]


def test_a_page_template_names_the_page_as_counted_with_empty_ones(paged_corpus, tmp_path):
    rows = golden_template(paged_corpus, tmp_path / "golden.jsonl", n=5, by="page")
    assert [row["expected"] for row in rows] == [["t.pdf#page=4"]]  # the only page with 20 words or more
