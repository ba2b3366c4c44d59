"""Progress that tells the truth (issue 23): a first line says what will run; every bar frame carries
its label from the first; a new stage starts a new bar, so its ETA is its own rate; the library draws
the same bar when asked (``progress=True``)."""
from __future__ import annotations

import io
import re

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
    evaluate(ListTarget("t", ANSWERS, held={"alpha"}), golden(tmp_path), progress=ProgressBar(stream=stream),
             timed=8)

    shown = frames(stream.getvalue())

    assert shown[0] == ("running 3 setups on 12 questions: each setup times up to 8 searches side by side with the "
                        "others (at least 6; fewer than 10 only when they are slow), the others in one batch")
    bars = [f for f in shown[1:] if "%|" in f]
    # the side-by-side pass is one stage of every setup (one bar, not one per search); each batch is its setup's
    together = [f for f in bars if f.startswith("[3 setups] ")]
    assert {f.split(":")[0] for f in together} == {"[3 setups] warming up", "[3 setups] timing searches side by side"}
    alone = [f for f in bars if f not in together]
    assert alone and all(re.match(r"^\[[123]/3\] t\.[a-z]+\.[a-z0-9]+: \S", f) for f in alone), alone[:3]


def test_a_new_stage_starts_its_own_bar_so_its_rate_is_its_own():
    bar = ProgressBar(stream=io.StringIO())
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
    bar = ProgressBar(stream=stream, heartbeat=0.05)
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
