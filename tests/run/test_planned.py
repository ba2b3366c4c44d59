"""The plan as a typed record (``run.planned.Plan``): its JSON is the shape plans were always kept in, read
back into the same object, and a plan made in the process hands its ``Question`` objects to every step
without a detour through dicts."""
from __future__ import annotations

import json
import re
from dataclasses import replace
from pathlib import Path

import pytest

import evaluation.run.planned as planned
from evaluation.errors import UsageError
from evaluation.golden import Question
from evaluation.run import (Plan, PlanContext, PlannedRace, PlannedSetup, assemble_report, plan_run, planned_setup,
                            rank_setup, run_setup)
from evaluation.run.race import plan_race
from fakes import ANSWERS, ListTarget, through_json, write_golden
from test_race import FAR_BEHIND, Costly, answers, rows

KEPT = Path(__file__).resolve().parent.parent / "fixtures" / "plan" / "kept_plan.json"
# kept_plan_raced.json: written by plan_run and plan_race as they were while the race was a dict, on twelve
# questions (the fewest on which a stop can come before the last look): three cheap setups, one reranked
KEPT_RACED = KEPT.with_name("kept_plan_raced.json")
GRADED = [{"id": "a", "question": "where is alpha", "expected": {"alpha": 2, "beta": 0}},
          {"id": "b", "question": "where is beta", "expected": ["beta"], "evidence": ["beta lives here"]},
          {"id": "c", "question": "where is gamma", "expected": {"gamma": 1, "delta": 3}}]


def kept_bytes(data) -> str:
    """A working file's bytes, as ``WorkFolder.put`` and ``CollectionFolder.write_work`` write JSON."""
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"))


def graded_plan(tmp_path, **settings) -> Plan:
    target = ListTarget("t", ANSWERS, held={"alpha", "beta", "gamma"})
    return plan_run(target, write_golden(tmp_path, GRADED), context=PlanContext(run_id="run-kept",
                    created_at="2026-11-30T01:02:03Z"), **{"timed": 2, "seed": 7, **settings})


def test_a_plan_kept_before_the_record_existed_reads_back_and_writes_the_same_bytes():
    # kept_plan.json: written by plan_run and plan_race as they were before Plan (graded labels, a quote,
    # a missing document, no race), as a working file holds it
    raw = KEPT.read_text(encoding="utf-8")
    plan = Plan.from_json(json.loads(raw))

    assert kept_bytes(plan.to_json()) == raw
    assert plan.question("a").grades == (("alpha", 2), ("beta", 0)) and plan.setup("t.dense.m").models == ("m",)


def test_a_plan_made_now_is_kept_in_the_shape_plans_were_kept_in(tmp_path):
    plan = graded_plan(tmp_path)
    plan = plan.with_race(plan_race(plan))
    made = plan.to_json()
    made["golden"]["source"] = "golden.jsonl"  # the fixture was made in another folder

    assert kept_bytes(made) == KEPT.read_text(encoding="utf-8")


def test_the_json_round_trip_gives_an_equal_plan(tmp_path):
    plan = graded_plan(tmp_path)

    assert Plan.from_json(plan.to_json()) == plan
    assert through_json(plan) == plan  # written as text and read back, as a working file
    assert Plan.from_json(plan.to_json()).to_json() == plan.to_json()


def test_a_plan_with_a_race_keeps_its_race_through_json(tmp_path):
    rows = [{"id": f"q{n}", "question": f"where is alpha, take {n}", "expected": ["alpha"]} for n in range(200)]
    plan = plan_run(ListTarget("t", ANSWERS, held={"alpha"}), write_golden(tmp_path, rows), timed=10,
                    context=PlanContext(run_id="run-1", created_at="2026-11-30T01:02:03Z"))
    raced = plan.with_race(plan_race(plan))

    assert raced.race is not None and raced.race.raced  # every ListTarget setup is a remote one: costly
    assert through_json(raced) == raced and through_json(raced).race == raced.race


def test_a_plan_with_a_race_kept_while_the_race_was_a_dict_reads_back_typed_and_writes_the_same_bytes():
    raw = KEPT_RACED.read_text(encoding="utf-8")
    plan = Plan.from_json(json.loads(raw))

    assert kept_bytes(plan.to_json()) == raw  # "points": 8 stays whole, "alpha": 0.05 a float, key order kept
    race = plan.race
    assert isinstance(race, PlannedRace) and race.raced == ("t.hybrid_reranked.m",)
    assert race.fully_run == ("t.keyword.bm25", "t.dense.m", "t.hybrid.m") and race.looks == (5, 10, 12)
    assert race.order[:4] == plan.timed_question_ids  # the timed sample is drawn first
    assert (race.rule.population, race.rule.margin, race.rule.family) == (12, 0, 1)
    assert plan.raced_keys == {"t.hybrid_reranked.m"}


def test_a_plan_with_a_race_made_now_is_kept_in_the_shape_the_dict_was_kept_in(tmp_path):
    n = 12
    target = Costly("t", answers(FAR_BEHIND, n), held={f"d{i}" for i in range(n)})
    plan = plan_run(target, write_golden(tmp_path, rows(n)), timed=4, seed=3,
                    context=PlanContext(run_id="run-raced", created_at="2026-12-01T00:00:00Z"))
    made = plan.with_race(plan_race(plan)).to_json()
    made["golden"]["source"] = "golden.jsonl"  # the fixture was made in another folder

    assert kept_bytes(made) == KEPT_RACED.read_text(encoding="utf-8")


