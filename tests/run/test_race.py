"""The race on a run (``run.race``, ``run.local_race``): the costly setups race, the cheap ones search every
question; a setup shown beyond the picks' largest allowance stops, is never ranked or picked, and is
kept with the questions it searched; the picks are the exhaustive run's; a run killed midway resumes
from its work folder and gives the same report."""
from __future__ import annotations

import itertools
import json
import random

import pytest

from evaluation import evaluate
from evaluation.run import assemble_report, plan_run
from evaluation.run.race import plan_race, race_order, stopped_entry
from evaluation.scoring.picks import allowed_shortfall
from evaluation.scoring.racing import Comparison
from evaluation.target import Setup

from fakes import ListTarget, write_golden

N = 200
RERANKED = "t.hybrid_reranked.m"


class Costly(ListTarget):
    """An embedded target's four kinds of setup: BM25, dense and hybrid cost milliseconds a question, the
    reranked one a cross-encoder's seconds (``shards.estimated_seconds``), so it alone races."""

    engine = "embedded"

    def setups(self):
        return [Setup(self.name, self.engine, "keyword"), Setup(self.name, self.engine, "dense", ("m",)),
                Setup(self.name, self.engine, "hybrid", ("m",)),
                Setup(self.name, self.engine, "hybrid", ("m",), ranker="cross-encoder",
                      options={"rerank_candidates": 30})]


def rows(n=N):
    return [{"id": f"q{i}", "question": f"where is d{i}", "expected": [f"d{i}"]} for i in range(n)]


def answers(shares, n=N, seed=0):
    """Per method, each question found first or not at all, by the share of questions each finds."""
    rng = random.Random(seed)
    return {method: {f"where is d{i}": ([f"d{i}"] if rng.random() < share else []) for i in range(n)}
            for method, share in shares.items()}


FAR_BEHIND = {"keyword": 0.85, "dense": 0.85, "hybrid": 0.9, "hybrid_reranked": 0.2}
BEHIND = {**FAR_BEHIND, "hybrid_reranked": 0.55}  # stopped at the 7th look of 20, after 6 batches of its own


def ticking():
    ticks = itertools.count()
    return lambda: next(ticks) * 0.001


def run(tmp_path, shares=FAR_BEHIND, *, target=None, run_id="r1", **options):
    target = target or Costly("t", answers(shares), held={f"d{i}" for i in range(N)})
    return evaluate(target, write_golden(tmp_path, rows()), created_at="2026-12-01T00:00:00Z", run_id=run_id,
                    timed=10, clock=ticking(), **options), target


# -- what races, in what order, by what margin ------------------------------------------------------

def plan_of(tmp_path, n=N, **settings):
    target = Costly("t", answers(FAR_BEHIND, n), held={f"d{i}" for i in range(n)})
    return plan_run(target, write_golden(tmp_path, rows(n)), timed=10, **settings)


def test_only_the_costly_setup_races_and_the_cheap_ones_are_its_comparators(tmp_path):
    race = plan_race(plan_of(tmp_path))
    assert race.raced == (RERANKED,)
    assert race.fully_run == ("t.keyword.bm25", "t.dense.m", "t.hybrid.m")
    assert race.family == 1  # one comparison: against the fully-run setup that finds the most


def test_the_margin_is_the_largest_allowance_of_the_picks_in_whole_questions(tmp_path):
    # best_for_time may pick a setup 8 points behind if it is the fastest there: only more than that rules
    # a setup out of every pick. 8 points of 200 questions are 16; balance's 4 would be 8
    assert plan_race(plan_of(tmp_path)).margin == allowed_shortfall(8, N) == 16
    assert plan_race(plan_of(tmp_path, balance=10, time_points=8)).margin == 20  # the larger of the two
    assert plan_race(plan_of(tmp_path, balance=2.5, time_points=3)).margin == 6  # floor(3 / 100 * 200)


def test_no_race_when_asked_for_every_setup_on_every_question_or_when_no_stop_could_save_a_search(tmp_path):
    assert plan_race(plan_of(tmp_path, exhaustive=True)) is None
    assert plan_race(plan_of(tmp_path, n=5)) is None  # one look, at every question: nothing to save


