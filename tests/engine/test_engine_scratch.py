"""The scratch index: chunks cut elsewhere are searched like an index ``build_index`` made, each text
embedded once across builds (memory, then the cache file), and late vectors used as given."""
from __future__ import annotations

import numpy as np
import pytest

from evaluation.engine.models import load_embedder
from evaluation.engine.scratch import ScratchChunk, TextVectors, build_scratch_index
from evaluation.engine.target import EmbeddedTarget

CHUNKS = [
    ScratchChunk("cats:0", "cats", "Cats purr when they are content.",
                 embed_text="Pets > Cats\nCats purr when they are content."),
    ScratchChunk("cats:1", "cats", "A cat sleeps sixteen hours a day."),
    ScratchChunk("ships:0", "ships", "The container ship left the harbour at dawn.",
                 search_text="Maritime\nThe container ship left the harbour at dawn."),
]


def setup_of(target: EmbeddedTarget, key: str):
    return next(s for s in target.setups() if s.key == key)


def test_dense_and_hybrid_search_the_given_chunks(tmp_path):
    index = build_scratch_index(CHUNKS, tmp_path / "a", models=("bge-small",))
    target = EmbeddedTarget(index, cache=False, cross_encoder=False)
    for key in ("local.dense.bge-small", "local.hybrid.bge-small", "local.keyword.bm25"):
        hits = target.search_batch(setup_of(target, key), ["Where did the ship go at dawn?"], 3)[0]
        assert hits[0].id == "ships:0" and hits[0].doc_id == "ships"
        assert hits[0].text == CHUNKS[2].text  # what is handed over is the chunk's text, not its search text


def test_bm25_reads_the_search_text_and_the_embedder_the_embed_text(tmp_path):
    index = build_scratch_index(CHUNKS, tmp_path / "a", models=("bge-small",))
    target = EmbeddedTarget(index, cache=False, cross_encoder=False)
    # "Maritime" is only in ships:0's search text, never in any text handed over
    hits = target.search_batch(setup_of(target, "local.keyword.bm25"), ["maritime"], 3)[0]
    assert [h.id for h in hits] == ["ships:0"]
    expected = load_embedder("bge-small").embed_documents([CHUNKS[0].embed_text, CHUNKS[1].text])
    np.testing.assert_allclose(np.asarray(index.vectors["bge-small"][:2]), expected, atol=1e-6)


def test_each_text_is_embedded_once_then_read_from_memory_then_from_the_file(tmp_path):
    cache = tmp_path / "chunking.cache.sqlite"
    shared = TextVectors(cache=cache)
    build_scratch_index(CHUNKS, tmp_path / "a", models=("bge-small",), text_vectors=shared)
    assert shared.counts == {"vectors_cached": 0, "vectors_shared": 0, "vectors_computed": 3}
    again = CHUNKS[:2] + [ScratchChunk("ships:0", "ships", "A new passage about ships.")]
    build_scratch_index(again, tmp_path / "b", models=("bge-small",), text_vectors=shared)
    assert shared.counts == {"vectors_cached": 0, "vectors_shared": 2, "vectors_computed": 3 + 1}
    shared.close()
    later = TextVectors(cache=cache)  # another run: everything is in the file now
    index = build_scratch_index(again, tmp_path / "c", models=("bge-small",), text_vectors=later)
    assert later.counts == {"vectors_cached": 3, "vectors_shared": 0, "vectors_computed": 0}
    fresh = load_embedder("bge-small").embed_documents([c.embedded for c in again])
    np.testing.assert_allclose(np.asarray(index.vectors["bge-small"]), fresh, atol=1e-6)


def test_late_vectors_are_used_as_given_and_not_embedded(tmp_path):
    rows = np.eye(3, 384, dtype=np.float32)  # unit rows, plainly not what the model would give
    counted = TextVectors()
    index = build_scratch_index(CHUNKS, tmp_path / "a", models=("bge-small",), vectors={"bge-small": rows},
                                text_vectors=counted)
    np.testing.assert_array_equal(np.asarray(index.vectors["bge-small"]), rows)
    assert counted.counts["vectors_computed"] == 0


def test_repeated_ids_and_wrong_vector_counts_are_refused(tmp_path):
    with pytest.raises(ValueError, match="given twice"):
        build_scratch_index([CHUNKS[0], CHUNKS[0]], tmp_path / "a")
    with pytest.raises(ValueError, match="2 vectors given for 3 chunks"):
        build_scratch_index(CHUNKS, tmp_path / "b", vectors={"bge-small": np.eye(2, 384, dtype=np.float32)})
