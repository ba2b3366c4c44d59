"""The cross-encoder runs its one-row calls on one one-thread session per core at once (graphs._Sessions):
the same logits as one session, calls really concurrent, a session never shared by two calls, and a
failed call (or Ctrl-C) stops the calls not yet started."""
from __future__ import annotations

import json
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from evaluation.engine import model_catalog, models
from evaluation.engine.graphs import _Sessions

SAMPLE = Path(__file__).resolve().parent.parent.parent / "samples"


class FakeGraph:
    """Stands in for an onnxruntime session: records what it runs and refuses to run two calls at once."""

    def __init__(self, name: str, *, wait: threading.Barrier | None = None, delay: float = 0.0) -> None:
        self.name, self.wait, self.delay = name, wait, delay
        self.busy = False
        self.ran: list[int] = []

    def __call__(self, call: int) -> tuple[str, int]:
        if self.busy:
            raise AssertionError(f"session {self.name} was given a second call while running one")
        self.busy = True
        try:
            if self.wait is not None:
                self.wait.wait()
            time.sleep(self.delay)
            self.ran.append(call)
            return self.name, call
        finally:
            self.busy = False


def run(graph: FakeGraph, call: int) -> tuple[str, int]:
    if call < 0:
        raise RuntimeError("graph failed")
    return graph(call)


def test_two_sessions_run_two_calls_at_once():
    # Each call waits until two calls are inside a session: run one after the other, the barrier breaks.
    barrier = threading.Barrier(2, timeout=5)
    sessions = _Sessions([FakeGraph("a", wait=barrier), FakeGraph("b", wait=barrier)])
    results = sessions.map(run, list(range(6)))
    assert [call for _, call in results] == list(range(6))  # in the callers' order
    assert {name for name, _ in results} == {"a", "b"}      # both sessions did work


def test_results_come_back_in_call_order_whichever_session_finishes_first():
    slow, fast = FakeGraph("slow", delay=0.03), FakeGraph("fast")
    sessions = _Sessions([slow, fast])
    assert [call for _, call in sessions.map(run, list(range(20)))] == list(range(20))
    assert len(fast.ran) > len(slow.ran)  # calls went to whichever session was free


def test_a_session_is_never_given_two_calls_at_once_by_two_callers():
    graphs = [FakeGraph("a", delay=0.002), FakeGraph("b", delay=0.002)]
    sessions = _Sessions(graphs)
    errors: list[BaseException] = []

    def caller() -> None:
        try:
            assert [c for _, c in sessions.map(run, list(range(25)))] == list(range(25))
        except BaseException as err:  # noqa: BLE001  (re-raised below, in the test's thread)
            errors.append(err)

    threads = [threading.Thread(target=caller) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors, errors[0]
    assert sum(len(g.ran) for g in graphs) == 3 * 25


def test_a_failed_call_stops_the_calls_not_yet_started():
    graphs = [FakeGraph("a", delay=0.02), FakeGraph("b", delay=0.02)]
    sessions = _Sessions(graphs)
    with pytest.raises(RuntimeError, match="graph failed"):
        sessions.map(run, [-1] + list(range(1, 60)))
    time.sleep(0.2)  # calls already running finish; cancelled ones never start
    assert sum(len(g.ran) for g in graphs) < 10  # of 59: without the cancel all 59 run


def test_one_session_runs_in_the_callers_thread():
    seen: list[str] = []
    sessions = _Sessions([FakeGraph("only")])
    sessions.map(lambda graph, call: seen.append(threading.current_thread().name), [1, 2, 3])
    assert seen == [threading.current_thread().name] * 3


@pytest.fixture(scope="module")
def pairs() -> list[tuple[str, str]]:
    documents = [
        json.loads(line)["text"] for line in (SAMPLE / "corpus.jsonl").read_text(encoding="utf-8").splitlines()
    ]
    questions = [
        json.loads(line)["question"] for line in (SAMPLE / "golden.jsonl").read_text(encoding="utf-8").splitlines()
    ]
    return [(questions[i % len(questions)], documents[(7 * i) % len(documents)][:1200]) for i in range(10)]


def test_the_cross_encoder_loads_one_one_thread_session_per_thread():
    encoder = models.load_cross_encoder(threads=2)
    assert len(encoder._sessions.graphs) == 2
    assert [g.session.get_session_options().intra_op_num_threads for g in encoder._sessions.graphs] == [1, 1]


def test_pooled_cross_encoder_logits_equal_one_sessions_bit_for_bit(pairs):
    pooled = models.load_cross_encoder(threads=2).score_pairs(pairs)
    spec = model_catalog._SPECS[models.CROSS_ENCODER_NAME]
    alone = models.CrossEncoder(spec, threads=1, pooled=False).score_pairs(pairs)
    assert np.array_equal(pooled, alone)
    assert len(set(pooled.tolist())) == len(pairs)  # ten different pairs, ten different logits: order matters
