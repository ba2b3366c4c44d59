"""Several embedders over the same texts at once (an index build's models), and what a text costs to embed.

Every row is bit for bit the one ``Embedder.embed_documents`` gives (``graphs.py``: no output depends
on who runs a call), so the models can share the cores: each thread runs its own model's calls, then
helps the model with the most text left.
"""
from __future__ import annotations

import threading
from typing import Callable, Iterator, Protocol, Sequence

import numpy as np

from .graphs import _texts


class _Calls(Protocol):
    """What ``embed_documents_together`` asks of an embedder (``models.Embedder`` has both): its vector
    size, and its graph calls over texts as ``(positions, compute)`` in its own order. Named here rather
    than imported, so ``models`` can offer this module's names without the two importing each other."""

    dimensions: int

    def _calls(self, items: list[str], batch_size: int) -> Iterator[tuple[list[int], Callable[[], np.ndarray]]]: ...


# The two special tokens every text is read with ([CLS] and [SEP]), in characters of English text.
_SPECIAL_TOKENS_AS_CHARACTERS = 2 * 4


def text_work(text: str) -> int:
    """What embedding ``text`` costs, in the unit an embedding bar counts: characters, its own and its
    two special tokens' (``_SPECIAL_TOKENS_AS_CHARACTERS``).

    A window of texts runs sorted by length (``_windows``: shortest first, longest first for a graph
    run one row per call), so a bar counting texts runs ahead of (or behind) the
    work. Over the sample's 763 chunks with both models (``bench/bench_embedding_eta.py``, two runs at
    load 5-18), a bar counting texts showed an ETA of 0.18-0.25 of the time really left at 10, 25, 50
    and 75% of the run; counting characters, 0.94-0.96 up to half way in the steadier run (0.67-1.13
    in the other); counting each model's tokens, 0.54-0.79, and it would tokenize every text twice.
    """
    return len(text) + _SPECIAL_TOKENS_AS_CHARACTERS


def embed_documents_together(embedders: Sequence[_Calls], texts: Sequence[str], *, batch_size: int = 32,
                             progress: Callable[[int], None] | None = None,
                             weights: Sequence[int] | None = None) -> list[np.ndarray]:
    """``[e.embed_documents(texts) for e in embedders]``, a thread per embedder at once; ``progress(k)``
    after each graph call, whichever thread ran it (never two at once): k is the call's count of texts,
    or with ``weights`` (one per text, e.g. ``text_work``) the sum of its texts' weights.

    Each thread runs its own model's calls first. A thread whose model has none left helps the model
    with the most text left, calling the same session at once (onnxruntime allows concurrent runs of
    one session, and a one-thread session computes on its caller's thread), so the models finish
    together instead of the slowest running alone on one core while the other sits idle: bge-small
    takes 76 s over the sample's 763 chunks on one thread where minilm-l6 takes 53 s
    (bench/bench_indexing.py has the index build before and after). The calls are the ones
    embed_documents makes, so every row is bit for bit the same whoever runs it. Give embedders
    loaded with one intra-op thread per core they should take (index.py has the measurements). When
    one fails, the others stop at their next call and its error is raised.
    """
    items = _texts(texts, "embed_documents_together")
    queues = [_CallQueue(embedder, items, batch_size) for embedder in embedders]
    lock = threading.Lock()
    stop = threading.Event()

    def advance(positions: list[int]) -> None:
        if progress is not None:
            with lock:
                progress(len(positions) if weights is None else sum(weights[i] for i in positions))

    def run(own: int) -> None:
        mine = queues[own]
        try:
            while not stop.is_set():
                if mine.drained:
                    unfinished = [q for q in queues if not q.drained]
                    if not unfinished:
                        return
                    mine_or_helped = max(unfinished, key=lambda q: q.left)
                else:
                    mine_or_helped = mine
                mine_or_helped.run_next(advance)
        except BaseException:
            stop.set()
            raise

    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=max(1, len(embedders)), thread_name_prefix="embed") as pool:
        futures = [pool.submit(run, i) for i in range(len(embedders))]
        try:
            errors = [f.exception() for f in futures]
        except BaseException:  # interrupted: let the threads stop at their next call
            stop.set()
            raise
    first = next((e for e in errors if e is not None), None)
    if first is not None:
        raise first
    return [q.out for q in queues]


class _CallQueue:
    """One embedder's calls over ``items`` (its ``_calls``: ``(positions, compute)`` in order), handed
    out one at a time to whichever thread asks; ``left`` counts the characters not yet handed out."""

    def __init__(self, embedder: _Calls, items: list[str], batch_size: int) -> None:
        self.out = np.zeros((len(items), embedder.dimensions), dtype=np.float32)
        self.left = sum(len(text) for text in items)
        self.drained = False
        self._items = items
        self._calls = embedder._calls(items, batch_size)
        self._lock = threading.Lock()

    def run_next(self, advance: Callable[[list[int]], None]) -> bool:
        """Run the next call and tell ``advance`` its positions; False when none was left."""
        with self._lock:  # the generator tokenizes a window at a time; one thread may advance it
            call = next(self._calls, None)
            if call is None:
                self.drained, self.left = True, 0
                return False
            positions, compute = call
            self.left -= sum(len(self._items[i]) for i in positions)
        self.out[positions] = compute()
        advance(positions)
        return True

