"""Progress that tells the truth (issues 23 and 42): a first line says what will run; every bar frame carries
its label from the first; a new stage starts a new bar; the time left is the run's, from the work left in
every stage; counts are in words; without a terminal, plain lines instead of frames; the library draws the
same bar when asked (``progress=True``)."""
from __future__ import annotations

import io
import re

import pytest

from evaluation.evaluate import evaluate
from evaluation.progress import ProgressBar

from fakes import ListTarget, write_golden

ANSWERS = {m: {} for m in ("keyword", "dense", "hybrid")}


def frames(text: str) -> list[str]:
    return [f for f in re.split(r"[\r\n]", text) if f.strip()]


def golden(tmp_path):
    return write_golden(tmp_path, [{"id": f"q{i}", "question": f"where is alpha {i}", "expected": ["alpha"]}
                                   for i in range(12)])


def test_the_first_line_says_what_runs_and_every_frame_is_labelled(tmp_path):
    stream = io.StringIO()
    evaluate(ListTarget("t", ANSWERS, held={"alpha"}), golden(tmp_path),
             progress=ProgressBar(stream=stream, plain=False), timed=8)

    shown = frames(stream.getvalue())

    # a fake target's setups cost a request to a service each, so all three race
    assert shown[0] == ("running 3 setups on 12 questions: each searches up to 8 of them one at a time, side by side "
                        "with the others, to time them, and the rest in one batch; the 3 costly ones race in batches, "
                        "each stopped once shown to find more than 8 points fewer than a setup that searches every "
                        "question (--exhaustive: no race)")
    bars = [f for f in shown[1:] if "%|" in f]
    # the side-by-side pass is one stage of every setup (one bar, not one per search); each batch is its setup's
    together = [f for f in bars if f.startswith("[3 setups] ")]
    assert {f.split(":")[0] for f in together} == {"[3 setups] warming up", "[3 setups] timing searches side by side"}
    alone = [f for f in bars if f not in together]
    assert alone and all(re.match(r"^\[[123]/3\] t\.[a-z]+\.[a-z0-9]+: \S", f) for f in alone), alone[:3]


def test_a_new_stage_starts_its_own_bar_so_its_rate_is_its_own():
    bar = ProgressBar(stream=io.StringIO(), plain=False)
    bar(1, 100, "[1/2] t.keyword.bm25: warming up")
    first = bar._bar
    bar(2, 100, "[1/2] t.keyword.bm25: timing searches one by one (1 of at most 8)")
    timing = bar._bar
    bar(3, 100, "[1/2] t.keyword.bm25: timing searches one by one (2 of at most 8)")

    assert timing is not first  # warming up -> timing: a new bar (and rate)
    assert bar._bar is timing  # the count moving on keeps the stage's bar
    assert bar._bar.n == 3 and bar._bar.desc.startswith("[1/2] t.keyword.bm25: timing")
    bar.close()


def test_the_library_draws_the_bar_on_stderr_when_asked(tmp_path, capsys):
    evaluate(ListTarget("t", ANSWERS, held={"alpha"}), golden(tmp_path), progress=True, timed=8)

    err = capsys.readouterr().err
    assert frames(err)[0].startswith("running 3 setups on 12 questions")
    assert "[3/3] t.hybrid.m:" in err


def test_a_bar_is_redrawn_while_a_long_step_runs_so_it_never_sits_silent():
    import time

    stream = io.StringIO()
    bar = ProgressBar(stream=stream, heartbeat=0.05, plain=False)
    bar(1, 10, "[1/1] t.hybrid_reranked.m: the other sampled questions in a batch")
    drawn = len(frames(stream.getvalue()))
    time.sleep(0.5)  # one long batch: no update from the run for 10 heartbeats
    redrawn = len(frames(stream.getvalue()))
    bar.close()
    time.sleep(0.15)
    after_close = len(frames(stream.getvalue()))
    time.sleep(0.15)

    assert redrawn >= drawn + 5  # about one frame a heartbeat, every one still labelled
    assert all(f.startswith("[1/1] t.hybrid_reranked.m:") for f in frames(stream.getvalue())[1:redrawn] if "%|" in f)
    assert len(frames(stream.getvalue())) == after_close  # a closed bar is not redrawn


