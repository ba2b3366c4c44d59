"""The HTML report in a real browser: Debian's Chromium, driven headless by Playwright, opens the page kept
beside a real run of the shipped sample and finds the picks, every chart point and the ranked table,
with scripts off and nothing requested from the network. Screenshots go to tests/artifacts/ (ignored
by git) for a person to look at.

Chromium comes from apt (``apt-get install -y chromium``, as ``.ci/run`` does); Playwright drives that
executable and never downloads a browser of its own. Without them the tests are skipped, and fail
when ``REQUIRE_BROWSER=1`` (CI).
"""
from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from evaluation.store import LocalStore

SAMPLES = Path(__file__).resolve().parent.parent.parent / "samples"
ARTIFACTS = Path(__file__).resolve().parent.parent / "artifacts"
CHROMIUM_CANDIDATES = ("/usr/bin/chromium", "/usr/bin/chromium-browser")
CHROMIUM_FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"]

pytestmark = pytest.mark.slow


def _chromium() -> str:
    given = os.environ.get("CHROMIUM")
    found = given or next((c for c in CHROMIUM_CANDIDATES if os.access(c, os.X_OK)), None) or shutil.which("chromium")
    message = None
    if not found or not os.access(found, os.X_OK):
        message = "Chromium not found: `apt-get install -y chromium` (see .ci/run), or set CHROMIUM"
    else:
        try:
            import playwright.sync_api  # noqa: F401
        except ImportError:
            message = "playwright is not installed: pip install -r requirements-dev.txt"
    if message:
        if os.environ.get("REQUIRE_BROWSER") == "1":
            pytest.fail(message)
        pytest.skip(message)
    return found


@pytest.fixture(scope="module")
def browser():
    executable = _chromium()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=executable, args=CHROMIUM_FLAGS)
        try:
            yield launched
        finally:
            launched.close()


@pytest.fixture(scope="module")
def sample_runs(sample_index, tmp_path_factory):
    """Two real runs of the shipped sample on the embedded engine (the reranked setups left out to keep
    it short), saved to a folder store as ``evaluate --save-to`` saves them: (store, older, newer)."""
    from evaluation import EmbeddedTarget, evaluate, open_index

    store = LocalStore(tmp_path_factory.mktemp("browser") / "collections" / "sample")
    target = EmbeddedTarget(open_index(sample_index))
    runs = [evaluate(target, SAMPLES / "golden.jsonl", save_to=store, skip=["hybrid_reranked"], timed=8)
            for _ in range(2)]
    return store, runs[0], runs[1]


def _open(browser, path: Path, *, width: int = 1280, height: int = 900, scripts: bool = False):
    """A page on ``path`` in a fresh context; every request is recorded, and any that is not the file
    itself is refused before it could leave the machine."""
    context = browser.new_context(viewport={"width": width, "height": height}, java_script_enabled=scripts)
    requested: list[str] = []
    page = context.new_page()
    page.on("request", lambda request: requested.append(request.url))
    context.route("**/*", lambda route: route.continue_() if route.request.url == path.as_uri() else route.abort())
    page.goto(path.as_uri())
    return context, page, requested


def _page_file(store, report) -> Path:
    return Path(store.root) / "retrieval" / "runs" / report["id"] / "report.html"


def _ms(value: float) -> str:
    return f"{value:,.0f}" if value >= 10 else f"{value:.1f}" if value >= 1 else f"{value:.2f}"


