"""The batch cache in Blob storage (``engine.shared_cache``), against Azurite: keyed as the local cache
is, written by many at once with nothing lost, read in bounded time, damage ignored with a log line."""
from __future__ import annotations

import hashlib
import logging
import threading

import numpy as np
import pytest

from evaluation.engine import shared_cache
from evaluation.engine.shared_cache import CacheDamagedError, SharedCache, decode, encode

MODEL = hashlib.sha256(b"a model").digest()
CROSS = hashlib.sha256(b"a cross-encoder").digest()


def vector(n: int) -> np.ndarray:
    return np.arange(4, dtype=np.float32) + n


@pytest.fixture
def container(azurite):
    from evaluation.store.blob import container_client, parse_address

    return container_client(parse_address(azurite.address(azurite.new_container())),
                            connection_string=azurite.connection_string)


def names(container, prefix="docs/retrieval/cache/"):
    from evaluation.store.blob import list_blob_names

    return list_blob_names(container, prefix)


# -- the blob format (no storage) ---------------------------------------------------------------------

def test_a_blob_holds_its_vectors_scores_and_parts_and_is_checked_whole():
    vectors = {(MODEL, b"t" * 32): vector(1).tobytes()}
    scores = {(CROSS, b"q" * 32, b"p" * 32): -2.5}
    data = encode(vectors, scores, ["p2.bin", "p1.bin"])

    assert decode(data) == (vectors, scores, ["p1.bin", "p2.bin"])
    for damaged in (data[:-1], data[:40], b"x" + data[1:], data[:-33] + b"\0" + data[-32:], b""):
        with pytest.raises(CacheDamagedError):
            decode(damaged)


# -- against Azurite ------------------------------------------------------------------------------------

pytestmark = pytest.mark.azurite


def test_what_one_activity_flushed_the_next_reads_keyed_by_model_and_the_texts_sha256(container):
    first = SharedCache(container, "docs/retrieval/cache")
    first.put_vectors(MODEL, [("where is alpha", vector(1))])
    first.put_scores(CROSS, [(("where is alpha", "alpha is here"), 3.25)])
    name = first.flush()

    later = SharedCache(container, "docs/retrieval/cache")
    assert name.startswith("docs/retrieval/cache/parts/") and names(container) == [name]
    found = later.vectors(MODEL, ["where is alpha", "where is beta"], 4)
    assert list(found) == ["where is alpha"] and found["where is alpha"].tolist() == [1.0, 2.0, 3.0, 4.0]
    assert later.vectors(CROSS, ["where is alpha"], 4) == {}  # another model's key misses
    assert later.scores(CROSS, [("where is alpha", "alpha is here"), ("where is alpha", "other")]) == {
        ("where is alpha", "alpha is here"): 3.25}
    assert later.flush() is None  # nothing new: no blob written


