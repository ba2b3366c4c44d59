"""The embedded engine's cache file: a second run reads what the first computed and ranks alike, a
changed chunk text or model misses, ``search`` (the timed path) never reads or writes it, a broken
file never fails a run, and targets writing it at once do not fail."""
from __future__ import annotations

import dataclasses
import hashlib
import html
import json
import logging
import shutil
import sqlite3
import threading
from pathlib import Path

import numpy as np
import pytest

from evaluation.engine import cache as cache_module
from evaluation.engine import model_catalog, models
from evaluation.engine.cache import PersistentCache, cache_path, model_key
from evaluation.engine.index import open_index
from evaluation.engine.target import COUNTS, RERANK_CANDIDATES, EmbeddedTarget
from evaluation.golden import read_golden

SAMPLES = Path(__file__).resolve().parent.parent.parent / "samples"
DENSE, RERANKED = "local.dense.bge-small", "local.hybrid_reranked.bge-small"


def questions(n: int) -> list[str]:
    return [q.question for q in read_golden(SAMPLES / "golden.jsonl").labelled[:n]]


def setup_by_key(target, key):
    return next(s for s in target.setups() if s.key == key)


def ranked(hits_per_question) -> list[list[tuple[str, float]]]:
    return [[(h.id, h.score) for h in hits] for hits in hits_per_question]


def no_models(monkeypatch) -> None:
    """Any model load fails the test: what is asked must come from a cache."""
    def refuse(*_, **__):
        raise AssertionError("a model was loaded")
    monkeypatch.setattr(models, "load_embedder", refuse)
    monkeypatch.setattr(models, "load_cross_encoder", refuse)


def rows(path: Path, table: str) -> int:
    with sqlite3.connect(path) as connection:
        return connection.execute(f"SELECT count(*) FROM {table}").fetchone()[0]


@dataclasses.dataclass
class Cold:
    path: Path                      # the cache file the cold run filled, closed
    questions: list[str]
    results: dict[str, list]        # setup key -> ranked((id, score)) per question
    counts: dict[str, dict]


@pytest.fixture(scope="module")
def cold(sample_index, tmp_path_factory) -> Cold:
    """Every setup batched once over three questions with an empty cache file."""
    path = tmp_path_factory.mktemp("cache") / "cold.sqlite"
    target = EmbeddedTarget(open_index(sample_index), cache=path)
    asked = questions(3)
    results = {s.key: ranked(target.search_batch(s, asked, 20)) for s in target.setups()}
    counts = {s.key: target.cache_counts(s.key) for s in target.setups()}
    target._stored.close()  # the WAL is folded into the file: it can be copied whole
    return Cold(path, asked, results, counts)


def copy_of(cold: Cold, tmp_path: Path) -> Path:
    copy = tmp_path / "copy.sqlite"
    shutil.copyfile(cold.path, copy)
    return copy


def test_a_question_searched_alone_gets_the_very_results_and_scores_it_gets_in_a_batch(sample_index):
    """The timed searches give their questions' ranks and a batch the others', in cold and warm runs
    alike: a question's results must not depend on which path, or which neighbours, it had."""
    target = EmbeddedTarget(open_index(sample_index), cache=False, cross_encoder=False)
    asked = questions(12)
    for setup in target.setups():
        batched = ranked(target.search_batch(setup, asked, 20))
        assert batched[3:7] == ranked(target.search_batch(setup, asked[3:7], 20)), setup.key
        for i in (0, 5, 11):
            assert ranked([target.search(setup, asked[i], 20)]) == [batched[i]], (setup.key, i)


# -- where it lives ----------------------------------------------------------------------------------

def test_the_cache_file_is_beside_the_index_folder_never_inside_it(tmp_path):
    assert cache_path(tmp_path / ".index" / "docs") == (tmp_path / ".index" / "docs.cache.sqlite").resolve()


# -- a second run -----------------------------------------------------------------------------------

def test_a_cold_run_computes_everything_once_and_reads_nothing(cold):
    total = {name: sum(c[name] for c in cold.counts.values()) for name in COUNTS}
    assert total["vectors_cached"] == total["pairs_cached"] == 0
    assert total["vectors_computed"] == 2 * 3  # two models, three questions
    assert total["pairs_computed"] >= RERANK_CANDIDATES * 3  # at least one reranked setup's candidates per question
    assert rows(cold.path, "query_vectors") == total["vectors_computed"]
    assert rows(cold.path, "pair_scores") == total["pairs_computed"]


