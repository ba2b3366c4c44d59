"""ColBERT late interaction: MaxSim by hand, the int8 storage against float32, the hybrid_colbert setup
with stand-in vectors, the index files and their damage checks, and a real encode of three short texts."""
from __future__ import annotations

import dataclasses
import hashlib
import json
import shutil
from itertools import pairwise

import numpy as np
import pytest

from evaluation.engine import colbert
from evaluation.engine.chunking import RULES_VERSION
from evaluation.engine.index import (BM25_SETTINGS, DOCUMENT_BM25_SETTINGS, INDEX_FORMAT, IndexSettings, build_index,
                                     fingerprint, open_index)
from evaluation.engine.identity import fingerprint_payload
from evaluation.engine.target import EmbeddedTarget
from evaluation.errors import SearchIndexError
from evaluation.target import Setup

from test_engine_rules import MODELS, OTHERS, TIED, bm25_only, keys, setup_by_key, stand_ins, vectors, with_vectors  # noqa: F401


# --- MaxSim ------------------------------------------------------------------------------------

def test_maxsim_sums_each_query_vectors_best_dot_product_over_the_documents_vectors():
    query = np.array([[1.0, 0.0], [0.0, 1.0]])
    tokens = np.array([[1.0, 0.0], [0.6, 0.8], [0.8, 0.6],   # document 0: three vectors
                       [0.0, 1.0]])                           # document 1: one
    scores = colbert.maxsim(query, tokens, [0, 3, 3, 4])      # document 1 has none: the empty one
    # document 0: max(1, 0.6, 0.8) + max(0, 0.8, 0.6) = 1 + 0.8; empty: 0; document 2: 0 + 1
    assert scores.tolist() == pytest.approx([1 + 0.8, 0.0, 0 + 1])


def test_maxsim_over_many_documents_equals_the_formula_one_document_at_a_time():
    # 32 x 128 queries over 2,000 tokens: the product is computed in blocks of 64 tokens, which cut
    # through documents; the per-document formula must not notice
    rng = np.random.default_rng(3)
    query, tokens = rng.standard_normal((32, 128)), rng.standard_normal((2000, 128))
    offsets = np.array([0, 50, 51, 700, 700, 1337, 2000])
    expected = [(query @ tokens[a:b].T).max(axis=1).sum() if b > a else 0.0 for a, b in pairwise(offsets)]
    assert colbert.maxsim(query, tokens, offsets) == pytest.approx(expected, rel=1e-5)


def test_maxsim_of_a_query_without_vectors_or_of_no_documents_is_zero():
    assert colbert.maxsim(np.zeros((0, 2)), np.eye(2), [0, 2]).tolist() == [0.0]
    assert colbert.maxsim(np.eye(2), np.zeros((0, 2)), [0]).tolist() == []


# --- storage -----------------------------------------------------------------------------------

def unit_rows(rng: np.random.Generator, n: int, dims: int = 128) -> np.ndarray:
    rows = rng.standard_normal((n, dims)).astype(np.float32)
    return rows / np.linalg.norm(rows, axis=1, keepdims=True)


def test_int8_storage_reproduces_float32_maxsim_within_the_stated_tolerance():
    rng = np.random.default_rng(7)
    tokens = unit_rows(rng, 30 * 250)                          # 30 chunks of 250 tokens
    offsets = np.arange(0, 30 * 250 + 1, 250)
    codes, scales = colbert.quantise(tokens)
    stored = colbert.TokenVectors(codes=codes, scales=scales, offsets=offsets)
    assert codes.dtype == np.int8 and np.abs(codes).max(axis=1).min() == 127  # every row uses the full range
    for _ in range(5):
        query = unit_rows(rng, colbert.QUERY_TOKENS)
        exact = colbert.maxsim(query, tokens, offsets)
        compact = stored.score(query, range(30))
        assert np.abs(compact - exact).max() <= colbert.QUANTISATION_TOLERANCE


def test_gather_gives_the_rows_of_the_chunks_asked_for_in_the_order_asked():
    tokens = np.eye(4, dtype=np.float32)
    stored = colbert.TokenVectors(*colbert.quantise(tokens), offsets=np.array([0, 1, 3, 4]))
    rows, offsets = stored.gather([2, 0, 1])
    assert offsets.tolist() == [0, 1, 2, 4]
    assert np.allclose(rows, tokens[[3, 0, 1, 2]])


# --- the setup, with stand-in vectors ----------------------------------------------------------

