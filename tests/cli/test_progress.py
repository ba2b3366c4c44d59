"""Progress that tells the truth (issues 23 and 42): a first line says what will run; every bar frame carries
its label from the first; a new stage starts a new bar; the time left is the run's, from the work left in
every stage; counts are in words; without a terminal, plain lines instead of frames; the library draws the
same bar when asked (``progress=True``)."""
from __future__ import annotations

import io
import re

import pytest

from evaluation import evaluate
from evaluation.progress import ProgressBar

from fakes import ListTarget, fake_plan, write_golden

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
    weights = batch_weights(fake_plan(setups))
    base = KEYWORD_SECONDS + VECTOR_SECONDS

    assert weights["t.hybrid_reranked.a"] == pytest.approx(base + 20 * PAIR_SECONDS)
    assert weights["t.hybrid_reranked.b"] == pytest.approx(base + 20 * PAIR_SECONDS * SHARED_PAIRS_SHARE)
    assert weights["u.hybrid_reranked.a"] == weights["t.hybrid_reranked.a"]


@pytest.mark.parametrize("label", ["[11 setups] warming up",
                                   "[9/11] local.hybrid_reranked.bge-small+minilm-l6: searching the other questions "
                                   "in a batch (12 of 36)"])
def test_at_80_columns_a_frame_keeps_its_counts_and_the_time_left_and_has_no_empty_field(label):
    # tqdm cuts a frame too wide at its end, where the time left is: the label is cut instead, in its middle
    from tqdm import tqdm

    from evaluation.progress import fitted, frame_format

    left = "about 12:34 left"
    shown = fitted(label, 407, 80, f" searches [12:34, {left}]")
    frame = tqdm.format_meter(100, 407, 754.0, ncols=80, prefix=shown, bar_format=frame_format(" searches"),
                              postfix=left)
    assert len(frame) <= 80 and frame.endswith("100/407 searches [12:34, about 12:34 left]"), frame
    assert ", ," not in frame and (shown == label or "…" in shown)
    assert shown[:6] == label[:6] and shown[-4:] == label[-4:]  # the setup's number and the stage's end stay


def test_each_stage_counts_in_the_words_of_what_it_counts():
    bar = ProgressBar(stream=io.StringIO())
    assert bar.unit("embedding with bge-small + minilm-l6 at once") == "characters"  # the index: text's characters
    assert bar.unit("[1/8] markdown-1000-h: embedding chunks with bge-small") == "chunks"  # a chunking build's
    assert bar.unit("preparing the index (chunking the corpus)") == "steps"


def test_the_build_line_quotes_a_time_for_this_corpus_not_the_samples(tmp_path):
    from evaluation.cli.common import SAMPLE_BUILD_SECONDS, build_estimate

    sample = tmp_path / "sample.jsonl"
    sample.write_bytes(b"x" * 468_031)
    assert build_estimate(sample, ("bge-small", "minilm-l6")) == "for 468,031 bytes of text about 20-80 s"
    big = tmp_path / "big.jsonl"
    big.write_bytes(b"x" * 4_680_310)  # ten times the sample: 200-800 s, said in minutes
    assert build_estimate(big, ("bge-small", "minilm-l6")).endswith(
        f"about {round(SAMPLE_BUILD_SECONDS[0] * 10 / 60)}-{round(SAMPLE_BUILD_SECONDS[1] * 10 / 60)} min")
    assert build_estimate(sample, ("bge-small",)) == "for 468,031 bytes of text about 10-40 s"  # one model: half
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "a.md").write_bytes(b"y" * 46_803)
    (folder / "page.html").write_bytes(b"z" * 10_000_000)  # not read by a folder corpus: not counted
    assert build_estimate(folder, ("bge-small", "minilm-l6")) == "for 46,803 bytes of text about 2-8 s"


@pytest.mark.parametrize("columns", [80, 120])
def test_an_index_stage_frame_fits_the_terminal_with_its_rate(columns):
    from tqdm import tqdm

    from evaluation.progress import fitted

    label = "embedding with bge-small + minilm-l6 at once"
    shown = fitted(label, 874992, columns, " [12:34<12:34, 9999.99 characters/s]")
    frame = tqdm.format_meter(373880, 874992, 119.0, ncols=columns, prefix=shown, unit=" characters")
    assert len(frame) <= columns and frame.endswith("characters/s]"), frame
    assert (shown == label) == (columns == 120)  # cut only where it must be


def test_a_line_said_on_a_terminal_is_cut_at_its_width(monkeypatch):
    import evaluation.progress as progress

    monkeypatch.setattr(progress, "_columns", lambda stream: 60)
    stream = io.StringIO()
    ProgressBar(stream=stream, plain=False).say("building the index of samples/corpus.jsonl in .index/corpus-a6289ced: "
                                               "first run only (for 468,031 bytes of text about 20-80 s on 2 cores)")
    lines = stream.getvalue().splitlines()
    assert len(lines) == 3 and all(len(line) <= 60 for line in lines) and lines[1].startswith("  ")
