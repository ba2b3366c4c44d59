"""The ``c`` letter: a note the chat model writes for each chunk, put in front of it for the embedder.

Contextual retrieval: a chunk such as "It retries three times" says nothing of which client it is
about; a sentence placing it in its document ("From the azure-core retry policy section: ...") does.
The model gets the document (up to ``DOCUMENT_CHARS`` characters around the chunk) and the chunk,
and writes one or two sentences; ``embed_text`` becomes the note, a blank line, then the chunk. Search
sees the chunk's own text only, and the reader is handed it without the note.

Every chunk of the document gets its note before any chunk is returned: a refusal or an empty
reply is an ``AnswerError`` naming the chunk, and the document's chunks are not half noted.
"""
from __future__ import annotations

from dataclasses import replace
from typing import Any, Sequence

from .ask import ask
from .chunk import Chunk

DOCUMENT_CHARS = 12_000
NOTE_TOKENS = 150
SYSTEM = ("You help a search index find passages. Given a document and one passage from it, write one or two "
          "sentences that say where the passage sits in the document and what it is about, naming the product, "
          "section or subject it belongs to. Reply with those sentences only.")


def document_window(text: str, chunk: Chunk, most: int = DOCUMENT_CHARS) -> str:
    """``text`` whole when it fits in ``most`` characters, else the ``most`` around the chunk."""
    if len(text) <= most:
        return text
    middle = (chunk.start + chunk.end) // 2
    start = max(0, min(middle - most // 2, len(text) - most))
    return text[start:start + most]


def note_request(text: str, title: str | None, chunk: Chunk) -> str:
    heading = f"Title: {title}\n" if title else ""
    return (f"{heading}<document>\n{document_window(text, chunk)}\n</document>\n\n"
            f"<passage>\n{chunk.text}\n</passage>")


def with_notes(chunks: Sequence[Chunk], text: str, title: str | None, chat: Any) -> list[Chunk]:
    """``chunks`` with ``note`` set and ``embed_text`` = note, blank line, text; all or nothing."""
    noted = []
    for chunk in chunks:
        note = ask(chat, SYSTEM, note_request(text, title, chunk), what=f"the note for chunk {chunk.id}",
                   max_tokens=NOTE_TOKENS)
        noted.append(replace(chunk, note=note, embed_text=f"{note}\n\n{chunk.text}"))
    return noted