def test_the_kept_page_shows_picks_every_chart_point_and_the_ranked_table_and_fetches_nothing(browser, sample_runs):
    store, older, report = sample_runs
    ranked = [s for s in report["setups"] if s["summary"]]
    by_key = {s["key"]: s for s in ranked}
    context, page, requested = _open(browser, _page_file(store, report))
    try:
        # the picks: three cards naming the report's picks with their found@10 and median time
        for name, key in report["picks"].items():
            card = page.locator(f'article.pick[data-pick="{name}"]')
            assert card.is_visible() and card.get_attribute("data-key") == key
            summary = by_key[key]["summary"]
            text = card.inner_text()
            if "same" in (card.get_attribute("class") or "").split():  # the same setup as an earlier pick: named
                assert "The same setup as" in text and key in text
                continue
            assert f"{summary['found']['10'] * 100:.0f}%" in text
            assert f"{summary['counts']['10']} of {summary['questions']}" in text
            assert _ms(summary["median_ms"]) in text

        # every chart point: one per setup that ran, drawn inside the plot, carrying its numbers
        assert page.locator("svg.chart.wide").is_visible() and not page.locator("svg.chart.narrow").is_visible()
        plot = page.locator("svg.chart.wide rect.plot").bounding_box()
        points = page.locator("svg.chart.wide g.point")
        assert points.count() == len(ranked)
        for i in range(points.count()):
            point = points.nth(i)
            setup = by_key[point.get_attribute("data-key")]
            assert float(point.get_attribute("data-found10")) == pytest.approx(
                setup["summary"]["found"]["10"], abs=1e-4
            )
            assert float(point.get_attribute("data-median-ms")) == pytest.approx(
                setup["summary"]["median_ms"], rel=1e-3
            )
            box = point.locator("circle").last.bounding_box()
            centre = (box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
            assert plot["x"] <= centre[0] <= plot["x"] + plot["width"]
            assert plot["y"] <= centre[1] <= plot["y"] + plot["height"]
        assert {points.nth(i).get_attribute("data-key") for i in range(points.count())} == set(by_key)

        # the ranked table: every setup in rank order, found@10 as the report has it
        rows = page.locator("table.ranked tbody tr.ranked")
        assert rows.count() == len(ranked)
        for i, setup in enumerate(sorted(ranked, key=lambda s: s["rank"])):
            row = rows.nth(i)
            assert row.get_attribute("data-key") == setup["key"]
            if row.get_attribute("data-page") and not row.is_visible():  # seven a page: turn to its page
                page.locator(f'label[for$="-{row.get_attribute("data-page")}"]').first.click()
            assert row.is_visible()
            cells = row.locator("td")
            assert cells.nth(0).inner_text().strip() == str(setup["rank"])
            found10 = cells.nth(2).inner_text().strip().splitlines()
            assert found10[0] == f"{setup['summary']['found']['10'] * 100:.0f}%"
            assert found10[1] == f"{setup['summary']['counts']['10']} of {setup['summary']['questions']}"
            found10 = found10[:1] + found10[2:]
            # under it, the paired test against the top: "the top", or the difference and whether it is noise
            versus = setup.get("versus_top")
            if setup["rank"] == 1:
                assert found10[1:] == ["the top"]
            else:
                q = versus["found@10"]["better"] - versus["found@10"]["worse"]
                assert found10[1].startswith(f"{q:+d} q, p ")
                said = ("same found@10" if q == 0 else "too few to tell") if versus["tied"] else "a real difference"
                assert found10[2] == said

        # run by run: both runs of this golden file
        assert page.locator("#history table.trend thead th[title]").count() == 2

        # no question text anywhere a reader could see it
        visible = page.locator("body").inner_text()
        questions = [line for line in (SAMPLES / "golden.jsonl").read_text(encoding="utf-8").splitlines() if line]
        import json
        texts = [json.loads(line)["question"] for line in questions]
        assert len(texts) == 36 and not [t for t in texts if t in visible]

        # the page fits the window: no sideways scrolling at 1280 px
        assert page.evaluate("document.documentElement.scrollWidth") <= 1280

        ARTIFACTS.mkdir(exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / "report-sample.png"), full_page=True)
        page.locator("details.setup").first.evaluate("element => element.open = true")  # as a click would
        page.locator("#setups").screenshot(path=str(ARTIFACTS / "report-sample-setups.png"))
    finally:
        context.close()
    assert requested == [_page_file(store, report).as_uri()]


def test_on_a_phone_sized_window_the_page_reads_without_sideways_scrolling(browser, sample_runs):
    store, _, report = sample_runs
    context, page, requested = _open(browser, _page_file(store, report), width=390, height=844)
    try:
        assert page.evaluate("document.documentElement.scrollWidth") <= 390
        assert page.locator("article.pick").count() == 3
        ARTIFACTS.mkdir(exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / "report-sample-phone.png"), full_page=True)
    finally:
        context.close()
    assert len(requested) == 1


def test_the_evaluate_page_on_an_older_run_says_so_and_offers_the_way_back(browser, sample_runs, tmp_path):
    """The Function App's page, as the route answers a signed-in person, opened from a file."""
    import base64
    import json

    import azure.functions as func

    from api import routes, site
    from app.settings import AppSettings
    from evaluation.store.collections import LocalCollections

    store, older, newest = sample_runs
    who = base64.b64encode(json.dumps({"auth_typ": "aad", "claims": [
        {"typ": "name", "val": "Rita Reader"}, {"typ": "preferred_username", "val": "rita@contoso.test"}]}).encode())
    request = func.HttpRequest("GET", f"http://localhost/api/evaluate?run={older['id']}",
                               headers={"X-MS-CLIENT-PRINCIPAL": who.decode()}, params={"run": older["id"]},
                               body=b"")
    settings = AppSettings.from_environ({"WEBSITE_AUTH_ENABLED": "True"})
    with site.use(settings=settings, collections=LocalCollections(Path(store.root).parent)):
        response = routes.evaluate_page.build().get_user_function()(request)
    assert response.status_code == 200
    path = tmp_path / "evaluate.html"
    path.write_bytes(response.get_body())

    context, page, requested = _open(browser, path)
    try:
        note = page.locator(".page-nav .older")
        assert note.is_visible() and "You are looking at an older run" in note.inner_text()
        assert page.locator(".page-nav a.back").get_attribute("href") == "?"
        assert page.locator(".page-nav details.menu li[data-run]").count() == 1  # the one older run
        assert page.locator("svg.chart.wide g.point").count() == len([s for s in older["setups"] if s["summary"]])
        page.locator("details.menu").evaluate("element => element.open = true")
        ARTIFACTS.mkdir(exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / "evaluate-page-older-run.png"))
    finally:
        context.close()
    assert requested == [path.as_uri()]


