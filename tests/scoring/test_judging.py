"""What counts as found at each grain, with positions as results came back."""
from __future__ import annotations

import pytest

from evaluation.golden import Question
from evaluation.scoring.judging import judge, judge_rows
from evaluation.target import Hit


def hit(chunk_id, page=None, text=""):
    return Hit(id=chunk_id, doc_id=chunk_id.rsplit(":", 1)[0], page=page, score=0.0, text=text)


HITS = [hit("a.md:0", text="Nothing here."),
        hit("r.pdf:3", page=2, text="Keys are rotated every 90 days by the vault."),
        hit("a.md:4", text="Install with pip install a."), hit("r.pdf:9", page=5, text="Retention is seven years.")]


def question(expected, evidence=()):
    return Question(id="q", question="?", expected=tuple(expected), evidence=tuple(evidence))


def test_doc_grain_counts_any_chunk_of_an_expected_document_once_at_its_first_hit():
    outcome = judge(question(["a.md", "r.pdf"]), HITS, "doc")
    assert outcome.positions == (1, 2) and outcome.relevant == 2


def test_an_expected_page_counts_only_chunks_of_that_page():
    assert judge(question(["r.pdf#page=5"]), HITS, "doc").positions == (4,)
    assert judge(question(["r.pdf#page=7"]), HITS, "doc").positions == ()


def test_there_is_no_page_grain_since_doc_judges_expected_pages_already():
    with pytest.raises(ValueError, match="unknown grain 'page'"):
        judge(question(["r.pdf#page=5"]), HITS, "page")


def test_a_result_is_the_most_specific_unit_the_question_judges():
    # r.pdf and its page 2 both judged: the chunk of page 2 (position 2) is the page, and the chunk of
    # page 5 (position 4) is the document, as one TREC docno is one unit
    both = judge(question(["r.pdf", "r.pdf#page=2"]), HITS, "doc")
    assert both.positions == (2, 4) and both.relevant == 2


def test_one_result_holding_two_quotes_gives_both_its_position():
    quotes = question(["r.pdf"], evidence=["keys are rotated every", "every 90 days by the vault"])
    assert judge(quotes, HITS, "evidence").positions == (2, 2)


def test_chunk_grain_needs_the_chunk_id():
    outcome = judge(question(["a.md:4", "a.md:9"]), HITS, "chunk")
    assert outcome.positions == (3,) and outcome.relevant == 2


def test_evidence_grain_finds_a_quote_with_case_and_spacing_folded():
    outcome = judge(question(["r.pdf"], evidence=["keys are  ROTATED every 90 days"]), HITS, "evidence")
    assert outcome.positions == (2,) and outcome.relevant == 1


def test_evidence_grain_without_usable_quotes_falls_back_to_documents():
    short = question(["r.pdf"], evidence=["90 days"])  # under three words: not used
    assert judge(short, HITS, "evidence").positions == judge(short, HITS, "doc").positions == (2,)


def test_no_results_means_nothing_found():
    outcome = judge(question(["a.md"]), [], "doc")
    assert outcome.positions == () and outcome.first is None and outcome.relevant == 1


def test_an_unknown_grain_is_refused():
    with pytest.raises(ValueError, match="unknown grain"):
        judge(question(["a.md"]), HITS, "sentence")


# -- a report's result rows, judged again (run.reuse) ------------------------------------------------

ROWS = [h.to_row() for h in HITS]  # [id, doc_id, page, score]: what a report keeps of each hit


@pytest.mark.parametrize("by, expected", [
    ("doc", ["a.md", "r.pdf"]), ("doc", ["r.pdf#page=5", "a.md"]), ("doc", ["r.pdf", "r.pdf#page=2"]),
    ("doc", ["gone.md"]), ("chunk", ["a.md:4", "a.md:9"]), ("chunk", ["r.pdf:9", "a.md:0", "r.pdf:9"]),
    ("evidence", ["r.pdf"])])  # evidence without usable quotes is judged by document, rows or hits
def test_rows_are_judged_as_the_hits_they_were_made_from(by, expected):
    asked = question(expected, evidence=["90 days"])
    assert judge_rows(asked, ROWS, by) == judge(asked, HITS, by)
    assert judge_rows(asked, ROWS[::-1], by) == judge(asked, HITS[::-1], by)  # positions follow the rows' order


def test_rows_keep_no_text_so_they_cannot_be_judged_by_evidence():
    quoted = question(["r.pdf"], evidence=["keys are rotated every"])
    with pytest.raises(ValueError, match="result rows keep no text, so they cannot be judged by evidence"):
        judge_rows(quoted, ROWS, "evidence")
    with pytest.raises(ValueError, match="unknown grain"):
        judge_rows(quoted, ROWS, "sentence")
