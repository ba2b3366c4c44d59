"""A chunker and an embedder of one's own in ``run_matrix``: ElectriPy's ``ChunkerPort`` and ``EmbeddingPort``.

ElectriPy's runner is extended by implementing its RAG ports. Here the same two plug into ``run_matrix``:

    ChunkerPort     ``chunk(text) -> [piece, ...]`` (or a plain callable): a variant of its own, ``own:<name>``,
                    whose chunks are ``<document id>:<n>`` in the order given, as a matrix's ids always are
    EmbeddingPort   ``embed(texts) -> rows`` (one vector per text, any floats): registered with the engine as
                    ``own:<name>`` so the scratch index, the query vectors and the report name it like any other

A store of one's own is the ``Target`` protocol (``setups``, ``search``, ``search_batch``: what
``evaluate`` searches), not a port of the matrix: a matrix's variants are cut and indexed by the matrix
itself, so its store is the scratch index; an index someone else filled is judged with ``evaluate``.

An embedder's name is its identity (the vector cache and the experiment id read it): give another name
when what it computes changes.
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any, Callable, Protocol, Sequence, runtime_checkable

import numpy as np

from ..errors import ModelError, UsageError
from .variants import ChunkVariant

OWN = "own:"


@runtime_checkable
class ChunkerPort(Protocol):
    def chunk(self, text: str) -> Sequence[str]: ...


@runtime_checkable
class EmbeddingPort(Protocol):
    def embed(self, texts: Sequence[str]) -> Any: ...


def _name_of(thing: Any, name: str | None) -> str:
    given = name or getattr(thing, "name", None) or getattr(thing, "__name__", None) or type(thing).__name__
    if not isinstance(given, str) or not given.strip() or any(ch in given for ch in " \t\n,"):
        raise UsageError(f"{given!r} cannot name a chunker or embedder of one's own: give name= a word such as "
                         "'my-chunker' (no spaces or commas)")
    return given.removeprefix(OWN)


@dataclass(frozen=True)
class OwnVariant(ChunkVariant):
    """A chunk variant cut by a chunker of one's own: ``str()`` is ``own:<name>``; size and overlap are its own
    business (0 here). Two variants with the same name are one variant."""

    chunker: Any = field(default=None, compare=False, hash=False, repr=False)

    def __post_init__(self) -> None:  # a ChunkVariant's checks are of our techniques' sizes: none apply
        if not self.technique.startswith(OWN):
            raise UsageError(f"an own variant is named own:<name>, not {self.technique!r}")

    def __str__(self) -> str:
        return self.technique

    def to_dict(self) -> dict[str, Any]:
        return {"technique": self.technique}

    def pieces(self, text: str, doc_id: str) -> list[str]:
        """The chunker's pieces of ``text``, checked: a list of strings, blank ones left out."""
        chunk = self.chunker.chunk if isinstance(self.chunker, ChunkerPort) else self.chunker
        got = chunk(text)
        if isinstance(got, str) or not isinstance(got, (list, tuple)) or not all(isinstance(p, str) for p in got):
            raise UsageError(f"{self.technique} cut {doc_id!r} into {type(got).__name__}; a chunker's chunk(text) "
                             "returns a list of strings, in document order")
        return [piece for piece in got if piece.strip()]


def own_variant(chunker: ChunkerPort | Callable[[str], Sequence[str]], name: str | None = None) -> OwnVariant:
    """``chunker`` (``chunk(text) -> [piece, ...]``, or that callable) as a matrix's chunk variant."""
    if not isinstance(chunker, ChunkerPort) and not callable(chunker):
        raise UsageError(f"a chunker of one's own has chunk(text) -> [piece, ...] (or is that callable), not "
                         f"{type(chunker).__name__}")
    return OwnVariant(OWN + _name_of(chunker, name), 0, 0, chunker=chunker)


class OwnEmbedder:
    """An ``EmbeddingPort`` as the engine calls an embedder: unit rows of float32, one per text."""

    threads = 1

    def __init__(self, port: EmbeddingPort | Callable[[Sequence[str]], Any], name: str) -> None:
        from ..engine.model_catalog import ModelInfo

        self._embed_with = port.embed if isinstance(port, EmbeddingPort) else port
        self.name = name
        self.dimensions = int(self._rows(["dimensions probe"]).shape[1])
        where = f"{type(port).__module__}.{getattr(type(port), '__qualname__', type(port).__name__)}"
        self.info = ModelInfo(name=name, kind="embedder", source=f"{where} (an embedder of one's own)",
                              sha256=hashlib.sha256(f"{name}\0{self.dimensions}".encode()).hexdigest(),
                              dimensions=self.dimensions, pooling=None, max_tokens=0)

    def _rows(self, texts: list[str]) -> np.ndarray:
        try:
            rows = np.asarray(self._embed_with(texts), dtype=np.float64)
        except (TypeError, ValueError) as err:
            raise ModelError(f"{self.name}: embed(texts) must return one vector of numbers per text ({err})") from None
        if rows.ndim != 2 or len(rows) != len(texts) or rows.shape[1] == 0:
            raise ModelError(f"{self.name}: embed() gave an array of shape {rows.shape} for {len(texts)} texts; it "
                             "must give one vector per text, every vector the same length")
        norms = np.linalg.norm(rows, axis=1, keepdims=True)
        if not np.all(np.isfinite(rows)) or not np.all(norms > 0):
            raise ModelError(f"{self.name}: embed() gave a vector of all zeros or a number that is not finite")
        return (rows / norms).astype(np.float32)

    def embed_documents(self, texts: Sequence[str], *, batch_size: int = 64,
                        progress: Callable[[int], None] | None = None) -> np.ndarray:
        texts = list(texts)
        out = self._rows(texts) if texts else np.zeros((0, self.dimensions), dtype=np.float32)
        if out.shape[1] != self.dimensions:
            raise ModelError(f"{self.name}: embed() gave vectors of {out.shape[1]} numbers, not {self.dimensions}")
        if progress is not None:
            progress(len(texts))
        return out

    def embed_queries(self, texts: Sequence[str], *, batch_size: int = 64) -> np.ndarray:
        return self.embed_documents(texts)


def own_embedder(port: EmbeddingPort | Callable[[Sequence[str]], Any], name: str | None = None) -> str:
    """Register ``port`` (``embed(texts) -> rows``, or that callable) with the engine; its name, ``own:<name>``,
    which ``run_matrix(embedders=...)`` (and any index build) then takes like a bundled model's."""
    from ..engine.model_catalog import register_embedder

    if not isinstance(port, EmbeddingPort) and not callable(port):
        raise UsageError(f"an embedder of one's own has embed(texts) -> vectors (or is that callable), not "
                         f"{type(port).__name__}")
    embedder = OwnEmbedder(port, OWN + _name_of(port, name))
    register_embedder(embedder, embedder.info)
    return embedder.name
