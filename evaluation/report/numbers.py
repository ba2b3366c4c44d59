"""How every view writes a number: shares as percentages, times in milliseconds, scores to three places.

One set of rules for the text table, the HTML page and its charts, so a number reads the same in
each. What differs between views is a named ``style``, not a second copy: the page groups thousands
and keeps two decimals under 1 ms, the text table stays narrow, a chart's tick drops trailing zeros.
A value a report does not hold (None, a bool, NaN, a string from an edited file) is the view's dash.
"""
from __future__ import annotations

from typing import Any

from ..measures import finite, percent_text, score_text

PAGE_DASH = "–"  # the page's mark for a number a report does not hold
TEXT_DASH = "-"  # the text table's (plain ASCII, for terminals and logs)


def number(value: Any) -> float | None:
    """``value`` as a finite float, or None for anything else (bools, NaN, text)."""
    return finite(value)


def percent(share: Any, questions: int | None = None, *, dash: str = PAGE_DASH) -> str:
    """``0.6667`` as ``67%``; one decimal once more than 200 questions make a tenth of a point readable
    (``measures.percent_text``: the rule found@k is shown by everywhere)."""
    return percent_text(share, questions, dash=dash)


def milliseconds(value: Any, *, dash: str = PAGE_DASH, style: str = "page") -> str:
    """A time in ms, whole from 10 ms. Below 10 ms: ``page`` one decimal, two under 1 ms, thousands grouped
    (``1,234``); ``table`` one decimal, never grouped; ``tick`` (an axis label) trailing zeros dropped and
    two significant digits under 1 ms."""
    value = number(value)
    if value is None:
        return dash
    if value >= 10:
        return f"{value:,.0f}" if style == "page" else f"{value:.0f}"
    if style == "tick":
        return f"{value:.1f}".rstrip("0").rstrip(".") if value >= 1 else f"{value:.2g}"
    if value >= 1 or style == "table":
        return f"{value:.1f}"
    return f"{value:.2f}"


def score(value: Any, *, dash: str = PAGE_DASH) -> str:
    """An MRR or nDCG (0 to 1) to three places (``measures.score_text``)."""
    return score_text(value, dash=dash)
