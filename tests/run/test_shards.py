"""A setup's batch cut into shards (``run.shards``): sized from the setup's cost, and merged back into
exactly the entry one ``rank_setup`` over the whole batch gives."""
from __future__ import annotations

import json
import math
import re
from dataclasses import replace
from datetime import datetime, timezone

import pytest

from conftest import SAMPLES
from evaluation.errors import UsageError
from evaluation.run import (Plan, estimated_seconds, measured_times, merge_shards, plan_run, plan_shards, rank_setup,
                            untimed_ids)
from fakes import ANSWERS, ListTarget, fake_plan, through_json, write_golden
from evaluation.run.plan import PlanContext

MOMENT = datetime(2026, 11, 30, 1, 2, 3, tzinfo=timezone.utc)


def entry_through_json(value):
    return json.loads(json.dumps(value))


BM25 = {"key": "local.keyword.bm25", "engine": "embedded", "models": [], "ranker": None, "options": {}}
DENSE = {"key": "local.dense.bge-small", "engine": "embedded", "models": ["bge-small"], "ranker": None, "options": {}}
RERANKED = {"key": "local.hybrid_reranked.bge-small", "engine": "embedded", "models": ["bge-small"],
            "ranker": "cross-encoder", "options": {"rerank_candidates": 30}}


# -- sizing -------------------------------------------------------------------------------------------

def test_a_reranked_setup_costs_its_candidates_through_the_cross_encoder():
    # 0.001 (BM25) + 1/174 (one query vector) + 30 pairs / 8.5 pairs a second
    assert estimated_seconds(RERANKED) == pytest.approx(0.001 + 1 / 174 + 30 / 8.5)
    assert estimated_seconds(DENSE) == pytest.approx(0.001 + 1 / 174)
    assert estimated_seconds(BM25) == pytest.approx(0.001)


def test_a_reranked_setup_is_cut_into_shards_of_a_few_minutes_and_cheap_ones_stay_whole():
    plan = fake_plan([BM25, DENSE, RERANKED], questions=1006, timed=10)

    shards = plan_shards(plan, shard_seconds=180)

    # the reranked setup times 6 of the 10 sampled: 1,000 questions in its batch x 3.5368 s = 3,536.8 s
    # of reranking -> ceil(3536.8 / 180) = 20 shards of 50
    assert len(shards[RERANKED["key"]]) == math.ceil(1000 * (0.001 + 1 / 174 + 30 / 8.5) / 180) == 20
    assert {len(s) for s in shards[RERANKED["key"]]} == {50}
    # 996 x 6.7 ms = 6.7 s: one shard of the questions outside the sample
    assert shards[BM25["key"]] == shards[DENSE["key"]] == [untimed_ids(plan)] and len(untimed_ids(plan)) == 996


def test_shards_cover_the_batch_once_in_plan_order_with_sizes_one_apart():
    plan = fake_plan([RERANKED], questions=106, timed=10)

    [shards] = plan_shards(plan, shard_seconds=60).values()

    # 100 in the batch (the 96 outside the sample and the 4 sampled after the 6 timed) x 3.5368 s / 60 s
    # = 5.89 -> 6 shards: 100 = 4 x 17 + 2 x 16
    assert [len(s) for s in shards] == [17, 17, 17, 17, 16, 16]
    assert [q for s in shards for q in s] == [f"q{n}" for n in range(6, 106)]


def test_the_newest_runs_measured_time_sizes_the_shards_over_the_estimate():
    plan = fake_plan([DENSE], questions=100, timed=0)

    # measured 900 ms a search: 100 x 0.9 s / 30 s = 3 shards (the estimate, 6.7 ms, gives 1)
    assert len(plan_shards(plan, measured_ms={DENSE["key"]: 900.0}, shard_seconds=30)[DENSE["key"]]) == 3
    assert len(plan_shards(plan, shard_seconds=30)[DENSE["key"]]) == 1


