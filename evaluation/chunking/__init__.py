"""Chunking techniques: how to cut the documents before they are indexed, each named by a build key.

A build is ``<technique>-<size>-<letter>`` (``markdown-1000-h``). Sizes are characters; the overlap is a
fifth of the size; the defaults are 500, 1000 and 2000 (parent-child's children 250, 500 and 1000).

    from evaluation.chunking import Build, parse_build, BuildKeyError, Chunk, cut, default_builds, TECHNIQUES
    build = parse_build("markdown-1000-h")   # Build("markdown", 1000, "h"); str(build) == "markdown-1000-h"
    chunks = cut(build, "d1", text, title=None, chat=None, embedder=None)   # list[Chunk], document order
    vectors = late_vectors(embedder, text, chunks)                          # for ``l`` builds

``Chunk``: ``id`` (``d1#0``, ``d1#1``...), ``doc_id``, ``n``, ``text`` (what search sees, exactly
``document[start:end]``), ``start``/``end`` (character offsets in the document), ``headings`` (the
Markdown headings it sits under, outermost first), ``handed_over`` (what a reader gets: the parent
for ``parent``, else ``text``), ``embed_text`` (what the embedder gets: title and headings, a line,
then the text for ``h``; the text for ``n``; the chat model's note, a blank line, then the text for
``c``; None for ``l``, whose vectors ``late_vectors`` pools from the whole document), ``parent`` (the
parent's span, for ``parent``) and ``note`` (for ``c``).

Techniques (``TECHNIQUES``), and which library cuts each:

- ``markdown``: each section (a heading and what follows, up to the next heading) on its own; a section
  longer than the size cut by semantic-text-splitter's ``MarkdownSplitter``, which cuts at the
  largest Markdown unit that fits (blocks, then lines, sentences, words). Sections are found here
  (``outline.py``): MarkdownSplitter alone packs neighbouring sections into one chunk when they fit.
- ``parent``: parents cut as ``markdown`` at four times the size, children by ``MarkdownSplitter`` at
  the size inside each parent; a child finds, its parent is handed over.
- ``recursive``: semantic-text-splitter's ``TextSplitter`` (paragraphs, lines, sentences, words).
- ``sentence``: chonkie's ``SentenceChunker`` on characters (whole sentences packed to the size, with
  overlap in whole sentences); a sentence longer than the size is cut by ``TextSplitter``.
- ``fixed``: written here, windows of the size ending at a space (chonkie's character
  ``TokenChunker`` splits words where the count falls).
- ``semantic`` and ``llm``: see ``semantic.py`` and ``llm.py``.

Letters (``LETTERS``): ``h`` headings, ``n`` nothing, ``c`` a chat model's note, ``l`` embedded late.

Both libraries are imported on first cut, never by ``import evaluation``. Neither downloads anything
at run time: ``TextSplitter``/``MarkdownSplitter`` count characters in Rust, and chonkie's
``"character"`` tokenizer is built in (tests cut with the network unreachable).
"""
from __future__ import annotations

from ..lazy import lazy_attributes
from .keys import (CHILD_SIZES, LETTERS, MIN_SIZE, SIZES, TECHNIQUES, Build, BuildKeyError, default_builds,
                   parse_build)
from .chunk import Chunk
from .cut import cut

_LAZY = {"late_vectors": ".late"}
__all__ = sorted(["Build", "BuildKeyError", "CHILD_SIZES", "Chunk", "LETTERS", "MIN_SIZE", "SIZES", "TECHNIQUES",
                  "cut", "default_builds", "parse_build", *_LAZY])
__getattr__ = lazy_attributes(__name__, _LAZY)
