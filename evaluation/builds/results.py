"""What one build of a chunking run gave: ``BuildResult``, with every question's outcome.

The outcomes stay here and out of any report (a report holds counts), so two builds can be compared
question by question (``choice.split``) while a saved run names no question's fate.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping, Sequence


@dataclass(frozen=True)
class BuildResult:
    key: str
    technique: str
    size: int
    letter: str
    chunks: int
    seconds: float                          # cutting, indexing and embedding
    outcomes: Mapping[str, bool] = field(default_factory=dict)  # question id -> right (found or answered)
    handed_chars: int = 0                   # characters handed over, all questions together
    scored: str = "found"                   # "found" (an expected document handed over) or "answered" (judged)

    @property
    def right(self) -> int:
        return sum(1 for v in self.outcomes.values() if v)

    @property
    def questions(self) -> int:
        return len(self.outcomes)


def ranked(results: Sequence[BuildResult]) -> list[BuildResult]:
    """Most right first; equal counts: fewer chunks first (less to embed and store), then key."""
    return sorted(results, key=lambda r: (-r.right, r.chunks, r.key))
