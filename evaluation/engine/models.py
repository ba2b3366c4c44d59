"""The bundled models loaded and run: ``Embedder`` (float32 unit vectors) and ``CrossEncoder`` (one logit
per pair), each loaded once per (name, threads) in a process by ``load_embedder`` / ``load_cross_encoder``.

Which models there are, their files and checks, is ``model_catalog.py``; running a graph over texts
(sessions, tokenizing, calls) is ``graphs.py``; several embedders at once is ``embed_together.py``. Their
public names are importable from here too, as they were when this module held all four.

Embedders keep one session: a second of each raised an index build's peak memory from 578 to 953 MiB.
The cross-encoder runs its one-row calls on one one-thread session per core (``graphs._Sessions``).
"""
from __future__ import annotations

import difflib
import functools
import logging
import threading
from typing import Any, Callable, Sequence

import numpy as np

from ..errors import ModelError, UsageError
from .embed_together import embed_documents_together, text_work
from .graphs import _Graph, _padded, _run_bucketed, _Sessions, _texts, _tokenizer, _windows, batching, resolve_threads
from .model_catalog import (_REGISTERED, _SPECS, BGE_QUERY_PREFIX, COLBERT_NAME, CROSS_ENCODER_NAME, EMBEDDER_NAMES,
                            HASH_NAME, MODEL_NAMES, REGISTERED_PREFIX, ModelInfo, _ModelSpec, _read_checked,
                            _require_tokenizer, available_embedders, cross_encoder_available, embedder_names,
                            model_info, model_name, register_embedder)

# Every public name this module held before it was split stays importable from here, for users' code.
__all__ = ["BGE_QUERY_PREFIX", "COLBERT_NAME", "CROSS_ENCODER_NAME", "EMBEDDER_NAMES", "HASH_NAME", "MODEL_NAMES",
           "REGISTERED_PREFIX", "CrossEncoder", "Embedder", "ModelInfo", "available_embedders", "batching",
           "cross_encoder_available", "embed_documents_together", "embedder_names", "load_cross_encoder",
           "load_embedder", "model_info", "model_name", "register_embedder", "resolve_threads", "text_work"]

log = logging.getLogger(__name__)

# The cross-encoder cuts only the passage, so the query must leave it room: longer queries are cut
# to this many tokens first (MS MARCO queries, which it was trained on, are far shorter).
_MAX_QUERY_TOKENS = 128

_cache: dict[tuple[str, int], _LoadedModel] = {}  # embedders, the cross-encoder, ColBERT
_cache_lock = threading.Lock()


class _LoadedModel:
    """What the kinds share: the checked .onnx file in a session, its tokenizer file, its info.

    ``pooled``: ``threads`` one-thread sessions that run independent calls at once (``_Sessions``),
    for graphs run one row or one batch per call; otherwise one session with ``threads`` threads.
    """

    _tokenizer: Any  # each kind's own (``tokenizers.Tokenizer``), made in its ``__init__``

    def __init__(self, spec: _ModelSpec, *, threads: int, pooled: bool = False) -> None:
        self._tokenizer_path = _require_tokenizer(spec)
        data, sha256, self._path = _read_checked(spec)
        self._spec = spec
        self._sessions = _Sessions.load(data, self._path, threads=threads, pooled=pooled)
        self._graph = self._sessions.graphs[0]  # for paths that run one call at a time
        self.threads = threads
        self.info = model_info(spec.name)
        self.name = spec.name
        log.info("loaded %s from %s (sha256 %s, %d threads)", self.name, self._path, sha256[:12], threads)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r}, threads={self.threads})"

    def warm_up(self) -> int:
        """Every session of this model has run a call: a short text on each that none has run on yet
        (``_Sessions.warm_up``); how many that was. What a timed pass's warm-up needs of a model whose
        answers all came from a cache, so its first timed search does not pay for the first run."""
        ids = np.array([self._tokenizer.encode("warm up").ids], dtype=np.int64)  # [CLS] warm up [SEP]
        return self._sessions.warm_up(ids)


