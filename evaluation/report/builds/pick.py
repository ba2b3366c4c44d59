"""How a builds view names its pick: one line before its table, the same words in the chunking and matrix
views, so a reader on a phone sees what to use before any table (which may slide sideways)."""
from __future__ import annotations

from ..page.format import esc
from ..svg import attr


def named_pick(key: str | None, why: str, *, none: str, aside: str = "") -> str:
    """``Pick: <key> (<aside>). <why>.`` as the view's lead paragraph (``data-pick`` holds the key, for a
    program); ``No pick: <none>.`` when nothing ran to pick from. The words are plain text, escaped here."""
    if not key:
        return f'<p class="lead named-pick">No pick: {esc(none.rstrip("."))}.</p>'
    return (f'<p class="lead named-pick" data-pick="{attr(key)}">Pick: <code>{esc(key)}</code>'
            + (f" ({esc(aside)})" if aside else "") + (f". {esc(why.rstrip('.'))}" if why else "") + ".</p>")


def pick_badge() -> str:
    """The mark on the pick's row of a view's table."""
    return ' <span class="badge">pick</span>'
