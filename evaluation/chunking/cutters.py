"""The cutters that need no model: each gives ``[start, end)`` character spans of the text, in order.

Spans never start or end on whitespace and never hold more than ``size`` characters. Consecutive spans
of one stretch of text overlap by at most ``overlap`` characters. Which library cuts what, and why,
is in the package docstring.
"""
from __future__ import annotations

import re
from functools import lru_cache
from typing import Iterable, Sequence

from ..errors import UsageError
from .outline import Outline

Span = tuple[int, int]
_SPACE = re.compile(r"\s")
_NON_SPACE = re.compile(r"\S")
TINY = 0.1   # a piece under a tenth of the size is joined to a neighbour where both fit


def need(module: str):
    """``module`` imported, or a UsageError naming the install: the chunking libraries are an extra."""
    import importlib

    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as err:
        raise UsageError(
            f"Cutting documents needs the {err.name} package, which is not installed: run "
            "pip install 'retrieval-evaluation[chunking]' (or pip install -r requirements-dev.txt)."
        ) from err


# The libraries (the ``chunking`` extra) each way of cutting needs, by ``keys.TECHNIQUES[t]["chunk"]``.
CUT_MODULES = {"recursive": ("semantic_text_splitter",), "markdown": ("semantic_text_splitter",),
               "sentence": ("chonkie", "semantic_text_splitter")}


def check_cutters(chunks: Iterable[str]) -> None:
    """``need`` every library the ways of cutting ``chunks`` use: a missing one is a UsageError naming the
    install before the first build, not a failure of each build it would have cut, minutes later."""
    for chunk in chunks:
        for module in CUT_MODULES.get(chunk, ()):
            need(module)


@lru_cache(maxsize=64)
def _text_splitter(size: int, overlap: int):
    return need("semantic_text_splitter").TextSplitter(size, overlap)


@lru_cache(maxsize=64)
def _markdown_splitter(size: int, overlap: int):
    return need("semantic_text_splitter").MarkdownSplitter(size, overlap)


@lru_cache(maxsize=64)
def _sentence_chunker(size: int, overlap: int):
    return need("chonkie").SentenceChunker(tokenizer="character", chunk_size=size, chunk_overlap=overlap,
                                           min_sentences_per_chunk=1)


def trimmed(text: str, start: int, end: int) -> Span | None:
    """``[start, end)`` without whitespace at either end; None when nothing is left."""
    piece = text[start:end]
    lead = len(piece) - len(piece.lstrip())
    trail = len(piece) - len(piece.rstrip())
    if lead == len(piece):
        return None
    return start + lead, end - trail


def _splitter_spans(splitter, text: str, start: int, end: int, size: int) -> list[Span]:
    """The splitter's chunks of ``text[start:end]`` as spans of ``text``, tiny ones joined to a neighbour."""
    spans = []
    for offset, piece in splitter.chunk_indices(text[start:end]):
        span = trimmed(text, start + offset, start + offset + len(piece))
        if span is not None:
            spans.append(span)
    return merge_tiny(spans, size)


def merge_tiny(spans: Sequence[Span], size: int) -> list[Span]:
    """``spans`` with each one shorter than ``size * TINY`` joined to the one before, or else the one after,
    when the two together still fit in ``size``. MarkdownSplitter at 250 characters leaves pieces such
    as a lone table rule ``|`` or a fence line: found alone, they say nothing."""
    out: list[Span] = []
    for span in spans:
        if out and (span[1] - span[0] < size * TINY or out[-1][1] - out[-1][0] < size * TINY) \
                and span[1] - out[-1][0] <= size:
            out[-1] = (out[-1][0], max(out[-1][1], span[1]))
        else:
            out.append(span)
    return out


