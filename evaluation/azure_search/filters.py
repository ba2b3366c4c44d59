"""OData filters that look document ids up in batches: ``search.in`` with escaped values, each filter
kept under a length limit, so the missing-documents check sends one request per batch, not per id.

Why a limit of our own: the service bounds a POST request (about 16 MB) and the number of clauses in a
filter, and ``search.in`` counts as one clause however many values it holds, so neither binds first;
a filter this short still fits the 8 KB a GET request's address may hold and is answered quickly.

String literals double their single quotes (``o'brien`` is ``'o''brien'``). ``search.in`` splits its
value list at a delimiter we choose: the first of ``DELIMITERS`` that no id contains. Ids containing
every candidate (they would be strange ids) are looked up with ``eq`` clauses joined by ``or``.
"""
from __future__ import annotations

from typing import Iterable

FILTER_CHARS = 8_000
DELIMITERS = "|~^`;,"


def odata_string(value: str) -> str:
    """``value`` as an OData string literal."""
    return "'" + value.replace("'", "''") + "'"


def doc_id_filters(field: str, values: Iterable[str], *, max_chars: int = FILTER_CHARS) -> list[str]:
    """Filters that together match exactly the index documents whose ``field`` is one of ``values``;
    each is at most ``max_chars`` long unless a single id is longer on its own."""
    wanted = sorted(set(values))
    if not wanted:
        return []
    delimiter = min(DELIMITERS, key=lambda d: (sum(d in v for v in wanted), DELIMITERS.index(d)))
    listed = [v for v in wanted if delimiter not in v]
    odd = [v for v in wanted if delimiter in v]
    filters = _in_filters(field, listed, delimiter, max_chars)
    filters += _joined([f"{field} eq {odata_string(v)}" for v in odd], " or ", max_chars)
    return filters


def _in_filters(field: str, values: list[str], delimiter: str, max_chars: int) -> list[str]:
    head, tail = f"search.in({field}, '", f"', {odata_string(delimiter)})"
    out: list[str] = []
    batch: list[str] = []
    size = len(head) + len(tail)
    for value in values:
        escaped = value.replace("'", "''")
        extra = len(escaped) + (1 if batch else 0)
        if batch and size + extra > max_chars:
            out.append(head + delimiter.join(batch) + tail)
            batch, size, extra = [], len(head) + len(tail), len(escaped)
        batch.append(escaped)
        size += extra
    if batch:
        out.append(head + delimiter.join(batch) + tail)
    return out


def _joined(clauses: list[str], glue: str, max_chars: int) -> list[str]:
    out: list[str] = []
    batch: list[str] = []
    size = 0
    for clause in clauses:
        extra = len(clause) + (len(glue) if batch else 0)
        if batch and size + extra > max_chars:
            out.append(glue.join(batch))
            batch, size, extra = [], 0, len(clause)
        batch.append(clause)
        size += extra
    if batch:
        out.append(glue.join(batch))
    return out
