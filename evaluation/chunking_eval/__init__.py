"""The old name of ``evaluation.builds`` for how to cut the documents: ``sweep``, ``compare_chunking``,
``chunking_choice`` and the rest of its names, each loaded from ``evaluation.builds`` on first use.

Importing it warns (``DeprecationWarning``) with the new place; the library imports only the new place.
"""
from __future__ import annotations

import warnings

from ..lazy import lazy_attributes

__all__ = ["BuildResult", "NAMES", "answer_with", "chunking_choice", "chunking_report", "compare_chunking",
           "handed_over", "judge_with", "plan_builds", "run_builds", "sweep", "sweep_markdown"]
__getattr__ = lazy_attributes(__name__, dict.fromkeys(__all__, "..builds"))

warnings.warn("evaluation.chunking_eval is now evaluation.builds: import sweep, compare_chunking, chunking_choice "
              "and the rest from evaluation.builds (or from evaluation)", DeprecationWarning, stacklevel=2)
