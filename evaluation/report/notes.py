"""Sentences about a report that every view shares: the expected documents a target no longer holds.

The words are the ones ``evaluate`` warns with before it searches, so the terminal, the HTML page and
the runs routes say the same thing. Older and newer reports are both read: ``missing[target]`` holds
``documents`` and ``questions`` (question id -> the documents it lost, or a list of ids), and may hold
``partly`` (questions that lost some but not all of their expected documents).
"""
from __future__ import annotations

from typing import Any, Iterable

from ..golden.wording import plural


def _ids(value: Any) -> list[str]:
    """Question ids from a mapping (id -> documents) or a list of ids; anything else gives none."""
    if isinstance(value, dict):
        return [str(k) for k in value]
    if isinstance(value, (list, tuple)):
        return [str(v) for v in value]
    return []


def _listed(items: Iterable[str], limit: int | None) -> str:
    items = list(items)
    if limit is None or len(items) <= limit:
        return ", ".join(items)
    return f"{', '.join(items[:limit])} ... and {len(items) - limit} more"


def missing_note(target: str, gone: dict[str, Any], *, limit: int | None = 10) -> str:
    """One sentence: what ``target`` no longer holds and which questions it costs."""
    documents = [str(d) for d in gone.get("documents") or []]
    lost, partly = _ids(gone.get("questions")), _ids(gone.get("partly"))
    sentence = (f"{target} no longer holds {plural(len(documents), 'expected document')}: "
                f"{_listed(documents, limit)}")
    if lost:
        sentence += f"; questions that can no longer be found there: {_listed(lost, limit)}"
    if partly:
        sentence += f"; questions that lost some of their expected documents: {_listed(partly, limit)}"
    return sentence


def missing_notes(report: dict[str, Any], *, limit: int | None = 10) -> list[str]:
    """``missing_note`` for every target of ``report`` that lost expected documents, by target name."""
    missing = report.get("missing") or {}
    return [missing_note(target, gone, limit=limit) for target, gone in sorted(missing.items())
            if isinstance(gone, dict)]
