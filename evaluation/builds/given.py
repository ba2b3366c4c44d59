"""What a run of the builds wing is given to work with, as small frozen objects (how it is made is a setting:
``settings.py``): the chat models it may use, where it is kept, and the caller's own objects it calls.

``compare_builds``, ``sweep_builds`` and ``run_builds`` take these, so none needs more than eight parameters;
``compare_chunking`` and ``sweep``, the keyword forms users call, map their keywords onto them
(``compat/vectrixdb/chunking_runs.py``).
"""
from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from ..errors import UsageError
from ..store.sources import Fetcher
from .judged import Answer, Judge, answer_with, judge_with
from .runner import Progress


@dataclass(frozen=True)
class Judged:
    """Judged mode: ``answer`` writes an answer from what was handed over, ``judge`` says whether it is right."""

    answer: Answer
    judge: Judge


@dataclass(frozen=True)
class ChatModels:
    """The chat models a chunking run is given. ``chat`` (a callable from chat messages to text, or a
    ``ChatModel``) answers and judges, cuts ``llm`` builds and writes ``c`` notes; ``answer`` and ``judge``
    replace it for judging (both, or neither), ``cut_with`` for cutting, ``context_with`` for the notes."""

    chat: Any = None
    answer: Answer | None = None
    judge: Judge | None = None
    cut_with: Any = None
    context_with: Any = None

    def judged(self) -> Judged | None:
        """Judged mode's two callables, ``chat``'s where not given; None without a model to judge with."""
        answer = self.answer or (answer_with(self.chat) if self.chat is not None else None)
        judge = self.judge or (judge_with(self.chat) if self.chat is not None else None)
        if (answer is None) != (judge is None):
            raise UsageError("judged mode needs both answer and judge (or chat, which makes both); give both or "
                             "neither")
        return Judged(answer, judge) if answer is not None and judge is not None else None

    @property
    def cutting(self) -> Any:
        """The model that cuts ``llm`` builds: ``cut_with``, else ``chat``."""
        return self.cut_with if self.cut_with is not None else self.chat

    @property
    def noting(self) -> Any:
        """The model that writes ``c`` notes: ``context_with``, else ``chat``."""
        return self.context_with if self.context_with is not None else self.chat


@dataclass(frozen=True)
class BuildsKeeping:
    """Where a builds run is kept (``save_to``: a store or its address; None keeps nothing) and the date it is
    stamped with (``created_at``; None: now)."""

    save_to: Any = None
    created_at: datetime | None = None


@dataclass(frozen=True)
class BuildsHooks:
    """The caller's own objects a builds run calls: ``progress`` (``(done, total, label)``, or True for the
    command line's bar) and ``fetcher`` (``fetch(uri) -> bytes``, for a golden file at an address)."""

    progress: Progress | bool | None = None
    fetcher: Fetcher | None = None
