"""``hash``: deterministic feature hashing of words, an embedder for CI runs that must not load a model.

NOT A REAL MODEL. It is ElectriPy's ``fake`` embedder made honest: a text's vector is the count of
each of its words (lower-cased ``\\w+`` runs) hashed into ``DIMENSIONS`` buckets with a sign (the
"hashing trick", Weinberger et al. 2009), scaled to unit length. Two texts score by how many words
they share, so ``dense`` behaves like a crude keyword search: good for checking that a pipeline runs
and gates, meaningless as a measure of semantic retrieval. Every place it is shown says so
(``LABEL``, the model's ``source``).

The same text gives the same vector on every machine and Python (blake2b, not ``hash()``, which is
salted per process); a text with no word gets the unit vector of bucket 0, so every row has norm 1.
Its identity (``RULE``) is hashed into its ``sha256``, so an index built by other hashing rules is
rebuilt, never reused.
"""
from __future__ import annotations

import hashlib
import re
from typing import Callable, Sequence

import numpy as np

NAME = "hash"
DIMENSIONS = 256
LABEL = "hash (feature hashing of words; not a real model)"
RULE = f"hash-v1: lower-cased \\w+ words, blake2b-8 bucket mod {DIMENSIONS} and sign bit, counts, L2-normalised"
SHA256 = hashlib.sha256(RULE.encode("utf-8")).hexdigest()
_WORD = re.compile(r"\w+")


def _bucket(word: str) -> tuple[int, float]:
    digest = int.from_bytes(hashlib.blake2b(word.encode("utf-8", "surrogatepass"), digest_size=8).digest(), "big")
    return digest % DIMENSIONS, (1.0 if (digest >> 63) & 1 else -1.0)


def hash_vector(text: str) -> np.ndarray:
    """The unit float32 vector of ``text`` (see the module docstring)."""
    row = np.zeros(DIMENSIONS, dtype=np.float64)
    for word in _WORD.findall(text.lower()):
        bucket, sign = _bucket(word)
        row[bucket] += sign
    norm = float(np.linalg.norm(row))
    if norm == 0:  # no word, or words whose signs cancel: still a unit row
        row[:] = 0.0
        row[0] = 1.0
        norm = 1.0
    return (row / norm).astype(np.float32)


class HashEmbedder:
    """The ``Embedder`` interface (``embed_documents``, ``embed_queries``, ``info``) over ``hash_vector``."""

    name = NAME
    dimensions = DIMENSIONS
    threads = 1

    def __init__(self, info: object) -> None:
        self.info = info

    def _embed(self, items: list[str], batch_size: int,
               progress: Callable[[list[int]], None] | None) -> np.ndarray:
        out = np.zeros((len(items), DIMENSIONS), dtype=np.float32)
        for positions, compute in self._calls(items, batch_size):
            out[positions] = compute()
            if progress is not None:  # the indices done, as models.Embedder._embed reports them
                progress(positions)
        return out

    def _calls(self, items: list[str], batch_size: int):
        """``(positions, compute)`` a batch at a time, as ``models.Embedder._calls`` gives them."""
        size = max(1, batch_size)
        for start in range(0, len(items), size):
            batch = items[start:start + size]
            yield (
                list(range(start, start + len(batch))),
                (lambda batch=batch: np.stack([hash_vector(t) for t in batch])),
            )

    def embed_documents(self, texts: Sequence[str], *, batch_size: int = 32,
                        progress: Callable[[int], None] | None = None) -> np.ndarray:
        return self._embed(list(texts), batch_size, None if progress is None else (lambda done: progress(len(done))))

    def embed_queries(self, texts: Sequence[str], *, batch_size: int = 32) -> np.ndarray:
        return self._embed(list(texts), batch_size, None)  # no instruction: queries and passages alike

    def __repr__(self) -> str:
        return f"HashEmbedder({LABEL!r})"
