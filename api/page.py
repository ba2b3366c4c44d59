"""The Evaluate page: the newest run's report, a menu of older runs twelve at a time, each named by its
collection, and, when an older run is on screen, a note saying so with a way back to the newest.

The report part is the ``report.html`` kept beside the run (rendered again for runs kept before pages
were). An admin signed in as a person may read golden files, so for them the report is rendered with
question text read from the run's kept golden copy, and the page offers the file itself.
"""
from __future__ import annotations

import math
import re
from html import escape
from typing import Any
from urllib.parse import urlencode

from app.http import Refusal
from evaluation.errors import StoreError
from evaluation.report.html import question_texts, run_page, with_banner
from evaluation.report.style import standalone_page
from evaluation.store.builds import latest_views
from evaluation.store import LATEST
from evaluation.store.collections import Collections, RunRef
from evaluation.store.run_report import RunReport

from .principal import Caller
from .runs import all_runs, find_run, kept_page, links, read_report

MENU_SIZE = 12
_RUN_TIME = re.compile(r"(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})\d{3}Z(-.*)?")


def when(run_id: str) -> str:
    """The time a run id carries (``2026-11-30 17:09:20 UTC``), or the id when it carries none."""
    match = _RUN_TIME.fullmatch(run_id)
    if not match:
        return run_id
    year, month, day, hour, minute, second = match.groups()[:6]
    return f"{year}-{month}-{day} {hour}:{minute}:{second} UTC"


def _here(**params: Any) -> str:
    """A link to this page with ``params`` (empty ones left out)."""
    kept = {k: v for k, v in params.items() if v not in (None, "") and not (k == "page" and v == 1)}
    return "?" + urlencode(kept) if kept else "?"


def _name(ref: RunRef) -> str:
    return f"{ref.collection} · {when(ref.run_id)}"


def evaluate_page(shelf: Collections, caller: Caller, admin_role: str, *, run: str | None = None,
                  collection: str | None = None, menu_page: int = 1) -> str:
    """The whole page (HTML text). ``Refusal`` for a run or collection that is not there."""
    refs = all_runs(shelf, collection)
    if not refs:
        where = f"the collection {collection!r}" if collection else "any collection"
        return _bare_page("No runs yet", f"There are no runs in {where} yet. A run starts when a team saves "
                                         "golden.jsonl in its collection's folder, or when evaluate_now is called.")
    newest = find_run(shelf, LATEST, collection)  # the store's latest: a broken newest report is passed over
    shown = find_run(shelf, run, collection) if run else newest
    older = [ref for ref in refs if ref != newest]
    pages = max(1, math.ceil(len(older) / MENU_SIZE))
    if menu_page > pages:
        raise Refusal(404, f"page={menu_page}: there are {pages} page(s) of older runs")
    store = shelf.store(shown.collection)
    allowed, _reason = caller.may_download_golden(admin_role)
    golden_kept = False
    # kept but unreadable: 404 naming the file; a store not answering: 503
    report = RunReport.from_json(read_report(shelf, shown))
    views = latest_views(store)  # the collection's latest chunking and matrix runs: the Chunking tab
    if allowed:
        try:
            raw = store.golden(report.golden.sha256 or "")
            golden_kept = True
        except StoreError:
            raw = None
        body = run_page(report, store, questions=question_texts(raw, report) if raw else None, views=views)
    else:
        kept = None if views else kept_page(store, shown)
        body = kept.decode("utf-8", "replace") if kept else run_page(report, store, views=views)
    nav = _nav(shown, newest, older, menu_page, pages, collection, caller, golden_kept,
               explicit_menu=menu_page > 1)
    return with_banner(body, nav)


def _nav(shown: RunRef, newest: RunRef, older: list[RunRef], menu_page: int, pages: int,
         collection: str | None, caller: Caller, golden_kept: bool, *, explicit_menu: bool) -> str:
    first = (menu_page - 1) * MENU_SIZE
    items = []
    for position, ref in enumerate(older[first:first + MENU_SIZE], start=first + 2):
        current = ' aria-current="page"' if ref == shown else ""
        items.append(f'<li value="{position}" data-run="{escape(ref.run_id, quote=True)}" '
                     f'data-collection="{escape(ref.collection, quote=True)}"><a href="'
                     f'{escape(_here(collection=collection, run=ref.run_id, page=menu_page), quote=True)}"{current}>'
                     f"{escape(_name(ref))}</a></li>")
    pager = []
    if menu_page > 1:
        href = _here(collection=collection, run=None if shown == newest else shown.run_id, page=menu_page - 1)
        pager.append(f'<a rel="prev" href="{escape(href, quote=True)}">newer</a>')
    if menu_page < pages:
        href = _here(collection=collection, run=None if shown == newest else shown.run_id, page=menu_page + 1)
        pager.append(f'<a rel="next" href="{escape(href, quote=True)}">older</a>')
    menu = ""
    if older:
        menu = (f'<details class="menu"{" open" if explicit_menu else ""}><summary>Older runs '
                f"({len(older)})</summary><ol>{''.join(items)}"
                + (f'<li class="pager">page {menu_page} of {pages}: {" · ".join(pager)}</li>' if pages > 1 else "")
                + "</ol></details>")
    who = (f'<span class="who">signed in as {escape(caller.name)}</span>' if caller.signed_in and caller.name else "")
    golden = (f'<a class="golden" href="{escape(links(shown)["golden"], quote=True)}">download the golden file</a>'
              if golden_kept else "")
    line = (f'<div class="inner"><span class="title">Retrieval evaluation</span>'
            f'<span class="showing">{"newest run" if shown == newest else "run"}: '
            f'<strong>{escape(_name(shown))}</strong></span>'
            f"{menu}{golden}{who}</div>")
    note = ""
    if shown != newest:
        note = (f'<div class="older" role="status"><div class="inner">You are looking at an older run '
                f"({escape(_name(shown))}). <a class=\"back\" "
                f"href=\"{escape(_here(collection=collection), quote=True)}\">"
                f"Back to the newest run</a> ({escape(_name(newest))}).</div></div>")
    return f'<nav class="page-nav" aria-label="Runs">{line}{note}</nav>'


def _bare_page(title: str, sentence: str) -> str:
    return standalone_page(escape(title), f"<p>{escape(sentence)}</p>")


def error_page(status: int, message: str) -> str:
    titles = {400: "That request cannot be read", 401: "Please sign in", 403: "Not allowed",
              404: "Not found", 409: "Which one?"}
    return _bare_page(titles.get(status, "Something went wrong"), message)
