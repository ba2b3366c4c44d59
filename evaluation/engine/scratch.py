"""A scratch embedded index built from chunks someone else cut: ``build_scratch_index``.

``build_index`` cuts a corpus with the engine's own word-counted strategies and keeps the index for
runs to reuse. A chunking run (``evaluation.chunking_eval``: ``sweep``, ``compare_chunking``) and the
ElectriPy experiment matrix need the other way round: chunks made elsewhere (a cutter's, a matrix
cell's), each with the text BM25 reads (``search_text``), the text the embedder is given
(``embed_text``: headings in front, or nothing), or vectors computed already (late chunking), indexed
in a folder that is thrown away after. The result is an ``OpenedIndex`` that ``EmbeddedTarget`` searches
like any other, with the same BM25 settings, the same exact cosine search and the same fusion.

What a scratch index leaves out: the document BM25 (so no ``keyword_documents`` setup) and ColBERT.
Its chunks' ``headings`` and ``title`` are empty, so ``Chunk.indexed_text`` is the handed-over text:
what a cross-encoder reads in a reranked setup.

No work twice (``TextVectors``): a passage's vector is looked up by (model, the exact text embedded),
first in this run's memory, then in the cross-run cache file (``engine.cache``, the same table the
query vectors use: a text's vector does not depend on whether it is a query or a passage, since
``embed_queries`` is ``embed_documents`` of the prefixed text), and only then computed; new ones are
kept in the file. Builds of one document set that differ only in what goes in front of a chunk, or
in a size whose cuts coincide, repeat many passages: those are never embedded twice.
"""
from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Mapping, Sequence

import numpy as np

from .cache import PersistentCache, model_key
from .chunking import Chunk
from .index import BM25_SETTINGS, OpenedIndex, _build_bm25

SCRATCH_FORMAT = 1
VECTOR_COUNTS = ("vectors_cached", "vectors_shared", "vectors_computed")
Progress = Callable[[str, int, int], None]  # (stage, done, total), as build_index's


@dataclass(frozen=True)
class ScratchChunk:
    """One chunk to index: ``text`` is what a search hands over; BM25 indexes ``search_text`` and the
    embedder reads ``embed_text`` (each defaults to the one before it)."""

    id: str
    doc_id: str
    text: str
    search_text: str | None = None
    embed_text: str | None = None
    page: int | None = None

    @property
    def searched(self) -> str:
        return self.text if self.search_text is None else self.search_text

    @property
    def embedded(self) -> str:
        return self.searched if self.embed_text is None else self.embed_text


@dataclass
class TextVectors:
    """Vectors of texts by model, computed once: from memory, else the cache file, else the model.

    One instance per run, shared by its builds (see the module docstring); ``counts`` says where the
    vectors came from, each text counted once per ``vectors`` call: ``vectors_shared`` this run's
    memory, ``vectors_cached`` the file (earlier runs), ``vectors_computed`` the model.
    """

    cache: str | Path | None = None
    threads: int | None = None
    counts: dict[str, int] = field(default_factory=lambda: dict.fromkeys(VECTOR_COUNTS, 0))

    def __post_init__(self) -> None:
        self._memory: dict[tuple[str, str], np.ndarray] = {}
        self._stored = PersistentCache(self.cache) if self.cache is not None else None
        self._keys: dict[str, bytes] = {}

    def vectors(self, model: str, texts: Sequence[str], *,
                progress: Callable[[int], None] | None = None) -> np.ndarray:
        """(len(texts), dimensions) float32 unit rows for ``texts`` exactly as given (no query prefix)."""
        from .model_catalog import vector_size
        from .models import load_embedder

        wanted = list(dict.fromkeys(texts))
        todo = [t for t in wanted if (model, t) not in self._memory]
        self.counts["vectors_shared"] += len(wanted) - len(todo)
        if todo and self._stored is not None:
            found = self._stored.vectors(self._key(model), todo, vector_size(model))
            self._memory.update(((model, t), v) for t, v in found.items())
            self.counts["vectors_cached"] += len(found)
            todo = [t for t in todo if t not in found]
        if progress is not None and len(wanted) > len(todo):
            progress(len(wanted) - len(todo))
        if todo:  # the model is loaded only when something is missing
            computed = load_embedder(model, threads=self.threads).embed_documents(todo, progress=progress)
            self._memory.update(((model, t), v) for t, v in zip(todo, computed, strict=True))
            if self._stored is not None:
                self._stored.put_vectors(self._key(model), zip(todo, computed, strict=True))
            self.counts["vectors_computed"] += len(todo)
        if not texts:
            return np.zeros((0, vector_size(model)), dtype=np.float32)
        return np.stack([self._memory[(model, t)] for t in texts]).astype(np.float32, copy=False)

    def close(self) -> None:
        if self._stored is not None:
            self._stored.close()

    def _key(self, model: str) -> bytes:
        if model not in self._keys:
            self._keys[model] = model_key(model)
        return self._keys[model]