def test_the_time_left_is_the_runs_work_left_not_the_fast_stages_rate():
    from evaluation.progress import RunWork

    now = [0.0]
    # 36 BM25 questions at 1 ms each, then 36 questions through a cross-encoder at 2.4 s each
    work = RunWork({"keyword": 0.001, "reranked": 2.4}, {"keyword": 36, "reranked": 36},
                   kinds={"keyword": "bm25", "reranked": "cross-encoder"}, clock=lambda: now[0])
    work.advance("keyword", 0)
    for n in range(1, 37):
        now[0] += 0.001
        work.advance("keyword", n)
    # a stage's own rate (the bar before): 36 steps in 0.036 s, so the 36 left "take" 0.036 s
    assert work.left() == pytest.approx(36 * 2.4, rel=0.05)  # the run's: the cross-encoder's 86 s still to come
    for n in range(1, 19):  # half the cross-encoder's questions, each 10% slower than planned
        now[0] += 2.64
        work.advance("reranked", n)
    assert work.left() == pytest.approx(18 * 2.64, rel=0.01)  # its own pace now, not the keyword setup's


def test_batches_answered_from_the_cache_are_seen_to_be_fast_as_soon_as_they_start():
    from evaluation.progress import RunWork

    now = [0.0]
    work = RunWork({"reranked": 2.4}, {"reranked": 36}, timed_steps={"reranked": 7}, clock=lambda: now[0])
    work.advance("reranked", 0, timed=True)
    for n in range(1, 8):  # the warm-up and 6 timed searches, one by one and uncached: 2.4 s each
        now[0] += 2.4
        work.advance("reranked", n, timed=True)
    assert work.left() == pytest.approx(29 * 2.4, rel=0.01)  # nothing known of the batch yet: the timed pace
    for n in range(8, 11):  # the batch from the cache: 10 ms a question
        now[0] += 0.01
        work.advance("reranked", n)
    assert work.left() == pytest.approx(26 * 0.01, rel=0.01)


def test_without_a_terminal_the_bar_writes_a_few_plain_lines_with_words_and_the_time_left(tmp_path):
    stream = io.StringIO()  # not a terminal, as a CI log is not
    evaluate(ListTarget("t", ANSWERS, held={"alpha"}), golden(tmp_path), progress=ProgressBar(stream=stream), timed=8)

    text = stream.getvalue()
    lines = text.splitlines()
    assert "\r" not in text and "%|" not in text  # no frames redrawn in place
    bars = [line for line in lines[1:] if " searches" in line]
    assert bars and all(re.search(r": \d+/\d+ searches, (about \d+:\d\d left|estimating the time left)$", b)
                        for b in bars), bars[:3]
    assert len(lines) < 40  # a line when a stage starts or ends, not one per search (36 searches a setup here)


def test_a_terminal_bar_counts_searches_and_shows_the_runs_time_left(tmp_path):
    stream = io.StringIO()
    evaluate(ListTarget("t", ANSWERS, held={"alpha"}), golden(tmp_path),
             progress=ProgressBar(stream=stream, plain=False), timed=8)

    bars = [f for f in frames(stream.getvalue()) if "%|" in f]
    assert bars and all(" searches [" in f for f in bars)
    assert any(re.search(r"about \d+:\d\d left\]", f) for f in bars)
    assert not any("step" in f for f in bars)


def test_a_reranked_setup_after_its_targets_first_weighs_the_pairs_it_adds_in_its_batch():
    from evaluation.evaluate import SHARED_PAIRS_SHARE, batch_weights
    from evaluation.run.shards import KEYWORD_SECONDS, PAIR_SECONDS, VECTOR_SECONDS

    setups = [{"key": f"t.hybrid_reranked.{m}", "target": "t", "engine": "embedded", "ranker": "cross-encoder",
               "models": [m], "options": {"rerank_candidates": 20}} for m in ("a", "b")]
    setups.append({**setups[0], "key": "u.hybrid_reranked.a", "target": "u"})  # another target scores its own
    weights = batch_weights({"setups": setups})
    base = KEYWORD_SECONDS + VECTOR_SECONDS

    assert weights["t.hybrid_reranked.a"] == pytest.approx(base + 20 * PAIR_SECONDS)
    assert weights["t.hybrid_reranked.b"] == pytest.approx(base + 20 * PAIR_SECONDS * SHARED_PAIRS_SHARE)
    assert weights["u.hybrid_reranked.a"] == weights["t.hybrid_reranked.a"]