def test_a_second_run_ranks_exactly_alike_with_every_value_from_the_cache(sample_index, cold, tmp_path, monkeypatch):
    no_models(monkeypatch)
    target = EmbeddedTarget(open_index(sample_index), cache=copy_of(cold, tmp_path))
    for setup in target.setups():
        assert ranked(target.search_batch(setup, cold.questions, 20)) == cold.results[setup.key], setup.key
        counts = target.cache_counts(setup.key)
        assert counts["vectors_computed"] == counts["pairs_computed"] == 0, setup.key
        # what the cold run computed or shared, this run read from the file or shared
        before = cold.counts[setup.key]
        assert (counts["vectors_cached"] + counts["vectors_shared"]
                == before["vectors_computed"] + before["vectors_shared"]), setup.key
        assert counts["pairs_cached"] + counts["pairs_shared"] == before["pairs_computed"] + before["pairs_shared"]
    assert target.cache_counts(DENSE)["vectors_cached"] == 3  # the first setup of a model reads the file


@pytest.mark.parametrize("flags, on", [((), True), (("--no-cache",), False)])
def test_evaluate_keeps_the_cache_beside_the_index_unless_no_cache(sample_index, flags, on):
    from evaluation.cli import build_parser
    from evaluation.cli.common import ProgressBar, open_embedded_target

    args = build_parser().parse_args(["evaluate", "--index", str(sample_index), "--golden", "g.jsonl", *flags])
    target = open_embedded_target(args, ProgressBar(True))
    assert (target._stored.path if target._stored else None) == (cache_path(sample_index) if on else None)


# -- what misses -------------------------------------------------------------------------------------

def test_a_changed_chunk_text_misses_and_only_its_pairs_are_scored_again(sample_index, cold, tmp_path):
    index = open_index(sample_index)
    top = cold.results[RERANKED][0][0][0]  # the first question's best chunk after reranking
    chunks = tuple(dataclasses.replace(c, text=c.text + "\nOne more sentence.") if c.id == top else c
                   for c in index.chunks)
    target = EmbeddedTarget(dataclasses.replace(index, chunks=chunks), cache=copy_of(cold, tmp_path))
    hits = target.search_batch(setup_by_key(target, RERANKED), cold.questions, 20)
    holding = sum(1 for per_question in hits if top in {h.id for h in per_question[:target.rerank_candidates]})
    counts = target.cache_counts(RERANKED)
    assert holding >= 1
    assert counts["pairs_computed"] == holding  # the changed chunk, once per question holding it
    assert counts["pairs_cached"] == RERANK_CANDIDATES * 3 - holding
    assert counts["vectors_cached"] == 3 and counts["vectors_computed"] == 0  # the questions did not change


class StandInEmbedder:
    """Any question becomes one fixed unit vector of 384 floats; counts the questions it embeds."""

    def __init__(self) -> None:
        self.embedded: list[str] = []
        self.lock = threading.Lock()

    def embed_queries(self, texts, **_):
        with self.lock:
            self.embedded.extend(texts)
        rows = np.zeros((len(texts), 384), dtype=np.float32)
        rows[:, 0] = 1.0
        return rows


class StandInCrossEncoder:
    def __init__(self) -> None:
        self.scored: list = []

    def score_pairs(self, pairs, **_):
        self.scored.extend(pairs)
        return np.zeros(len(pairs), dtype=np.float32)


@pytest.mark.parametrize("changed", ["bge-small", models.CROSS_ENCODER_NAME])
def test_another_model_checksum_misses(sample_index, cold, tmp_path, monkeypatch, changed):
    index = open_index(sample_index)  # before the checksum changes: open_index would refuse it
    real = model_catalog.model_info

    def info(name):
        found = real(name)
        return dataclasses.replace(found, sha256="0" * 64) if name == changed else found

    monkeypatch.setattr(model_catalog, "model_info", info)
    embedder, cross = StandInEmbedder(), StandInCrossEncoder()
    monkeypatch.setattr(models, "load_embedder", lambda name, **_: embedder)
    monkeypatch.setattr(models, "load_cross_encoder", lambda **_: cross)
    target = EmbeddedTarget(index, cache=copy_of(cold, tmp_path))
    target.search_batch(setup_by_key(target, RERANKED), cold.questions, 20)
    counts = target.cache_counts(RERANKED)
    if changed == "bge-small":
        assert counts["vectors_computed"] == 3 and counts["vectors_cached"] == 0
        assert embedder.embedded == cold.questions  # the embedder adds the prefix itself
    else:
        assert counts["vectors_cached"] == 3 and counts["vectors_computed"] == 0
        assert counts["pairs_computed"] == len(cross.scored) == RERANK_CANDIDATES * 3 and counts["pairs_cached"] == 0


