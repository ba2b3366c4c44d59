"""The embedded index: built once into a folder, opened read-only by runs.

Folder layout (``format`` 1)::

    manifest.json        what was built from what: corpus, chunking, models, fingerprint
    chunks.jsonl         one chunk a line: id, doc_id, n, page, headings, title, text
    bm25/                bm25s index (BM25, Lucene variant, k1=1.2, b=0.75 like Azure AI Search;
                         English Snowball stemmer, English stopwords)
    vectors/<model>.npy  float32 (chunks, dimensions), unit rows, in chunk order

The fingerprint hashes everything that changes the index's bytes or a query's vector (``identity``
lists it: corpus bytes, chunking, the indexed text, BM25 settings, each model's files and settings,
the versions of bm25s, PyStemmer, tokenizers and onnxruntime): ``build_index`` does nothing when the
folder already holds an index with the same fingerprint. ``open_index`` refuses an index built with
other models or software than are installed, and can say when the corpus changed since. A build writes into a
temporary sibling folder and swaps it in at the end, so a stopped build never leaves half an index.
"""
from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
import tempfile
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

from .chunking import RULES_VERSION, Chunk, ChunkSettings, chunk_corpus
from .corpus import Corpus, read_corpus
from .identity import differences, fingerprint_payload, rebuild_command, software_versions
from ..errors import SearchIndexError

log = logging.getLogger(__name__)

INDEX_FORMAT = 1
BM25_SETTINGS = {"method": "lucene", "k1": 1.2, "b": 0.75, "stemmer": "english", "stopwords": "en"}
MANIFEST = "manifest.json"

Progress = Callable[[str, int, int], None]  # (stage, done, total)


@dataclass(frozen=True)
class IndexSettings:
    chunking: ChunkSettings = ChunkSettings()
    models: tuple[str, ...] | None = None  # None: every embedder whose package is installed

    def resolved_models(self) -> tuple[str, ...]:
        from .models import available_embedders

        return tuple(sorted(self.models if self.models is not None else available_embedders()))


def fingerprint(corpus_sha256: str, settings: IndexSettings) -> str:
    """sha256 of everything that changes the index's bytes or a query's vector (see ``identity``)."""
    payload = fingerprint_payload(index_format=INDEX_FORMAT, corpus_sha256=corpus_sha256,
                                  chunking=settings.chunking.to_dict(), chunking_rules=RULES_VERSION,
                                  bm25=BM25_SETTINGS, models=settings.resolved_models())
    return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()


def read_manifest(folder: str | Path) -> dict | None:
    path = Path(folder) / MANIFEST
    if not path.is_file():
        return None
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        return None


def build_index(corpus: Corpus | str | Path, folder: str | Path, settings: IndexSettings = IndexSettings(),
                *, progress: Progress | None = None, threads: int | None = None) -> dict:
    """Build the index of ``corpus`` into ``folder`` unless it already holds the same one.

    Returns the manifest; ``manifest["reused"]`` says whether the existing index was kept.
    """
    corpus = corpus if isinstance(corpus, Corpus) else read_corpus(corpus)
    folder = Path(folder)
    wanted = fingerprint(corpus.sha256, settings)
    existing = read_manifest(folder)
    if existing and existing.get("fingerprint") == wanted and not differences(existing):
        log.info("index in %s is current (fingerprint %s)", folder, wanted[:12])
        return {**existing, "reused": True}
    if folder.exists() and any(folder.iterdir()) and existing is None:
        raise SearchIndexError(f"{folder}: the folder is not empty and holds no index; "
                               "give an empty or new folder for --out")

    chunks = chunk_corpus(corpus, settings.chunking)
    folder.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{folder.name}.building-", dir=folder.parent))
    try:
        _write_chunks(staging / "chunks.jsonl", chunks)
        _build_bm25(staging / "bm25", [c.indexed_text for c in chunks])
        model_infos = []
        for name in settings.resolved_models():
            vectors, info = _embed_chunks(name, chunks, progress=progress, threads=threads)
            (staging / "vectors").mkdir(exist_ok=True)
            np.save(staging / "vectors" / f"{name}.npy", vectors)
            model_infos.append(info)
        manifest = {
            "format": INDEX_FORMAT,
            "fingerprint": wanted,
            "corpus": {"source": corpus.source, "sha256": corpus.sha256, "documents": len(corpus)},
            "chunking": settings.chunking.to_dict(),
            "bm25": BM25_SETTINGS,
            "models": model_infos,
            "software": software_versions(),
            "chunks": len(chunks),
        }
        (staging / MANIFEST).write_text(json.dumps(manifest, indent=2), encoding="utf-8")
        _swap_in(staging, folder)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return {**manifest, "reused": False}


def _write_chunks(path: Path, chunks: Sequence[Chunk]) -> None:
    with path.open("w", encoding="utf-8") as handle:
        for c in chunks:
            handle.write(json.dumps({"id": c.id, "doc_id": c.doc_id, "n": c.n, "page": c.page,
                                     "headings": list(c.headings), "title": c.title, "text": c.text},
                                    ensure_ascii=False) + "\n")


