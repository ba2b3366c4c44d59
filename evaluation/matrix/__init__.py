"""The old name of ``evaluation.builds`` for ElectriPy's experiment matrix: ``run_matrix``, ``ChunkVariant``
and the rest of its names, each loaded from ``evaluation.builds`` on first use.

Importing it warns (``DeprecationWarning``) with the new place; the library imports only the new place.
"""
from __future__ import annotations

import warnings

from ..lazy import lazy_attributes

__all__ = ["ChunkVariant", "gate", "matrix_csv", "missed_sentences", "parse_thresholds", "parse_variant",
           "run_matrix", "variants_from_config", "variants_from_flags"]
__getattr__ = lazy_attributes(__name__, dict.fromkeys(__all__, "..builds"))

warnings.warn("evaluation.matrix is now evaluation.builds: import run_matrix, ChunkVariant and the rest from "
              "evaluation.builds (or from evaluation)", DeprecationWarning, stacklevel=2)
