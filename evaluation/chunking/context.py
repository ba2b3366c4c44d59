"""The ``c`` letter: a note the chat model writes for each chunk, put in front of it for the embedder.

Contextual retrieval: a chunk such as "It retries three times" says nothing of which client it is
about; a sentence placing it in its document ("From the azure-core retry policy section: ...") does.
The model gets the document (up to ``DOCUMENT_CHARS`` characters around the chunk) and the chunk,
and writes one or two sentences; ``embed_text`` becomes the note, a blank line, then the chunk. Search
sees the chunk's own text only, and the reader is handed it without the note.

Every chunk of the document gets its note before any chunk is returned: a refusal or an empty
reply is an ``AnswerError`` naming the chunk, and the document's chunks are not half noted.

No question twice: with ``notes`` (``builds.notes.ChatNotes``: the run's memory and the
cross-run cache file) a note is kept under ``note_key``, one sha256 of the chat model's identity,
the request's wording, the chunk's text and the document's, and asked for again only when one of
those changed. Each note is kept as it comes, so a run stopped by a refusal at chunk 40 asks only
from chunk 40 on when it is run again.
"""
from __future__ import annotations

import hashlib
from dataclasses import replace
from typing import Any, Protocol, Sequence

from .ask import ask, chat_identity
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


class Notes(Protocol):
    """Where notes are kept between builds and runs (``builds.notes.ChatNotes``)."""

    def get(self, key: bytes) -> str | None: ...

    def put(self, key: bytes, note: str) -> None: ...


def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def note_key(chat: Any, chunk_text: str, text: str, title: str | None) -> bytes | None:
    """The sha256 a note is kept under (see the module docstring); None when the model does not say what it is."""
    identity = chat_identity(chat)
    if identity is None:
        return None
    request = _sha256(f"{SYSTEM}\n{NOTE_TOKENS}\n{DOCUMENT_CHARS}")
    document = _sha256(f"{title or ''}\n{text}")
    return hashlib.sha256(
        "\n".join(("note", identity, request, _sha256(chunk_text), document)).encode("utf-8")
    ).digest()


def with_notes(chunks: Sequence[Chunk], text: str, title: str | None, chat: Any,
               notes: Notes | None = None) -> list[Chunk]:
    """``chunks`` with ``note`` set and ``embed_text`` = note, blank line, text; all or nothing. A note
    kept in ``notes`` is not asked for again."""
    noted = []
    for chunk in chunks:
        key = note_key(chat, chunk.text, text, title) if notes is not None else None
        note = notes.get(key) if notes is not None and key is not None else None
        if note is None:
            note = ask(chat, SYSTEM, note_request(text, title, chunk), what=f"the note for chunk {chunk.id}",
                       max_tokens=NOTE_TOKENS)
            if notes is not None and key is not None:
                notes.put(key, note)
        noted.append(replace(chunk, note=note, embed_text=f"{note}\n\n{chunk.text}"))
    return noted