def test_most_questions_bounds_every_shard_and_an_empty_batch_is_one_empty_shard():
    plan = fake_plan([BM25], questions=7, timed=2)
    assert plan_shards(plan, most_questions=2)[BM25["key"]] == [["q2", "q3"], ["q4", "q5"], ["q6"]]

    everything_timed = fake_plan([BM25], questions=3, timed=3)
    assert plan_shards(everything_timed, most_questions=2)[BM25["key"]] == [[]]


@pytest.mark.parametrize("keywords", [{"shard_seconds": 0}, {"shard_seconds": float("nan")}, {"most_questions": -1}])
def test_sizes_no_shard_could_have_are_refused(keywords):
    with pytest.raises(UsageError):
        plan_shards(fake_plan([BM25]), **keywords)


def test_measured_times_are_the_newest_runs_medians_of_setups_that_ran():
    from evaluation.scoring.metrics import timing_summary

    report = {"setups": [{"key": "a", "error": None, "times_ms": [10.0, 15.0], "summary": timing_summary([10.0, 15.0])},
                         {"key": "b", "error": "it broke", "summary": None},
                         {"key": "c", "error": None, "summary": {"median_ms": None}}]}
    assert measured_times(report) == {"a": 12.5}
    assert measured_times(None) == {}


# -- merging ------------------------------------------------------------------------------------------

ROWS = [{"id": f"q{n}", "question": text, "expected": [text.split()[2]]} for n, text in enumerate(
    ["where is alpha", "where is beta", "where is gamma", "where is alpha now", "where is beta now"], start=1)]


