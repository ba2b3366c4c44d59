"""The embedded search engine: corpus, chunking, bundled models, the index folder, fusion, and the
``EmbeddedTarget`` that searches it (BM25, exact dense, hybrid, hybrid reranked by a cross-encoder, and
by ColBERT late interaction on an index built with its token vectors).

Names load on first use, so importing the package costs nothing until an index is built or opened.
"""
from __future__ import annotations

from ..lazy import lazy_attributes

_LAZY = {
    "EmbeddedTarget": ".target",
    "IndexSettings": ".index", "OpenedIndex": ".index", "build_index": ".index", "open_index": ".index",
    "ChunkSettings": ".chunking", "Corpus": ".corpus", "read_corpus": ".corpus", "rrf": ".fusion",
    "ScratchChunk": ".scratch", "TextVectors": ".scratch", "build_scratch_index": ".scratch",
    "fetch_index": ".published", "publish_index": ".published", "published_fingerprint": ".published",
}
__all__ = sorted(_LAZY)
__getattr__ = lazy_attributes(__name__, _LAZY)
