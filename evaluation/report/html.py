"""The report as one self-contained HTML page: what people look at to choose a way of searching.

``render_html(report, history=..., questions=...)`` returns the whole page as text: inline CSS, inline
SVG charts, no script, nothing fetched (no font, no image, no CDN), so it opens from a file, a mail
attachment or the Function App alike, and every part reads without JavaScript.

What it shows, top to bottom: the golden data and collection; the expected documents an index no
longer holds (the same sentences ``evaluate`` warns with); the three picks; found@10 against median
time for every setup (frontier joined, time on a log axis); every setup ranked; the history of runs
on the same golden file (found@10 run by run, marks where an index changed); each setup's detail;
the questions most setups miss; what each number means.

Question text is never taken from the report. A page shows question ids, and text only when the
caller passes ``questions`` (id -> text, see ``golden.texts.question_texts``), which it may do only for a viewer
allowed to read the golden file: the ``report.html`` kept beside a run holds ids alone, because anyone
who may read runs may read it. The renderer reads what is present and skips what is absent, so
reports from older and newer versions (recall per k, significance, other engines) render.

``run_page(report, store)`` is that page for a run kept in a store, with its history and the store's
chunking runs: what every caller that shows a kept run draws. This module is the entry point. Each
section is its own module in ``page/``, and ``page/tabs.py`` lists them in order, grouped in tabs: that
is where a new tab or section plugs in.
"""
from __future__ import annotations

from typing import Any, Mapping, Sequence

from ..golden.texts import question_texts  # the page's callers import it from here
from ..store.run_report import RunReport
from .page.context import Page, page_of
from .page.format import esc
from .page.tabs import TABS, Tab, page_parts, shown_tabs
from .style import CSS, tabs_css, whole_page

__all__ = ["Page", "TABS", "Tab", "question_texts", "render_html", "run_page", "with_banner"]


def render_html(report: RunReport | Mapping[str, Any], *, history: Sequence[dict[str, Any]] | None = None,
                questions: Mapping[str, str] | None = None, chunking: dict[str, Any] | None = None,
                matrix: dict[str, Any] | None = None, sweep: dict[str, Any] | None = None,
                tabs: Sequence[Tab] = TABS) -> str:
    """The whole page for ``report`` (the model, or a report's JSON read into it once: ``RunReport.of``).

    ``history``: trend points of the runs on the same golden file, oldest first, this run last (see
    ``trend.collect_trend``); without it the page has this run alone. ``questions``: id -> text, for a
    viewer allowed to read the golden file; without it the page names questions by id only. ``chunking``,
    ``sweep``, ``matrix``: the collection's latest chunking, sweep and matrix runs
    (``store.builds.latest_views``), shown in the Chunking tab; without any the page has no tabs and is
    the page it was before them. ``tabs``:
    the page's tabs (``page.tabs.TABS`` unless a caller or a test passes its own).
    """
    report = RunReport.of(report)
    page = page_of(report, history=history, questions=questions, chunking=chunking, matrix=matrix, sweep=sweep)
    shown = shown_tabs(page, tabs)
    css = CSS + tabs_css([tab.name for tab in shown]) if len(shown) > 1 else CSS
    title = f"Retrieval evaluation · {page.collection} · {report.id or ''}"
    return utf8_text(whole_page(esc(title), "\n".join(p for p in page_parts(page, tabs) if p), css))


def run_page(report: RunReport | Mapping[str, Any], store: Any, *, questions: Mapping[str, str] | None = None,
             views: Mapping[str, dict[str, Any]] | None = None) -> str:
    """The page of ``report`` as kept in ``store`` (a ``RunStore``): its history on the same golden file
    (``trend.collect_trend``) and the store's latest chunking, sweep and matrix runs in the Chunking tab
    (``views``, read here with ``store.builds.latest_views`` unless the caller read them already). The one
    place a run's page is drawn: saving a run, ``report``, the app's Evaluate page and its report.html."""
    from ..store.builds import latest_views
    from .trend import collect_trend

    views = latest_views(store) if views is None else views
    report = RunReport.of(report)
    return render_html(report, history=collect_trend(store, report), questions=questions,
                       chunking=views.get("chunking"), sweep=views.get("sweep"), matrix=views.get("matrix"))


def utf8_text(page: str) -> str:
    """``page`` as text UTF-8 can hold: a lone surrogate (a ``"\\ud800"`` escape a report made from an
    old golden file keeps) is no character, so it is shown as its escape, and the page can be served
    and saved."""
    try:
        page.encode("utf-8")
    except UnicodeEncodeError:
        return page.encode("utf-8", "backslashreplace").decode("utf-8")
    return page


def with_banner(page: str, banner: str) -> str:
    """``page`` with ``banner`` (trusted HTML, e.g. a site's menu) placed first in its body."""
    return page.replace("<body>\n", "<body>\n" + banner + "\n", 1) if "<body>\n" in page else banner + page