# -- search, the timed path ----------------------------------------------------------------------------

def test_search_never_reads_the_cache_and_batches_do(sample_index, cold, tmp_path):
    """The file is poisoned: bge-small's vector for one question points at the last chunk, and the
    scores of another question's candidates reverse their reranked order. Batches must show the
    poison; single searches the true results."""
    index = open_index(sample_index)
    path = copy_of(cold, tmp_path)
    first, second = cold.questions[:2]
    planted = index.chunks[-1].id
    with sqlite3.connect(path) as connection:
        connection.execute("DELETE FROM query_vectors WHERE text = ?", (hashlib.sha256(
            (models.BGE_QUERY_PREFIX + first).encode()).digest(),))
        connection.execute("DELETE FROM pair_scores")
    candidates = [chunk_id for chunk_id, _ in cold.results[RERANKED][1][:30]]  # best first
    by_id = {c.id: c for c in index.chunks}
    poison = PersistentCache(path)
    poison.put_vectors(model_key("bge-small"),
                       [(models.BGE_QUERY_PREFIX + first, np.asarray(index.vectors["bge-small"][-1]))])
    poison.put_scores(model_key(models.CROSS_ENCODER_NAME),
                      [((second, by_id[c].indexed_text), float(n)) for n, c in enumerate(candidates)])
    poison.close()

    target = EmbeddedTarget(index, cache=path)
    dense, reranked = setup_by_key(target, DENSE), setup_by_key(target, RERANKED)
    assert [h.id for h in target.search(dense, first, 20)] == [i for i, _ in cold.results[DENSE][0]]
    assert [h.id for h in target.search(reranked, second, 20)][:30] == candidates
    assert target.search_batch(dense, [first], 20)[0][0].id == planted != cold.results[DENSE][0][0][0]
    assert [h.id for h in target.search_batch(reranked, [second], 20)[0]][:30] == candidates[::-1]


def test_search_never_writes_the_cache(sample_index, cold, tmp_path):
    path = tmp_path / "untouched.sqlite"
    target = EmbeddedTarget(open_index(sample_index), cache=path)
    for key in (DENSE, RERANKED):
        target.search(setup_by_key(target, key), cold.questions[0], 20)
    assert not path.exists()
    assert target.cache_counts(RERANKED) == dict.fromkeys(COUNTS, 0)


# -- a cache never fails a run -------------------------------------------------------------------------

def broken_corrupt(tmp_path: Path) -> Path:
    path = tmp_path / "corrupt.sqlite"
    path.write_bytes(b"this is not a database, " * 200)
    return path


def broken_folder(tmp_path: Path) -> Path:
    path = tmp_path / "a folder.sqlite"
    path.mkdir()
    return path


def broken_parent(tmp_path: Path) -> Path:
    (tmp_path / "file").write_text("a file, not a folder")
    return tmp_path / "file" / "cache.sqlite"


@pytest.mark.parametrize("broken", [broken_corrupt, broken_folder, broken_parent])
def test_a_cache_file_that_cannot_be_opened_warns_once_and_the_run_goes_on(sample_index, cold, tmp_path, caplog,
                                                                           broken):
    target = EmbeddedTarget(open_index(sample_index), cache=broken(tmp_path))
    dense = setup_by_key(target, DENSE)
    with caplog.at_level(logging.WARNING, logger="evaluation.engine.cache"):
        for question in cold.questions:  # three batches: one warning
            target.search_batch(dense, [question], 20)
    assert [[h.id for h in hits] for hits in target.search_batch(dense, cold.questions, 20)] == \
        [[i for i, _ in hits] for hits in cold.results[DENSE]]
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1 and "goes on without it" in warnings[0].getMessage()
    assert target.cache_counts(DENSE)["vectors_computed"] == 3


