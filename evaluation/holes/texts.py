"""The text a judge reads for a unit of a run (a document, one page of it, or a chunk): read from the
corpus or the embedded index at judging time, never from the run, which keeps ids only.

A unit is what the run judges at its grain (``scoring.judging``): ``doc`` gives a document id or
``doc#page=N``, ``chunk`` a chunk id. The judge is shown the same kind of text for a unit whatever it
is there for, a hole or a calibration label, so its agreement on the labels measures how it grades the
holes:

- a document: its title and text from the start (the corpus's, or else its chunks in order, the words
  a chunk repeats from the one before, its overlap, left out);
- a page: that page's text (the corpus's page, or the chunks of that page);
- a chunk: its text, its title and heading path first.

``grader.grade_messages`` cuts a long text at ``PASSAGE_CHARS``. A unit no source holds has no text and
is not judged (the report counts those).
"""
from __future__ import annotations

from typing import Any, Iterable, Mapping, Protocol, Sequence

from ..golden.records import PAGE_MARK

LONGEST_OVERLAP_WORDS = 400  # no chunker of this library repeats more words than this


class UnitTexts(Protocol):
    def __call__(self, units: Iterable[str]) -> Mapping[str, str]: ...


def index_texts(chunks: Sequence[Any], corpus: Any = None) -> UnitTexts:
    """Texts for units from an index's ``chunks`` (``engine.chunking.Chunk``: id, doc_id, n, page, text,
    title, headings) and, when given, a ``Corpus`` whose documents are read first."""
    by_chunk = {c.id: c for c in chunks}
    by_doc: dict[str, list[Any]] = {}
    for chunk in chunks:
        by_doc.setdefault(chunk.doc_id, []).append(chunk)
    documents = {d.id: d for d in corpus} if corpus is not None else {}

    def texts(units: Iterable[str]) -> dict[str, str]:
        found = {}
        for unit in units:
            text = _unit_text(unit, by_chunk, by_doc, documents)
            if text is not None and text.strip():
                found[unit] = text
        return found

    return texts


def corpus_texts(corpus: Any) -> UnitTexts:
    """Texts for document and page units from a ``Corpus`` alone (a target whose chunks are not here, such
    as an Azure AI Search index evaluated beside its corpus)."""
    return index_texts((), corpus)


def _unit_text(unit: str, by_chunk: Mapping[str, Any], by_doc: Mapping[str, list[Any]],
               documents: Mapping[str, Any]) -> str | None:
    if unit in by_chunk:
        chunk = by_chunk[unit]
        context = " > ".join(p for p in (chunk.title, *chunk.headings) if p)
        return f"{context}\n{chunk.text}" if context else chunk.text
    doc_id, mark, page = unit.partition(PAGE_MARK)
    document = documents.get(doc_id)
    if mark:
        number = int(page) if page.isdigit() else None
        if document is not None and document.pages is not None and number and number <= len(document.pages):
            return document.pages[number - 1]
        on_page = [c for c in by_doc.get(doc_id, ()) if c.page == number]
        return joined(on_page) if on_page else None
    if document is not None:
        return f"{document.title}\n{document.text}" if document.title else document.text
    chunks = by_doc.get(doc_id)
    if not chunks:
        return None
    title = chunks[0].title
    text = joined(chunks)
    return f"{title}\n{text}" if title else text


def joined(chunks: Sequence[Any]) -> str:
    """The chunks' texts in order, each without the words it repeats from the one before (its overlap)."""
    words: list[str] = []
    for chunk in sorted(chunks, key=lambda c: c.n):
        mine = chunk.text.split()
        words += mine[_overlap(words, mine):]
    return " ".join(words)


def _overlap(before: Sequence[str], mine: Sequence[str]) -> int:
    """The most words ``mine`` starts with that ``before`` ends with."""
    for size in range(min(len(before), len(mine), LONGEST_OVERLAP_WORDS), 0, -1):
        if list(before[-size:]) == list(mine[:size]):
            return size
    return 0
