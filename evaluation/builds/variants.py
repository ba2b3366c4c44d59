"""Chunk variants of a matrix: how to cut, in characters, as ElectriPy's ``--chunk-size/--chunk-overlap`` say.

A variant is a technique of ``evaluation.chunking`` that needs no model (``fixed``, the default, which
is ElectriPy's plain window; ``recursive``, ``sentence``, ``markdown``), a size and an overlap, both in
characters, any overlap below the size. ``--chunker-config`` (a JSON file) takes precedence over
``--chunk-size/--chunk-overlap``, as ElectriPy's does; it holds one variant or a list of them:

    {"technique": "recursive", "chunk_size": 800, "chunk_overlap": 100}
    {"variants": [{"chunk_size": 500, "chunk_overlap": 100}, {"technique": "sentence", "chunk_size": 1000}]}

(``size``/``overlap`` are read as well; an overlap left out is a fifth of the size, as the chunking builds'.)
A chunk's id is ``<document id>:<n>``, n from 0 in document order: the form ElectriPy's labels use.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable, Sequence

from ..engine.corpus import PAGE_BREAK, Corpus
from ..errors import InputTooLargeError, UsageError, did_you_mean
from ..files import read_input
from ..jsonl import JsonLineError, parse_json

if TYPE_CHECKING:  # the scratch index's chunk; imported where a corpus is cut, so a variant stays light to name
    from ..engine.scratch import ScratchChunk

TECHNIQUES = ("fixed", "recursive", "sentence", "markdown")
DEFAULT_TECHNIQUE = "fixed"
MIN_SIZE = 50
CONFIG_MAX_BYTES = 1 << 20  # a config names a few variants: a file of a megabyte is something else
_EXAMPLE = '{"technique": "fixed", "chunk_size": 500, "chunk_overlap": 100}'
_KEYS = {"technique": "technique", "chunk_size": "size", "size": "size", "chunk_overlap": "overlap",
         "overlap": "overlap"}


@dataclass(frozen=True)
class ChunkVariant:
    """One way of cutting: ``technique`` at ``size`` characters, ``overlap`` of them repeated."""

    technique: str
    size: int
    overlap: int

    def __post_init__(self) -> None:
        if self.technique not in TECHNIQUES:
            raise UsageError(f'"{self.technique}" is not a chunking technique a matrix cuts with; use one of '
                             f"{', '.join(TECHNIQUES)}.{did_you_mean(str(self.technique), TECHNIQUES)}")
        if isinstance(self.size, bool) or not isinstance(self.size, int) or self.size < MIN_SIZE:
            raise UsageError(f"a chunk size is a whole number of characters from {MIN_SIZE}, not {self.size!r}")
        if isinstance(self.overlap, bool) or not isinstance(self.overlap, int) or not 0 <= self.overlap < self.size:
            raise UsageError(f"a chunk overlap is a whole number of characters from 0 to {self.size - 1} (under the "
                             f"size {self.size}), not {self.overlap!r}")

    def __str__(self) -> str:
        return f"{self.technique}-{self.size}-{self.overlap}"

    def to_dict(self) -> dict[str, Any]:
        return {"technique": self.technique, "size": self.size, "overlap": self.overlap}


def parse_variant(text: str) -> ChunkVariant:
    """``fixed-500-100`` (as ``str()`` writes it) -> the variant; UsageError for anything else."""
    parts = text.strip().split("-")
    if len(parts) != 3 or not parts[1].isdigit() or not parts[2].isdigit():
        raise UsageError(f'"{text}" names no chunk variant; write <technique>-<size>-<overlap>, such as fixed-500-100')
    return ChunkVariant(parts[0], int(parts[1]), int(parts[2]))


def variants_from_flags(sizes: Sequence[int], overlap: int | None) -> list[ChunkVariant]:
    """One ``fixed`` variant per size, each with ``overlap`` (a fifth of the size when None)."""
    return list(dict.fromkeys(ChunkVariant(DEFAULT_TECHNIQUE, size, size // 5 if overlap is None else overlap)
                              for size in sizes))


def variants_from_config(path: str | Path) -> list[ChunkVariant]:
    """The variants a ``--chunker-config`` JSON file names (see the module docstring)."""
    try:
        data = parse_json(read_input(path, max_bytes=CONFIG_MAX_BYTES).decode("utf-8"))
    except FileNotFoundError:
        raise UsageError(f"{path}: no such chunker config; give a JSON file such as {_EXAMPLE}") from None
    except OSError as err:
        raise UsageError(f"{path}: cannot read the chunker config ({err.strerror or err}); give a JSON file such as "
                         f"{_EXAMPLE}") from None
    except InputTooLargeError:
        raise UsageError(f"{path}: over {CONFIG_MAX_BYTES:,} bytes, far more than a list of chunk variants; give "
                         f"a JSON file such as {_EXAMPLE}") from None
    except UnicodeDecodeError as err:
        raise UsageError(f"{path}: not UTF-8 text (byte {err.start + 1}); save it as UTF-8 JSON such as "
                         f"{_EXAMPLE}") from None
    except JsonLineError as err:
        raise UsageError(f"{path}: not a chunker config ({err}); write one such as {_EXAMPLE}") from None
    items = data.get("variants") if isinstance(data, dict) and "variants" in data else data
    items = items if isinstance(items, list) else [items]
    if not items:
        raise UsageError(f"{path}: names no variant; give at least one")
    out = []
    for number, item in enumerate(items, start=1):
        where = f"{path}: variant {number}" if len(items) > 1 else str(path)
        if not isinstance(item, dict):
            raise UsageError(f"{where} is not an object; write one such as {{\"chunk_size\": 500}}")
        fields: dict[str, Any] = {}
        for key, value in item.items():
            if key not in _KEYS:
                raise UsageError(f'{where}: "{key}" is not a chunking setting.{did_you_mean(str(key), list(_KEYS))} '
                                 "Settings are: technique, chunk_size, chunk_overlap.")
            fields[_KEYS[key]] = value
        if "size" not in fields:
            raise UsageError(f'{where}: needs "chunk_size", in characters, such as "chunk_size": 500')
        size = fields["size"]
        # a size that is no whole number is refused before the overlap is looked at
        overlap = fields.get("overlap", size // 5 if isinstance(size, int) else 0)
        try:
            out.append(ChunkVariant(fields.get("technique", DEFAULT_TECHNIQUE), size, overlap))
        except UsageError as err:
            raise UsageError(f"{where}: {err}") from None
    return list(dict.fromkeys(out))


def _spans(variant: ChunkVariant, text: str) -> list[tuple[int, int]]:
    from ..chunking import cutters
    from ..chunking.outline import Outline

    if variant.technique == "fixed":
        return cutters.fixed(text, variant.size, variant.overlap)
    if variant.technique == "recursive":
        return cutters.recursive(text, variant.size, variant.overlap)
    if variant.technique == "sentence":
        return cutters.sentence(text, variant.size, variant.overlap)
    return [span for span, _ in cutters.sections(text, Outline.of(text), variant.size, variant.overlap)]


def cut_corpus(variant: ChunkVariant, corpus: Iterable) -> list[ScratchChunk]:
    """Every document's chunks under ``variant``, ids ``<doc id>:<n>``; a chunk's page is its first character's.
    A chunker of one's own (``ports.OwnVariant``) gives pieces, not spans: they carry no page."""
    from ..engine.scratch import ScratchChunk

    chunks = []
    if hasattr(variant, "pieces"):
        for document in corpus:
            chunks += [ScratchChunk(id=f"{document.id}:{n}", doc_id=document.id, text=piece)
                       for n, piece in enumerate(variant.pieces(document.text, document.id))]
        return chunks
    for document in corpus:
        breaks = [i for i, ch in enumerate(document.text) if ch == PAGE_BREAK]
        for n, (start, end) in enumerate(_spans(variant, document.text)):
            page = (1 + sum(1 for b in breaks if b < start)) if breaks else None
            chunks.append(ScratchChunk(id=f"{document.id}:{n}", doc_id=document.id, text=document.text[start:end],
                                       page=page))
    return chunks


def chunk_ids(variant: ChunkVariant, corpus: Corpus) -> set[str]:
    """The ids ``variant`` gives the corpus's chunks (what ``--by chunk`` labels must name)."""
    return {chunk.id for chunk in cut_corpus(variant, corpus)}
