"""Which sections the page shows, in what order, grouped in tabs: the one place a new part of the page plugs in.

A ``Tab`` is a named list of sections (each a function ``Page -> str``, "" to leave itself out) and a rule
for when it has something to show. ``TABS`` is the page's list, in order. Today it holds one tab,
"Retrieval", and "Chunking" (``chunking_tab``: the collection's latest chunking and matrix runs), which
shows only when the store holds one. A page with one tab to show is drawn exactly as before tabs existed: its sections
in order, no tab bar. With two or more to show, the page gains a bar of links to each tab
and each tab becomes a ``<section class="tab">`` with its title, all in the one file, readable without
script: ``style.tabs_css`` (added to the page's CSS only then) shows one tab at a time by ``:target``,
the first when the address names none, and every tab stacked where ``:has`` is not supported or in print.

To add a tab: write its sections as modules in this package (each reading ``Page``), then add
``Tab("chunking", "Chunking", (...), shows=...)`` to ``TABS`` after ``RETRIEVAL``.

The header, the notes that concern every tab (an unreachable target, documents an index does not hold)
and the footer are not in a tab: ``BEFORE_TABS`` and ``AFTER_TABS``.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Sequence

from ..svg import attr
from .chart import chart
from .chunking_tab import chunking_run, has_chunking_runs, matrix_run, sweep_run
from .context import Page
from .details import setup_details
from .footer import footer
from .format import esc
from .glossary import glossary
from .history import run_by_run
from .judged import judged_holes
from .picks import pick_cards
from .questions import hard_questions, labels_needed
from .table import ranked_table
from .tiers import label_next, tier_table
from .top import header, left_out, missing_documents, refusal, unfound, unreachable

Section = Callable[[Page], str]


def _always(page: Page) -> bool:
    return True


@dataclass(frozen=True)
class Tab:
    """``name`` (its anchor, ``#tab-<name>``), ``title`` (its link), ``sections`` in order, and ``shows``:
    whether this report has anything for it (a report made before a tab existed has nothing)."""

    name: str
    title: str
    sections: tuple[Section, ...]
    shows: Callable[[Page], bool] = _always


RETRIEVAL = Tab("retrieval", "Retrieval", (pick_cards, left_out, chart, ranked_table, tier_table, judged_holes,
                                           run_by_run, setup_details, hard_questions, label_next, labels_needed,
                                           glossary))
CHUNKING = Tab("chunking", "Chunking", (chunking_run, sweep_run, matrix_run), shows=has_chunking_runs)
TABS: tuple[Tab, ...] = (RETRIEVAL, CHUNKING)
BEFORE_TABS: tuple[Section, ...] = (header, unreachable, unfound, missing_documents)
AFTER_TABS: tuple[Section, ...] = (footer,)
REFUSED: tuple[Section, ...] = (header, refusal, footer)  # the run never started: why, and nothing else


def shown_tabs(page: Page, tabs: Sequence[Tab] = TABS) -> list[Tab]:
    """The tabs with something to show for ``page`` (none for a refused run), in order."""
    return [] if page.refused else [tab for tab in tabs if tab.shows(page)]


def page_parts(page: Page, tabs: Sequence[Tab] = TABS) -> list[str]:
    """The page's parts in order, each some HTML ("" for a section with nothing to show)."""
    if page.refused:
        return [section(page) for section in REFUSED]
    shown = shown_tabs(page, tabs)
    parts = [section(page) for section in BEFORE_TABS]
    if len(shown) == 1:  # one tab: its sections as they are, no bar (the page before tabs, byte for byte)
        parts += [section(page) for section in shown[0].sections]
    elif shown:
        parts.append('<nav class="tabs"><ul class="plain">' + "".join(
            f'<li><a href="#tab-{attr(tab.name)}">{esc(tab.title)}</a></li>' for tab in shown) + "</ul></nav>")
        for tab in shown:
            inner = "\n".join(p for p in (section(page) for section in tab.sections) if p)
            parts.append(f'<section class="tab" id="tab-{attr(tab.name)}" data-tab="{attr(tab.name)}">'
                         f"<h2 class=\"tab-title\">{esc(tab.title)}</h2>\n{inner}\n</section>")
    parts += [section(page) for section in AFTER_TABS]
    return parts
