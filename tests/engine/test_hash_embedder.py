"""The ``hash`` embedder: feature hashing of words, deterministic, unit rows, and never taken for a model."""
from __future__ import annotations

import subprocess
import sys

import numpy as np

from evaluation.engine import hashing
from evaluation.engine.cache import model_key
from evaluation.engine.index import IndexSettings, build_index, fingerprint, open_index
from evaluation.engine.models import load_embedder, model_info
from evaluation.engine.target import EmbeddedTarget


def test_the_same_text_gives_the_same_vector_in_another_process():
    here = hashing.hash_vector("Signing keys are rotated every 90 days").tolist()
    code = ("import json; from evaluation.engine.hashing import hash_vector; "
            "print(json.dumps(hash_vector('Signing keys are rotated every 90 days').tolist()))")
    other = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert np.allclose(np.array(eval(other)), np.array(here), atol=0)  # our own JSON list


def test_rows_are_unit_length_even_for_a_text_without_words():
    rows = load_embedder("hash").embed_documents(["Hello world", "", "!!!", "a a a b"])
    assert rows.shape == (4, hashing.DIMENSIONS) and rows.dtype == np.float32
    assert np.allclose(np.linalg.norm(rows, axis=1), 1.0)


def test_texts_sharing_words_score_higher_than_texts_sharing_none():
    query, near, far = load_embedder("hash").embed_documents(["key rotation", "the key rotation policy", "lunch menu"])
    assert float(query @ near) > 0.5 > abs(float(query @ far))


def test_it_is_labelled_as_not_a_real_model_wherever_it_is_described():
    info = model_info("hash")
    assert "not a real model" in info.source and info.kind == "embedder"
    assert "not a real model" in repr(load_embedder("hash"))


def test_an_index_built_with_it_names_it_and_its_fingerprint_differs_from_a_real_models(tmp_path):
    corpus = tmp_path / "c.jsonl"
    corpus.write_text('{"id": "doc-1", "text": "Signing keys are rotated every 90 days."}\n'
                      '{"id": "doc-2", "text": "The cafeteria serves lunch at noon."}\n', encoding="utf-8")
    manifest = build_index(corpus, tmp_path / "idx", IndexSettings(models=("hash",)))
    assert [(m["name"], "not a real model" in m["source"]) for m in manifest["models"]] == [("hash", True)]
    sha = manifest["corpus"]["sha256"]
    assert fingerprint(sha, IndexSettings(models=("hash",))) != fingerprint(sha, IndexSettings(models=("bge-small",)))
    assert model_key("hash") != model_key("bge-small")
    target = EmbeddedTarget(open_index(tmp_path / "idx"), cross_encoder=False, cache=False)
    dense = next(s for s in target.setups() if s.method == "dense")
    assert [h.doc_id for h in target.search(dense, "how often are keys rotated", 2)][0] == "doc-1"