def build_scratch_index(chunks: Sequence[ScratchChunk], folder: str | Path, *, models: Sequence[str] = ("bge-small",),
                        vectors: Mapping[str, np.ndarray] | None = None, text_vectors: TextVectors | None = None,
                        name: str = "scratch", progress: Progress | None = None) -> OpenedIndex:
    """Index ``chunks`` in ``folder`` (made if missing; the caller removes it) and open it read-only.

    ``models`` are embedded from each chunk's ``embed_text`` through ``text_vectors`` (a fresh one,
    memory only, when not given); ``vectors`` gives a model's rows ready made (late chunking: one
    unit row per chunk, in order), and that model is not embedded. Chunk ids must be unique.
    """
    chunks = list(chunks)
    if not chunks:
        raise ValueError("no chunks to index; a scratch index needs at least one")
    ids = [c.id for c in chunks]
    if len(set(ids)) != len(ids):
        repeated = next(i for i in ids if ids.count(i) > 1)
        raise ValueError(f"chunk id {repeated!r} is given twice; a scratch index needs one id per chunk")
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    _build_bm25(folder / "bm25", [c.searched for c in chunks])
    given = dict(vectors or {})
    for model, rows in given.items():
        if np.asarray(rows).shape[0] != len(chunks):
            raise ValueError(f"{model}: {np.asarray(rows).shape[0]} vectors given for {len(chunks)} chunks")
    text_vectors = text_vectors if text_vectors is not None else TextVectors()
    embedded: dict[str, np.ndarray] = {}
    for model in [m for m in models if m not in given]:
        stage = f"embedding chunks with {model}"  # counted in chunks (each distinct text once): said so
        done = 0

        def advance(k: int, stage: str = stage) -> None:
            nonlocal done
            done += k
            if progress is not None:
                progress(stage, done, len(set(c.embedded for c in chunks)))

        embedded[model] = text_vectors.vectors(model, [c.embedded for c in chunks], progress=advance)
    (folder / "vectors").mkdir(exist_ok=True)
    opened: dict[str, np.ndarray] = {}
    for model, rows in {**embedded, **given}.items():
        array = np.ascontiguousarray(rows, dtype=np.float32)
        np.save(folder / "vectors" / f"{model}.npy", array)
        opened[model] = np.load(folder / "vectors" / f"{model}.npy", mmap_mode="r")
    manifest = {"format": SCRATCH_FORMAT, "scratch": True, "fingerprint": f"scratch-{name}",
                "corpus": {"source": name, "documents": len(dict.fromkeys(c.doc_id for c in chunks))},
                "chunking": {"given": True}, "bm25": BM25_SETTINGS, "bm25_documents": None,
                "models": [{"name": m, "late": m in given} for m in sorted(opened)], "chunks": len(chunks),
                "seconds": round(time.perf_counter() - started, 3)}
    (folder / "manifest.json").write_text(json.dumps(manifest, indent=2), encoding="utf-8")
    import bm25s

    bm25 = bm25s.BM25.load(str(folder / "bm25"), mmap=True, show_progress=False)
    engine_chunks = tuple(Chunk(id=c.id, doc_id=c.doc_id, n=n, text=c.text, page=c.page)
                          for n, c in enumerate(chunks))
    return OpenedIndex(folder=folder, manifest=manifest, chunks=engine_chunks, bm25=bm25, vectors=opened)