def test_the_order_is_the_timed_sample_then_the_rest_shuffled_by_the_seed_alone(tmp_path):
    plan = plan_of(tmp_path)
    order = race_order(plan)
    assert sorted(order) == sorted(q.id for q in plan.questions)  # each question once
    assert order[:10] == list(plan.timed_question_ids)  # the reranked setup's first six timed searches come first
    assert race_order(plan.with_start("another", "2030-01-01T00:00:00Z")) == order
    other = plan_of(tmp_path, seed=1)
    assert race_order(other) != order and sorted(race_order(other)) == sorted(order)


# -- a race run by evaluate ----------------------------------------------------------------------------

def test_a_costly_setup_far_behind_is_stopped_never_picked_and_kept_with_the_questions_it_searched(tmp_path):
    report, target = run(tmp_path)

    race = report["race"]
    assert race["stopped"] == [RERANKED]
    entry = next(s for s in report["setups"] if s["key"] == RERANKED)
    stopped = entry["stopped"]
    assert entry["summary"] is None and entry["rank"] is None and entry["error"] is None
    assert RERANKED not in report["picks"].values()
    assert RERANKED not in report["frontier"] and all(RERANKED not in tier for tier in report["ties_on_time"].values())
    # it searched the race order's first questions, every one of them, and no other
    searched = stopped["questions"]
    assert searched == race["order"][:len(searched)] and stopped["drawn"] == len(searched) < N
    assert set(entry["ranks"]) == set(entry["results"]) == set(searched)
    asked = [q for call in target.calls if call[1] == RERANKED for q in ([call[2]] if call[0] == "search" else call[2])]
    assert sorted(asked[1:]) == sorted(f"where is d{q[1:]}" for q in searched)  # after its warm-up search
    # its numbers are over those questions, said so; the interval is over every question, beyond the margin
    assert stopped["summary"]["questions"] == len(searched)
    assert stopped["interval"][0] > stopped["margin"] == 16 and stopped["adjusted_p"] <= 0.05
    assert stopped["comparator"] == "t.hybrid.m"  # the fully-run setup that finds the most
    assert race["searched"][RERANKED] == len(searched) and race["searched"]["t.keyword.bm25"] == N
    assert 0 < race["cost"]["share"] < 1


def test_the_race_names_the_picks_the_exhaustive_run_names_and_the_same_numbers_for_every_setup_that_ran(tmp_path):
    raced, _ = run(tmp_path)
    (tmp_path / "every").mkdir()
    every, _ = run(tmp_path / "every", exhaustive=True)

    assert raced["picks"] == every["picks"] and "race" not in every
    ran = {s["key"]: s for s in raced["setups"] if not s.get("stopped")}
    assert len(ran) == 3
    for entry in every["setups"]:
        if entry["key"] in ran:
            assert ran[entry["key"]] == entry


def test_a_costly_setup_as_good_as_the_rest_searches_every_question(tmp_path):
    report, _ = run(tmp_path, {**FAR_BEHIND, "hybrid_reranked": 0.9})
    assert report["race"]["stopped"] == [] and report["race"]["cost"]["share"] == 1.0
    entry = next(s for s in report["setups"] if s["key"] == RERANKED)
    assert entry["summary"]["questions"] == N and "stopped" not in entry


def test_a_stopped_setup_is_never_ranked_or_picked_whatever_its_numbers(tmp_path):
    # run exhaustively, the reranked setup finds every question: the most. Stopped (as a race would have
    # stopped it, had its first questions fallen otherwise), it is no setup that ran
    report, _ = run(tmp_path, {**FAR_BEHIND, "hybrid_reranked": 1.0}, exhaustive=True)
    best = next(s for s in report["setups"] if s["key"] == RERANKED)
    assert best["rank"] == 1 and report["picks"]["finds_the_most"] == RERANKED
    plan = plan_of(tmp_path)
    plan = plan.with_race(plan_race(plan))
    why = Comparison(RERANKED, "t.hybrid.m", 40, 12, 20, 60, 0.001, 0.001, True)
    entries = [s for s in report["setups"] if s["key"] != RERANKED] + [stopped_entry(plan, best, 8, why)]

    assembled = assemble_report(plan, entries)

    assert RERANKED not in assembled["picks"].values() and assembled["picks"]["finds_the_most"] == "t.hybrid.m"
    stopped = next(s for s in assembled["setups"] if s["key"] == RERANKED)
    assert stopped["rank"] is None and stopped["summary"] is None
    assert stopped["stopped"]["summary"]["counts"]["10"] == N  # its numbers kept, under stopped, said so
    assert all(RERANKED not in tier for tier in assembled["ties_on_time"].values())
    assert RERANKED not in assembled["frontier"]


