"""The cross-encoder's time goes only where it can change an answer: each (question, passage) scored once
per run however many reranked setups hold it, the warm-up's pairs kept for the batch, several questions'
new pairs in one call, one row per call (no padding, so no score depends on its neighbours), and every
result, score and count the same as when each question was scored on its own."""
from __future__ import annotations

import zlib
from pathlib import Path

import numpy as np
import pytest

from evaluation.engine import models
from evaluation.engine.index import IndexSettings, open_index
from evaluation.engine.target import COUNTS, PAIRS_AT_ONCE, RERANK_CANDIDATES, EmbeddedTarget
from evaluation.golden import read_golden

SAMPLES = Path(__file__).resolve().parent.parent.parent / "samples"
RERANKED = ("local.hybrid_reranked.bge-small", "local.hybrid_reranked.minilm-l6",
            "local.hybrid_reranked.bge-small+minilm-l6")


def questions(n: int) -> list[str]:
    return [q.question for q in read_golden(SAMPLES / "golden.jsonl").labelled[:n]]


def reranked_setups(target):
    return [s for s in target.setups() if s.ranker == "cross-encoder"]


def ranked(hits_per_question) -> list[list[tuple[str, float]]]:
    return [[(h.id, h.score) for h in hits] for hits in hits_per_question]


class ScriptedCrossEncoder:
    """A stand-in for the cross-encoder: a pair's logit is a checksum of its two texts (the same texts,
    the same logit, as the real model gives one row per call), and every call's pairs are kept."""

    def __init__(self) -> None:
        self.calls: list[list[tuple[str, str]]] = []

    def score_pairs(self, pairs, *, batch_size: int = 32) -> np.ndarray:
        self.calls.append(list(pairs))
        return np.array([zlib.crc32(f"{q}\x00{p}".encode()) / 2 ** 32 for q, p in pairs], dtype=np.float32)

    def warm_up(self) -> int:
        return 0

    @property
    def pairs(self) -> list[tuple[str, str]]:
        return [pair for call in self.calls for pair in call]


@pytest.fixture
def scripted(monkeypatch) -> ScriptedCrossEncoder:
    encoder = ScriptedCrossEncoder()
    monkeypatch.setattr(EmbeddedTarget, "_cross_encoder", lambda self: encoder)
    return encoder


def batch_one_question_at_a_time(target, setup, asked):
    """Each question's batch on its own, as a reranked batch with progress went before several questions'
    pairs were scored together."""
    return [hit for q in asked for hit in target.search_batch(setup, [q], 20)]


# -- the same answers ---------------------------------------------------------------------------------

def test_a_reranked_batch_gives_each_question_the_results_and_scores_its_own_search_gives(sample_index):
    """With the real cross-encoder: a question's reranked results must not depend on which questions'
    pairs were scored beside its own (one row per call: no padding to a longer neighbour), on which
    setup scored a pair first, or on the path (a timed search scores its pairs itself)."""
    target = EmbeddedTarget(open_index(sample_index), cache=False)
    asked = questions(4)
    for setup in reranked_setups(target):
        told = []
        batched = ranked(target.search_batch(setup, asked, 20, progress=told.append))
        assert sum(told) == len(asked), setup.key
        assert batched == ranked(target.search(setup, q, 20) for q in asked), setup.key


def test_several_questions_pairs_in_one_call_give_the_results_and_counts_of_one_question_at_a_time(
        sample_index, scripted):
    asked = questions(8)
    together = EmbeddedTarget(open_index(sample_index), cache=False)
    alone = EmbeddedTarget(open_index(sample_index), cache=False)
    for setup in reranked_setups(together):
        assert ranked(together.search_batch(setup, asked, 20, progress=lambda n: None)) == ranked(
            batch_one_question_at_a_time(alone, setup, asked)), setup.key
        assert together.cache_counts(setup.key) == alone.cache_counts(setup.key), setup.key


def test_a_reranked_batch_gives_the_cross_encoder_at_least_PAIRS_AT_ONCE_new_pairs_a_call(sample_index, scripted):
    """After the first reranked setup a question adds a few new pairs: one call each left one of the two
    sessions idle. Every call but the batch's last holds PAIRS_AT_ONCE or more, and no pair is scored twice."""
    target = EmbeddedTarget(open_index(sample_index), cache=False)
    asked = questions(12)
    for setup in reranked_setups(target):
        before = len(scripted.calls)
        target.search_batch(setup, asked, 20, progress=lambda n: None)
        calls = scripted.calls[before:]
        assert calls and all(len(call) >= PAIRS_AT_ONCE for call in calls[:-1]), [len(c) for c in calls]
        assert sum(len(c) for c in calls) == target.cache_counts(setup.key)["pairs_computed"], setup.key
    assert len(set(scripted.pairs)) == len(scripted.pairs)
    first = target.cache_counts(RERANKED[0])
    assert first["pairs_computed"] == RERANK_CANDIDATES * len(asked)  # the first setup scores all of its own


