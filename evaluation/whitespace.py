"""The one rule for folding whitespace, shared by chunking (which cuts text) and judging (which
matches evidence quotes against chunks): both must fold alike, so neither owns it."""
from __future__ import annotations


def fold_whitespace(text: str) -> str:
    """``text`` with every run of whitespace made one space, as evidence quotes are matched."""
    return " ".join(text.split())
