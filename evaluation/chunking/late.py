"""Late chunking: the document embedded whole, each chunk's vector pooled from its own tokens' states.

A chunk embedded alone knows nothing of the paragraphs around it ("it", "this client"); pooled from
the whole document's token states it does. ``Embedder.token_states`` runs the bundled ONNX model
over the document (in half-overlapping windows past the model's 512 or 256 tokens) and this module
averages the states of the tokens that fall inside each chunk, then scales each row to unit length.
Mean pooling for both bundled embedders: bge-small's own pooling is its [CLS] state, which belongs to
the whole window, not to any chunk, so the late-chunking recipe (Günther et al., 2024) of averaging
the chunk's token states is what gives each chunk its own vector.
"""
from __future__ import annotations

from typing import Any, Sequence

from .chunk import Chunk


def late_vectors(embedder: Any, document_text: str, chunks: Sequence[Chunk]):
    """``(len(chunks), dimensions)`` float32 unit rows, one per chunk of ``document_text``, in order.

    ``embedder`` is a bundled ``Embedder`` (``evaluation.engine.models.load_embedder``). A chunk is
    pooled from every token that overlaps its ``[start, end)``; ValueError for a chunk whose span lies
    outside the text or holds no token.
    """
    import numpy as np

    states, offsets = embedder.token_states(document_text)
    token_starts = np.array([start for start, _ in offsets], dtype=np.int64)
    token_ends = np.array([end for _, end in offsets], dtype=np.int64)
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
