"""Every page readable at 400 px as at 1400 px, in a real browser (headless Chromium, scripts off, as
``test_report_browser``): the run page (with eight runs of history and the Chunking tab), a chunking run's
page and a matrix run's page. At both widths: no chart text under 11 px as drawn, every table either fits
its frame or sits in one that slides with a visible hint above it, the chunking and matrix views name
their pick on the first screen, and run by run shows this run's column. Screenshots go to tests/artifacts/.
"""
from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
from test_chunking_page import report as chunking_report
from test_matrix import matrix
from test_report_browser import ARTIFACTS, _open, browser  # noqa: F401  (browser: the fixture)

from evaluation.store.run_report import RunReport
from evaluation.report.builds.compare_page import render_chunking_html
from evaluation.report.builds.matrix_page import best_experiment, render_matrix_html
from evaluation.report.html import render_html
from evaluation.report.trend import trend_point

pytestmark = pytest.mark.slow
SAVED = Path(__file__).parent.parent / "fixtures" / "page"
WIDTHS = (1400, 400)
HEIGHT = 900

# The size every text element of every chart on screen is drawn at: its computed font size times its SVG's
# scale (drawn width over viewBox width), in CSS px.
CHART_TEXT_PX = """() => [...document.querySelectorAll('svg[viewBox]')].filter(svg => svg.getClientRects().length)
  .flatMap(svg => { const scale = svg.getBoundingClientRect().width / svg.viewBox.baseVal.width;
    return [...svg.querySelectorAll('text')].map(t => ({text: t.textContent,
      px: parseFloat(getComputedStyle(t).fontSize) * scale})); })"""

# Each table on screen: whether it fits (in the window, or in the frame that slides it), and when it does
# not, whether the hint of its frame is on screen (a box with height, visible, inside the window).
TABLES = """() => [...document.querySelectorAll('table')].filter(t => t.getClientRects().length).map(table => {
  let frame = table.parentElement;
  while (frame && !['auto', 'scroll'].includes(getComputedStyle(frame).overflowX)) frame = frame.parentElement;
  const inWindow = box => box.left >= -0.5 && box.right <= innerWidth + 0.5;
  const head = table.querySelector('th') ? table.querySelector('th').textContent : '';
  if (!frame) return {head, fits: inWindow(table.getBoundingClientRect()), hinted: false};
  const hint = frame.parentElement.querySelector(':scope > .scroll-hint');
  const box = hint ? hint.getBoundingClientRect() : null;
  return {head, fits: frame.scrollWidth <= frame.clientWidth + 1 && inWindow(frame.getBoundingClientRect()),
          hinted: !!box && box.height > 0 && getComputedStyle(hint).visibility === 'visible' && inWindow(box)
                  && inWindow(frame.getBoundingClientRect())};
})"""


def _history(report: dict, runs: int) -> list[dict]:
    """``runs`` trend points of the report's golden file, a day apart, the report's own last."""
    mine = trend_point(RunReport.from_json(report))
    older = []
    for day in range(1, runs):
        point = copy.deepcopy(mine)
        point["id"], point["created_at"] = f"202611{day:02d}T000000000Z-00000{day}", f"2026-11-{day:02d}T00:00:00Z"
        older.append(point)
    return [*older, mine]


@pytest.fixture(scope="module")
def pages(tmp_path_factory) -> dict[str, tuple[Path, dict]]:
    """The pages looked at, each a file and the report it shows."""
    folder = tmp_path_factory.mktemp("phone")
    report = json.loads((SAVED / "report.json").read_text(encoding="utf-8"))
    chunking, matrix_report = chunking_report(), matrix(folder, top_k=(1, 3, 5, 10),
                                                        methods=("keyword", "dense", "hybrid"))
    made = {"run": (render_html(report, history=_history(report, 8), chunking=chunking, matrix=matrix_report), report),
            "chunking": (render_chunking_html(chunking), chunking),
            "matrix": (render_matrix_html(matrix_report), matrix_report)}
    out = {}
    for name, (page, shown) in made.items():
        path = folder / f"{name}.html"
        path.write_text(page, encoding="utf-8")
        out[name] = (path, shown)
    return out


def _readable(page, width: int) -> None:
    """No chart text under 11 px; every table fits or slides under a visible hint."""
    small = [t for t in page.evaluate(CHART_TEXT_PX) if t["px"] < 11 - 1e-6]
    assert not small, f"chart text under 11 px at {width} px: {small[:5]}"
    tables = page.evaluate(TABLES)
    assert tables and not [t for t in tables if not (t["fits"] or t["hinted"])], tables


