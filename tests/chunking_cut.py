"""A cutter for the chunking runs' tests, made from the engine's own word-counted strategies, so the
runs' rules are tested apart from the cutters of ``evaluation.chunking`` (tested in their own files).

Keys read ``<strategy>-<words>-<letter>``: ``structure``, ``fixed`` or ``recursive``; ``h`` embeds the
chunk's title and headings line in front of it (``Chunk.indexed_text``), ``n`` the text alone; a
``parent-<words>-<letter>`` build cuts ``structure`` chunks and hands over their whole document.
"""
from __future__ import annotations

import json
from pathlib import Path

from evaluation.builds.cut import Cut
from evaluation.engine.chunking import ChunkSettings, chunk_document
from evaluation.engine.corpus import Corpus
from evaluation.engine.scratch import ScratchChunk

SAMPLES = Path(__file__).resolve().parent.parent / "samples"


def engine_cutter(key: str, corpus: Corpus) -> Cut:
    technique, size, letter = key.rsplit("-", 2)
    strategy = "structure" if technique == "parent" else technique
    settings = ChunkSettings(strategy=strategy, size=int(size), overlap=int(size) // 5)
    chunks, handed = [], {}
    for document in corpus:
        for chunk in chunk_document(document, settings):
            embed = chunk.indexed_text if letter == "h" else chunk.text
            chunks.append(ScratchChunk(chunk.id, chunk.doc_id, chunk.text, embed_text=embed, page=chunk.page))
            if technique == "parent":
                handed[chunk.id] = (document.id, document.text)
    return Cut(key=key, technique=technique, size=int(size), letter=letter, chunks=tuple(chunks),
               handed=handed if technique == "parent" else None)


def small_sample(folder: Path, questions: int = 8, others: int = 12) -> tuple[Path, Path]:
    """The shipped sample cut down: the documents its first ``questions`` questions expect and ``others``
    more, as corpus.jsonl and golden.jsonl in ``folder``."""
    rows = [
        json.loads(line) for line in (SAMPLES / "golden.jsonl").read_text(encoding="utf-8").splitlines() if line.strip()
    ]
    golden = rows[:questions]
    wanted = {doc.partition("#")[0] for row in golden for doc in row["expected"]}
    documents = [json.loads(line) for line in (SAMPLES / "corpus.jsonl").read_text(encoding="utf-8").splitlines()
                 if line.strip()]
    kept = [d for d in documents if d["id"] in wanted]
    kept += [d for d in documents if d["id"] not in wanted][:others]
    corpus, golden_path = folder / "corpus.jsonl", folder / "golden.jsonl"
    corpus.write_text("".join(json.dumps(d) + "\n" for d in kept), encoding="utf-8")
    golden_path.write_text("".join(json.dumps(r) + "\n" for r in golden), encoding="utf-8")
    return corpus, golden_path
