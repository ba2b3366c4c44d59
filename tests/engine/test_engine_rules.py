"""The embedded engine's rules on a tiny index, with stand-in models so each rule can be set up exactly:
equal scores in index order at every cut, one reranked hybrid per set of models, and the caches
used by batches only (``search`` is what is timed: it must pay for every embedding and every pair)."""
from __future__ import annotations

import dataclasses
import json
import math

import numpy as np
import pytest

from evaluation.engine import models
from evaluation.engine.index import IndexSettings, build_index, open_index
from evaluation.engine.target import EmbeddedTarget

TIED = 100  # documents with the same text, so BM25 scores them exactly alike
OTHERS = 20
MODELS = ("bge-small", "minilm-l6")


@pytest.fixture(scope="module")
def bm25_only(tmp_path_factory):
    """Documents d000..d099 read "alpha beta n<number>" (the same length, and "beta" once: BM25 scores
    them alike for "beta"); d100..d119 each hold their own words."""
    folder = tmp_path_factory.mktemp("tiny")
    rows = [{"id": f"d{n:03d}", "text": f"alpha beta n{n:03d}"} for n in range(TIED)]
    rows += [{"id": f"d{n:03d}", "text": f"gamma delta word{n} alpha alpha alpha"} for n in range(TIED, TIED + OTHERS)]
    corpus = folder / "corpus.jsonl"
    corpus.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    build_index(corpus, folder / "index", IndexSettings(models=()))
    return open_index(folder / "index")


def unit(cosine: float, dims: int = 4) -> np.ndarray:
    """A unit vector whose cosine with the first axis is ``cosine``."""
    vector = np.zeros(dims, dtype=np.float32)
    vector[0], vector[1] = cosine, math.sqrt(1 - cosine ** 2)
    return vector


def vectors(n: int, best: dict[int, float], rest: float) -> np.ndarray:
    """Rows with cosine ``best[i]`` for the positions named, ``rest`` for every other one."""
    return np.stack([unit(best.get(i, rest)) for i in range(n)])


class StandInEmbedder:
    """Embeds every question as the first axis; records what it was asked."""

    def __init__(self, name: str, calls: list) -> None:
        self.name, self.calls = name, calls

    def embed_queries(self, texts, **_):
        self.calls.append((self.name, tuple(texts)))
        return np.stack([unit(1.0) for _ in texts])


class StandInCrossEncoder:
    """Scores a pair by its passage's characters; records every pair."""

    def __init__(self, calls: list) -> None:
        self.calls = calls

    def score_pairs(self, pairs, **_):
        pairs = list(pairs)
        self.calls.extend(pairs)
        return np.array([float(sum(map(ord, passage)) % 97) for _, passage in pairs], dtype=np.float32)


@pytest.fixture
def stand_ins(monkeypatch):
    """Stand-in models in place of the bundled ones: (embedding calls, scored pairs)."""
    embedded, scored = [], []
    embedders = {name: StandInEmbedder(name, embedded) for name in MODELS}
    cross = StandInCrossEncoder(scored)
    monkeypatch.setattr(models, "load_embedder", lambda name, **_: embedders[name])
    monkeypatch.setattr(models, "load_cross_encoder", lambda **_: cross)
    return embedded, scored


def with_vectors(index, rows: np.ndarray):
    return dataclasses.replace(index, vectors={name: rows for name in MODELS})


def keys(hits) -> list[str]:
    return [h.doc_id for h in hits]


def setup_by_key(target, key):
    return next(s for s in target.setups() if s.key == key)


# -- ties -------------------------------------------------------------------------------------------

def test_bm25_ties_come_in_index_order_and_the_cut_keeps_the_earliest(bm25_only):
    target = EmbeddedTarget(bm25_only, cross_encoder=False)
    keyword = setup_by_key(target, "local.keyword.bm25")
    # "beta" is only in the 100 tied documents: all score alike, so the top 20 are the first 20
    assert keys(target.search(keyword, "beta", 20)) == [f"d{n:03d}" for n in range(20)]
    assert keys(target.search_batch(keyword, ["beta"], 20)[0]) == [f"d{n:03d}" for n in range(20)]


