"""``ChatNotes``: the ``c`` letter's notes kept for the run (memory) and across runs (the cache file).

A note costs a chat-model call per chunk, and the same chunk of the same document meets the same
model again in every rerun of a ``compare_chunking`` (and in the same run when two builds cut a
chunk alike). Keys are ``chunking.context.note_key``'s: a note is asked for again only when the
model, the request's wording, the chunk or its document changed. The file is the cross-run vector
cache (``engine.cache``, table ``chat_notes``); its failures cost the cache, never the run.
"""
from __future__ import annotations

from pathlib import Path

from ..engine.cache import PersistentCache


class ChatNotes:
    """Notes by key: this run's memory first, then ``cache`` (a file path; None: memory only)."""

    def __init__(self, cache: str | Path | None = None) -> None:
        self._memory: dict[bytes, str] = {}
        self._stored = PersistentCache(cache) if cache is not None else None
        self.counts = {"notes_kept": 0, "notes_asked": 0}

    def get(self, key: bytes) -> str | None:
        note = self._memory.get(key)
        if note is None and self._stored is not None:
            note = self._stored.notes([key]).get(key)
            if note is not None:
                self._memory[key] = note
        if note is not None:
            self.counts["notes_kept"] += 1
        return note

    def put(self, key: bytes, note: str) -> None:
        self.counts["notes_asked"] += 1
        self._memory[key] = note
        if self._stored is not None:
            self._stored.put_notes([(key, note)])

    def close(self) -> None:
        if self._stored is not None:
            self._stored.close()