def test_two_chunks_of_one_text_are_one_pair_for_the_cross_encoder(scripted):
    text = "Rotate the storage account keys every ninety days and keep the old key until clients move."
    docs = [{"id": "policy-a", "title": "Keys", "text": text}, {"id": "policy-b", "title": "Keys", "text": text},
            {"id": "other", "title": "Backups", "text": "Backups are kept for thirty days in another region."}]
    with EmbeddedTarget.from_documents(docs, settings=IndexSettings(models=("hash",))) as target:
        setup = reranked_setups(target)[0]
        hits = target.search_batch(setup, ["How often are the keys rotated?"], 20, progress=lambda n: None)[0]
        counts = target.cache_counts(setup.key)
    scored = scripted.pairs
    assert len(scored) == len(set(scored)) == 2  # the policy's text once, the backups' once
    by_doc = {h.doc_id: h.score for h in hits}
    assert by_doc["policy-a"] == by_doc["policy-b"]
    order = [h.doc_id for h in hits]
    assert order.index("policy-b") == order.index("policy-a") + 1  # equal scores: index order
    assert (counts["pairs_computed"], counts["pairs_shared"]) == (2, 1)


# -- the warm-up ----------------------------------------------------------------------------------------

def test_the_warm_up_keeps_its_pairs_for_the_batch_and_the_counts_stay_what_they_were(sample_index, scripted):
    """The timed pass warms every setup up on the first question; its pair scores are the batch's later
    (scored once in the run), and the batch counts them where the warm-up got them."""
    asked = questions(5)
    warmed = EmbeddedTarget(open_index(sample_index), cache=False)
    plain = EmbeddedTarget(open_index(sample_index), cache=False)
    for setup in warmed.setups():
        warmed.warm_up(setup, asked[0], 20)
    warm_up_pairs = len(scripted.pairs)
    assert warm_up_pairs == len(set(scripted.pairs)) and warm_up_pairs >= RERANK_CANDIDATES
    for setup in warmed.setups():
        assert ranked(warmed.search_batch(setup, asked, 20, progress=lambda n: None)) == ranked(
            plain.search_batch(setup, asked, 20, progress=lambda n: None)), setup.key
        assert warmed.cache_counts(setup.key) == plain.cache_counts(setup.key), setup.key
    everything = scripted.pairs
    assert len(everything) - len(set(everything)) == sum(
        plain.cache_counts(key)["pairs_computed"] for key in RERANKED)  # each pair twice: once per target
    assert sum(warmed.cache_counts(key)["pairs_computed"] for key in RERANKED) == len(set(everything))


def test_a_warm_up_whose_answers_all_came_from_the_cache_still_runs_every_session_once(sample_index, tmp_path,
                                                                                    monkeypatch):
    """No timed search may pay for a model's first run: when the cache file answered the warm-up's
    question, each session of each model the setup runs still runs a short text."""
    path = tmp_path / "cache.sqlite"
    asked = questions(1)
    first = EmbeddedTarget(open_index(sample_index), cache=path)
    setup = next(s for s in reranked_setups(first) if s.key == RERANKED[2])
    first.search_batch(setup, asked, 20)
    first.close()
    monkeypatch.setattr(models, "_cache", {})  # a new process: nothing loaded, no session has run
    again = EmbeddedTarget(open_index(sample_index), cache=path)
    again.warm_up(setup, asked[0], 20)
    loaded = again._models_of(setup)
    assert [m.name for m in loaded] == ["bge-small", "minilm-l6", "ms-marco-minilm-l12"]
    for model in loaded:
        assert all(graph.ran for graph in model._sessions.graphs), model.name
    assert sum(again.cache_counts(setup.key)[name] for name in COUNTS) == 0  # a warm-up counts nothing itself


def test_one_row_calls_run_longest_first_and_calls_of_many_rows_shortest_first():
    """A batch's calls are spread over the sessions: with one row a call, the longest going last left
    a session idle while it ran (``graphs._LONGEST_FIRST``). Calls of several rows keep their order."""
    from evaluation.engine import graphs

    passages = [" ".join(["word"] * n) for n in (5, 60, 1, 200, 30, 90)]
    encoder = models.load_cross_encoder()
    lengths = [len(encodings[int(call[0])].ids)
               for _, encodings, batches in graphs._windows([("a question", p) for p in passages],
                                                            tokenizer=encoder._tokenizer, batch_size=4, rows_per_call=1)
               for batch in batches for call in batch]
    assert lengths == sorted(lengths, reverse=True) and len(set(lengths)) == len(passages)
    many = [len(encodings[int(i)].ids)
            for _, encodings, batches in graphs._windows(passages, tokenizer=encoder._tokenizer, batch_size=4,
                                                         rows_per_call=None)
            for batch in batches for call in batch for i in call]
    assert many == sorted(many)