def test_a_cache_file_locked_past_the_timeout_warns_once_and_the_run_goes_on(sample_index, cold, tmp_path, caplog,
                                                                              monkeypatch):
    monkeypatch.setattr(cache_module, "BUSY_TIMEOUT_S", 0.2)
    path = tmp_path / "locked.sqlite"
    made = PersistentCache(path)
    made.put_vectors(b"x" * 32, [])  # the file, with its tables, empty
    made.close()
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")  # another process writing, and never finishing
    try:
        target = EmbeddedTarget(open_index(sample_index), cache=path)
        dense = setup_by_key(target, DENSE)
        with caplog.at_level(logging.WARNING, logger="evaluation.engine.cache"):
            found = target.search_batch(dense, cold.questions, 20)
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert [[h.id for h in hits] for hits in found] == [[i for i, _ in hits] for hits in cold.results[DENSE]]
    assert len([r for r in caplog.records if r.levelno == logging.WARNING]) == 1


# -- several targets at once -------------------------------------------------------------------------

def _write_in_another_process(index_folder: str, cache_file: str, n: int, start, batches: int, results) -> None:
    """One ranking process of the Function App, with a stand-in embedder: ``batches`` batches of 20 new questions."""
    models.load_embedder = lambda name, **_: StandInEmbedder()
    target = EmbeddedTarget(open_index(index_folder), cache=cache_file)
    dense = setup_by_key(target, DENSE)
    start.wait()
    for batch in range(batches):
        target.search_batch(dense, [f"process {n} batch {batch} question {i}" for i in range(20)], 5)
    results.put((n, target.cache_counts(DENSE)["vectors_computed"], target._stored.usable))


def test_two_processes_writing_one_cache_file_at_once_both_finish_and_keep_everything(sample_index, tmp_path):
    import multiprocessing

    context = multiprocessing.get_context("spawn")  # a fresh interpreter each, as the Function App's workers
    path, batches = tmp_path / "shared.sqlite", 100
    start, results = context.Barrier(2), context.Queue()
    processes = [context.Process(target=_write_in_another_process,
                                 args=(str(sample_index), str(path), n, start, batches, results)) for n in range(2)]
    for process in processes:
        process.start()
    for process in processes:
        process.join(timeout=300)
    assert [p.exitcode for p in processes] == [0, 0]
    # each computed all its questions, and never found the file locked past the timeout (it would be unusable)
    assert sorted(results.get(timeout=5) for _ in processes) == [(0, batches * 20, True), (1, batches * 20, True)]
    assert rows(path, "query_vectors") == 2 * batches * 20


# -- what the report says ----------------------------------------------------------------------------

def test_a_warm_runs_report_says_what_came_from_the_cache_and_its_times_are_still_measured(sample_index, cold,
                                                                                           tmp_path, monkeypatch):
    from evaluation import evaluate
    from evaluation.report.html import render_html
    from evaluation.report.text import render_report

    golden = tmp_path / "golden.jsonl"
    held = open_index(sample_index).chunks[0].doc_id  # any document the index holds: the run counts cache use
    golden.write_text("".join(json.dumps({"id": f"q{n}", "question": q, "expected": [held]}) + "\n"
                              for n, q in enumerate(cold.questions)), encoding="utf-8")
    target = EmbeddedTarget(open_index(sample_index), cache=copy_of(cold, tmp_path))
    searched = []
    real_search = EmbeddedTarget.search
    monkeypatch.setattr(EmbeddedTarget, "search", lambda self, *a: searched.append(a) or real_search(self, *a))
    report = evaluate(target, golden, only=["local.hybrid_reranked.bge-small"], timed=1)

    entry = report["setups"][0]
    assert (
        entry["cache"]["pairs_computed"] == 0 and entry["cache"]["pairs_cached"] == RERANK_CANDIDATES * 2
    )  # the 2 untimed
    assert report["cache"] == entry["cache"]
    # one live, uncached search; the warm-up goes through the batch's path (``warm_up``), and what it read
    # from the file is counted by the batch that meets it, as when the warm-up was a search of its own
    assert len(searched) == 1 and entry["summary"]["timed"] == 1
    pairs = RERANK_CANDIDATES * 2  # 20 x 2 = 40
    sentence = f"From earlier runs' cache: {pairs} of {pairs} cross-encoder pair scores and 2 of 2 query vectors"
    assert sentence in render_report(report, details=True) and sentence in html.unescape(render_html(report))


