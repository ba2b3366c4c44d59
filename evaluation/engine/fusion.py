"""Reciprocal rank fusion (Cormack, Clarke and Buettcher, 2009), the way Azure AI Search fuses hybrid.

    score(d) = sum over the ranked lists that hold d of 1 / (k + rank of d in that list)

with 1-based ranks and k = 60. Scores are the only input that matters, never the raw BM25 or cosine
values, so lists of different kinds fuse fairly. Equal fused scores keep the order of the first list
that holds them (then the second, ...), so fusion is deterministic.
"""
from __future__ import annotations

from typing import Hashable, Sequence, TypeVar

RRF_K = 60
T = TypeVar("T", bound=Hashable)


def rrf(rankings: Sequence[Sequence[T]], k: int = RRF_K) -> list[tuple[T, float]]:
    """Fuse ranked lists of ids into one, best first, as ``(id, fused score)`` pairs."""
    if k <= 0:
        raise ValueError("k must be positive")
    scores: dict[T, float] = {}
    first_seen: dict[T, tuple[int, int]] = {}
    for list_number, ranking in enumerate(rankings):
        for rank, item in enumerate(ranking, start=1):
            scores[item] = scores.get(item, 0.0) + 1.0 / (k + rank)
            first_seen.setdefault(item, (list_number, rank))
    return sorted(scores.items(), key=lambda pair: (-pair[1], first_seen[pair[0]]))