# -- a run killed midway, resumed ---------------------------------------------------------------------

class Killed(Costly):
    """Raises KeyboardInterrupt (as Ctrl-C, or a kill, ends a process) on the reranked setup's ``after``-th
    batch: the run stops mid-race."""

    def __init__(self, *args, after, **kwargs):
        super().__init__(*args, **kwargs)
        self.after, self.batches = after, 0

    def search_batch(self, setup, questions, depth):
        if setup.key == RERANKED:
            self.batches += 1
            if self.batches == self.after:
                raise KeyboardInterrupt
        return super().search_batch(setup, questions, depth)


def test_a_race_killed_midway_resumes_from_its_work_folder_and_gives_the_report_it_would_have(tmp_path):
    held = {f"d{i}" for i in range(N)}
    whole, _ = run(tmp_path, target=Costly("t", answers(BEHIND), held=held), work_dir=tmp_path / "w0")
    work = tmp_path / "work"
    with pytest.raises(KeyboardInterrupt):  # the reranked setup's fourth batch never finishes
        run(tmp_path, target=Killed("t", answers(BEHIND), held=held, after=4), work_dir=work)
    [kept] = work.iterdir()
    done = {qid for path in (kept / "race" / RERANKED).iterdir()
            for qid in json.loads(path.read_text(encoding="utf-8"))["ranks"]}
    assert done and (kept / "times.json").is_file()

    again = Costly("t", answers(BEHIND), held=held)
    resumed = evaluate(again, write_golden(tmp_path, rows()), created_at="2026-12-09T00:00:00Z", run_id="other",
                       timed=10, clock=lambda: 0.0, work_dir=work)

    # the same report, whole: the first run's id and date, its times, the same stop at the same look
    assert json.dumps(resumed, sort_keys=True) == json.dumps(whole, sort_keys=True)
    assert resumed["race"]["stopped"] == [RERANKED]
    # nothing kept was searched again: no timed search, none of the batches finished before the kill
    assert not any(call[0] == "search" for call in again.calls)
    searched_again = {q for call in again.calls if call[1] == RERANKED for q in call[2]}
    assert searched_again and not searched_again & {f"where is d{qid[1:]}" for qid in done}
    assert not work.exists()  # the run's folder, and the work folder it made, went with the report


def test_a_changed_input_starts_afresh_instead_of_resuming(tmp_path):
    held = {f"d{i}" for i in range(N)}
    work = tmp_path / "work"
    with pytest.raises(KeyboardInterrupt):
        run(tmp_path, target=Killed("t", answers(BEHIND), held=held, after=3), work_dir=work)
    report, target = run(tmp_path, target=Costly("t", answers(BEHIND), held=held), work_dir=work, seed=1)
    assert report["rules"]["seed"] == 1 and any(call[0] == "search" for call in target.calls)  # timed afresh


def test_the_progress_says_which_batch_of_the_race_runs_and_moves_for_every_question(tmp_path):
    seen = []
    run(tmp_path, BEHIND, progress=lambda done, total, label: seen.append((done, label)))
    racing = [label for _, label in seen if "racing: batch" in label]
    assert racing and all(label.startswith(f"[4/4] {RERANKED}: racing: batch ") for label in racing)
    assert racing[-1].endswith("of at most 20") and "[4/4] " + RERANKED + ": stopped by the race after batch 7" in [
        label for _, label in seen]
    assert [done for done, _ in seen] == sorted(done for done, _ in seen)  # never backwards
