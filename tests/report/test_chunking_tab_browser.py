"""The two tabs in a real browser (headless Chromium, scripts off, as ``test_report_browser``): one tab on
screen at a time by CSS alone, Retrieval first, Chunking when the address names it, each fitting 1400 and
400 px. Screenshots go to tests/artifacts/ for a person to look at."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_chunking_page import report as chunking_report
from test_matrix import matrix
from test_report_browser import ARTIFACTS, _open, browser  # noqa: F401  (browser: the fixture)

from evaluation.report.html import render_html

pytestmark = pytest.mark.slow
SAVED = Path(__file__).parent.parent / "fixtures" / "page"


def _two_tabs(tmp_path: Path) -> Path:
    report = json.loads((SAVED / "report.json").read_text(encoding="utf-8"))
    path = tmp_path / "report.html"
    path.write_text(render_html(report, chunking=chunking_report(), matrix=matrix(tmp_path)), encoding="utf-8")
    return path


def _current(page) -> list[str]:
    """The tab links drawn as the open tab (a white background on the bar)."""
    links = page.locator("nav.tabs a")
    return [links.nth(i).inner_text() for i in range(links.count())
            if links.nth(i).evaluate("a => getComputedStyle(a).backgroundColor") == "rgb(255, 255, 255)"]


def _scroll_width(browser, path: Path, width: int) -> int:  # noqa: F811 - the fixture imported above
    context, page, _ = _open(browser, path, width=width, height=900)
    try:
        return page.evaluate("document.documentElement.scrollWidth")
    finally:
        context.close()


@pytest.mark.parametrize("width", [1400, 400])
def test_one_tab_shows_at_a_time_retrieval_first_and_chunking_when_its_link_is_followed(
        browser, tmp_path, width):  # noqa: F811 - the fixture imported above
    path = _two_tabs(tmp_path)
    # the page without tabs is the measure: the tabs widen nothing (at 400 px the saved run's golden line
    # already reaches past the window by a few pixels, tabs or not)
    widest = max(width, _scroll_width(browser, SAVED / "page.html", width))
    context, page, requested = _open(browser, path, width=width, height=900)
    try:
        assert page.locator("#tab-retrieval").is_visible() and not page.locator("#tab-chunking").is_visible()
        assert page.locator("#picks").is_visible() and not page.locator("#chunking").is_visible()
        assert _current(page) == ["Retrieval"]
        assert page.evaluate("document.documentElement.scrollWidth") <= widest
        ARTIFACTS.mkdir(exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / f"tabs-retrieval-{width}.png"), full_page=False)
        page.locator('nav.tabs a[href="#tab-chunking"]').click()
        assert page.locator("#chunking").is_visible() and page.locator("#matrix").is_visible()
        assert not page.locator("#tab-retrieval").is_visible() and not page.locator("#picks").is_visible()
        assert _current(page) == ["Chunking"]
        assert page.locator("header").is_visible() and page.locator("footer").is_visible()  # outside the tabs
        assert page.evaluate("document.documentElement.scrollWidth") <= widest  # wide tables slide in their frame
        page.screenshot(path=str(ARTIFACTS / f"tabs-chunking-{width}.png"), full_page=True)
        page.locator('nav.tabs a[href="#tab-retrieval"]').click()
        assert page.locator("#picks").is_visible() and _current(page) == ["Retrieval"]
        # an address inside a tab (a section's anchor) opens that tab
        page.goto(path.as_uri() + "#matrix")
        assert page.locator("#matrix").is_visible() and not page.locator("#picks").is_visible()
        assert _current(page) == ["Chunking"]
        page.goto(path.as_uri() + "#ranked")
        assert page.locator("#ranked").is_visible() and not page.locator("#chunking").is_visible()
        assert _current(page) == ["Retrieval"]
    finally:
        context.close()
    assert requested == [path.as_uri()]
