"""How to cut the documents: ``sweep``, ``compare_chunking`` and ``chunking_choice``.

``evaluate`` judges an index as it was built; these judge how it is built. Each build (a key
``<technique>-<size>-<letter>``: see ``evaluation.chunking``, whose cutters make the chunks) is indexed
in a scratch folder with the embedded engine (``engine.scratch``), asked every golden question, and
removed. ``sweep`` ranks builds by nDCG@10 for a pull request; ``compare_chunking`` asks which way of
cutting hands a model what it needs within a budget of characters, compares the techniques question
by question, and picks (``chunking_choice``), saving the run under ``chunking/runs/`` in the store.

Above ``answers`` (judged mode uses its chat client) and ``scoring``; nothing below imports it.
"""
from __future__ import annotations

from ..lazy import lazy_attributes

_LAZY = {
    "sweep": ".sweeps", "sweep_markdown": ".sweeps",
    "compare_chunking": ".compare", "chunking_report": ".compare", "run_builds": ".compare",
    "handed_over": ".compare", "chunking_choice": ".choice", "BuildResult": ".results",
    "plan_builds": ".plan", "NAMES": ".plan",
    "answer_with": ".judged", "judge_with": ".judged",
}
__all__ = sorted(_LAZY)
__getattr__ = lazy_attributes(__name__, _LAZY)
