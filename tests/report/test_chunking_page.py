"""The Chunking tab and a chunking run's page: the pick, each technique at its best, ties, what was left
out, one point per build; no script, nothing fetched; and the text tables the command line prints."""
from __future__ import annotations

import re

from evaluation.builds import chunking_report
from evaluation.builds.results import BuildResult
from evaluation.report.builds.text import compare_text
from evaluation.report.builds.compare_page import chunking_section, render_chunking_html

QUESTIONS = [f"q{i}" for i in range(20)]


def result(key: str, right: int, chunks: int) -> BuildResult:
    technique, size, letter = key.split("-")
    return BuildResult(key=key, technique=technique, size=int(size), letter=letter, chunks=chunks, seconds=2.5,
                       outcomes={q: i < right for i, q in enumerate(QUESTIONS)})


def report() -> dict:
    made = chunking_report([result("markdown-1000-h", 16, 700), result("markdown-1000-n", 15, 700),
                            result("fixed-1000-h", 15, 650), result("sentence-1000-h", 8, 900)],
                           scored="found", budget=6000,
                           skipped=[{"what": "llm", "reason": "LLM-based needs a chat model"}])
    return {"id": "20261201T120000000Z-abcdef", "golden": {"questions": 20, "scored": 20},
            "scored_note": "right = an expected document among the first 6000 characters handed over", **made,
            "failed": [{"build": "semantic-1000-h", "error": "ModelError: no model"}], "seconds": 42.0,
            "vectors": {"vectors_cached": 0, "vectors_shared": 30, "vectors_computed": 70, "share_from_cache": 0.3},
            "kind": "chunking", "format": 1}


def test_the_tab_shows_the_pick_each_technique_ties_and_what_was_left_out():
    page = chunking_section(report())
    assert "Pick: <code>markdown-1000-h</code>" in page
    rows = re.findall(r'<tr class="(\w+)( picked)?"><td>([^<]+)</td><td><code>([^<]+)</code>'
                      r'(?: <span class="badge">(pick)</span>)?</td><td class="num">(\d+)/20', page)
    # the pick's row says so, and no other row does
    assert rows == [("best", " picked", "Structure-aware", "markdown-1000-h", "pick", "16"),
                    ("tie", "", "Fixed-size", "fixed-1000-h", "", "15"),
                    ("behind", "", "Sentence", "sentence-1000-h", "", "8")]
    assert "Tied with the best: fixed." in page
    assert "Left out: llm: LLM-based needs a chat model." in page and "semantic-1000-h" in page
    assert page.count("<circle") == 4  # one point per build
    assert "30% of vectors came from the cache" in page


def test_each_technique_says_how_many_questions_only_the_best_got_and_only_it_got():
    # the best gets q0-q15 right; fixed-size gets q0-q11 and q16-q17: 4 only the best got (q12-q15),
    # 2 only fixed-size got (q16, q17); swapping the two would say fixed-size found more than the best
    best = result("markdown-1000-h", 16, 700)
    fixed = BuildResult(key="fixed-1000-h", technique="fixed", size=1000, letter="h", chunks=650, seconds=2.5,
                        outcomes={q: i < 12 or i in (16, 17) for i, q in enumerate(QUESTIONS)})
    made = {**chunking_report([best, fixed], scored="found", budget=6000), "id": "20261201T120000000Z-abcdef",
            "golden": {"questions": 20, "scored": 20}, "kind": "chunking", "format": 1}

    assert "<td>4 only the best got, 2 only this; p = " in chunking_section(made)
    assert "| Fixed-size | `fixed-1000-h` | 14/20 | 650 | tie | 4 vs 2, p = " in compare_text(made, markdown=True)


def test_the_page_stands_alone_with_no_script_and_nothing_fetched():
    page = render_chunking_html(report())
    assert page.startswith("<!doctype html>") and "<script" not in page
    assert not re.search(r'(src|href)="(https?:)?//', page)


def test_a_retrieval_report_has_no_chunking_tab():
    assert chunking_section({"kind": "retrieval"}) == "" and chunking_section({}) == ""


def test_the_text_table_names_the_pick_the_ties_the_time_and_the_cache_share():
    text = compare_text(report())
    assert "Pick: markdown-1000-h." in text and "Tied with the best: fixed." in text
    assert "4 builds in 42.0 s; 30% of vectors came from the cache" in text
    markdown = compare_text(report(), markdown=True)
    assert "| Structure-aware | `markdown-1000-h` | 16/20 | 700 | best | best |" in markdown