def fixed(text: str, size: int, overlap: int) -> list[Span]:
    """Windows of at most ``size`` characters, blind to structure, each ending at a space where one falls
    in its second half; the next starts at the first word beginning ``overlap`` characters before the end.

    Written here rather than taken from chonkie's ``TokenChunker`` (character tokens): that one cuts
    wherever the count falls, so on the sample at 1000 characters most of its chunk ends split a word.
    """
    spans: list[Span] = []
    first = _NON_SPACE.search(text)
    start = first.start() if first else len(text)
    while start < len(text):
        end = min(start + size, len(text))
        if end < len(text) and not text[end].isspace():
            cut = max((m.start() for m in _SPACE.finditer(text, start + size // 2, end)), default=None)
            if cut is not None:  # else a run of over size/2 characters without a space (a long URL): cut it
                end = cut
        span = trimmed(text, start, end)
        if span is None:
            break
        spans.append(span)
        end = span[1]
        after = _NON_SPACE.search(text, end)
        if after is None:
            break
        start = _word_start_at_or_after(text, max(end - overlap, span[0] + 1)) if overlap else after.start()
        if start >= end:
            start = after.start()
    return spans


def _word_start_at_or_after(text: str, position: int) -> int:
    if position < len(text) and not text[position].isspace() and (position == 0 or text[position - 1].isspace()):
        return position
    gap = _SPACE.search(text, position)
    if gap is None:
        return len(text)
    word = _NON_SPACE.search(text, gap.start())
    return word.start() if word else len(text)


def recursive(text: str, size: int, overlap: int) -> list[Span]:
    """Paragraphs, then lines, sentences, words: semantic-text-splitter's ``TextSplitter``."""
    return _splitter_spans(_text_splitter(size, overlap), text, 0, len(text), size)


def sections(text: str, outline: Outline, size: int, overlap: int) -> list[tuple[Span, tuple[str, ...]]]:
    """``markdown``: every section (a heading line and what follows it, up to the next heading) on its own,
    cut by semantic-text-splitter's ``MarkdownSplitter`` when it is longer than ``size``."""
    out: list[tuple[Span, tuple[str, ...]]] = []
    for section in outline.sections:
        whole = trimmed(text, section.start, section.end)
        if whole is None:
            continue
        if whole[1] - whole[0] <= size:
            out.append((whole, section.headings))
        else:
            out.extend((span, section.headings)
                       for span in _splitter_spans(_markdown_splitter(size, overlap), text, *whole, size))
    return out


def parent_child(text: str, outline: Outline, size: int, overlap: int,
                 parent_size: int) -> list[tuple[Span, Span, tuple[str, ...]]]:
    """``parent``: parents cut as ``markdown`` cuts at ``parent_size`` with no overlap, each parent's
    children cut by ``MarkdownSplitter`` at ``size``; ``(child, parent, headings)`` in order."""
    out: list[tuple[Span, Span, tuple[str, ...]]] = []
    for parent, headings in sections(text, outline, parent_size, 0):
        if parent[1] - parent[0] <= size:
            out.append((parent, parent, headings))
            continue
        out.extend((child, parent, headings)
                   for child in _splitter_spans(_markdown_splitter(size, overlap), text, *parent, size))
    return out


def sentence(text: str, size: int, overlap: int) -> list[Span]:
    """Whole sentences packed up to ``size``: chonkie's ``SentenceChunker`` on characters. A sentence
    longer than the size (a long table row, a code block) is cut further by ``TextSplitter``."""
    spans: list[Span] = []
    for piece in _sentence_chunker(size, overlap).chunk(text):
        span = trimmed(text, piece.start_index, piece.end_index)
        if span is None:
            continue
        if span[1] - span[0] <= size:
            spans.append(span)
        else:
            spans.extend(_splitter_spans(_text_splitter(size, overlap), text, *span, size))
    return spans


def split_long(text: str, spans: Sequence[Span], size: int, overlap: int) -> list[Span]:
    """``spans`` with any longer than ``size`` cut further by ``TextSplitter``."""
    out: list[Span] = []
    for span in spans:
        if span[1] - span[0] <= size:
            out.append(span)
        else:
            out.extend(_splitter_spans(_text_splitter(size, overlap), text, *span, size))
    return out
