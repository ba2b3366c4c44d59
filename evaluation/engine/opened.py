"""One opened index per index version and process, shared by every target that searches it.

Why: the Functions Python worker runs an instance's activities (two at once, host.json) as threads of
one process, and each activity used to open the index again. Measured with
``bench/bench_app_memory.py`` on a 100k-chunk index (stand-in vectors, two activities in two
threads): 1970 MB peak of the 2048 MB instance, of it one open of the index 862 MB peak (716 MB
resident: 100k parsed chunks, both vector files and both BM25 indexes mapped), about 300 MB of it
the same file pages mapped twice. ``OpenedIndexes`` keeps the opened index (the expensive part) and
hands the same object to every activity of the process that asks for that version; each activity
still makes its own ``EmbeddedTarget`` around it (its own query-vector and pair-score memory, its own
batch cache and counts).

The key (``IndexKey``) is everything that makes an opened index THAT index version: where it is
published (a spec's ``index`` address, or the folder for a local one), the fingerprint the run pinned
(``manifest.json``'s, the published version's name) and the folder it was fetched into. A run pinned
to another fingerprint never gets this object; and an object is only kept after its manifest was
checked to carry the fingerprint it was asked for, so a folder holding another version is refused
(a ``SearchIndexError``), never served under the wrong key.

Bounded: at most ``most`` opened indexes are kept, the least recently asked for dropped first (an
activity still searching one it was given keeps it alive until it finishes: dropping only stops
handing it out). ``most=0`` keeps none: every ``open`` opens its own, as before sharing. The fetched
folder of a dropped or kept version may be pruned from disk by ``published.fetch_index`` (it keeps
two versions per address): an opened index keeps reading its mapped files, which stay until unmapped.

Thread-safe: a lock guards the table, and each key has its own lock held while it is opened, so two
activities asking for the same version at once open it once (the second waits for the first); asking
for another version never waits for this one's open. An open that fails is not kept: the next caller
tries again and gets its own error.

Why sharing the opened index between threads is safe (read ``index.OpenedIndex`` and the searching
code in ``target.py``, ``fusion.py`` and ``colbert.py``): searching only reads it. Its chunks are a
tuple of frozen ``Chunk``s; its vectors and ColBERT codes and scales are read-only memory maps
(``mmap_mode="r"``: a write raises); the chunk-to-document rows and ColBERT offsets are made
read-only by ``open_index``; bm25s' ``get_tokens_ids`` and ``get_scores_from_ids`` read its
vocabulary and score arrays and allocate each call's scores anew; the manifest is a dict that
``EmbeddedTarget.describe`` hands out only as a copy. Everything a search writes lives on the
target (``_query_vectors``, ``_pair_scores``, ``_counts``, its cache), which is per activity. The
stemmer the query tokenizer uses is one per thread (``index._stemmer``): PyStemmer's ``Stemmer``
keeps internal state and its own docstring says not to call one from two threads at once. The
models are loaded once per process by ``models._cached`` under its own lock, as before.
"""
from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Callable

if TYPE_CHECKING:
    from .index import OpenedIndex

DEFAULT_MOST = 2  # opened indexes kept per process: the version a run pinned, and the next one published


@dataclass(frozen=True)
class IndexKey:
    """What makes an opened index that index version (see the module docstring)."""

    address: str      # where the index is published (a spec's "index"), or its folder when local
    fingerprint: str  # the version: manifest.json's fingerprint, the name a run pins
    folder: str       # the folder it was fetched into, resolved

    @classmethod
    def of(cls, address: str, fingerprint: str, folder: str | Path) -> IndexKey:
        if not fingerprint:
            raise ValueError("an opened index is kept by its fingerprint; resolve the current one first "
                             "(published.published_fingerprint)")
        return cls(address=str(address).rstrip("/"), fingerprint=fingerprint, folder=str(Path(folder).resolve()))


class _Slot:
    """One key's entry: its lock is held while the index is opened, so a second caller waits for it."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.index: OpenedIndex | None = None


class OpenedIndexes:
    """Opened indexes kept per ``IndexKey``, at most ``most``, least recently used dropped first.

    ``opener`` opens a folder (``index.open_index`` unless a test gives another); ``opens`` counts
    its calls, so a caller (a test, a bench, a log line) can say how often an index was really opened.
    """

    def __init__(self, most: int = DEFAULT_MOST, *, opener: Callable[[Path], OpenedIndex] | None = None) -> None:
        if isinstance(most, bool) or not isinstance(most, int) or most < 0:
            raise ValueError(f"most must be a whole number of 0 or more, not {most!r}")
        self.most = most
        self._opener = opener
        self._lock = threading.Lock()
        self._slots: OrderedDict[IndexKey, _Slot] = OrderedDict()
        self.opens = 0

    def open(self, address: str, fingerprint: str, folder: str | Path) -> OpenedIndex:
        """The opened index of ``fingerprint`` at ``address``, fetched into ``folder``: the kept one, or
        opened now (once, however many threads ask at once) and kept."""
        key = IndexKey.of(address, fingerprint, folder)
        if self.most == 0:
            return self._open(key, folder)
        with self._lock:
            slot = self._slots.get(key)
            if slot is None:
                slot = self._slots[key] = _Slot()
            self._slots.move_to_end(key)  # most recently used
        with slot.lock:
            if slot.index is None:
                try:
                    slot.index = self._open(key, folder)
                except BaseException:
                    with self._lock:
                        if self._slots.get(key) is slot:
                            del self._slots[key]  # a failed open is not kept: the next caller tries again
                    raise
                with self._lock:  # kept now (again, if dropped or failed for another caller meanwhile)
                    self._slots.setdefault(key, slot)
                    self._drop_beyond_most()  # after the open: a failing one costs no kept index
            return slot.index

    def keys(self) -> list[IndexKey]:
        """The kept keys, least recently used first."""
        with self._lock:
            return list(self._slots)

    def clear(self) -> None:
        """Keep nothing (activities searching an index they were given keep it until they finish)."""
        with self._lock:
            self._slots.clear()

    def _drop_beyond_most(self) -> None:
        while len(self._slots) > self.most:
            self._slots.popitem(last=False)

    def _open(self, key: IndexKey, folder: str | Path) -> OpenedIndex:
        from ..errors import SearchIndexError

        opener = self._opener
        if opener is None:
            from functools import partial

            from .index import open_index

            opener = partial(open_index, check_corpus=False)  # published versions: their corpus stayed behind
        with self._lock:
            self.opens += 1
        index = opener(Path(folder))
        found = (index.manifest or {}).get("fingerprint")
        if found != key.fingerprint:
            raise SearchIndexError(f"{key.folder}: holds index version {str(found)[:12]}, not the "
                                   f"{key.fingerprint[:12]} asked for at {key.address}; fetch it again (delete the "
                                   "folder) or publish the index again")
        return index
