"""build_index embeds every chunk with both models at once (each model in its own thread): its vectors
must be the ones each model gives alone, one model after the other."""
from __future__ import annotations

from pathlib import Path

import numpy as np

from evaluation.engine import models
from evaluation.engine.index import IndexSettings, build_index, open_index

SAMPLE = Path(__file__).resolve().parent.parent / "samples" / "corpus.jsonl"
SETTINGS = IndexSettings(models=("bge-small", "minilm-l6"))


def test_an_index_built_with_both_models_at_once_holds_each_models_own_sequential_vectors(tmp_path):
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("".join(SAMPLE.read_text(encoding="utf-8").splitlines(keepends=True)[:12]), encoding="utf-8")
    stages: list[tuple[str, int, int]] = []
    build_index(corpus, tmp_path / "index", SETTINGS, threads=2, progress=lambda *s: stages.append(s))
    index = open_index(tmp_path / "index")
    texts = [c.indexed_text for c in index.chunks]
    assert len(texts) >= 30  # a few dozen chunks, of many lengths
    for name in SETTINGS.models:
        # today's way before the shared queue: this model alone, 2 intra-op threads
        alone = models.load_embedder(name, threads=2).embed_documents(texts)
        assert np.array_equal(np.asarray(index.vectors[name]), alone), name
    # progress kept moving, named both models, and ended at every chunk once per model
    assert {stage for stage, _, _ in stages} == {"embedding with bge-small + minilm-l6 at once"}
    assert [done for _, done, _ in stages] == sorted({done for _, done, _ in stages})
    assert stages[-1][1:] == (2 * len(texts), 2 * len(texts))
    assert len(stages) == 2 * -(-len(texts) // 32)  # each model reports after each batch of 32