class StandInColbert:
    """Every query is the one vector (1, 0); records what it encodes."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, ...]] = []

    def encode_queries(self, texts):
        self.calls.append(tuple(texts))
        return np.tile(np.array([[[1.0, 0.0]]], dtype=np.float32), (len(texts), 1, 1))


N = TIED + OTHERS
# Chunk i holds one vector (k_i / 127, 0) with k_i = 37 i mod 120: distinct for i < 120 (37 and 120
# share no factor), so MaxSim against (1, 0) orders the chunks by k_i exactly, with no ties.
K = [(37 * i) % 120 for i in range(N)]


@pytest.fixture
def with_colbert(bm25_only, stand_ins, monkeypatch):  # noqa: F811
    codes = np.array([[k, 0] for k in K], dtype=np.int8)
    store = colbert.TokenVectors(codes=codes, scales=np.full(N, 1 / 127, np.float32), offsets=np.arange(N + 1))
    index = dataclasses.replace(with_vectors(bm25_only, vectors(N, {i: 0.9 for i in range(60, 90)}, 0.5)),
                                colbert=store, manifest={**bm25_only.manifest, "colbert": {"name": "colbert"}})
    encoder = StandInColbert()
    monkeypatch.setattr(colbert, "load_encoder", lambda **_: encoder)
    return index, encoder


def test_hybrid_colbert_orders_the_top_candidates_by_maxsim_and_keeps_deeper_results_in_hybrid_order(with_colbert):
    index, _ = with_colbert
    target = EmbeddedTarget(index, rerank_candidates=30, cross_encoder=False)
    late = setup_by_key(target, "local.hybrid_colbert.bge-small")
    hybrid = target.search(setup_by_key(target, "local.hybrid.bge-small"), "beta", 45)
    position = {c.id: n for n, c in enumerate(index.chunks)}
    top = sorted(hybrid[:30], key=lambda h: -K[position[h.id]])
    found = target.search(late, "beta", 45)
    assert [h.id for h in found] == [h.id for h in top] + [h.id for h in hybrid[30:45]]
    assert [h.score for h in found[:30]] == pytest.approx([K[position[h.id]] / 127 for h in top])
    assert target.search_batch(late, ["beta"], 45)[0] == found


def test_there_is_a_colbert_hybrid_for_each_set_of_models_only_when_the_index_has_token_vectors(
        with_colbert, bm25_only):  # noqa: F811
    index, _ = with_colbert
    late = [s for s in EmbeddedTarget(index).setups() if s.ranker == "colbert"]
    assert [s.key for s in late] == ["local.hybrid_colbert.bge-small", "local.hybrid_colbert.minilm-l6",
                                     "local.hybrid_colbert.bge-small+minilm-l6"]
    assert late[0].method_label == ("Hybrid: BM25 + bge-small (fused, RRF k=60), "
                                    "reranked by ColBERT (late interaction, top 20)")  # the cross-encoder's candidates
    without = with_vectors(bm25_only, vectors(N, {}, 0.5))
    assert not [s for s in EmbeddedTarget(without).setups() if s.ranker == "colbert"]


def test_single_searches_encode_the_question_every_time_and_batches_once(with_colbert):
    index, encoder = with_colbert
    target = EmbeddedTarget(index, cross_encoder=False)
    late = setup_by_key(target, "local.hybrid_colbert.bge-small+minilm-l6")
    target.search(late, "beta", 10), target.search(late, "beta", 10)
    assert encoder.calls == [("beta",), ("beta",)] and target._colbert_queries == {}
    encoder.calls.clear()
    target.search_batch(late, ["beta", "alpha", "beta"], 10), target.search_batch(late, ["beta", "alpha"], 10)
    assert encoder.calls == [("beta", "alpha")]


def test_the_method_reads_hybrid_colbert_and_the_key_names_the_models():
    setup = Setup("local", "embedded", "hybrid", ("bge-small",), ranker="colbert", options={"rerank_candidates": 30})
    assert (setup.method, setup.key) == ("hybrid_colbert", "local.hybrid_colbert.bge-small")


# --- the index folder (the real model, three tiny documents) -----------------------------------

DOCUMENTS = [{"id": "paris.md", "text": "The Eiffel Tower is a wrought-iron lattice tower in Paris, France."},
             {"id": "plants.md", "text": "Photosynthesis turns sunlight into chemical energy in green plants."},
             {"id": "python.md", "text": "Python is a programming language with dynamic typing."}]


@pytest.fixture(scope="module")
def tiny_corpus(tmp_path_factory):
    folder = tmp_path_factory.mktemp("colbert")
    corpus = folder / "corpus.jsonl"
    corpus.write_text("".join(json.dumps(d) + "\n" for d in DOCUMENTS), encoding="utf-8")
    return corpus


@pytest.fixture(scope="module")
def built(tiny_corpus):
    folder = tiny_corpus.parent / "index"
    manifest = build_index(tiny_corpus, folder, IndexSettings(models=(), colbert=True), threads=1)
    return folder, manifest


def test_an_index_built_with_colbert_lists_its_token_files_and_opens_with_them(built):
    folder, manifest = built
    assert {"colbert/tokens.npy", "colbert/scales.npy", "colbert/offsets.npy"} <= set(manifest["files"])
    assert manifest["colbert"]["settings"] == colbert.SETTINGS
    opened = open_index(folder, verify=True)
    assert opened.colbert.offsets.shape == (len(opened.chunks) + 1,) == (3 + 1,)
    assert opened.colbert.codes.shape == (manifest["colbert"]["tokens"], 128)


def test_colbert_changes_the_fingerprint_and_an_index_without_it_keeps_the_one_it_had(built):
    _, manifest = built
    sha, plain = manifest["corpus"]["sha256"], IndexSettings(models=())
    # without ColBERT the fingerprint is the hash of the payload as it was before ColBERT existed
    before = fingerprint_payload(index_format=INDEX_FORMAT, corpus_sha256=sha, chunking=plain.chunking.to_dict(),
                                 chunking_rules=RULES_VERSION, bm25=BM25_SETTINGS,
                                 bm25_documents=DOCUMENT_BM25_SETTINGS, models=())
    assert fingerprint(sha, plain) == hashlib.sha256(json.dumps(before, sort_keys=True).encode()).hexdigest()
    assert (
        manifest["fingerprint"] == fingerprint(sha, IndexSettings(models=(), colbert=True)) != fingerprint(sha, plain)
    )


@pytest.mark.parametrize("damage, verify, said", [
    ("delete", False, "colbert/tokens.npy is missing"),
    ("truncate", False, "colbert/tokens.npy holds"),
    ("flip", True, "colbert/tokens.npy does not hash"),
])
def test_a_missing_or_damaged_token_file_is_refused(built, tmp_path, damage, verify, said):
    folder = tmp_path / "copy"
    shutil.copytree(built[0], folder)
    path = folder / "colbert" / "tokens.npy"
    data = path.read_bytes()
    if damage == "delete":
        path.unlink()
    elif damage == "truncate":
        path.write_bytes(data[:-128])
    else:
        path.write_bytes(data[:-1] + bytes([data[-1] ^ 0xFF]))
    with pytest.raises(SearchIndexError, match=said):
        open_index(folder, verify=verify)


def test_offsets_that_do_not_fit_the_tokens_are_refused_without_hashing(built, tmp_path):
    folder = tmp_path / "copy"
    shutil.copytree(built[0], folder)
    offsets = np.load(folder / "colbert" / "offsets.npy")
    offsets[[1, 2]] = offsets[[2, 1]]  # same size, same first and last: chunk 1 would end before it starts
    np.save(folder / "colbert" / "offsets.npy", offsets)
    with pytest.raises(SearchIndexError, match="do not fit"):
        open_index(folder)


# --- the real model ----------------------------------------------------------------------------

def test_a_real_encode_scores_the_relevant_passage_highest(built):
    folder, _ = built
    opened = open_index(folder)
    encoder = colbert.load_encoder(threads=1)
    queries = encoder.encode_queries(["how do plants make energy from sunlight", "where is the eiffel tower"])
    assert queries.shape == (2, colbert.QUERY_TOKENS, 128)
    assert np.allclose(np.linalg.norm(queries, axis=2), 1, atol=1e-5)
    plants, paris = (opened.colbert.score(q, range(3)) for q in queries)
    order = [c.doc_id for c in opened.chunks]
    assert order[int(np.argmax(plants))] == "plants.md" and order[int(np.argmax(paris))] == "paris.md"
    # the stored (int8) vectors score as the float32 ones do, within the stated tolerance
    exact = encoder.encode_documents([c.indexed_text for c in opened.chunks])
    tokens, offsets = np.concatenate(exact), np.cumsum([0] + [len(v) for v in exact])
    assert np.abs(colbert.maxsim(queries[0], tokens, offsets) - plants).max() <= colbert.QUANTISATION_TOLERANCE


def test_documents_drop_punctuation_vectors_and_keep_the_markers():
    encoder = colbert.load_encoder(threads=1)
    (with_commas,), (without,) = (
        encoder.encode_documents(["red, green, blue."]),
        encoder.encode_documents(["red green blue"]),
    )
    # [CLS] [unused1] red green blue [SEP]: 6 vectors either way; the commas and the full stop are dropped
    assert len(with_commas) == len(without) == 6