def _connect_locked_first(monkeypatch, times: int) -> list[int]:
    """sqlite3.connect as the cache calls it, answering "database is locked" on the first ``times`` calls
    (SQLite's deadlock rule when another process switches a new file to WAL), as it does without waiting."""
    real, calls = sqlite3.connect, []

    def connect(*args, **kwargs):
        calls.append(1)
        if len(calls) <= times:
            raise sqlite3.OperationalError("database is locked")
        return real(*args, **kwargs)

    monkeypatch.setattr(cache_module.sqlite3, "connect", connect)
    monkeypatch.setattr(cache_module, "OPEN_RETRY_PAUSE_S", 0.0)
    return calls


def test_a_lock_met_while_opening_is_tried_again_and_the_cache_stays_usable(tmp_path, monkeypatch):
    calls = _connect_locked_first(monkeypatch, times=cache_module.OPEN_ATTEMPTS - 1)
    (tmp_path / "c.sqlite").touch()  # another process made the file: this one opens it to read
    cache = PersistentCache(tmp_path / "c.sqlite")

    assert cache.vectors(b"m", ["q"], 4) == {} and cache.usable
    assert len(calls) == cache_module.OPEN_ATTEMPTS  # 4 locked answers, then the 5th try opens


def test_a_lock_on_every_try_gives_the_cache_up_after_the_last_one(tmp_path, monkeypatch, caplog):
    calls = _connect_locked_first(monkeypatch, times=cache_module.OPEN_ATTEMPTS)
    (tmp_path / "c.sqlite").touch()  # another process made the file: this one opens it to read
    cache = PersistentCache(tmp_path / "c.sqlite")

    with caplog.at_level(logging.WARNING, logger="evaluation.engine.cache"):
        assert cache.vectors(b"m", ["q"], 4) == {}
    assert not cache.usable and len(calls) == cache_module.OPEN_ATTEMPTS
    assert "database is locked" in caplog.text


def test_the_cache_says_what_share_of_a_runs_batch_it_holds_so_the_time_left_counts_it(sample_index, cold, tmp_path):
    # the cold run batched every setup over three questions: they are held, a fourth is not; keyword is never
    # cached (nothing to keep), and an empty cache file holds nothing
    from evaluation.evaluate import batch_weights
    from evaluation.run.shards import KEYWORD_SECONDS, estimated_seconds
    from fakes import fake_plan

    target = EmbeddedTarget(open_index(sample_index), cache=copy_of(cold, tmp_path))
    asked = [*cold.questions, questions(4)[3]]
    reranked, dense = setup_by_key(target, RERANKED), setup_by_key(target, DENSE)
    assert target.cached_share(reranked.ranker, reranked.models, asked) == 3 / 4
    assert target.cached_share(dense.ranker, dense.models, asked) == 3 / 4
    assert target.cached_share(None, (), asked) == 0
    empty = EmbeddedTarget(open_index(sample_index), cache=tmp_path / "empty.sqlite")
    assert empty.cached_share(reranked.ranker, reranked.models, asked) == 0
    # a batch fully held weighs a keyword search; three quarters held, a quarter of its cost and the rest as keyword
    plan = fake_plan([reranked.to_dict()])
    full = estimated_seconds(reranked.to_dict())
    assert batch_weights(plan, {reranked.key: 1.0})[reranked.key] == pytest.approx(KEYWORD_SECONDS)
    assert batch_weights(plan, {reranked.key: 0.75})[reranked.key] == pytest.approx(full / 4 + 3 * KEYWORD_SECONDS / 4)
    assert batch_weights(plan)[reranked.key] == pytest.approx(full)


def test_a_read_of_a_cache_file_not_made_yet_finds_nothing_and_makes_no_file(tmp_path):
    # a run that keeps nothing (the time left asks what is cached before any search) leaves no file beside
    # its index: the index folder's neighbours are what a person sees
    cache = PersistentCache(tmp_path / "c.sqlite")
    assert cache.vectors(b"m", ["q"], 4) == {} and cache.scored_queries(b"m", ["q"]) == set()
    assert cache.scores(b"m", [("q", "p")]) == {} and cache.notes([b"k"]) == {}
    assert list(tmp_path.iterdir()) == [] and cache.usable
    cache.put_vectors(b"m", [("q", np.ones(4, dtype=np.float32))])  # a write makes it
    assert set(cache.vectors(b"m", ["q"], 4)) == {"q"}
