"""``semantic``: a new chunk where adjacent sentences' embeddings drift apart.

Each sentence (a run of text ending at ``.``, ``!`` or ``?`` before whitespace, or at a line end) is
embedded once with the embedder given (a bundled one: ``load_embedder("bge-small")`` or
``"minilm-l6"``). The drift between neighbours is ``1 - cos``. A document is cut at every drift
above its own mean plus one standard deviation (a shift that stands out in this document, whatever
the model's usual similarity level); a topic still longer than the size is then cut at its largest
drift, again and again, until every piece fits; a piece under a tenth of the size joins a neighbour
of the same topic where both fit; a single sentence longer than the size is cut by ``TextSplitter``.
A short topic stays on its own (a heading whose next lines drift away from it can be one).

Semantic chunks do not overlap: a boundary is a change of topic, and repeating the sentences before
it would carry the old topic into the new chunk.

Written here rather than taken from chonkie's ``SemanticChunker`` (given our embedder), which embeds
every sentence and also a window of sentences around each. On the sample's first 20 documents with
bge-small (load about 11 on 2 cores) chonkie took 63-85 s (its thresholds 0.5 to 0.8) and this
module 7-16 s. ``bench/bench_chunkers.py --semantic 20`` (minilm-l6, load 13-20): 20 documents and
20 joins of two documents' first 700 characters of body text in 336 s against chonkie's 465 s, and
a chunk started exactly at the join in 14 of the 20 joins against chonkie's 9. Comparing means of
three sentences each side rather than single sentences is what found the joins: 14 of 20 joins
stood out above mean + 1 sd with minilm-l6 and 11 with bge-small, against 7 and 10 sentence by
sentence (the same 20 joins).
"""
from __future__ import annotations

import hashlib
import re
import threading
from collections import OrderedDict
from typing import Any

from .cutters import Span, trimmed, merge_tiny, split_long

_SENTENCE_GAP = re.compile(r"(?<=[.!?])\s+|\n\s*")
KEPT_DOCUMENTS = 4096   # the sample's 270 documents' sentence vectors take about 6 MB
_kept: OrderedDict = OrderedDict()
_kept_lock = threading.Lock()
WINDOW = 3   # sentences each side of a boundary whose mean vectors are compared
_ABBREVIATIONS = ("e.g.", "i.e.", "etc.", "cf.", "vs.", "approx.", "no.", "fig.")


def sentences(text: str) -> list[Span]:
    """Sentence spans, trimmed, in order; every non-space character lies in one. A line end always
    ends one; ``.``, ``!`` or ``?`` before a space ends one unless it closes an abbreviation ("e.g.")."""
    spans: list[Span] = []
    position = 0
    for gap in _SENTENCE_GAP.finditer(text):
        if "\n" not in gap.group() and text[position:gap.start()].lower().endswith(_ABBREVIATIONS):
            continue
        span = trimmed(text, position, gap.start())
        if span is not None:
            spans.append(span)
        position = gap.end()
    span = trimmed(text, position, len(text))
    if span is not None:
        spans.append(span)
    return spans


def sentence_vectors(embedder: Any, text: str, spans: list[Span]):
    """The embedder's vectors for the document's sentences, kept for the last ``KEPT_DOCUMENTS`` documents
    of each embedder: the sentences do not depend on the size, so a sweep's three sizes and two letters
    of ``semantic`` embed each document's sentences once, not six times."""
    key = (getattr(embedder, "name", None) or id(embedder), hashlib.sha256(text.encode("utf-8")).hexdigest())
    with _kept_lock:
        found = _kept.get(key)
        if found is not None:
            _kept.move_to_end(key)
            return found
    vectors = embedder.embed_documents([text[a:b] for a, b in spans])
    with _kept_lock:
        _kept[key] = vectors
        while len(_kept) > KEPT_DOCUMENTS:
            _kept.popitem(last=False)
    return vectors


def drifts(vectors, window: int = WINDOW) -> list[float]:
    """For each boundary between sentence i and i + 1, ``1 - cos`` between the mean of the ``window``
    sentences before it and the mean of the ``window`` after it (fewer at the document's ends)."""
    import numpy as np

    if len(vectors) < 2:
        return []
    sums = np.vstack([np.zeros((1, vectors.shape[1]), dtype=np.float64), np.cumsum(vectors, axis=0, dtype=np.float64)])
    out = []
    for i in range(len(vectors) - 1):
        left = sums[i + 1] - sums[max(0, i + 1 - window)]
        right = sums[min(len(vectors), i + 1 + window)] - sums[i + 1]
        cosine = float(left @ right) / max(float(np.linalg.norm(left) * np.linalg.norm(right)), 1e-12)
        out.append(1.0 - cosine)
    return out


def boundaries(drift: list[float], spans: list[Span], size: int) -> list[list[int]]:
    """Sentence indices that start a new chunk (0 first), grouped by topic: a new group at each standout
    drift, and inside a group longer than ``size`` a start at its largest drift, again until every
    piece fits or is one sentence."""
    import numpy as np

    cuts = {0}
    if drift:
        values = np.array(drift)
        limit = float(values.mean() + values.std())
        cuts.update(i + 1 for i, d in enumerate(drift) if d > limit and values.std() > 0)
    ordered = sorted(cuts)
    groups: list[list[int]] = []
    for a, b in zip(ordered, ordered[1:] + [len(spans)], strict=True):
        pieces, done = [(a, b)], []
        while pieces:
            lo, hi = pieces.pop()
            if hi - lo <= 1 or spans[hi - 1][1] - spans[lo][0] <= size:
                done.append(lo)
                continue
            inner = max(range(lo, hi - 1), key=lambda i: (drift[i], -i))   # ties: the earliest boundary
            pieces += [(lo, inner + 1), (inner + 1, hi)]
        groups.append(sorted(done))
    return groups


def semantic_spans(text: str, size: int, overlap: int, embedder: Any) -> list[Span]:
    """The document's chunks as spans: see the module docstring. ``overlap`` is not used (no overlap)."""
    spans = sentences(text)
    if not spans:
        return []
    vectors = sentence_vectors(embedder, text, spans)
    groups = boundaries(drifts(vectors), spans, size)
    out: list[Span] = []
    for n, starts in enumerate(groups):
        end = groups[n + 1][0] if n + 1 < len(groups) else len(spans)
        pieces = [(spans[a][0], spans[b - 1][1]) for a, b in zip(starts, starts[1:] + [end], strict=True)]
        out += merge_tiny(split_long(text, pieces, size, 0), size)   # tiny pieces join within a topic only
    return out
