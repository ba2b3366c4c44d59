"""A setup reranked by a cross-encoder is timed on exactly the sample's first six searches, whatever
they take, and the sample's rest is part of its batch, so the Function App ranks it in shards."""
from __future__ import annotations

import itertools
import json
from datetime import datetime, timezone

import pytest

from evaluation import plan_run, run_setup
from evaluation.run.judged import FEWEST_TIMED, batch_ids, timed_ids, untimed_ids
from evaluation.run import (Plan, finish_entries, merge_shards, plan_shards, rank_setup, reused_timing, time_setups,
                            time_state)
from evaluation.target import Setup

from fakes import ANSWERS, ListTarget, through_json, write_golden
from evaluation.run.plan import PlanContext

MOMENT = datetime(2026, 12, 1, 19, 0, tzinfo=timezone.utc)
RERANKED = "t.hybrid_reranked.m"
KEYWORD = "t.keyword.bm25"


class RerankingTarget(ListTarget):
    """ListTarget with a fourth setup reranked by a cross-encoder (its results: hybrid's)."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.answers = {**self.answers, "hybrid_reranked": self.answers["hybrid"]}

    def setups(self):
        return [*super().setups(), Setup(self.name, self.engine, "hybrid", ("m",), ranker="cross-encoder",
                                         options={"rerank_candidates": 30})]


def questions(tmp_path, n):
    return write_golden(tmp_path, [{"id": f"q{i}", "question": f"where is alpha, take {i}", "expected": ["alpha"]}
                                   for i in range(n)])


def steady_clock(step_ms):
    """Every timed search takes ``step_ms`` (start and stop read the clock once each)."""
    reads = itertools.count()
    return lambda: next(reads) * step_ms / 1000


def planned(tmp_path, n=30, **options):
    target = RerankingTarget("t", ANSWERS, held={"alpha"})
    plan = through_json(plan_run(target, questions(tmp_path, n), context=PlanContext(run_id="run-1", created_at=MOMENT),
                                 **{"timed": 20, **options}))
    return target, plan


def singles_and_batched(target, key):
    singles = [q for kind, k, q in target.calls if kind == "search" and k == key]
    batched = [q for kind, k, qs in target.calls if kind == "batch" and k == key for q in qs]
    return singles, batched


@pytest.mark.parametrize("step_ms", [1, 1900, 2100, 6000])
def test_a_reranked_setup_times_exactly_six_searches_whatever_their_pace(tmp_path, step_ms):
    # 1 ms: the margin is 0 at once, yet the floor of 10 would time 10; 1.9 s: under the floor-overrun
    # line (10 x 1.9 = 19 s < the 20 s budget), so the old rule timed 10; 2.1 s and 6 s: over it
    target, plan = planned(tmp_path, only=["hybrid_reranked"])

    entry = run_setup(target, plan, RERANKED, clock=steady_clock(step_ms))

    assert entry["times_ms"] == [float(step_ms)] * FEWEST_TIMED
    singles, batched = singles_and_batched(target, RERANKED)
    assert len(singles) == 1 + 6 and len(batched) == 30 - 6  # the warm-up, 6 timed; the rest in one batch
    sample = list(plan.timed_question_ids)
    timed_texts = [q.question for qid in sample[:6] for q in plan.questions if q.id == qid]
    assert singles[1:] == timed_texts  # the sample's first six, in the sample's order
    assert len(entry["ranks"]) == 30 and entry["summary"]["timed"] == 6


def test_a_setup_without_a_model_reranker_still_times_to_its_floor(tmp_path):
    target, plan = planned(tmp_path, only=["keyword"])  # default floor 10, margin 10%

    entry = run_setup(target, plan, KEYWORD, clock=steady_clock(1900))

    assert len(entry["times_ms"]) == 10  # 1.9 s x 10 = 19 s: the floor fits the 20 s budget


def test_a_sample_smaller_than_six_is_timed_whole(tmp_path):
    target, plan = planned(tmp_path, n=8, timed=4, only=["hybrid_reranked"])

    entry = run_setup(target, plan, RERANKED, clock=steady_clock(2000))

    assert len(entry["times_ms"]) == 4 and timed_ids(plan, RERANKED) == list(plan.timed_question_ids)


def test_the_reranked_batch_holds_the_untimed_questions_and_the_sample_after_its_first_six(tmp_path):
    _, plan = planned(tmp_path)
    sample = list(plan.timed_question_ids)

    assert timed_ids(plan, RERANKED) == sample[:6] and timed_ids(plan, KEYWORD) == sample
    assert batch_ids(plan, KEYWORD) == untimed_ids(plan)
    in_order = [q.id for q in plan.questions if q.id not in set(sample[:6])]
    assert batch_ids(plan, RERANKED) == in_order and len(in_order) == 30 - 6


def test_reranked_shards_hold_the_samples_rest_and_joined_with_the_timed_pass_equal_one_run(tmp_path):
    target, plan = planned(tmp_path)
    whole = run_setup(target, plan, RERANKED, clock=steady_clock(2000))

    shards = plan_shards(plan, most_questions=5)[RERANKED]
    parts = [json.loads(json.dumps(rank_setup(target, plan, RERANKED, questions=ids))) for ids in shards]
    timed = time_setups({"t": target}, plan, [RERANKED], clock=steady_clock(2000))
    entries = finish_entries(plan, {RERANKED: merge_shards(plan, RERANKED, parts)}, timed)
    joined = next(e for e in entries if e["key"] == RERANKED)

    assert sorted(q for s in shards for q in s) == sorted(batch_ids(plan, RERANKED))
    assert len(shards) == 5 and sum(map(len, shards)) == 24  # 30 questions less the six timed, in shards of 5
    assert json.dumps(joined, sort_keys=True) == json.dumps(json.loads(json.dumps(whole)), sort_keys=True)
    assert "cache" not in timed[RERANKED]  # the timed pass batched nothing: its rest is in the shards


def test_a_reranked_timed_pass_searches_nothing_in_a_batch(tmp_path):
    target, plan = planned(tmp_path, only=["hybrid_reranked"])

    time_setups({"t": target}, plan, [RERANKED], clock=steady_clock(3000))

    singles, batched = singles_and_batched(target, RERANKED)
    assert len(singles) == 1 + 6 and batched == []


def test_a_reranked_setups_time_state_hangs_on_its_first_six_sampled_questions_only(tmp_path):
    _, plan = planned(tmp_path)
    sample = list(plan.timed_question_ids)

    def edited(qid):
        changed = plan.to_json()
        for q in changed["questions"]:
            if q["id"] == qid:
                q["question"] += " (asked otherwise)"  # its text, so its sha256, changed
        return Plan.from_json(changed)

    assert time_state(edited(sample[6]), RERANKED) == time_state(plan, RERANKED)  # not timed: no new times
    assert time_state(edited(sample[5]), RERANKED) != time_state(plan, RERANKED)
    assert time_state(edited(sample[6]), KEYWORD) != time_state(plan, KEYWORD)  # it may time all 20


def test_a_reranked_setup_is_settled_when_its_six_timed_questions_are_reused(tmp_path):
    _, plan = planned(tmp_path)
    sample = list(plan.timed_question_ids)
    times = {"times_ms": [2000.0] * 6, "timed_in": "run-0", "time_state": time_state(plan, RERANKED)}
    rows = {qid: [["alpha:0", "alpha", None, 1.0]] for qid in sample[:6]}
    ranks = {"rank_state": "s", "results": rows, "ranked_in": {qid: "run-0" for qid in rows}}

    settled = reused_timing(plan, RERANKED, times, ranks)

    assert settled is not None and sorted(settled["judged"]["ranks"]) == sorted(sample[:6])
    assert reused_timing(plan, KEYWORD, times, ranks) is None  # its timed pass may search all 20