class Embedder(_LoadedModel):
    """A sentence embedder: float32 unit vectors, one row per text, in the caller's order."""

    def __init__(self, spec: _ModelSpec, *, threads: int, pooled: bool = False) -> None:
        assert spec.dimensions is not None, "an embedder's spec names the size of its vectors"
        super().__init__(spec, threads=threads, pooled=pooled)
        shape = self._graph.output.shape
        if len(shape) != 3 or shape[-1] != spec.dimensions:
            raise ModelError(f"{self._path}: first output {self._graph.output.name} has shape {shape}, "
                             f"expected (batch, sequence, {spec.dimensions})")
        self._tokenizer = _tokenizer(self._tokenizer_path, max_tokens=spec.max_tokens)
        self.dimensions = int(spec.dimensions)

    def _vectors(self, graph: _Graph, ids: np.ndarray, mask: np.ndarray, types: np.ndarray) -> np.ndarray:
        hidden = graph.run(ids, mask, types)
        if self._spec.pooling == "cls":
            pooled = hidden[:, 0, :]
        else:  # mean over real tokens only
            weights = mask[:, :, None].astype(np.float32)
            pooled = (hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1.0)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        return (pooled / np.maximum(norms, 1e-12)).astype(np.float32)

    def _embed(self, items: list[str], batch_size: int,
               progress: Callable[[list[int]], None] | None) -> np.ndarray:
        out = np.zeros((len(items), self.dimensions), dtype=np.float32)
        return _run_bucketed(items, tokenizer=self._tokenizer, batch_size=batch_size,
                             rows_per_call=self._spec.rows_per_call, infer=self._vectors, out=out,
                             progress=progress, graphs=self._sessions)

    def _calls(self, items: list[str], batch_size: int):
        """``(positions, compute)`` for each graph call ``_embed`` makes, in its order: ``compute()``
        gives those positions' rows on the one session, so several threads may run calls at once
        (onnxruntime's run is thread-safe; ``embed_documents_together``)."""
        for start, encodings, batches in _windows(items, tokenizer=self._tokenizer, batch_size=batch_size,
                                                  rows_per_call=self._spec.rows_per_call):
            for calls in batches:
                for rows in calls:
                    chosen = [encodings[i] for i in rows]
                    yield [start + int(i) for i in rows], functools.partial(self._rows, chosen)

    def _rows(self, encodings: list) -> np.ndarray:
        return self._vectors(self._graph, *_padded(encodings))

    def embed_documents(self, texts: Sequence[str], *, batch_size: int = 32,
                        progress: Callable[[int], None] | None = None) -> np.ndarray:
        """(len(texts), dimensions) float32 unit rows; ``progress(k)`` after each batch of k texts."""
        counted = None if progress is None else (lambda done: progress(len(done)))
        return self._embed(_texts(texts, "embed_documents"), batch_size, counted)

    def token_states(self, text: str) -> tuple[np.ndarray, list[tuple[int, int]]]:
        """The encoder's last hidden state for every token of ``text`` (no special tokens), and each token's
        ``[start, end)`` characters in ``text``: what late chunking pools a chunk's vector from.

        A text longer than the model's window runs in windows of ``max_tokens - 2`` tokens (room for
        [CLS] and [SEP]) that overlap by half, and each token keeps its state from the window where
        it sits farthest from an edge, so every token saw at least a quarter window of context on
        each side it has. One window per call, as ``rows_per_call=1`` asks for the int8 graphs.
        """
        if not isinstance(text, str):
            raise TypeError(f"token_states takes a string, not {type(text).__name__}")
        if getattr(self, "_whole_tokenizer", None) is None:
            self._whole_tokenizer = _tokenizer(self._tokenizer_path, max_tokens=10 ** 9)
            self._whole_tokenizer.no_truncation()
        encoding = self._whole_tokenizer.encode(text, add_special_tokens=False)
        ids = list(encoding.ids)
        states = np.zeros((len(ids), self.dimensions), dtype=np.float32)
        if not ids:
            return states, []
        cls_id = self._whole_tokenizer.token_to_id("[CLS]")
        sep_id = self._whole_tokenizer.token_to_id("[SEP]")
        if cls_id is None or sep_id is None:
            raise ModelError(f"{self._tokenizer_path}: no [CLS] or [SEP] token, so it is not a BERT tokenizer")
        width = self._spec.max_tokens - 2
        step = max(1, width // 2)
        starts = list(range(0, max(1, len(ids) - width) + step, step))
        starts = sorted({min(s, max(0, len(ids) - width)) for s in starts})
        best = np.full(len(ids), -1.0)

        def window_states(graph: _Graph, start: int) -> np.ndarray:
            row = np.array([[cls_id, *ids[start:start + width], sep_id]], dtype=np.int64)
            return graph.run(row, np.ones_like(row), np.zeros_like(row))[0, 1:-1, :]

        for start, hidden in zip(starts, self._sessions.map(window_states, starts), strict=True):
            window = ids[start:start + width]
            positions = np.arange(start, start + len(window))
            margin = np.minimum(positions - start, start + len(window) - 1 - positions).astype(float)
            margin[positions < width // 4] += width   # the document's own edges are no window's edge
            margin[positions >= len(ids) - width // 4] += width
            better = margin > best[positions]
            states[positions[better]] = hidden[better]
            best[positions[better]] = margin[better]
        return states, [tuple(o) for o in encoding.offsets]

    def embed_queries(self, texts: Sequence[str], *, batch_size: int = 32) -> np.ndarray:
        """Like embed_documents, with the model's query instruction put first (bge only)."""
        prefix = self._spec.query_prefix
        return self._embed([prefix + t for t in _texts(texts, "embed_queries")], batch_size, None)


class CrossEncoder(_LoadedModel):
    """Scores (query, passage) pairs: one float32 logit each, higher is more relevant."""

    def __init__(self, spec: _ModelSpec, *, threads: int, pooled: bool = True) -> None:
        super().__init__(spec, threads=threads, pooled=pooled)
        self._tokenizer = _tokenizer(self._tokenizer_path, max_tokens=spec.max_tokens, pairs=True)
        self._query_tokenizer = _tokenizer(self._tokenizer_path, max_tokens=_MAX_QUERY_TOKENS)

    def _clip_query(self, query: str) -> str:
        """The query cut to _MAX_QUERY_TOKENS tokens, at a token boundary of the original text."""
        encoding = self._query_tokenizer.encode(query, add_special_tokens=False)
        if len(encoding.ids) < _MAX_QUERY_TOKENS:
            return query
        return query[: encoding.offsets[-1][1]]

    def _logits(self, graph: _Graph, ids: np.ndarray, mask: np.ndarray, types: np.ndarray) -> np.ndarray:
        return graph.run(ids, mask, types).reshape(len(ids), -1)[:, 0].astype(np.float32)

    def score_pairs(self, pairs: Sequence[tuple[str, str]], *, batch_size: int = 32) -> np.ndarray:
        """One logit per (query, passage) pair, in order; only the passage is cut to fit max_tokens."""
        items = list(pairs)
        clipped: dict[str, str] = {}
        for i, pair in enumerate(items):
            if (not isinstance(pair, (tuple, list)) or len(pair) != 2
                    or not all(isinstance(s, str) for s in pair)):
                raise TypeError(f"score_pairs: item {i} is not a (query, passage) pair of strings")
            query, passage = pair
            if query not in clipped:
                clipped[query] = self._clip_query(query)
            items[i] = (clipped[query], passage)
        out = np.zeros(len(items), dtype=np.float32)
        return _run_bucketed(items, tokenizer=self._tokenizer, batch_size=batch_size,
                             rows_per_call=self._spec.rows_per_call, infer=self._logits, out=out,
                             progress=None, graphs=self._sessions)

    def score(self, query: str, passages: Sequence[str], *, batch_size: int = 32) -> np.ndarray:
        """One logit per passage for this query, in the passages' order."""
        if not isinstance(query, str):
            raise TypeError(f"score: query is {type(query).__name__}, not str")
        return self.score_pairs([(query, p) for p in _texts(passages, "score")], batch_size=batch_size)


# --- loading -----------------------------------------------------------------------------------

def _cached(name: str, threads: int | None, build: Callable[[_ModelSpec, int], _LoadedModel]):
    count = resolve_threads(threads)
    key = (name, count)
    with _cache_lock:  # a Function host may call from several threads; load each model once
        found = _cache.get(key)
        if found is None:
            found = _cache[key] = build(_SPECS[name], count)
        return found


def load_embedder(name: str, *, threads: int | None = None) -> Embedder:
    """The embedder called ``name``, loaded once per (name, threads) in this process.

    ``hash`` gives the feature-hashing embedder (``engine.hashing``: not a real model, for CI).
    Raises UsageError for an unknown name, ModelError when its package is not installed (naming the
    ``pip install``) or its .onnx file does not match the expected sha256.
    """
    if name in _REGISTERED:
        return _REGISTERED[name][0]  # type: ignore[return-value]  # the same interface
    if isinstance(name, str) and name.startswith(REGISTERED_PREFIX):
        raise UsageError(f"embedder {name!r} needs its endpoint: give the matrix --openai-endpoint (and a key or "
                         "managed identity), or call evaluation.answers.embeddings.openai_embedder first")
    if name == HASH_NAME:
        from .hashing import HashEmbedder

        return HashEmbedder(model_info(HASH_NAME))  # type: ignore[return-value]  # the same interface
    if name not in EMBEDDER_NAMES:
        close = difflib.get_close_matches(str(name), (*EMBEDDER_NAMES, HASH_NAME), n=1)
        hint = f"did you mean {close[0]!r}? " if close else ""
        raise UsageError(f"unknown embedder {name!r}: {hint}bundled: {', '.join(EMBEDDER_NAMES)}; "
                         f"{HASH_NAME} for runs that must load no model")
    return _cached(name, threads, lambda spec, count: Embedder(spec, threads=count))


def load_cross_encoder(*, threads: int | None = None) -> CrossEncoder:
    """The ms-marco-MiniLM-L-12-v2 cross-encoder, loaded once per threads value; errors as load_embedder."""
    return _cached(CROSS_ENCODER_NAME, threads, lambda spec, count: CrossEncoder(spec, threads=count))
