"""Late chunking: the document embedded whole, each chunk's vector pooled from its own tokens' states.

A chunk embedded alone knows nothing of the paragraphs around it ("it", "this client"); pooled from
the whole document's token states it does. ``Embedder.token_states`` runs the bundled ONNX model
over the document (in half-overlapping windows past the model's 512 or 256 tokens) and this module
averages the states of the tokens that fall inside each chunk, then scales each row to unit length.
Mean pooling for both bundled embedders: bge-small's own pooling is its [CLS] state, which belongs to
the whole window, not to any chunk, so the late-chunking recipe (Günther et al., 2024) of averaging
the chunk's token states is what gives each chunk its own vector.

The token states do not depend on how the document is cut, so they are kept, per (model identity,
document sha256), for every late build of any size and technique in the process (``kept_states``):
a ``compare_chunking`` run with the six no-model techniques' late builds runs the model over each
document once, not six times (twice the document's tokens each time, the windows overlapping by
half). Kept up to ``KEPT_BYTES`` of states, the oldest dropped first: the shipped sample's 270
documents hold about 120,000 tokens, 184 MB of float32 states with bge-small's 384 dimensions.
"""
from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from typing import Any, Sequence

from .chunk import Chunk

KEPT_BYTES = 512 * 2 ** 20
_kept: OrderedDict = OrderedDict()
_kept_bytes = 0
_kept_lock = threading.Lock()


def model_identity(embedder: Any) -> tuple | None:
    """What decides the embedder's token states: its model file's and tokenizer's sha256 and its window
    (``Embedder.info``); None for an object that does not say (its states are then never kept)."""
    info = getattr(embedder, "info", None)
    if info is None:
        return None
    return (info.name, info.sha256, getattr(info, "tokenizer_sha256", ""), info.max_tokens)


def kept_states(embedder: Any, document_text: str):
    """``(states, token starts, token ends)`` of ``document_text``: computed by ``embedder.token_states``
    the first time this model meets this document, then kept (see the module docstring)."""
    import numpy as np

    global _kept_bytes
    identity = model_identity(embedder)
    key = None if identity is None else (identity, hashlib.sha256(document_text.encode("utf-8")).hexdigest())
    if key is not None:
        with _kept_lock:
            found = _kept.get(key)
            if found is not None:
                _kept.move_to_end(key)
                return found
    states, offsets = embedder.token_states(document_text)
    kept = (states, np.array([start for start, _ in offsets], dtype=np.int64),
            np.array([end for _, end in offsets], dtype=np.int64))
    if key is not None and states.nbytes <= KEPT_BYTES:
        for array in kept:
            array.setflags(write=False)  # shared by every later build: read only
        with _kept_lock:
            if key not in _kept:
                _kept[key] = kept
                _kept_bytes += states.nbytes
            while _kept_bytes > KEPT_BYTES:
                _, (old, _, _) = _kept.popitem(last=False)
                _kept_bytes -= old.nbytes
    return kept


def forget_states() -> None:
    """Drop every kept token state (a test's clean start; memory back when a run is done)."""
    global _kept_bytes
    with _kept_lock:
        _kept.clear()
        _kept_bytes = 0


def late_vectors(embedder: Any, document_text: str, chunks: Sequence[Chunk]):
    """``(len(chunks), dimensions)`` float32 unit rows, one per chunk of ``document_text``, in order.

    ``embedder`` is a bundled ``Embedder`` (``evaluation.engine.models.load_embedder``). A chunk is
    pooled from every token that overlaps its ``[start, end)``; ValueError for a chunk whose span lies
    outside the text or holds no token. The document's token states are computed once per model
    (``kept_states``).
    """
    import numpy as np

    states, token_starts, token_ends = kept_states(embedder, document_text)
    out = np.zeros((len(chunks), states.shape[1]), dtype=np.float32)
    for row, chunk in enumerate(chunks):
        if not 0 <= chunk.start < chunk.end <= len(document_text):
            raise ValueError(f"chunk {chunk.id} spans [{chunk.start}, {chunk.end}), outside the document's "
                             f"{len(document_text)} characters: late vectors need the text it was cut from")
        inside = (token_starts < chunk.end) & (token_ends > chunk.start)
        if not inside.any():
            raise ValueError(f"chunk {chunk.id} holds no token of the document")
        pooled = states[inside].mean(axis=0)
        out[row] = pooled / max(float(np.linalg.norm(pooled)), 1e-12)
    return out
