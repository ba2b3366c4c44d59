"""Chunking techniques: how to cut the documents before they are indexed, each named by a build key.

A build is ``<technique>-<size>-<letter>`` (``markdown-1000-h``). Sizes are characters; the overlap is a
fifth of the size (at most: the libraries repeat only whole units that fit in it; and none across a
section, a ``semantic`` topic or an ``llm`` topic, since a boundary there is a change of subject); the defaults are 500,
1000 and 2000 (parent-child's children 250, 500 and 1000).

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

Techniques (``TECHNIQUES``), and which library cuts each. Measured with ``bench/bench_chunkers.py`` on
the shipped sample (270 Markdown documents, 390,890 characters; 2 cores at load 13-18, so times
compare only within a line), at 500 and 1000 characters:

- ``markdown``: each section (a heading and what follows, up to the next heading) on its own; a
  section longer than the size cut by semantic-text-splitter's ``MarkdownSplitter`` (the largest
  Markdown unit that fits: blocks, then lines, sentences, words). Sections are found here
  (``outline.py``) because MarkdownSplitter alone packs neighbouring sections into one chunk: 12% and
  27% of its chunks held body text and then a heading, against 0% here, for 2.4-2.8x its time
  (152 ms against 64 ms at 500).
- ``parent``: parents cut as ``markdown`` at four times the size, children by ``MarkdownSplitter`` at
  the size inside each parent; a child finds, its parent is handed over.
- ``recursive``: semantic-text-splitter's ``TextSplitter`` (paragraphs, lines, sentences, words), over
  chonkie's ``RecursiveChunker``: 3.4-4.1x faster, and it overlaps (chonkie's does not).
- ``sentence``: chonkie's ``SentenceChunker`` on characters: whole sentences packed as one stream,
  paragraphs ignored, overlap in whole sentences (159-207 ms). ``TextSplitter`` is 5-10x faster but
  packs paragraphs first, which is ``recursive``, not this technique. A sentence longer than the
  size is cut by ``TextSplitter``.
- ``fixed``: written here, windows of the size ending at a space. chonkie's character ``TokenChunker``
  ends 72-76% of its chunks inside a word (0% here) and took 4.8-6.1x as long.
- ``semantic``: written here (``semantic.py`` says why and what it measured), with a bundled embedder.
- ``llm``: written here (``llm.py``): neither library asks a chat model.

Letters (``LETTERS``): ``h`` headings, ``n`` nothing, ``c`` a chat model's note (``context.py``), ``l``
embedded late (``late.py``; ``Embedder.token_states`` gives the token outputs).

Size tolerance: none. No chunk holds more than ``size`` characters, whatever the technique. A piece
under a tenth of the size joins a neighbour where the two fit (a lone table rule ``|`` says nothing
found alone), except across a topic boundary that ``semantic`` or ``llm`` drew.

The libraries are an extra (``pip install 'retrieval-evaluation[chunking]'``, and in
requirements-dev.txt), not in requirements.txt: the Function App never cuts documents, and its
package is already 486 MB. They are imported on first cut, never by ``import evaluation``; a missing
one is a sentence naming the install. Neither downloads anything at run time: ``TextSplitter`` and
``MarkdownSplitter`` count characters in Rust, and chonkie's ``"character"`` tokenizer is built in
(tests cut with the network unreachable); chonkie's own embedding models, which would download,
are never used.
"""
from __future__ import annotations

from ..lazy import lazy_attributes
from .keys import (ADDS, CHILD_SIZES, LETTERS, MIN_SIZE, SIZES, TECHNIQUES, Build, BuildKeyError, default_builds,
                   parse_build)
from .chunk import Chunk
from .cut import cut

_LAZY = {"late_vectors": ".late"}
__all__ = ["ADDS", "Build", "BuildKeyError", "CHILD_SIZES", "Chunk", "LETTERS", "MIN_SIZE", "SIZES", "TECHNIQUES",
           "cut", "default_builds", "late_vectors", "parse_build"]
__getattr__ = lazy_attributes(__name__, _LAZY)