@pytest.mark.parametrize("width", WIDTHS)
def test_the_run_page_has_chart_text_of_11_px_tables_that_fit_or_say_they_slide_and_this_runs_column(
        browser, pages, width):  # noqa: F811 - the fixture imported above
    path, report = pages["run"]
    context, page, requested = _open(browser, path, width=width, height=HEIGHT)
    try:
        _readable(page, width)
        # the chart is there and drawn: one point per setup that ran, each on screen
        texts = page.evaluate(CHART_TEXT_PX)
        assert len([t for t in texts if t["px"] >= 11]) >= 10
        points = page.locator("svg.chart g.point:visible circle:not(.ring)")
        assert points.count() == len([s for s in report["setups"] if s.get("summary") and not s.get("error")])
        for i in range(points.count()):
            box = points.nth(i).bounding_box()
            assert box and 0 <= box["x"] and box["x"] + box["width"] <= width
        # run by run: this run's column heads with this run's id and stays inside the window, each row's cell too
        this_run = page.locator("#history table.trend thead th.this-run")
        assert this_run.get_attribute("title") == report["id"] and "this run" in this_run.inner_text()
        cells = [this_run, *page.locator("#history table.trend tbody td.this-run").all(),
                 *page.locator("#history table.trend tbody td.key").all()]
        assert len(cells) == 1 + 2 * len(page.locator("#history table.trend tbody tr").all())
        for cell in cells:
            box = cell.bounding_box()
            assert cell.is_visible() and box["x"] >= 0 and box["x"] + box["width"] <= width + 0.5, (cell, box)
        ARTIFACTS.mkdir(exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / f"phone-run-{width}.png"), full_page=True)
        # the Chunking tab of the same page: its pick named, its tables and chart readable
        page.goto(path.as_uri() + "#tab-chunking")
        assert page.locator("#chunking .named-pick").is_visible() and page.locator("#matrix .named-pick").is_visible()
        _readable(page, width)
        page.screenshot(path=str(ARTIFACTS / f"phone-run-chunking-tab-{width}.png"), full_page=True)
    finally:
        context.close()
    assert requested and all(url.startswith(path.as_uri()) for url in requested)  # nothing but the file


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("view", ["chunking", "matrix"])
def test_the_chunking_and_matrix_views_name_their_pick_first_and_every_table_fits_or_says_it_slides(
        browser, pages, view, width):  # noqa: F811 - the fixture imported above
    path, report = pages[view]
    pick = report["pick"]["pick"] if view == "chunking" else best_experiment(report)
    context, page, requested = _open(browser, path, width=width, height=HEIGHT)
    try:
        named = page.locator(".named-pick")
        box = named.bounding_box()
        # the pick by name, on the first screen, before any table
        assert named.is_visible() and box["y"] + box["height"] <= HEIGHT and box["x"] + box["width"] <= width
        assert named.get_attribute("data-pick") == pick and f"Pick: {pick}" in named.inner_text()
        assert box["y"] < page.locator("table").first.bounding_box()["y"]
        # and its row in the table says so
        assert page.locator("tr.picked").count() == 1 and "pick" in page.locator("tr.picked .badge").inner_text()
        _readable(page, width)
        ARTIFACTS.mkdir(exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / f"phone-{view}-{width}.png"), full_page=True)
    finally:
        context.close()
    assert requested == [path.as_uri()]


def test_a_table_that_fits_shows_no_hint_and_one_that_does_not_shows_it(browser, pages):  # noqa: F811 - the fixture imported above
    """The hint is true: the matrix's table (17 columns) slides at 400 px and says so; the run page's ranked
    table fits at 1400 px and says nothing."""
    path, _ = pages["matrix"]
    context, page, _ = _open(browser, path, width=400, height=HEIGHT)
    try:
        assert page.locator(".scroll-hint").is_visible()
        assert page.locator(".table-wrap").evaluate("el => el.scrollWidth > el.clientWidth")
    finally:
        context.close()
    path, _ = pages["run"]
    context, page, _ = _open(browser, path, width=1400, height=HEIGHT)
    try:
        assert page.locator("#ranked .table-wrap").evaluate("el => el.scrollWidth <= el.clientWidth")
        assert not page.locator("#ranked .scroll-hint").is_visible()
    finally:
        context.close()
