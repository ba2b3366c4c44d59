"""What every step that searches a setup shares: finding the setup on its target, a batch search with
progress, and the progress of one setup's steps (``one_setup``, ``side_by_side``)."""
from __future__ import annotations

import inspect
import threading
from typing import Callable, Sequence

from ..golden import Question
from ..target import Hit, Setup, Target

Progress = Callable[[int, int, str], None]  # (done, total, what is running)
Clock = Callable[[], float]  # seconds, monotonic; time.perf_counter unless a test fixes it


def find_setup(target: Target, setup_key: str) -> Setup:
    """The setup ``setup_key`` names on ``target``; a ``LookupError`` when the target no longer offers it."""
    setup = next((s for s in target.setups() if s.key == setup_key), None)
    if setup is None:
        raise LookupError(f"target {target.name} offers no setup {setup_key} any more")
    return setup


def batch_search(target: Target, setup: Setup, questions: Sequence[Question], depth: int,
                 counter: Counter) -> list[list[Hit]]:
    """``search_batch``, with progress per question from a target whose ``search_batch`` takes a
    ``progress`` callback (given how many more questions are done), all at once from any other."""
    texts = [q.question for q in questions]
    reported = 0
    lock = threading.Lock()  # a target may report from its worker threads

    def advance(n: int) -> None:
        nonlocal reported
        with lock:
            n = max(0, min(n, len(texts) - reported))  # over-reporting cannot push the bar past the batch
            reported += n
            counter.advance(n)

    batch: Callable[..., list[list[Hit]]] = target.search_batch  # Target's, with progress= where it says so
    if "progress" in inspect.signature(batch).parameters:
        hits = batch(setup, texts, depth, progress=advance)
    else:
        hits = batch(setup, texts, depth)
    advance(len(texts) - reported)
    return hits


class Counter:
    """Progress of one setup's steps, reported as (done, total, "<key>: <stage>")."""

    def __init__(self, total: int, key: str, progress: Progress | None) -> None:
        self.total, self.key, self.progress, self.done = total, key, progress, 0
        self.label = key

    def stage(self, words: str) -> None:
        self.label = f"{self.key}: {words}"

    def advance(self, n: int) -> None:
        self.done += n
        if self.progress and n:
            self.progress(self.done, self.total, self.label)

    def finish(self) -> None:
        """The bar still reaches the end when a setup fails."""
        self.advance(self.total - self.done)