@pytest.mark.parametrize("damage, says", [
    (lambda race: {**race, "order": "q3"}, "its race's \"order\" is \"q3\", not a list of ids"),
    (lambda race: {**race, "looks": [5, 10.5]}, "its race's \"looks\" is a list of 2 items, not a list of question"),
    (lambda race: {**race, "margin": "0"}, "its race's \"margin\" is \"0\", not a whole number"),
    (lambda race: {k: v for k, v in race.items() if k != "alpha"}, "its race's \"alpha\" is null, not a number"),
    (lambda race: {**race, "seconds": {"t.dense.m": "fast"}}, "its race's \"seconds\" is"),
], ids=["order as text", "a look of half a question", "margin as text", "no alpha", "seconds as text"])
def test_a_damaged_race_is_refused_when_the_plan_is_read_with_the_field_named(damage, says):
    kept = json.loads(KEPT_RACED.read_text(encoding="utf-8"))
    with pytest.raises(UsageError, match=re.escape(says)):
        Plan.from_json({**kept, "race": damage(kept["race"])})
    assert Plan.from_json(kept).race is not None  # the undamaged one reads


def test_graded_labels_stay_question_objects_from_the_plan_to_the_report(tmp_path, monkeypatch):
    plan = graded_plan(tmp_path)
    target = ListTarget("t", ANSWERS, held={"alpha", "beta", "gamma"})
    assert all(type(q) is Question for q in plan.questions)
    assert plan.question("a").grades == (("alpha", 2), ("beta", 0))
    assert plan.question("c").grades == (("delta", 3),) and plan.question("c").expected == ("gamma", "delta")

    def no_rows(row):
        raise AssertionError(f"question {row['id']} was made again from a dict")

    monkeypatch.setattr(planned, "question_of_row", no_rows)  # a plan made here is never read from rows
    entries = [run_setup(target, plan, key) for key in plan.setup_keys]
    report = assemble_report(plan, entries)

    assert plan.questions_for(["c"])[0] is plan.question("c")  # the very objects, handed on
    assert {q["id"]: q.get("grades") for q in report["questions"]} == {"a": {"alpha": 2, "beta": 0}, "b": None,
                                                                      "c": {"delta": 3}}


def test_the_planned_setup_and_the_questions_are_found_by_key_and_id_with_the_closest_named(tmp_path):
    plan = graded_plan(tmp_path)

    assert planned_setup(plan, "t.hybrid.m") is plan.setup("t.hybrid.m")
    assert isinstance(plan.setup("t.hybrid.m"), PlannedSetup) and plan.setup("t.hybrid.m").to_json() == {
        "key": "t.hybrid.m", "target": "t", "engine": "test", "method": "hybrid",
        "method_label": "Hybrid: BM25 + m (fused, RRF k=60)", "retrieval": "hybrid", "models": ["m"], "ranker": None,
        "options": {}}
    with pytest.raises(UsageError, match='"t.hybird.m" is not a setup of this plan. Did you mean "t.hybrid.m"'):
        plan.setup("t.hybird.m")
    with pytest.raises(UsageError, match='"z" is not a question of this plan'):
        plan.question("z")
    assert [q.id for q in plan.questions_for(["c", "a"])] == ["a", "c"]  # plan order
    assert plan.rule.by == "doc" and plan.rule.min_grade == 1


def test_the_plans_rule_is_its_settings_judging_rule(tmp_path):
    plan = graded_plan(tmp_path, min_grade=2, rank_among="documents")
    assert (plan.rule.by, plan.rule.rank_among, plan.rule.min_grade) == ("doc", "documents", 2)
    # a question with nothing graded 2 or more is no question at that level: b is left out
    assert plan.question_ids == ["a", "c"]


@pytest.mark.parametrize("damage, says", [
    (lambda kept: {**kept, "setups": [{**kept["setups"][0], "method": None}]},
     'setup "t.keyword.bm25": its "method" is null, not text'),
    (lambda kept: {**kept, "setups": [{**kept["setups"][0], "models": "m"}]}, "its models a list"),
    (lambda kept: {**kept, "timed_question_ids": ["a", "zz"]}, '"timed_question_ids" names questions the plan does '
                                                               "not hold (zz)"),
    (lambda kept: {**kept, "questions": [{"id": "a"}]}, '"questions" is not a list of questions'),
    (lambda kept: {**kept, "run_id": 3}, '"run_id" is 3, not text'),
    (lambda kept: {**kept, "missing": []}, '"missing" is a list of 0 items, not an object'),
    (lambda kept: {**kept, "race": "yes"}, '"race" is "yes", not an object'),
    (lambda kept: {k: v for k, v in kept.items() if k != "settings"}, '"settings" is missing'),
], ids=["a setup's method", "models as text", "a timed id of no question", "a question without text",
        "a run id as a number", "missing as a list", "a race as text", "no settings"])
def test_a_damaged_plan_is_refused_when_read_with_what_is_wrong(damage, says):
    kept = json.loads(KEPT.read_text(encoding="utf-8"))
    with pytest.raises(UsageError, match=re.escape(says)):
        Plan.from_json(damage(kept))


def test_a_plan_made_before_a_setting_existed_gets_its_default_when_read():
    kept = json.loads(KEPT.read_text(encoding="utf-8"))
    del kept["settings"]["equally_fast_ms"]
    assert Plan.from_json(kept).settings.equally_fast_ms == 5.0


def test_a_shard_reads_the_plan_it_was_given_not_a_copy_of_the_golden_file(tmp_path):
    plan = graded_plan(tmp_path, timed=1)
    target = ListTarget("t", ANSWERS, held={"alpha", "beta", "gamma"})
    fewer = replace(plan, questions=plan.questions[:2], timed_question_ids=plan.timed_question_ids[:1])
    entry = rank_setup(target, fewer, "t.keyword.bm25")
    assert sorted(entry["ranks"]) == sorted(set(fewer.question_ids) - set(fewer.timed_question_ids))
