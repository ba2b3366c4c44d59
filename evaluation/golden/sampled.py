"""Where a golden template's rows come from: the documents, and pages, of a corpus or of a target's index.

``golden_template`` takes a corpus (a path or a ``Corpus``), the embedded engine's ``EmbeddedTarget``,
or a list of them. A target's documents are the corpus its index was built from, read again when it
is still where the index's manifest says and unchanged (its sha256); otherwise they are put back
together from the index's own chunks, page by page, each page's chunks joined in order (the words two
chunks share through their overlap then appear twice, which a hint's opening words never reach, and
a heading's line is missing from the text, as the chunks hold it apart). Either way every expected id
is one the index holds.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Sequence

from ..engine.chunking import page_headings
from ..engine.corpus import Corpus, read_corpus
from ..errors import UsageError
from .records import PAGE_MARK


@dataclass(frozen=True)
class Unit:
    """One thing a template row can ask about: a document, or one page of one."""

    doc_id: str
    page: int | None  # 1-based place in the document; None for a document without pages
    text: str
    headings: tuple[str, ...] = ()

    @property
    def expected(self) -> str:
        return self.doc_id if self.page is None else f"{self.doc_id}{PAGE_MARK}{self.page}"


@dataclass(frozen=True)
class Source:
    """One collection's documents, each as its pages (one unit when it has none)."""

    name: str
    documents: tuple[tuple[Unit, ...], ...]


def sources_of(given: Any) -> list[Source]:
    """``given`` as collections to sample: one, or each of a list (a tuple too), in order."""
    items = list(given) if isinstance(given, (list, tuple)) else [given]
    if not items:
        raise UsageError("golden_template needs a corpus or a target to sample; the list given is empty")
    return [_source(item) for item in items]


def _source(item: Any) -> Source:
    if isinstance(item, Corpus):
        return _from_corpus(item)
    if isinstance(item, (str, Path)):
        return _from_corpus(read_corpus(item))
    index = getattr(item, "index", None)
    if index is not None and hasattr(index, "chunks") and hasattr(index, "manifest"):
        return _from_index(getattr(item, "name", str(index.folder)), index)
    raise UsageError(f"golden_template samples a corpus (a JSONL file or a folder of .md/.txt files), the "
                     f"embedded engine's EmbeddedTarget, or a list of them, not {type(item).__name__}; for an "
                     "Azure AI Search index, give the corpus it was filled from")


def _from_corpus(corpus: Corpus, name: str | None = None) -> Source:
    documents: list[tuple[Unit, ...]] = []
    for document in corpus:
        pages = document.pages
        if pages is None:
            documents.append((Unit(document.id, None, document.text, page_headings(document.text)[0]),))
            continue
        headings = page_headings(document.text)
        documents.append(tuple(Unit(document.id, n, text, headings[n - 1]) for n, text in enumerate(pages, start=1)))
    return Source(name or corpus.source, tuple(documents))


def _from_index(name: str, index: Any) -> Source:
    built = index.manifest.get("corpus", {})
    source = built.get("source")
    if source and Path(source).exists():
        try:
            corpus = read_corpus(source)
        except Exception:  # noqa: BLE001 - a corpus that no longer reads: the chunks still do
            corpus = None
        if corpus is not None and corpus.sha256 == built.get("sha256"):
            return _from_corpus(corpus, name)
    return Source(name, tuple(_documents_from_chunks(index.chunks)))


def _documents_from_chunks(chunks: Sequence[Any]) -> Iterable[tuple[Unit, ...]]:
    by_document: dict[str, dict[int | None, list[Any]]] = {}
    for chunk in chunks:  # chunks are in document order, then page order
        by_document.setdefault(chunk.doc_id, {}).setdefault(chunk.page, []).append(chunk)
    for doc_id, pages in by_document.items():
        if list(pages) == [None]:
            parts = pages[None]
            yield (Unit(doc_id, None, "\n\n".join(c.text for c in parts), tuple(parts[0].headings)),)
            continue
        last = max(p for p in pages if p is not None)
        # pages with no chunk (blank ones) are empty, so a page keeps its place in the document
        yield tuple(Unit(doc_id, n, "\n\n".join(c.text for c in pages.get(n, ())),
                         tuple(pages[n][0].headings) if n in pages else ())
                    for n in range(1, last + 1))
