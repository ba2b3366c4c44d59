"""Where the golden writer asks: passages of the index spread across its documents and sections.

Documents are taken in an order the seed shuffles, and round by round each gives one section it has
not given yet (its sections also in a seeded order), one chunk of that section standing for it: so
the first n passages touch n documents when there are n, and a long document is asked about in
several of its sections before any document is asked about twice in one. A chunk of fewer than
``SHORT_WORDS`` words (a heading alone, a link) is passed over. The same index and seed give the same
passages in the same order.
"""
from __future__ import annotations

import random
from collections import defaultdict
from dataclasses import dataclass
from typing import Iterator, Sequence

import numpy as np

from ...engine.chunking import Chunk

SHORT_WORDS = 25


@dataclass(frozen=True)
class Passage:
    """One chunk asked about: its position in the index, and the chunk itself."""

    position: int
    chunk: Chunk

    @property
    def doc_id(self) -> str:
        return self.chunk.doc_id

    @property
    def text(self) -> str:
        return self.chunk.text

    @property
    def place(self) -> str:
        """Where it is, for a person: the document and its heading path."""
        path = " > ".join(self.chunk.headings)
        return f"{self.chunk.doc_id} ({path})" if path else self.chunk.doc_id


def spread(chunks: Sequence[Chunk], seed: int) -> Iterator[Passage]:
    """Every section's stand-in chunk, round by round across the documents (see the module docstring)."""
    rng = random.Random(seed)
    sections: dict[str, dict[tuple[str, ...], list[int]]] = defaultdict(lambda: defaultdict(list))
    for position, chunk in enumerate(chunks):
        sections[chunk.doc_id][chunk.headings].append(position)
    documents = list(sections)
    rng.shuffle(documents)
    queues = []
    for doc_id in documents:
        parts = list(sections[doc_id].values())
        rng.shuffle(parts)
        queues.append([rng.choice(part) for part in parts])
    for round_ in range(max((len(q) for q in queues), default=0)):
        for queue in queues:
            if round_ < len(queue):
                yield Passage(queue[round_], chunks[queue[round_]])


def is_short(passage: Passage) -> bool:
    return len(passage.text.split()) < SHORT_WORDS


def partner(passage: Passage, chunks: Sequence[Chunk], vectors: np.ndarray) -> Passage | None:
    """For a multi-hop question: the chunk of another document most like ``passage`` by the index's own
    vectors (unit rows, so a dot product is the cosine), long enough to ask about; None when no other
    document has one. Ties go to the earlier chunk in the index."""
    scores = np.asarray(vectors, dtype=np.float32) @ np.asarray(vectors[passage.position], dtype=np.float32)
    for position in np.argsort(-scores, kind="stable"):
        chunk = chunks[int(position)]
        if chunk.doc_id != passage.doc_id and len(chunk.text.split()) >= SHORT_WORDS:
            return Passage(int(position), chunk)
    return None
