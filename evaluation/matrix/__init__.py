"""ElectriPy's experiment matrix: chunk variants x embedders x methods, metrics at each k, a CI gate.

    from evaluation.matrix import run_matrix, ChunkVariant
    report = run_matrix("corpus.jsonl", "queries.jsonl", top_k=(3, 5, 10),
                        variants=[ChunkVariant("fixed", 500, 100), ChunkVariant("fixed", 1000, 100)],
                        embedders=("bge-small", "minilm-l6"), methods=("dense", "hybrid"))

``python3 -m evaluation matrix`` is the same call from the command line (``cli/matrix_cmd.py``).
"""
from __future__ import annotations

from .export import matrix_csv
from .gate import gate, missed_sentences, parse_thresholds
from .run import run_matrix
from .variants import ChunkVariant, parse_variant, variants_from_config, variants_from_flags

__all__ = ["ChunkVariant", "gate", "matrix_csv", "missed_sentences", "parse_thresholds", "parse_variant",
           "run_matrix", "variants_from_config", "variants_from_flags"]