def bm25_tokenize(texts: Sequence[str]) -> list[list[str]]:
    """The one tokenizer for documents and queries, so both sides stem and drop stopwords alike."""
    import bm25s

    return bm25s.tokenize(list(texts), stopwords=BM25_SETTINGS["stopwords"], stemmer=_stemmer(),
                          return_ids=False, show_progress=False)


@lru_cache(maxsize=1)
def _stemmer():
    import Stemmer

    return Stemmer.Stemmer(BM25_SETTINGS["stemmer"])


def _build_bm25(folder: Path, texts: Sequence[str]) -> None:
    import bm25s

    retriever = bm25s.BM25(method=BM25_SETTINGS["method"], k1=BM25_SETTINGS["k1"], b=BM25_SETTINGS["b"])
    retriever.index(bm25_tokenize(texts), show_progress=False)
    retriever.save(str(folder), show_progress=False)


def _embed_chunks(name: str, chunks: Sequence[Chunk], *, progress: Progress | None,
                  threads: int | None) -> tuple[np.ndarray, dict]:
    from .models import load_embedder

    embedder = load_embedder(name, threads=threads)
    done = 0
    total = len(chunks)

    def advance(k: int) -> None:
        nonlocal done
        done += k
        if progress:
            progress(f"embedding with {name}", done, total)

    vectors = embedder.embed_documents([c.indexed_text for c in chunks], progress=advance)
    return np.ascontiguousarray(vectors, dtype=np.float32), embedder.info.to_dict()


def _swap_in(staging: Path, folder: Path) -> None:
    if folder.exists():
        old = folder.with_name(f".{folder.name}.old-{os.getpid()}")
        os.replace(folder, old)
        os.replace(staging, folder)
        shutil.rmtree(old, ignore_errors=True)
    else:
        os.replace(staging, folder)


@dataclass(frozen=True)
class OpenedIndex:
    """An index opened read-only: nothing under its folder is written while it is open."""

    folder: Path
    manifest: dict
    chunks: tuple[Chunk, ...]
    bm25: object
    vectors: dict[str, np.ndarray]

    @property
    def models(self) -> tuple[str, ...]:
        return tuple(sorted(self.vectors))

    @property
    def doc_ids(self) -> frozenset[str]:
        return frozenset(c.doc_id for c in self.chunks)

    @property
    def chunk_ids(self) -> frozenset[str]:
        return frozenset(c.id for c in self.chunks)


def open_index(folder: str | Path, *, corpus: str | Path | None = None) -> OpenedIndex:
    """Open a built index read-only. Given ``corpus``, refuse when it changed since the build."""
    import bm25s

    folder = Path(folder)
    manifest = read_manifest(folder)
    if manifest is None:
        raise SearchIndexError(f"{folder}: no index here; build one with "
                               f"`python -m evaluation index CORPUS --out {folder}`")
    if manifest.get("format") != INDEX_FORMAT:
        raise SearchIndexError(f"{folder}: index format {manifest.get('format')} is not {INDEX_FORMAT}; rebuild it")
    changed = differences(manifest)  # the questions must meet the chunks' own models, tokenizers and stemmer
    if changed:
        shown = "; ".join(changed[:4]) + (f"; and {len(changed) - 4} more" if len(changed) > 4 else "")
        raise SearchIndexError(f"{folder}: built with other models or software than are installed now "
                               f"({shown}); rebuild it with `{rebuild_command(manifest, folder)}`")
    if corpus is not None:
        current = read_corpus(corpus)
        if current.sha256 != manifest["corpus"]["sha256"]:
            raise SearchIndexError(f"{folder}: the corpus {corpus} changed since this index was built; "
                                   f"rebuild with `python -m evaluation index {corpus} --out {folder}`")
    try:
        chunks = tuple(_read_chunks(folder / "chunks.jsonl"))
        bm25 = bm25s.BM25.load(str(folder / "bm25"), mmap=True, show_progress=False)
        vectors = {}
        for info in manifest["models"]:
            array = np.load(folder / "vectors" / f"{info['name']}.npy", mmap_mode="r")
            if array.shape[0] != len(chunks):
                raise SearchIndexError(f"{folder}: vectors/{info['name']}.npy has {array.shape[0]} rows "
                                       f"for {len(chunks)} chunks; rebuild the index")
            vectors[info["name"]] = array
    except (OSError, ValueError, KeyError, json.JSONDecodeError) as err:
        raise SearchIndexError(f"{folder}: the index is damaged ({err}); rebuild it") from err
    return OpenedIndex(folder=folder, manifest=manifest, chunks=chunks, bm25=bm25, vectors=vectors)


def _read_chunks(path: Path):
    with path.open(encoding="utf-8") as handle:
        for line in handle:
            row = json.loads(line)
            yield Chunk(id=row["id"], doc_id=row["doc_id"], n=row["n"], text=row["text"],
                        headings=tuple(row["headings"]), page=row["page"], title=row.get("title"))
