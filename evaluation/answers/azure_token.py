"""Kept so ``evaluation.answers.azure_token`` still imports: the code moved to ``evaluation/azure_token.py``
when the golden writer began to share the judge's chat route (``evaluation/chat.py``)."""
from __future__ import annotations

from ..azure_token import bearer_token_provider

__all__ = ["bearer_token_provider"]
