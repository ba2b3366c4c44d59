"""The embedded engine on the shipped sample corpus (real package READMEs) with the real models."""
from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from evaluation.engine.index import IndexSettings, build_index, open_index
from evaluation.engine.target import EmbeddedTarget
from evaluation.errors import CorpusError, SearchIndexError
from evaluation.golden import read_golden

SAMPLES = Path(__file__).resolve().parent.parent.parent / "samples"


@pytest.fixture(scope="session")
def target(sample_index):
    return EmbeddedTarget(open_index(sample_index))


def package(hit):
    """The sample's document ids are ``<package>/<section>``."""
    return hit.doc_id.split("/", 1)[0]


def setup_by_key(target, key):
    return next(s for s in target.setups() if s.key == key)


def one_setup_per_ranker(setups):
    """The first setup of each way the engine ranks: keyword alone, keyword fused with the document
    BM25, one vector list, two models' lists fused by RRF, BM25 and vectors fused, and that with its
    reranker. ``EmbeddedTarget._rank``
    branches on nothing else (a setup's models only choose which lists), so a rule about how one setup
    searches (batch against single, writing nothing) holds for all once it holds for these: on the
    sample that is 6 of the 11 setups, and one of the three cross-encoder setups, which cost the most."""
    def kind(setup):
        lists = len(setup.models) + (setup.retrieval == "hybrid")
        return setup.retrieval, lists > 1, setup.ranker

    chosen = {}
    for setup in setups:
        chosen.setdefault(kind(setup), setup)
    return list(chosen.values())


def test_one_setup_per_ranker_takes_each_way_of_ranking_once(target):
    assert [s.key for s in one_setup_per_ranker(target.setups())] == [
        "local.keyword.bm25", "local.keyword_documents.bm25", "local.dense.bge-small",
                                                                      "local.dense.bge-small+minilm-l6",
        "local.hybrid.bge-small", "local.hybrid_reranked.bge-small"]


def test_the_index_offers_every_set_of_models_dense_hybrid_and_reranked(target):
    assert [s.key for s in target.setups()] == [
        "local.keyword.bm25", "local.keyword_documents.bm25",
        "local.dense.bge-small", "local.dense.minilm-l6", "local.dense.bge-small+minilm-l6",
        "local.hybrid.bge-small", "local.hybrid.minilm-l6", "local.hybrid.bge-small+minilm-l6",
        "local.hybrid_reranked.bge-small", "local.hybrid_reranked.minilm-l6",
        "local.hybrid_reranked.bge-small+minilm-l6",
    ]


def test_a_question_answered_by_a_known_document_comes_back_on_top_for_every_setup(target):
    question = "How do I parse an XML document into a Python dictionary?"
    for setup in target.setups():
        hits = target.search(setup, question, 20)
        assert "xmltodict" in [package(h) for h in hits[:3]], setup.key


def test_bm25_ranks_the_document_holding_an_exact_rare_term_first(target):
    hits = target.search(setup_by_key(target, "local.keyword.bm25"), "ManagedIdentityCredential", 20)
    assert package(hits[0]) == "azure-identity"
    assert all(h.score > 0 for h in hits)  # a chunk without any query term is no result
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)


def test_batch_search_gives_the_same_results_as_one_at_a_time(target):
    questions = [q.question for q in read_golden(SAMPLES / "golden.jsonl").labelled[:6]]
    for setup in one_setup_per_ranker(target.setups()):
        batch = target.search_batch(setup, questions, 20)
        single = [target.search(setup, q, 20) for q in questions]
        assert [[h.id for h in hits] for hits in batch] == [[h.id for h in hits] for hits in single], setup.key


def test_hybrid_is_rrf_of_keyword_and_vector_lists(target):
    from evaluation.engine.fusion import rrf

    question = "retry policy with exponential backoff"
    hybrid = target.search(setup_by_key(target, "local.hybrid.bge-small"), question, 20)
    keyword = target._keyword([question], target.fusion_candidates)[0]
    dense = target._dense("bge-small", [question], target.fusion_candidates, cached=False)[0]
    expected = rrf([[i for i, _ in keyword], [i for i, _ in dense]], k=60)[:20]
    assert [h.id for h in hybrid] == [target.index.chunks[i].id for i, _ in expected]
    assert hybrid[0].score == pytest.approx(expected[0][1])


def test_the_cross_encoder_puts_the_relevant_passage_first(target):
    question = "How can I detect the character encoding of a file of unknown bytes?"
    hits = target.search(setup_by_key(target, "local.hybrid_reranked.bge-small+minilm-l6"), question, 20)
    assert package(hits[0]) == "charset-normalizer"
    reranked = hits[: target.rerank_candidates]
    assert [h.score for h in reranked] == sorted((h.score for h in reranked), reverse=True)