def _with_reranked(report: dict) -> dict:
    """The report with its three hybrid setups copied as hybrid_reranked ones (their longest keys, seconds
    a search), ranked after them: the ten setups of the README's first run, for layout, without minutes of
    cross-encoder searches in a test."""
    import copy

    grown = copy.deepcopy(report)
    hybrids = [s for s in grown["setups"] if s.get("method") == "hybrid" and s.get("summary")]
    last = max(s["rank"] for s in grown["setups"] if isinstance(s.get("rank"), int))
    for n, setup in enumerate(hybrids, start=1):
        twin = copy.deepcopy(setup)
        twin["key"] = setup["key"].replace(".hybrid.", ".hybrid_reranked.")
        twin["method"], twin["method_label"], twin["rank"] = "hybrid_reranked", "hybrid + cross-encoder", last + n
        twin["summary"]["median_ms"] *= 120
        twin["summary"]["p95_ms"] *= 150
        grown["setups"].append(twin)
    return grown


def _page_of(report: dict, tmp_path: Path) -> Path:
    from evaluation.report.html import render_html

    path = tmp_path / "report.html"
    path.write_text(render_html(report), encoding="utf-8")
    return path


def _inside(box: dict, width: float, height: float | None = None) -> bool:
    return (box is not None and box["x"] >= 0 and box["x"] + box["width"] <= width + 0.5
            and (height is None or (box["y"] >= 0 and box["y"] + box["height"] <= height + 0.5)))


def test_at_1400_px_the_ranked_table_fits_with_found_at_10_early_and_the_setup_column_sticky(browser, sample_runs,
                                                                                              tmp_path):
    store, _, report = sample_runs
    path = _page_of(_with_reranked(report), tmp_path)
    context, page, requested = _open(browser, path, width=1400, height=1000)
    try:
        heads = [h.strip() for h in page.locator("table.ranked thead th").all_inner_texts()]
        assert heads[:5] == ["#", "setup", "found@10", "median ms", "p95 ms"]
        wrap = page.locator("#ranked .table-wrap")
        # the table fits: nothing to scroll sideways, p95 and the last column inside the window
        assert wrap.evaluate("el => el.scrollWidth <= el.clientWidth")
        assert _inside(page.locator("table.ranked thead th").last.bounding_box(), 1400)
        assert page.locator("table.ranked td.setup").first.evaluate("el => getComputedStyle(el).position") == "sticky"
        assert page.evaluate("document.documentElement.scrollWidth") <= 1400
        # bookkeeping is in the footer, not under the title
        assert page.locator("footer #cache").count() == (1 if report.get("cache") else 0)
        assert page.locator("header + #cache, main > #cache").count() == 0
        assert "hover" not in page.locator("body").inner_text().lower()
        ARTIFACTS.mkdir(exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / "report-1400.png"), full_page=True)
    finally:
        context.close()
    assert requested == [path.as_uri()]


def test_at_400_px_the_picks_come_first_the_chart_fits_and_found_at_10_reads_without_scrolling(browser, sample_runs,
                                                                                                tmp_path):
    store, _, report = sample_runs
    grown = _with_reranked(report)
    path = _page_of(grown, tmp_path)
    context, page, requested = _open(browser, path, width=400, height=800)
    try:
        # the picks: three cards, the first on the first screen, every card inside the width
        cards = page.locator("article.pick")
        assert cards.count() == 3
        assert cards.first.bounding_box()["y"] < 800
        for i in range(3):
            assert _inside(cards.nth(i).bounding_box(), 400)
        # the chart fits the width: the drawing made for a phone, every point inside the viewport's width
        assert page.locator("svg.chart.narrow").is_visible() and not page.locator("svg.chart.wide").is_visible()
        points = page.locator("svg.chart.narrow g.point circle:not(.ring)")
        drawn = len([s for s in grown["setups"] if s.get("summary")])
        assert points.count() == drawn
        for i in range(points.count()):
            assert _inside(points.nth(i).bounding_box(), 400), points.nth(i).bounding_box()
        # the table: setup, found@10 and median inside the window without sliding it
        row = page.locator("table.ranked tbody tr.ranked").first
        for cell in (row.locator("td.setup"), row.locator("td").nth(2), row.locator("td").nth(3)):
            assert cell.is_visible() and _inside(cell.bounding_box(), 400), cell.bounding_box()
        assert row.locator("td").nth(2).inner_text().strip().startswith(
            f"{grown['setups'][0]['summary']['found']['10'] * 100:.0f}%")
        assert page.evaluate("document.documentElement.scrollWidth") <= 400
        assert "hover" not in page.locator("body").inner_text().lower()
        ARTIFACTS.mkdir(exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / "report-400.png"), full_page=True)
    finally:
        context.close()
    assert requested == [path.as_uri()]
