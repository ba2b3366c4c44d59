"""One build, cut and indexed: the seam between the cutters (``evaluation.chunking``) and the runs.

A ``Cut`` is a build's chunks as the scratch index takes them (``ScratchChunk``: the handed-over
text, what BM25 reads, what the embedder reads), what each chunk hands over when that is not itself
(parent-child: the section it sits in), and ready-made vectors for a late-chunked build. A
``Cutter`` makes one from a build key and the corpus; ``chunking_cutter`` is the one made from the
cutters of ``evaluation.chunking``. ``index_cut`` builds the scratch index in a folder of its own,
timed, and the caller removes it.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Mapping

import numpy as np

from ..engine.corpus import Corpus
from ..engine.index import OpenedIndex
from ..engine.scratch import ScratchChunk, TextVectors, build_scratch_index
from .settings import DEFAULT_MODEL


@dataclass(frozen=True)
class Cut:
    key: str                     # <technique>-<size>-<letter>
    technique: str
    size: int
    letter: str
    chunks: tuple[ScratchChunk, ...]
    # chunk id -> (id, text) of what is handed over in its place (parent-child's section); None: itself
    handed: Mapping[str, tuple[str, str]] | None = None
    late: Mapping[str, np.ndarray] = field(default_factory=dict)  # model -> one unit row per chunk
    seconds: float = 0.0         # cutting (and, for late chunking, embedding the documents)

    def handed_over(self, chunk_id: str, text: str) -> tuple[str, str]:
        """The (id, text) a result hands over: its parent's when it has one, else its own."""
        if self.handed is not None and chunk_id in self.handed:
            return self.handed[chunk_id]
        return chunk_id, text


Cutter = Callable[[str, Corpus], Cut]


@dataclass(frozen=True)
class Indexed:
    cut: Cut
    index: OpenedIndex
    seconds: float               # cutting plus indexing (embedding included)


def index_cut(cut: Cut, folder: str | Path, *, text_vectors: TextVectors, models: tuple[str, ...] = (DEFAULT_MODEL,),
              progress: Callable[[str, int, int], None] | None = None) -> Indexed:
    started = time.perf_counter()
    index = build_scratch_index(cut.chunks, folder, models=models, vectors=dict(cut.late), text_vectors=text_vectors,
                                name=cut.key, progress=progress)
    return Indexed(cut=cut, index=index, seconds=round(cut.seconds + time.perf_counter() - started, 3))
