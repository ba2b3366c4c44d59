"""``Chunk``: one piece of a document as a build cut it, with what search sees and what the reader gets."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Chunk:
    """``text`` is ``document[start:end]`` exactly; ``embed_text`` is what the embedder is given.

    ``handed_over`` is what a reader (a chat model answering) gets when this chunk is found: the parent
    section for ``parent`` builds, else ``text``. ``embed_text`` is None for late (``l``) builds: their
    vectors come from ``late_vectors``, pooled from the whole document's token states, and a caller
    that embedded ``text`` alone would measure a different build.
    """

    id: str                         # f"{doc_id}#{n}"
    doc_id: str
    n: int
    text: str
    start: int
    end: int
    headings: tuple[str, ...]
    handed_over: str
    embed_text: str | None
    parent: tuple[int, int] | None = None   # the parent's [start, end) in the document, for ``parent``
    note: str | None = None                 # the chat model's note, for ``c`` builds

    @property
    def late(self) -> bool:
        return self.embed_text is None
