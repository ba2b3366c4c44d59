"""The checks no model makes on a drafted question: its quotes on their page, its wording its own, and
not a repeat of an earlier question.

- ``quote_on_page``: a quote counts when it is on the passage character for character once every run
  of whitespace is one space (``fold_whitespace``, as evidence is matched at ``--by evidence``), case
  kept: a model that "quotes" with its own capitals or words has not quoted.
- ``copied_share``: the share of the question's word pairs (lower-cased, in order) that are word pairs
  of the passage; above ``COPY_SHARE`` the question is the passage's sentence with a question mark.
- ``NearDuplicates``: cosine similarity of the question to every earlier one, by an embedding model of
  the collection's own index; at ``similarity`` or more it is a repeat.

Measured on questions people wrote, which are neither copies nor repeats (``bench/bench_golden_checks.py``,
six collections: the shipped sample and bench_shapes.py's five): the copy rule turns down 0-12% of
them, all of those a heading or linking sentence of the expected page itself (word-pair share 1.00);
MiniLM-L6 puts hand-made paraphrases at 0.84 and 0.92, and turns down 11-34% of the human questions at
0.5 (the default the issue names), 0-7% at 0.7; bge-small puts 97-99% of them above 0.5, so it is not
used for this when MiniLM is in the index.
"""
from __future__ import annotations

import re
from itertools import pairwise
from typing import Callable, Sequence

import numpy as np

from ...whitespace import fold_whitespace

COPY_SHARE = 0.5
QUOTE_WORDS = 3  # a shorter quote matches too much to check anything (``records.WORDS_IN_A_USABLE_QUOTE``)
_WORD = re.compile(r"\w+")


def quote_on_page(quote: str, passage: str) -> bool:
    """Whether ``quote`` (3 words or more) is on ``passage`` verbatim, whitespace folded."""
    folded = fold_whitespace(quote)
    return len(folded.split()) >= QUOTE_WORDS and folded in fold_whitespace(passage)


def _pairs(text: str) -> list[tuple[str, str]]:
    words = _WORD.findall(text.lower())
    return list(pairwise(words))


def copied_share(question: str, passage: str) -> float:
    """The share of the question's word pairs that are word pairs of the passage (0 for a one-word question).

    "Keys are rotated every 90 days by whom?" against "Keys are rotated every 90 days by the platform
    team." shares 6 of its 7 pairs (0.86: copied); "How often does the platform team rotate keys?"
    shares "the platform" and "platform team", 2 of 7 (0.29: its own words)."""
    asked = _pairs(question)
    if not asked:
        return 0.0
    held = set(_pairs(passage))
    return sum(pair in held for pair in asked) / len(asked)


class NearDuplicates:
    """The questions kept so far, as unit vectors; ``closest(q)`` is q's highest cosine to any of them.

    ``embed`` maps texts to unit-length rows (an embedder of the collection's index)."""

    def __init__(self, embed: Callable[[Sequence[str]], np.ndarray]) -> None:
        self._embed = embed
        self._kept: list[np.ndarray] = []
        self._cache: dict[str, np.ndarray] = {}

    def vector(self, question: str) -> np.ndarray:
        if question not in self._cache:
            self._cache[question] = np.asarray(self._embed([question])[0], dtype=np.float32)
        return self._cache[question]

    def closest(self, question: str) -> float:
        """The highest cosine of ``question`` to a kept question; -1 when none is kept."""
        if not self._kept:
            return -1.0
        return float(np.max(np.stack(self._kept) @ self.vector(question)))

    def keep(self, question: str) -> None:
        self._kept.append(self.vector(question))