def test_bm25_gives_no_result_for_words_the_index_never_saw(bm25_only):
    target = EmbeddedTarget(bm25_only, cross_encoder=False)
    keyword = setup_by_key(target, "local.keyword.bm25")
    assert target.search(keyword, "zebra the of", 20) == []
    assert target.search(keyword, "", 20) == []


def test_dense_ties_come_in_index_order_and_the_cut_keeps_the_earliest(bm25_only, stand_ins):
    n = TIED + OTHERS
    # chunk 5 is closest (0.9), chunk 117 next (0.8), every third chunk is far (0.1) and the rest tie
    # at 0.5 (a partition-based cut would keep tied chunks 29 and 31 here, not 16 and 26)
    far = {i: 0.1 for i in range(0, n, 3)}
    target = EmbeddedTarget(with_vectors(bm25_only, vectors(n, {**far, 5: 0.9, 117: 0.8}, 0.5)), cross_encoder=False,
                            fusion_candidates=20)  # lists are cut at 20 before anything else
    dense = setup_by_key(target, "local.dense.bge-small")
    tied = [i for i in range(n) if i % 3 and i not in (5, 117)]
    expected = [f"d{i:03d}" for i in [5, 117, *tied[:18]]]
    assert keys(target.search(dense, "anything", 20)) == expected
    assert keys(target.search_batch(dense, ["anything"], 20)[0]) == expected


def test_fused_lists_keep_index_order_among_equal_fused_scores(bm25_only, stand_ins):
    n = TIED + OTHERS
    target = EmbeddedTarget(with_vectors(bm25_only, vectors(n, {}, 0.5)), cross_encoder=False)
    # both models' lists are the first 50 chunks in index order, so every fused score is unique;
    # with BM25 on "beta" (also d000.. in order) the hybrid is the index order too
    for key in ("local.dense.bge-small+minilm-l6", "local.hybrid.bge-small+minilm-l6"):
        assert keys(target.search(setup_by_key(target, key), "beta", 20)) == [f"d{i:03d}" for i in range(20)], key


# -- reranked hybrids and the caches ---------------------------------------------------------------

def test_there_is_a_reranked_hybrid_for_each_set_of_models(bm25_only, stand_ins):
    target = EmbeddedTarget(with_vectors(bm25_only, vectors(TIED + OTHERS, {}, 0.5)))
    reranked = [s.key for s in target.setups() if s.method == "hybrid_reranked"]
    assert reranked == ["local.hybrid_reranked.bge-small", "local.hybrid_reranked.minilm-l6",
                        "local.hybrid_reranked.bge-small+minilm-l6"]


def test_a_batch_scores_each_question_and_candidate_once_for_every_reranked_setup(bm25_only, stand_ins):
    embedded, scored = stand_ins
    n = TIED + OTHERS
    # the two models disagree, so the three reranked setups have different candidates
    rows_a, rows_b = vectors(n, {i: 0.9 for i in range(60, 90)}, 0.5), vectors(n, {}, 0.5)
    index = dataclasses.replace(bm25_only, vectors={"bge-small": rows_a, "minilm-l6": rows_b})
    target = EmbeddedTarget(index, rerank_candidates=30, cache=False)  # this run's memory only: no earlier run's file
    questions = ["beta", "gamma delta", "alpha"]
    candidates = set()
    for setup in target.setups():
        target.search_batch(setup, questions, 20)
        if setup.ranker == "cross-encoder":  # what search would rerank, found without the reranker
            plain = dataclasses.replace(setup, ranker=None)
            for q, hits in zip(questions, target.search_batch(plain, questions, 30), strict=True):
                candidates |= {(q, h.id) for h in hits}
    assert len(scored) == len(set(scored))  # no pair twice
    chunk_ids = {c.indexed_text: c.id for c in index.chunks}
    assert {(q, chunk_ids[text]) for q, text in scored} == candidates
    assert len(candidates) > 30 * len(questions)  # more than one setup's worth: the sets differ
    # each question embedded once per model, however many setups use that model
    assert sorted((m, q) for m, texts in embedded for q in texts) == sorted((m, q) for m in MODELS for q in questions)


