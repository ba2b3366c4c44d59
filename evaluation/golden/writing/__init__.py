"""Drafting a golden file with a model: ``write_golden`` (the steps are ``write``'s docstring), how it
drafts (``WritingSettings``), the ``ChatWriter`` it asks, and the ``GoldenWriting`` it returns. Loaded on
first use, so importing ``evaluation.golden`` loads no HTTP client and no model runtime."""
from __future__ import annotations

from ...lazy import lazy_attributes

_PUBLIC = {
    "write_golden": ".write", "WritingSettings": ".settings", "GoldenWriting": ".result", "ChatWriter": ".chat_writer",
    "WriterUnavailableError": "...errors", "WriterUnavailable": "...errors", "ReplyCache": ".cache",
}
__all__ = sorted(_PUBLIC)
__getattr__ = lazy_attributes(__name__, _PUBLIC)
