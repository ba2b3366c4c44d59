"""The small rules every section of the page writes with: escaping, reading a setup's summary, words.

One place, so a section never escapes or reads a number its own way. Numbers themselves are formatted
by ``report.numbers`` (one set of rules for the text table, the page and its charts).
"""
from __future__ import annotations

import json
import re
from html import escape
from typing import Any, Iterable, Mapping

from ...store.report_parts import SetupResult

_SURROGATE = re.compile("[\ud800-\udfff]")


def esc(value: Any) -> str:
    """Text for the page: escaped, and a lone surrogate (from a JSON escape) shown as U+FFFD."""
    return escape(_SURROGATE.sub("\ufffd", str(value)), quote=True)


def plain(value: Any, limit: int = 160) -> str:
    """A value a newer report added, as short readable text."""
    if isinstance(value, float):
        text = f"{value:.4g}"
    elif isinstance(value, (str, int, bool)) or value is None:
        text = "–" if value is None else str(value)
    else:
        text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def utc_time(stamp: Any) -> str:
    """``2026-11-30T17:09:20.138Z`` as ``2026-11-30 17:09:20 UTC``; anything else as it is."""
    match = re.fullmatch(r"(\d{4}-\d{2}-\d{2})T(\d{2}:\d{2})(:\d{2})?(\.\d+)?(Z|\+00:00)", str(stamp or ""))
    return f"{match.group(1)} {match.group(2)}{match.group(3) or ''} UTC" if match else str(stamp or "")


def wrappable_key(key: str) -> str:
    """A setup key for the page, allowed to wrap after each "." and "+" (never inside a model's name)."""
    return esc(key).replace(".", ".<wbr>").replace("+", "+<wbr>")


def spaced(name: str) -> str:
    return name.replace("_", " ")


def sentence(text: str) -> str:
    text = text.strip()
    return (text[:1].upper() + text[1:]).rstrip(".") + "."


def question_cell(qid: str, questions: Mapping[str, str] | None) -> str:
    text = (questions or {}).get(qid)
    return f'<code>{esc(qid)}</code>' + (f' <span class="qtext">“{esc(text)}”</span>' if text else "")


def has_recall(ran: Iterable[SetupResult]) -> bool:
    return any(s.summary is not None and s.summary.recall is not None for s in ran)


def scroller(table: str) -> str:
    """``table`` (a ``<table>`` element's HTML) in the frame every table of the pages sits in: it slides
    sideways when the table is wider than the screen, and only then shows the hint above it (``.scroll-hint``
    in ``style.CSS``), so a column out of sight is never a silent absence."""
    return ('<div class="table-scroll"><p class="scroll-hint">More columns: slide the table sideways →</p>'
            f'<div class="table-wrap">{table}</div></div>')