def test_each_question_is_embedded_once_per_model_and_each_pair_scored_once(sample_index, monkeypatch):
    from evaluation.engine import models

    target = EmbeddedTarget(open_index(sample_index), cache=False)  # this run's memory only: no earlier run's file
    questions = [q.question for q in read_golden(SAMPLES / "golden.jsonl").labelled[:4]]
    embedded, scored = [], []
    for name in target.index.models:
        embedder = models.load_embedder(name)
        original = embedder.embed_queries
        monkeypatch.setattr(embedder, "embed_queries",
                            lambda texts, _o=original, _n=name,
                            **kw: embedded.extend((_n, t) for t in texts) or _o(texts, **kw))
    cross = models.load_cross_encoder()
    original_pairs = cross.score_pairs
    monkeypatch.setattr(cross, "score_pairs", lambda pairs, **kw: scored.extend(pairs) or original_pairs(pairs, **kw))
    for setup in target.setups():
        target.search_batch(setup, questions, 20)
    for setup in target.setups():  # a second pass over every setup costs nothing new
        target.search_batch(setup, questions, 20)
    assert sorted(embedded) == sorted((m, q) for m in target.index.models for q in questions)
    # three reranked setups, each with its own candidates: every (question, passage) pair once
    reranked = [s for s in target.setups() if s.ranker == "cross-encoder"]
    assert len(reranked) == 3
    assert len(scored) == len(set(scored))
    assert len(questions) * target.rerank_candidates < len(scored) <= len(questions) * target.rerank_candidates * 3


def _digests(folder: Path) -> dict[str, tuple[str, int]]:
    return {str(p.relative_to(folder)): (hashlib.sha256(p.read_bytes()).hexdigest(), p.stat().st_mtime_ns)
            for p in sorted(folder.rglob("*")) if p.is_file()}


def test_the_index_opens_read_only_and_searching_writes_nothing(sample_index):
    before = _digests(sample_index)
    index = open_index(sample_index)
    assert all(not np.asarray(v).flags.writeable for v in index.vectors.values())
    target = EmbeddedTarget(index)
    for setup in one_setup_per_ranker(target.setups()):
        target.search(setup, "install from source", 20)
    assert _digests(sample_index) == before


def test_a_changed_corpus_is_noticed_and_an_unchanged_one_reuses_the_index(tmp_path):
    corpus = tmp_path / "corpus.jsonl"
    rows = [json.loads(line) for line in (SAMPLES / "corpus.jsonl").read_text(encoding="utf-8").splitlines()[:3]]
    corpus.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    settings = IndexSettings(models=("bge-small",))
    folder = tmp_path / "index"
    assert build_index(corpus, folder, settings)["reused"] is False
    assert build_index(corpus, folder, settings)["reused"] is True
    rows[0]["text"] += "\nOne more line, added after the index was built.\n"
    corpus.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    with pytest.raises(SearchIndexError, match="changed since this index was built"):
        open_index(folder, corpus=corpus)
    assert build_index(corpus, folder, settings)["reused"] is False
    open_index(folder, corpus=corpus)  # current again


def test_other_chunking_settings_make_another_index(tmp_path):
    from evaluation.engine.chunking import ChunkSettings

    corpus = tmp_path / "c.jsonl"
    corpus.write_text(json.dumps({"id": "a", "text": "Install the package with pip. " * 50}) + "\n", encoding="utf-8")
    folder = tmp_path / "index"
    first = build_index(corpus, folder, IndexSettings(models=()))
    second = build_index(corpus, folder, IndexSettings(chunking=ChunkSettings(size=50, overlap=10), models=()))
    assert second["reused"] is False and second["fingerprint"] != first["fingerprint"]
    assert second["chunks"] > first["chunks"]


def test_a_folder_that_is_not_an_index_is_refused(tmp_path):
    with pytest.raises(SearchIndexError, match="no index here"):
        open_index(tmp_path)
    (tmp_path / "notes.txt").write_text("mine", encoding="utf-8")
    with pytest.raises(SearchIndexError, match="not empty and holds no index"):
        build_index(SAMPLES / "corpus.jsonl", tmp_path, IndexSettings(models=()))
    assert (tmp_path / "notes.txt").read_text(encoding="utf-8") == "mine"


def test_a_damaged_index_is_refused_with_the_fix(sample_index, tmp_path):
    copy = tmp_path / "copy"
    shutil.copytree(sample_index, copy)
    (copy / "vectors" / "bge-small.npy").write_bytes(b"not numpy")
    with pytest.raises(SearchIndexError, match="rebuild"):
        open_index(copy)


def test_bad_corpus_rows_are_reported_by_line(tmp_path):
    corpus = tmp_path / "bad.jsonl"
    corpus.write_text('{"id": "a", "text": "fine"}\n{"id": "b", "txt": "oops"}\nnot json\n{"id": "a", "text": '
                      '"again"}\n',
                      encoding="utf-8")
    with pytest.raises(CorpusError) as caught:
        build_index(corpus, tmp_path / "index", IndexSettings(models=()))
    lines = [(p.line, p.message) for p in caught.value.problems]
    assert lines[0] == (2, '"txt" is not a field. Did you mean "text"?')
    assert lines[1] == (2, 'needs "text", a non-empty string with the document\'s words')
    assert lines[2][0] == 3 and lines[2][1].startswith("not valid JSON")
    assert lines[3] == (4, 'id "a" is used again (first on line 1); ids must be unique')
    assert not (tmp_path / "index").exists()
