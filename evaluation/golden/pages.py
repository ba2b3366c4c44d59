"""What a template row's hint says about a page: which page, the number printed on it, its heading, how it starts.

A page's place in the file (``report.pdf#page=41``) and the number printed on it (39, or "xii" in a
preface) differ in most reports, and a person checking a row looks for the printed one, so the hint
gives both. The printed number is read from the page's own first or last line, where a running header
or footer puts it: a line that is only a number ("39", "- 39 -", "Page 39", "39 of 200", "xii"). A page
whose text carries no such line gets no printed number, rather than a guess.
"""
from __future__ import annotations

import re

HINT_WORDS = 25
_ROMAN = re.compile(r"m{0,3}(cm|cd|d?c{0,3})(xc|xl|l?x{0,3})(ix|iv|v?i{0,3})")
_PRINTED = re.compile(r"(?:page|p\.)?\s*[-\u2013\u2014]?\s*([0-9]{1,4}|[ivxlcdm]{1,8})\s*[-\u2013\u2014]?"
                      r"(?:\s*(?:of|/)\s*[0-9]{1,5})?", re.IGNORECASE)


def printed_page_number(page: str) -> str | None:
    """The page number printed on ``page``: its last non-empty line (a footer), else its first (a header),
    when that line is nothing but a page number; None otherwise."""
    lines = [line.strip() for line in page.splitlines() if line.strip()]
    for line in (lines[-1:] + lines[:1]) if lines else ():
        match = _PRINTED.fullmatch(line)
        if not match:
            continue
        number = match.group(1)
        if number.isdigit():
            if int(number) > 0:
                return str(int(number))
        elif _ROMAN.fullmatch(number.lower()) and (number.islower() or number.isupper()):
            return number
    return None


def opening_words(text: str, words: int = HINT_WORDS) -> str:
    """The first ``words`` words of ``text``, whitespace folded, and " …" when there is more."""
    found = text.split()
    return " ".join(found[:words]) + (" …" if len(found) > words else "")


def page_hint(doc_id: str, number: int | None, text: str, headings: tuple[str, ...]) -> str:
    """``report.pdf, page 41 (printed 39), under "Results > Retention": Keys are rotated …``.

    ``number`` is the page's place in the document (None for a document without pages, which is named
    alone); the printed number, the heading path and the opening words follow where there are any."""
    where = doc_id if number is None else f"{doc_id}, page {number}"
    printed = printed_page_number(text) if number is not None else None
    if printed is not None:
        where += f" (printed {printed})"
    if headings:
        where += ", under " + '"' + " > ".join(headings) + '"'
    return f"{where}: {opening_words(text)}"