def test_two_runs_writing_at_once_with_compactions_between_lose_nothing(container, monkeypatch):
    """Two writers (two runs' activities) flush 24 parts each at once, compacting every 3 parts, so
    compactions race each other and the writers: every entry is still there, and a reader reads the
    few bases left and the parts since."""
    monkeypatch.setattr(shared_cache, "COMPACT_AT", 3)
    errors = []

    def run(writer: str) -> None:
        try:
            for n in range(24):
                cache = SharedCache(container, "docs/retrieval/cache")
                cache.put_vectors(MODEL, [(f"{writer} question {n}", vector(n))])
                cache.put_scores(CROSS, [((f"{writer} question {n}", "a passage"), float(n))])
                cache.flush()
        except Exception as err:  # noqa: BLE001 - reported below
            errors.append(err)

    threads = [threading.Thread(target=run, args=(w,)) for w in ("run-a", "run-b")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    reader = SharedCache(container, "docs/retrieval/cache")
    texts = [f"{w} question {n}" for w in ("run-a", "run-b") for n in range(24)]
    assert errors == []
    assert sorted(reader.vectors(MODEL, texts, 4)) == sorted(texts)  # 2 x 24 = 48, none lost
    assert len(reader.scores(CROSS, [(t, "a passage") for t in texts])) == 48
    assert reader.read_blobs <= 2 * (3 + 1) + 2  # bases of the last compactions, parts since: not 48


def test_reads_stay_bounded_however_many_runs_came_before(container):
    for n in range(3 * shared_cache.COMPACT_AT):  # 48 activities, one after another
        cache = SharedCache(container, "docs/retrieval/cache")
        cache.put_vectors(MODEL, [(f"question {n}", vector(n))])
        cache.flush()

    reader = SharedCache(container, "docs/retrieval/cache")
    assert len(reader.vectors(MODEL, [f"question {n}" for n in range(48)], 4)) == 48
    # a compaction at the 17th part leaves 1 base; 48 = 3 x 16 parts: one base and at most 16 parts
    assert reader.read_blobs <= 1 + shared_cache.COMPACT_AT
    assert len(names(container, "docs/retrieval/cache/parts/")) <= shared_cache.COMPACT_AT


def test_a_damaged_cache_blob_is_ignored_with_a_log_line_and_dropped_by_the_next_compaction(container, caplog):
    from evaluation.store.blob import write_blob

    good = SharedCache(container, "docs/retrieval/cache")
    good.put_vectors(MODEL, [("kept", vector(7))])
    good.flush()
    write_blob(container, "docs/retrieval/cache/parts/cut-short.bin", shared_cache.MAGIC + b"{\"parts\": []")

    with caplog.at_level(logging.WARNING, logger="evaluation.engine.shared_cache"):
        found = SharedCache(container, "docs/retrieval/cache").vectors(MODEL, ["kept"], 4)

    assert list(found) == ["kept"]
    assert "docs/retrieval/cache/parts/cut-short.bin is damaged and ignored" in caplog.text
    SharedCache(container, "docs/retrieval/cache").compact()
    assert "docs/retrieval/cache/parts/cut-short.bin" not in names(container)
    assert list(SharedCache(container, "docs/retrieval/cache").vectors(MODEL, ["kept"], 4)) == ["kept"]


def test_storage_that_does_not_answer_costs_the_cache_never_the_run(caplog):
    from conftest import closed_port
    from evaluation.store.blob import container_client, parse_address

    account = f"http://127.0.0.1:{closed_port()}/devstoreaccount1"
    connection = (f"DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey="
                  f"{'a' * 86}==;BlobEndpoint={account};")
    gone = container_client(parse_address(f"{account}/cache"), connection_string=connection)
    cache = SharedCache(gone, "docs/retrieval/cache")

    with caplog.at_level(logging.WARNING, logger="evaluation.engine.shared_cache"):
        assert cache.vectors(MODEL, ["q"], 4) == {}
        cache.put_vectors(MODEL, [("q", vector(1))])
        assert cache.flush() is None

    assert "cannot be read" in caplog.text and "could not be written" in caplog.text


@pytest.mark.slow
def test_a_second_target_reads_the_first_ones_vectors_and_pair_scores_from_blob(container, sample_index):
    """The real engine: what one activity's target computed, the next one (another instance) reads,
    and its results are the same."""
    from evaluation.engine.target import EmbeddedTarget

    questions = ["How do I install it?", "What does the config file hold?"]

    def ranked():
        cache = SharedCache(container, "docs/retrieval/cache")
        target = EmbeddedTarget(sample_index, cache=cache, rerank_candidates=3)
        setup = next(s for s in target.setups() if s.ranker == "cross-encoder" and len(s.models) == 1)
        hits = target.search_batch(setup, questions, 20)
        cache.flush()
        return [[(h.id, h.score) for h in found] for found in hits], target.cache_counts(setup.key)

    first, counted = ranked()
    again, counted_again = ranked()

    assert again == first
    assert (counted["vectors_computed"], counted["pairs_computed"]) == (2, 2 * 3)  # 2 questions x 3 candidates
    assert (counted_again["vectors_cached"], counted_again["pairs_cached"]) == (2, 6)
    assert counted_again["vectors_computed"] == counted_again["pairs_computed"] == 0


def test_a_part_written_while_a_compaction_runs_is_kept(container, monkeypatch):
    """Deterministic form of the race above: another run flushes after the compaction has read the parts
    and before it deletes them; that part is not among those it read, so it stays."""
    for n in range(3):
        cache = SharedCache(container, "docs/retrieval/cache")
        cache.put_vectors(MODEL, [(f"question {n}", vector(n))])
        cache.flush()
    real_encode = shared_cache.encode

    def encode_then_another_run_flushes(vectors, scores, parts=()):
        data = real_encode(vectors, scores, parts)
        if parts:  # the compaction's base, made from what it read
            monkeypatch.setattr(shared_cache, "encode", real_encode)
            other = SharedCache(container, "docs/retrieval/cache")
            other.put_vectors(MODEL, [("written meanwhile", vector(9))])
            other.flush()
        return data

    monkeypatch.setattr(shared_cache, "encode", encode_then_another_run_flushes)
    SharedCache(container, "docs/retrieval/cache").compact()

    texts = [f"question {n}" for n in range(3)] + ["written meanwhile"]
    assert sorted(SharedCache(container, "docs/retrieval/cache").vectors(MODEL, texts, 4)) == sorted(texts)
