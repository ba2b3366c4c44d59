"""Reciprocal rank fusion (Cormack, Clarke and Buettcher, 2009), the way Azure AI Search fuses hybrid,
and the one top-k cut every ranked list of the embedded engine goes through.

    score(d) = sum over the ranked lists that hold d of 1 / (k + rank of d in that list)

with 1-based ranks and k = 60. Scores are the only input that matters, never the raw BM25 or cosine
values, so lists of different kinds fuse fairly.

Ties: the sums are exact (rational arithmetic), so two items tie exactly when their reciprocal ranks
add up to the same number, whatever order the lists come in or the terms are added in. Items with
equal scores are ordered by the item itself: for the engine, a chunk's position in the index. So the
fused list does not depend on the order of the input lists, and ``top_k`` applies the same rule
(equal scores in index order, also across the cut) to the BM25 and dense lists before they are fused.
``rrf_ranks`` is the same fusion for lists held as one rank per position (every matched chunk of the
chunk BM25 and of its document's BM25, for the keyword_documents setup), with the same rule for ties.
"""
from __future__ import annotations

from fractions import Fraction
from typing import Sequence, TypeVar

import numpy as np

RRF_K = 60
# How far below the k-th best float32 score a chunk may be and still be scored exactly: any two
# float32 matrix products differ by about 1e-6 on unit vectors, and 2x that difference is what the
# screen needs (dense_top_k's docstring has the argument); 1e-4 leaves room and costs a few rows.
SCREEN_TOLERANCE = 1e-4
T = TypeVar("T")  # hashable and ordered: chunk positions (ints) in the engine


def rrf(rankings: Sequence[Sequence[T]], k: int = RRF_K) -> list[tuple[T, float]]:
    """Fuse ranked lists of ids into one, best first, as ``(id, fused score)`` pairs.

    The score is the exact sum rounded once to a float; equal exact sums are ordered by id.
    """
    _check_k(k)
    sums: dict[T, Fraction] = {}
    for ranking in rankings:
        for rank, item in enumerate(ranking, start=1):
            sums[item] = sums.get(item, 0) + Fraction(1, k + rank)
    return _best_first(sums)


def _check_k(k: int) -> None:
    if isinstance(k, bool) or not isinstance(k, int) or k <= 0:
        raise ValueError(f"k must be a positive whole number, not {k!r}")


def _best_first(sums: dict[T, Fraction], depth: int | None = None) -> list[tuple[T, float]]:
    """``(item, exact sum rounded once)`` pairs, largest sum first, equal sums by item; the first ``depth``."""
    ordered = sorted(sums.items(), key=lambda pair: (-pair[1], pair[0]))[:depth]
    return [(item, float(total)) for item, total in ordered]


def top_k(scores: np.ndarray, k: int) -> list[tuple[int, float]]:
    """The ``k`` best positions of ``scores`` as ``(position, score)``, best first.

    Equal scores are in position order, and so are ties at the cut: of several positions tied for the
    last place, the earliest ones are kept. Exact; costs one partition of ``scores``.
    """
    scores = np.asarray(scores)
    n = scores.shape[0]
    k = min(k, n)
    if k <= 0:
        return []
    if k < n:
        kth = np.partition(scores, n - k)[n - k]  # the k-th largest score
        above = np.flatnonzero(scores > kth)
        tied = np.flatnonzero(scores == kth)[: k - above.shape[0]]  # flatnonzero is in position order
        chosen = np.concatenate((above, tied))
    else:
        chosen = np.arange(n)
    # lexsort sorts by its last key first: score descending, then position ascending
    order = chosen[np.lexsort((chosen, -scores[chosen]))]
    return [(int(i), float(scores[i])) for i in order]


def dense_top_k(matrix: np.ndarray, queries: np.ndarray, k: int) -> list[list[tuple[int, float]]]:
    """Per query row, the ``k`` best rows of ``matrix`` by dot product, as ``top_k`` gives them, with
    scores that do not depend on how many queries were asked together.

    A float32 matrix product's rounding depends on its shape (BLAS takes another kernel for one row
    than for many), so a question searched alone and the same question in a batch could get scores a
    unit apart in the 7th digit, and a near tie could swap. So the float32 product only screens: every
    row within SCREEN_TOLERANCE of the k-th best screened score is scored again in float64, one row at
    a time (an element-wise product summed along the row: the same sum whatever rows are gathered),
    and the cut is made on those scores. If the screened scores are each within d of the exact ones,
    every row of the exact top k is within 2d of the k-th screened score, so none is missed.
    """
    screened = queries @ matrix.T  # (queries, rows)
    n = matrix.shape[0]
    out: list[list[tuple[int, float]]] = []
    for query, row in zip(queries, screened, strict=True):
        if k <= 0 or n == 0:
            out.append([])
            continue
        if k < n:
            kth = np.partition(row, n - k)[n - k]
            candidates = np.flatnonzero(row >= kth - SCREEN_TOLERANCE)
        else:
            candidates = np.arange(n)
        exact = (matrix[candidates].astype(np.float64) * query.astype(np.float64)).sum(axis=1)
        out.append([(int(candidates[i]), s) for i, s in top_k(exact, k)])
    return out


def ranks_of(scores: np.ndarray) -> np.ndarray:
    """Each position's 1-based rank among the positive ``scores`` (best first, equal scores in position
    order, as ``top_k`` cuts), 0 for a position without a positive score (in no list)."""
    scores = np.asarray(scores)
    matched = np.flatnonzero(scores > 0)
    order = matched[np.lexsort((matched, -scores[matched]))]
    ranks = np.zeros(scores.shape[0], dtype=np.int64)
    ranks[order] = np.arange(1, order.shape[0] + 1)
    return ranks


def rrf_ranks(ranks: Sequence[np.ndarray], depth: int, k: int = RRF_K) -> list[tuple[int, float]]:
    """``rrf`` over lists given as rank arrays (``ranks_of``: one rank per position, 0 = not in that
    list): the ``depth`` best positions as ``(position, fused score)``, best first.

    The same rule as ``rrf``: exact sums, equal sums in position order, also across the cut. Floats
    only pick the candidates (every position within 1e-12 of the depth-th float sum, far wider than
    float error, so no position that belongs in the top ``depth`` is left out); the candidates are
    then ordered by their exact sums.
    """
    _check_k(k)
    if not ranks or depth <= 0:
        return []
    stacked = np.stack([np.asarray(r, dtype=np.int64) for r in ranks])
    floats = np.where(stacked > 0, 1.0 / (k + stacked), 0.0).sum(axis=0)
    held = np.flatnonzero(floats > 0)
    if held.shape[0] > depth:
        cut = np.partition(floats[held], held.shape[0] - depth)[held.shape[0] - depth]
        held = held[floats[held] >= cut - 1e-12]
    exact = {int(i): sum((Fraction(1, k + int(r)) for r in stacked[:, i] if r > 0), Fraction(0)) for i in held}
    return _best_first(exact, depth)