class CountingTarget(ListTarget):
    """Counts one request per question searched, as a service's target does (``target.Counted``)."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.sent = {}

    def search_batch(self, setup, questions, depth):
        self.sent[setup.key] = self.sent.get(setup.key, 0) + len(questions)
        return super().search_batch(setup, questions, depth)

    def counters(self, setup_key):
        return {"requests": self.sent.get(setup_key, 0), "retries": 0}


def fake_run(tmp_path, broken=()):
    target = CountingTarget("t", ANSWERS, held={"alpha", "beta", "gamma"}, broken=broken)
    plan = through_json(plan_run(target, write_golden(tmp_path, ROWS), timed=1,
                                 context=PlanContext(run_id="run-1", created_at=MOMENT)))
    return target, plan


def test_merged_shards_are_the_unsharded_entry(tmp_path):
    target, plan = fake_run(tmp_path)
    for key in plan.setup_keys:
        whole = entry_through_json(rank_setup(target, plan, key))
        shards = plan_shards(plan, most_questions=2)[key]
        parts = [entry_through_json(rank_setup(target, plan, key, questions=ids)) for ids in shards]

        assert len(shards) == 2 and merge_shards(plan, key, parts) == whole
        assert whole["requests"] == 4 == 2 + 2  # 5 questions, 1 timed; each shard sent 2
        backwards = merge_shards(plan, key, parts[::-1])  # shards may finish in any order
        assert backwards == whole and list(backwards["ranks"]) == list(whole["ranks"]) == untimed_ids(plan)


def test_a_failed_shard_fails_the_setup_with_its_error(tmp_path):
    target, plan = fake_run(tmp_path, broken={"dense"})
    key = "t.dense.m"
    parts = [rank_setup(target, plan, key, questions=ids) for ids in plan_shards(plan, most_questions=2)[key]]

    merged = merge_shards(plan, key, parts)

    assert merged["error"] == "RuntimeError: the service said no" and merged["ranks"] == {}
    assert merged == entry_through_json(rank_setup(target, plan, key))  # as one activity gives it


def test_shards_that_miss_or_repeat_a_question_are_refused(tmp_path):
    target, plan = fake_run(tmp_path)
    key = "t.keyword.bm25"
    first, second = plan_shards(plan, most_questions=2)[key]
    one = rank_setup(target, plan, key, questions=first)

    with pytest.raises(UsageError, match="never"):
        merge_shards(plan, key, [one])
    with pytest.raises(UsageError, match="twice"):
        merge_shards(plan, key, [one, one, rank_setup(target, plan, key, questions=second)])


def test_a_shard_may_hold_only_untimed_questions_each_once(tmp_path):
    target, plan = fake_run(tmp_path)
    timed = plan.timed_question_ids[0]
    with pytest.raises(UsageError, match=f"questions of t.keyword.bm25's batch, each once: {timed}"):
        rank_setup(target, plan, "t.keyword.bm25", questions=[timed])
    again = untimed_ids(plan)[0]
    with pytest.raises(UsageError, match="twice"):
        rank_setup(target, plan, "t.keyword.bm25", questions=[again, again])


@pytest.mark.slow
def test_shards_of_the_real_engine_merged_equal_one_batch_bit_for_bit(sample_index):
    """Every embedded setup (BM25, dense, hybrid, reranked) on the shipped sample: each shard on its own
    target, as each activity opens its own, against one target ranking the whole batch."""
    from evaluation.engine.target import EmbeddedTarget

    def target():  # 5 candidates reranked, not 30: the rule is the same and the test 6x shorter
        return EmbeddedTarget(sample_index, cache=False, rerank_candidates=5)

    plan = through_json(plan_run(target(), SAMPLES / "golden.jsonl", timed=2,
                                 context=PlanContext(run_id="run-1", created_at=MOMENT)))
    plan = replace(plan, questions=plan.questions[:9],  # 9 questions, 2 of them timed: 7 in the batch
                   timed_question_ids=tuple(plan.question_ids[:2]))
    keys = plan.setup_keys
    assert {k.split(".")[1] for k in keys} >= {"keyword", "dense", "hybrid", "hybrid_reranked"}
    for key in keys:
        whole = entry_through_json(rank_setup(target(), plan, key))
        shards = plan_shards(plan, most_questions=3)[key]
        parts = [entry_through_json(rank_setup(target(), plan, key, questions=ids)) for ids in shards]

        assert [len(s) for s in shards] == [3, 2, 2] and whole["error"] is None
        assert json.dumps(merge_shards(plan, key, parts), sort_keys=True) == json.dumps(whole, sort_keys=True), key


# -- bad parts are sentences (issue 46: they raised KeyError, TypeError, AttributeError, OverflowError) --------

def without(part, name):
    return {k: v for k, v in part.items() if k != name}


BAD_PARTS = {  # what a damaged working file or a wrong caller gives, and the words that name it
    "a part that is no object": (lambda one: [None], "shard 1 of 1 of t.keyword.bm25 is not an entry rank_setup "
                                                     "gives (it is null); rank that shard again"),
    "parts that are text": (lambda one: "shards", 'are a list of rank_setup entries, not "shards"'),
    "a part without ranks": (lambda one: [without(one, "ranks")], '"ranks" is null, not an object of question ids'),
    "ranks as a list": (lambda one: [{**one, "ranks": [1]}], '"ranks" is a list of 1 item, not an object'),
    "a part without results": (lambda one: [without(one, "results")], '"results" is null'),
    "results of other questions": (lambda one: [{**one, "results": {}}], '"results" and "ranks" name other questions'),
    "requests as text": (lambda one: [{**one, "requests": "x"}], '"requests" is "x", not a count'),
    "a cache count as text": (lambda one: [{**one, "cache": {"vectors_cached": "x"}}], '"cache" is an object of 1 key'),
    "ranked_in as a list": (lambda one: [{**one, "ranked_in": []}], '"ranked_in" is a list of 0 items'),
    "an error that is no sentence": (lambda one: [{"error": 3}], '"error" is 3, not a sentence'),
}


@pytest.mark.parametrize("case", BAD_PARTS, ids=list(BAD_PARTS))
def test_merging_a_part_that_is_not_a_shards_entry_is_a_sentence_naming_the_shard(tmp_path, case):
    target, plan = fake_run(tmp_path)
    key = "t.keyword.bm25"
    one = entry_through_json(rank_setup(target, plan, key))
    make, says = BAD_PARTS[case]

    with pytest.raises(UsageError, match=re.escape(says)):
        merge_shards(plan, key, make(one))


def test_merging_against_something_that_is_not_a_plan_or_a_key_is_a_sentence(tmp_path):
    target, plan = fake_run(tmp_path)
    one = entry_through_json(rank_setup(target, plan, "t.keyword.bm25"))
    kept = plan.to_json()  # a damaged working file is refused when read, before any step
    for bad, says in ((None, "not a plan of a run (it is null)"),
                      ({}, 'not a plan of a run ("setups" is not a list of setups'),
                      (without(kept, "timed_question_ids"), '"timed_question_ids" is not a list of question ids'),
                      (without(kept, "settings"), '"settings" is missing')):
        with pytest.raises(UsageError, match=re.escape(says)):
            Plan.from_json(bad)
    with pytest.raises(UsageError, match="a setup key is text"):
        merge_shards(plan, None, [one])


def test_reused_results_that_are_not_reusable_ranks_are_a_sentence(tmp_path):
    target, plan = fake_run(tmp_path)
    key = "t.keyword.bm25"
    first, second = plan_shards(plan, most_questions=2)[key]
    rest = entry_through_json(rank_setup(target, plan, key, questions=second))
    held = {"rank_state": "s", "results": {q: [["alpha:0", "alpha", None, 1.0]] for q in first},
            "ranked_in": {q: "run-0" for q in first}}
    assert merge_shards(plan, key, [rest], reused=held)["ranked_in"] == {q: "run-0" for q in first}  # the good one

    for reused, says in (([1], "not an object with"), (without(held, "rank_state"), "not an object with"),
                         ({**held, "ranked_in": {}}, f'"ranked_in" names no run for {", ".join(first)}'),
                         ({**held, "results": {q: "x" for q in first}}, "are not result rows"),
                         ({**held, "results": {q: [[1]] for q in first}}, "are not result rows")):
        with pytest.raises(UsageError, match=re.escape(says)):
            merge_shards(plan, key, [rest], reused=reused)


@pytest.mark.parametrize("keywords, says", [
    ({"measured_ms": [1]}, "measured_ms is an object"),
    ({"measured_ms": {BM25["key"]: "fast"}}, 'measured_ms["local.keyword.bm25"] is "fast"'),
    ({"reused": [1]}, "reused is an object"),
    ({"reused": {BM25["key"]: 1}}, "the reused results of local.keyword.bm25 are not what reuse.reusable_ranks"),
], ids=["measured as a list", "a measured time as text", "reused as a list", "a setup's reused as a number"])
def test_planning_shards_from_inputs_that_are_not_what_they_name_is_a_sentence(keywords, says):
    with pytest.raises(UsageError, match=re.escape(says)):
        plan_shards(fake_plan([BM25]), **keywords)


def test_planning_shards_of_a_plan_that_is_not_one_is_a_sentence():
    kept = fake_plan([DENSE]).to_json()
    fast = {**kept, "setups": [{**kept["setups"][0], "options": "fast"}]}
    for plan, says in ((None, "(it is null)"), ({"setups": [{}]}, '"setups" is not a list of setups'),
                       ({"setups": [BM25]}, '"questions" is not a list of questions'),
                       (fast, "its options must be an object")):
        with pytest.raises(UsageError, match=re.escape(says)):
            Plan.from_json(plan)  # a plan is read, and refused, where it enters the process
    says = 'rerank_candidates is "x", not a whole number of candidates from 1'
    with pytest.raises(UsageError, match=re.escape(says)):
        plan_shards(fake_plan([{**RERANKED, "options": {"rerank_candidates": "x"}}]))


def test_a_measured_time_that_is_no_measurement_sizes_shards_from_the_estimate():
    plan = fake_plan([DENSE], questions=100, timed=0)
    for value in (float("inf"), float("nan"), 0.0, -5.0):  # inf raised OverflowError
        assert plan_shards(plan, measured_ms={DENSE["key"]: value}, shard_seconds=30) == plan_shards(
            plan, shard_seconds=30)
