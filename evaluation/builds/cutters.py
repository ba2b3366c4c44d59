"""The cutters of ``evaluation.chunking`` as a ``Cutter``: a build key and a corpus in, a ``Cut`` out.

Each document is cut with ``chunking.cut``; a chunk's ``text`` is what BM25 reads and what a result
hands over (its parent section's text for ``parent``, kept by the parent's span so each section is
handed over once), and its ``embed_text`` is what the embedder reads (headings in front for ``h``,
the model's note for ``c``). A late build (``l``) embeds each document whole and takes each chunk's
vector from ``chunking.late_vectors``, pooled from its own tokens' states. A chunk's page is the
page its first character is on, for golden rows that name one page of a document.
"""
from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any, Sequence

import numpy as np

from ..engine.corpus import PAGE_BREAK, Corpus
from ..engine.scratch import ScratchChunk
from .cut import Cut, Cutter
from .settings import DEFAULT_MODEL

if TYPE_CHECKING:
    from ..engine.models import Embedder


def check_keys(keys: Sequence[str]) -> None:
    """``BuildKeyError`` (a sentence saying what a key is) for the first key that names nothing."""
    from ..chunking import parse_build

    for key in keys:
        parse_build(key)


def late_problem(model: str = DEFAULT_MODEL) -> str | None:
    """None when late chunking can run here with ``model``; otherwise why not, in words."""
    from ..engine.models import Embedder, available_embedders

    if model not in available_embedders():
        return f"late chunking embeds each document whole with {model}, which is not installed"
    if not hasattr(Embedder, "token_states"):
        return f"late chunking needs {model}'s token states, which this version's embedder does not give"
    return None


class KeptSentences:
    """``model``'s embedder as the ``semantic`` cutter calls it, its sentence vectors looked up in a
    ``TextVectors`` (the cross-run cache file) first: a rerun embeds no sentence it embedded before.
    The same vectors (``TextVectors`` embeds with the same model); ``token_states`` is the model's own."""

    def __init__(self, embedder: Any, text_vectors: Any, model: str) -> None:
        self._embedder, self._text_vectors, self._model = embedder, text_vectors, model
        self.name = getattr(embedder, "name", model)
        self.info = getattr(embedder, "info", None)

    def embed_documents(self, texts: Sequence[str], **_: Any) -> np.ndarray:
        return self._text_vectors.vectors(self._model, list(texts))

    def token_states(self, text: str):
        return self._embedder.token_states(text)


def chunking_cutter(*, chat: Any = None, model: str = DEFAULT_MODEL, notes: Any = None,
                    sentences: Any = None, cut_with: Any = None, context_with: Any = None) -> Cutter:
    """A ``Cutter`` over ``evaluation.chunking``; ``chat`` cuts ``llm`` builds and writes ``c`` notes
    (``cut_with`` and ``context_with`` instead, when given), kept in ``notes`` (a ``notes.ChatNotes``) so no build or
    rerun asks for one twice; ``sentences`` (a
    ``TextVectors``) keeps ``semantic``'s sentence vectors across runs (``KeptSentences``)."""

    cutting = cut_with if cut_with is not None else chat
    noting = context_with if context_with is not None else chat

    def cutter(key: str, corpus: Corpus) -> Cut:
        from ..chunking import cut, parse_build

        build = parse_build(key)
        started = time.perf_counter()
        embedder: Embedder | KeptSentences | None = None
        if build.needs_embedder or build.letter == "l":
            from ..engine.models import load_embedder

            embedder = load_embedder(model)
            if build.needs_embedder and sentences is not None:
                embedder = KeptSentences(embedder, sentences, model)
        chunks: list[ScratchChunk] = []
        handed: dict[str, tuple[str, str]] = {}
        late_rows: list[np.ndarray] = []
        for document in corpus:
            pieces = cut(build, document.id, document.text, document.title, chat=cutting, embedder=embedder,
                         notes=notes, context_with=noting)
            if not pieces:
                continue
            breaks = (
                [i for i, ch in enumerate(document.text) if ch == PAGE_BREAK] if PAGE_BREAK in document.text else None
            )
            for piece in pieces:
                page = None if breaks is None else 1 + sum(1 for b in breaks if b < piece.start)
                chunks.append(ScratchChunk(id=piece.id, doc_id=piece.doc_id, text=piece.text,
                                           embed_text=piece.embed_text, page=page))
                if piece.parent is not None:
                    handed[piece.id] = (f"{piece.doc_id}@{piece.parent[0]}-{piece.parent[1]}", piece.handed_over)
            if build.letter == "l":
                from ..chunking import late_vectors

                late_rows.append(late_vectors(embedder, document.text, pieces))
        late = {model: np.vstack(late_rows)} if late_rows else {}
        return Cut(key=str(build), technique=build.technique, size=build.size, letter=build.letter,
                   chunks=tuple(chunks), handed=handed or None, late=late,
                   seconds=round(time.perf_counter() - started, 3))

    return cutter
