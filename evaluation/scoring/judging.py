"""Judge results against a question's expected answers, at one grain.

Grains:
- ``doc``: a hit is relevant when it is any chunk of an expected document; for an expected page,
  ``report.pdf#page=41``, a chunk of that page.
- ``chunk``: a hit is relevant when its id is an expected chunk id (``guide.md:3``).
- ``evidence``: a hit is relevant when its text holds one of the row's quotes of three or more words
  (case and spacing folded). A row without usable evidence falls back to ``doc``.

(There is no ``page`` grain: pages are judged at ``doc`` already, whenever ``expected`` names one.)

Each expected unit (document, page, chunk or quote) counts once, at the first hit that matches it;
one hit may match several units (two quotes in one chunk), which then share its position (see
``metrics`` for how that is scored). Positions count results as they come back (1-based), one per
result, so later chunks of a document already found take up positions without counting; the
target's order decides ties.
"""
from __future__ import annotations

from operator import attrgetter, itemgetter
from typing import Any, Callable, Sequence

from ..settings import GRAINS
from ..whitespace import fold_whitespace
from ..golden import Question
from .metrics import Outcome
from ..target import Hit

_ID, _DOC_ID, _PAGE = attrgetter("id"), attrgetter("doc_id"), attrgetter("page")
_ROW_ID, _ROW_DOC_ID, _ROW_PAGE = itemgetter(0), itemgetter(1), itemgetter(2)  # Hit.to_row's order


def fold(text: str) -> str:
    """Case and whitespace folded, so a quote copied from a document matches its chunk."""
    return fold_whitespace(text).casefold()


def judge(question: Question, hits: Sequence[Hit], by: str) -> Outcome:
    """The positions at which each of the question's expected units was first found."""
    _check_grain(by)
    if by == "evidence" and question.usable_evidence:
        return _judge_evidence(question, hits)
    return _judge_keys(question, hits, by, _ID, _DOC_ID, _PAGE)


def judge_rows(question: Question, rows: Sequence[Sequence[Any]], by: str) -> Outcome:
    """``judge`` for a report's result rows (``[id, doc_id, page, score, ...]``, ``Hit.to_row``): the
    outcome ``judge`` gives the hits they were made from, without making them (an earlier run's
    results, judged again: ``run.reuse``). A row keeps no text, so it cannot be judged by evidence: a
    question with usable evidence at that grain is a ``ValueError``."""
    _check_grain(by)
    if by == "evidence" and question.usable_evidence:
        raise ValueError(f"question {question.id}: result rows keep no text, so they cannot be judged by evidence")
    return _judge_keys(question, rows, by, _ROW_ID, _ROW_DOC_ID, _ROW_PAGE)


def _check_grain(by: str) -> None:
    if by not in GRAINS:
        raise ValueError(f"unknown grain {by!r}; use one of {', '.join(GRAINS)}")


def _judge_keys(question: Question, results: Sequence[Any], by: str, id_of: Callable[[Any], Any],
                doc_id_of: Callable[[Any], Any], page_of: Callable[[Any], Any]) -> Outcome:
    """``judge`` at the ``doc`` and ``chunk`` grains, on results read through the three getters."""
    # list.index finds each unit's first hit in C: judging costs microseconds a question.
    if by == "chunk":
        units: tuple = _unique(question.expected)
        keys = list(map(id_of, results))
        return _outcome(question.id, [_position(keys, unit) for unit in units], len(units))
    items = _unique(question.expected_items)
    doc_ids = list(map(doc_id_of, results))
    pages: list | None = None
    found = []
    for item in items:
        if item.page is None:
            found.append(_position(doc_ids, item.doc_id))
        else:
            if pages is None:
                pages = list(zip(doc_ids, map(page_of, results)))
            found.append(_position(pages, (item.doc_id, item.page)))
    return _outcome(question.id, found, len(items))


def _unique(values: tuple) -> tuple:
    return values if len(values) < 2 else tuple(dict.fromkeys(values))


def _position(keys: list, unit: object) -> int | None:
    try:
        return keys.index(unit) + 1
    except ValueError:
        return None


def _outcome(question_id: str, found: list, relevant: int) -> Outcome:
    return Outcome(question_id=question_id, positions=tuple(sorted(p for p in found if p is not None)),
                   relevant=relevant)


def _judge_evidence(question: Question, hits: Sequence[Hit]) -> Outcome:
    quotes = list(dict.fromkeys(fold(q) for q in question.usable_evidence))
    first: dict[int, int] = {}
    for position, hit in enumerate(hits, start=1):
        text = fold(hit.text)
        for unit, quote in enumerate(quotes):
            if unit not in first and quote in text:
                first[unit] = position
        if len(first) == len(quotes):
            break
    return Outcome(question_id=question.id, positions=tuple(sorted(first.values())), relevant=len(quotes))
