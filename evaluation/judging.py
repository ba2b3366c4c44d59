"""Judge results against a question's expected answers, at one grain.

Grains:
- ``doc``: a hit is relevant when it is any chunk of an expected document (for an expected page,
  ``report.pdf#page=41``, a chunk of that page).
- ``chunk``: a hit is relevant when its id is an expected chunk id (``guide.md:3``).
- ``page``: like ``doc``, with each expected page judged by its page; an expected document without a
  page counts any of its pages.
- ``evidence``: a hit is relevant when its text holds one of the row's quotes of three or more words
  (case and spacing folded). A row without usable evidence falls back to ``doc``.

Each expected unit (document, page, chunk or quote) counts once, at the first hit that matches it.
Positions count results as they come back (1-based); the target's order decides ties.
"""
from __future__ import annotations

import re
from typing import Sequence

from .golden import Question
from .metrics import Outcome
from .target import Hit

GRAINS = ("doc", "chunk", "page", "evidence")
_SPACE = re.compile(r"\s+")


def fold(text: str) -> str:
    """Case and whitespace folded, so a quote copied from a document matches its chunk."""
    return _SPACE.sub(" ", text).strip().casefold()


def judge(question: Question, hits: Sequence[Hit], by: str) -> Outcome:
    """The positions at which each of the question's expected units was first found."""
    if by not in GRAINS:
        raise ValueError(f"unknown grain {by!r}; use one of {', '.join(GRAINS)}")
    matchers = _matchers(question, by)
    first: dict[int, int] = {}
    for position, hit in enumerate(hits, start=1):
        for unit, matches in enumerate(matchers):
            if unit not in first and matches(hit):
                first[unit] = position
        if len(first) == len(matchers):
            break
    return Outcome(question_id=question.id, positions=tuple(sorted(first.values())), relevant=len(matchers))


def _matchers(question: Question, by: str) -> list:
    if by == "evidence" and question.usable_evidence:
        quotes = [fold(q) for q in question.usable_evidence]
        return [lambda hit, q=q: q in fold(hit.text) for q in quotes]
    if by == "chunk":
        return [lambda hit, e=e: hit.id == e for e in question.expected]
    matchers = []
    for item in question.expected_items:
        if item.page is None:
            matchers.append(lambda hit, d=item.doc_id: hit.doc_id == d)
        else:
            matchers.append(lambda hit, d=item.doc_id, p=item.page: hit.doc_id == d and hit.page == p)
    return matchers
