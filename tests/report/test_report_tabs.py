"""The page's tabs (``report.page.tabs``): one tab draws the page as before tabs existed; a second tab
that has something to show gets a bar of links and its own section, beside "Retrieval"."""
from __future__ import annotations

import json
from pathlib import Path

from evaluation.report.html import render_html
from evaluation.report.page.context import Page
from evaluation.report.page.tabs import CHUNKING as CHUNKING_TAB
from evaluation.report.page.tabs import RETRIEVAL, TABS, Tab

SAVED = Path(__file__).parent.parent / "fixtures" / "page"


def _saved_report() -> dict:
    return json.loads((SAVED / "report.json").read_text(encoding="utf-8"))


def _chunking_section(page: Page) -> str:
    return f'<section id="chunking-sizes"><h2>Chunk sizes</h2><p>{len(page.setups)} setups</p></section>'


CHUNKING = Tab("chunking", "Chunking", (_chunking_section,), shows=lambda page: "chunking" in page.report.source)


def test_the_page_has_retrieval_then_chunking():
    assert TABS == (RETRIEVAL, CHUNKING_TAB)
    assert RETRIEVAL.name == "retrieval" and RETRIEVAL.title == "Retrieval"
    assert CHUNKING_TAB.name == "chunking" and CHUNKING_TAB.title == "Chunking"


def test_a_tab_with_nothing_to_show_leaves_the_page_byte_for_byte_as_before():
    report = _saved_report()  # holds no "chunking": the second tab does not show
    assert render_html(report, tabs=(RETRIEVAL, CHUNKING)) == (SAVED / "page.html").read_text(encoding="utf-8")


def test_a_second_tab_with_something_to_show_gets_a_link_and_its_own_section():
    report = {**_saved_report(), "chunking": {"sizes": [256, 512]}}
    page = render_html(report, tabs=(RETRIEVAL, CHUNKING))

    nav = page[page.index('<nav class="tabs">'):page.index("</nav>")]
    assert '<a href="#tab-retrieval">Retrieval</a>' in nav and '<a href="#tab-chunking">Chunking</a>' in nav
    retrieval = page.index('<section class="tab" id="tab-retrieval"')
    chunking = page.index('<section class="tab" id="tab-chunking"')
    # the header and the notes for every tab come first, the footer last; each tab holds its own sections
    assert page.index("<header>") < page.index('id="missing"') < page.index('<nav class="tabs">') < retrieval
    assert retrieval < page.index('id="picks"') < page.index('id="ranked"') < page.index('id="words"') < chunking
    assert chunking < page.index('id="chunking-sizes"') < page.index("<footer>")
    assert f"<p>{len(report['setups'])} setups</p>" in page  # the tab's section read the same Page


def test_a_refused_run_shows_no_tab():
    report = {**_saved_report(), "refused": {"reason": "no question is ready", "errors": []}, "chunking": {}}
    page = render_html(report, tabs=(RETRIEVAL, CHUNKING))
    assert 'id="refused"' in page and "tab-" not in page and 'id="picks"' not in page