def test_single_searches_neither_read_nor_fill_the_batch_caches(bm25_only, stand_ins):
    embedded, scored = stand_ins
    target = EmbeddedTarget(with_vectors(bm25_only, vectors(TIED + OTHERS, {}, 0.5)), rerank_candidates=30)
    questions = ["beta", "gamma delta"]
    for setup in target.setups():
        target.search_batch(setup, questions, 20)  # every cache now holds these questions
    cached_vectors, cached_pairs = dict(target._query_vectors), dict(target._pair_scores)
    for setup in target.setups():
        for question in questions:
            embedded.clear(), scored.clear()
            target.search(setup, question, 20)
            # a caller pays for embedding the question with each model, and for each pair reranked
            assert embedded == [(model, (question,)) for model in setup.models], setup.key
            assert len(scored) == (30 if setup.ranker == "cross-encoder" else 0), setup.key
    assert target._query_vectors == cached_vectors and target._pair_scores == cached_pairs


def test_a_batch_told_to_report_progress_gives_the_same_results_and_steps_within_the_batch_when_reranked(
        bm25_only, stand_ins):
    index = with_vectors(bm25_only, vectors(TIED + OTHERS, {i: 0.9 for i in range(60, 90)}, 0.5))
    questions = ["beta", "gamma delta", "alpha", "n007", "word101 alpha"]
    for setup in EmbeddedTarget(index).setups():
        steps = []
        plain = EmbeddedTarget(index, rerank_candidates=30).search_batch(setup, questions, 20)
        sliced = EmbeddedTarget(index, rerank_candidates=30).search_batch(setup, questions, 20, progress=steps.append)
        assert sliced == plain, setup.key
        assert sum(steps) == len(questions) and all(n >= 1 for n in steps), setup.key
        if setup.ranker == "cross-encoder":  # as soon as a few questions' pairs are scored (PAIRS_AT_ONCE)
            assert len(steps) > 1, setup.key
        else:
            assert steps == [len(questions)], setup.key


@pytest.mark.parametrize("candidates", [5, 10])
def test_a_reranker_over_ten_candidates_or_fewer_leaves_every_question_s_top_10_the_hybrid_s(bm25_only, stand_ins,
                                                                                             candidates):
    """What bench/README.md's ceiling for issue 49 rests on: reranking only reorders the first
    ``rerank_candidates`` results and deeper ones keep their hybrid places, so at a depth of 10 or fewer the
    set of the first 10 results, and so found@10 on any labels, is the unreranked hybrid's, question by
    question; from 11 on the reranker can bring a candidate into the 10."""
    n = TIED + OTHERS
    index = with_vectors(bm25_only, vectors(n, {i: 0.9 - i / 1000 for i in range(60, 100)}, 0.5))
    questions = ["beta", "gamma delta", "alpha", "alpha beta n070"]
    hybrid_key, reranked_key = "local.hybrid.bge-small", "local.hybrid_reranked.bge-small"
    for depth, same in ((candidates, True), (20, False)):
        target = EmbeddedTarget(index, rerank_candidates=depth, cache=False)
        plain = target.search_batch(setup_by_key(target, hybrid_key), questions, 10)
        reranked = target.search_batch(setup_by_key(target, reranked_key), questions, 10)
        top_sets = [(set(keys(a)), set(keys(b))) for a, b in zip(plain, reranked, strict=True)]
        assert all(len(a) == 10 for a, _ in top_sets)
        if same:
            assert all(a == b for a, b in top_sets), depth
            assert any(keys(a) != keys(b) for a, b in zip(plain, reranked, strict=True))  # it did reorder
        else:  # the stand-in reranker brings deeper candidates up: the sets differ where the depth allows it
            assert any(a != b for a, b in top_sets)
