"""A cache blob (or the local cache file) that holds what ``encode`` never writes costs that blob, never the
rest of the cache: a header nested 100,000 deep with a valid checksum is skipped with a warning naming it and
dropped by the next compaction (it used to raise RecursionError past the skip and empty the whole cache for
every later run), and a vector or score that is not finite is never served nor kept (issue 37)."""
from __future__ import annotations

import hashlib
import logging
import sqlite3
import struct

import numpy as np
import pytest

from evaluation.engine import shared_cache
from evaluation.engine.cache import PersistentCache, text_key
from evaluation.engine.shared_cache import MAGIC, CacheDamagedError, SharedCache, decode, encode

MODEL = hashlib.sha256(b"a model").digest()
CROSS = hashlib.sha256(b"a cross-encoder").digest()
PREFIX = "docs/retrieval/cache"


def vector(n: float) -> np.ndarray:
    return np.arange(4, dtype=np.float32) + n


def whole(body: bytes) -> bytes:
    """``body`` with the checksum trailer ``encode`` gives every blob: the blob checks, whatever it holds."""
    return body + hashlib.sha256(body).digest()


DEEP = whole(MAGIC + b"[" * 100_000 + b"]" * 100_000 + b"\n")
NAN_VECTOR = encode({(MODEL, text_key("poisoned")): np.array([np.nan, 1, 2, 3], dtype="<f4").tobytes()}, {})
INF_SCORE = whole(MAGIC + b'{"parts": [], "vectors": 0, "scores": 1}\n' + CROSS + b"q" * 32 + b"p" * 32
                  + struct.pack("<d", float("inf")))


@pytest.mark.parametrize("data, says", [
    (DEEP, "its header is nested too deeply to read"),
    (whole(MAGIC + b'{"parts": [], "vectors": 0, "scores": 0}'), "its header has no end"),
    (whole(MAGIC + b'{"parts": [], "vectors": NaN, "scores": 0}\n'), "it holds NaN"),
    (whole(MAGIC + b'{"parts": [[["x"]]], "vectors": 0, "scores": 0}\n'), "its header.parts[0] is a list"),
    (whole(MAGIC + b'{"parts": [], "vectors": 1e300, "scores": 0}\n'), "its header.vectors is 1e+300"),
    (whole(MAGIC + b'{"parts": [], "vectors": 1, "scores": 0}\n' + MODEL + b"t" * 32 + struct.pack("<I", 2 ** 31)),
     "vector 1 runs past the end"),
    (NAN_VECTOR, "vector 1 holds a number that is not finite"),
    (INF_SCORE, "score 1 is inf, not a finite number"),
], ids=["deep header", "no header end", "NaN count", "nested parts", "huge count", "vector past the end",
        "NaN vector", "infinite score"])
def test_a_blob_that_checks_but_holds_what_encode_never_writes_is_damaged(data, says):
    with pytest.raises(CacheDamagedError, match=None) as caught:
        decode(data)
    assert says in str(caught.value)


def test_non_finite_vectors_and_scores_are_never_kept_for_the_next_run():
    cache = SharedCache(container=None, prefix=PREFIX)
    cache.put_vectors(MODEL, [("nan", np.array([np.nan, 0, 0, 0])), ("fine", vector(1))])
    cache.put_scores(CROSS, [(("q", "nan"), float("nan")), (("q", "fine"), 2.5)])
    assert list(cache._new_vectors) == [(MODEL, text_key("fine"))]
    assert list(cache._new_scores) == [(CROSS, text_key("q"), text_key("fine"))]


def test_the_local_cache_file_never_serves_a_vector_or_score_edited_to_nan(tmp_path):
    path = tmp_path / "docs.cache.sqlite"
    cache = PersistentCache(path)
    cache.put_vectors(MODEL, [("fine", vector(1)), ("nan", np.array([np.nan, 0, 0, 0]))])
    cache.put_scores(CROSS, [(("q", "fine"), 2.5)])
    cache.close()
    with sqlite3.connect(path) as edit:  # as a damaged disk or a hand would
        edit.execute("INSERT INTO query_vectors VALUES (?, ?, ?)",
                     (MODEL, text_key("edited"), np.array([1, np.inf, 0, 0], dtype="<f4").tobytes()))
        edit.execute("UPDATE pair_scores SET score = ?", (float("inf"),))  # SQLite keeps NaN as NULL
        edit.execute("INSERT INTO pair_scores VALUES (?, ?, ?, ?)", (CROSS, text_key("q"), text_key("text"), "x"))

    again = PersistentCache(path)
    assert list(again.vectors(MODEL, ["fine", "nan", "edited"], 4)) == ["fine"]
    assert again.scores(CROSS, [("q", "fine"), ("q", "text")]) == {}


@pytest.mark.azurite
@pytest.mark.parametrize("damage", [DEEP, NAN_VECTOR], ids=["deep header", "NaN vector"])
def test_one_damaged_part_costs_only_itself_and_the_next_compaction_drops_it(azurite, caplog, damage):
    from evaluation.store.blob import container_client, list_blob_names, parse_address, write_blob

    container = container_client(parse_address(azurite.address(azurite.new_container())),
                                 connection_string=azurite.connection_string)
    good = SharedCache(container, PREFIX)
    good.put_vectors(MODEL, [("kept", vector(7))])
    good.flush()
    bad = f"{PREFIX}/parts/{hashlib.sha256(damage).hexdigest()}.bin"
    write_blob(container, bad, damage)

    with caplog.at_level(logging.WARNING, logger="evaluation.engine.shared_cache"):
        found = SharedCache(container, PREFIX).vectors(MODEL, ["kept", "poisoned"], 4)

    assert list(found) == ["kept"] and found["kept"].tolist() == [7.0, 8.0, 9.0, 10.0]
    assert f"the shared cache blob {bad} is damaged and ignored" in caplog.text
    assert "cannot be read" not in caplog.text  # the rest of the cache was read
    SharedCache(container, PREFIX).compact()
    assert bad not in list_blob_names(container, f"{PREFIX}/")
    assert list(SharedCache(container, PREFIX).vectors(MODEL, ["kept"], 4)) == ["kept"]
    assert shared_cache.READ_ATTEMPTS >= 1


@pytest.mark.parametrize("length", [3, 5])
def test_a_kept_vector_of_another_length_is_never_served_from_either_cache(tmp_path, length):
    """A vector kept by another model of the same key, or cut short on disk, has another length: served, it
    would be compared with chunk vectors of 4 (issue 46: a hand-made bug that no test caught)."""
    wrong = np.arange(length, dtype=np.float32) + 1
    path = tmp_path / "docs.cache.sqlite"
    local = PersistentCache(path)
    local.put_vectors(MODEL, [("fine", vector(1))])
    local.close()
    with sqlite3.connect(path) as edit:
        edit.execute("INSERT INTO query_vectors VALUES (?, ?, ?)", (MODEL, text_key("wrong"), wrong.tobytes()))
    shared = SharedCache(container=None, prefix=PREFIX)
    shared.put_vectors(MODEL, [("fine", vector(1)), ("wrong", wrong)])

    for cache in (PersistentCache(path), shared):
        found = cache.vectors(MODEL, ["fine", "wrong"], 4)
        assert list(found) == ["fine"] and found["fine"].tolist() == [1.0, 2.0, 3.0, 4.0]
