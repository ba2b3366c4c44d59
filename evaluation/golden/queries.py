"""Rows of an ElectriPy queries file, read as golden-file questions.

A row is ``{"id", "query", "relevant_ids", "metadata"?}`` (ElectriPy's RAG evaluation runner): ``id``
names the question, ``query`` is its text and ``relevant_ids`` the chunks (``doc-1:0``) or documents
(``doc-1``) that answer it. ``metadata`` is accepted and not kept: a run holds no text of its own
beyond ids. Each row becomes a ``Question`` whose ``expected`` is ``relevant_ids`` as written.

A chunk id is ``<document id>:<n>``, and its ``n`` depends on how the documents were cut: ``doc-1:0``
under 500-character chunks is other text than under 1,000. ``chunk_labels_as_documents`` is how a run
judges such a label by its document, the reading that survives a change of chunking.
"""
from __future__ import annotations

import re
from dataclasses import replace
from typing import Any, Callable, Iterable, Sequence

from .records import Question, parse_expected, split_grades
from .schema import FIELDS, unknown_field
from .wording import quoted

QUERY_FIELDS = ("id", "query", "relevant_ids", "metadata")
QUERIES_EXAMPLE = '{"id": "q1", "query": "hello", "relevant_ids": ["doc-1:0"]}'
# The fields only a queries row has: one of them on the first row makes the file a queries file.
_OWN = ("query", "relevant_ids")
_CHUNK_ID = re.compile(r"^(?P<doc>.+):(?P<n>0|[1-9][0-9]*)$")


def looks_like_queries(row: dict[str, Any]) -> bool:
    """True when ``row`` has ``query`` or ``relevant_ids`` and no field of our own golden rows but ``id``."""
    return any(key in row for key in _OWN) and not any(key in row for key in FIELDS if key != "id")


def queries_question(row: dict[str, Any], line: int) -> tuple[list[Question], list[str]]:
    """The question of one queries row (none when it has an error), and a sentence for each error."""
    errors = [unknown_field(key, QUERY_FIELDS) for key in row if key not in QUERY_FIELDS]
    raw_id, text, relevant = row.get("id"), row.get("query"), row.get("relevant_ids")
    if not isinstance(raw_id, str) or not raw_id.strip():
        errors.append('needs "id", a non-empty string, for example "id": "q1"' if "id" not in row else
                      f'"id" must be a non-empty string, for example "id": "q1" (got {quoted(raw_id)})')
    if not isinstance(text, str) or not text.strip():
        errors.append('needs "query", the question as a person would ask it, for example "query": "hello"'
                      if "query" not in row else '"query" must be a non-empty string, for example "query": "hello"')
    if "relevant_ids" not in row:
        errors.append('needs "relevant_ids", the chunks or documents that answer the query, '
                      'for example "relevant_ids": ["doc-1:0"]')
    elif not isinstance(relevant, list) or not relevant:
        errors.append('"relevant_ids" must be a non-empty list of chunk or document ids, '
                      'for example "relevant_ids": ["doc-1:0"]')
    else:
        for item in relevant:
            try:
                parse_expected(item)
            except ValueError as err:
                errors.append(f'"relevant_ids": {err}')
        repeated = sorted({item for item in relevant if isinstance(item, str) and relevant.count(item) > 1})
        errors += [f'"relevant_ids" names "{item}" twice; name it once' for item in repeated]
    if "metadata" in row and not isinstance(row["metadata"], dict):
        errors.append('"metadata" must be an object, for example "metadata": {"topic": "greeting"}')
    if errors:
        return [], errors
    assert isinstance(text, str) and isinstance(relevant, list), "any other query or relevant_ids is an error above"
    return [Question(id=raw_id, question=text, expected=tuple(relevant), line=line)], []


def chunk_document(label: str) -> str | None:
    """The document a chunk id names (``"doc-1:0"`` -> ``"doc-1"``), or None when ``label`` is no chunk id."""
    match = _CHUNK_ID.match(label)
    return match.group("doc") if match else None


def chunk_labels_as_documents(questions: Sequence[Question],
                              holds: Callable[[Iterable[str]], set[str]]) -> tuple[list[Question], dict[str, str]]:
    """``questions`` with each chunk-id label replaced by its document, and what was replaced.

    A label ``X:n`` is read as document ``X`` when ``holds`` (which of these ids are documents) says
    ``X`` is a document and ``X:n`` is not: so a document really named ``notes:2`` stays itself.
    Two labels of one document become one, at the higher grade (a chunk graded 3 makes its document 3,
    so nDCG weighs it as the golden file did). Returns ``(questions, {label: document})``.
    """
    labels = {item for q in questions for item in q.expected}
    candidates = {label: doc for label in labels if (doc := chunk_document(label)) is not None}
    if not candidates:
        return list(questions), {}
    held = holds(sorted(labels | set(candidates.values())))
    mapped = {label: doc for label, doc in candidates.items() if doc in held and label not in held}
    if not mapped:
        return list(questions), {}
    out = []
    for question in questions:
        if not any(item in mapped for item in question.expected):
            out.append(question)
            continue
        graded: dict[str, int] = {}
        for key, grade in question.judgements.items():
            unit = mapped.get(key, key)
            graded[unit] = max(grade, graded.get(unit, grade))
        expected, grades = split_grades(graded)
        out.append(replace(question, expected=expected, grades=grades))
    return out, mapped
