"""evaluate_golden's judging of the holes, replayed through the Durable SDK with scripted activities
(``durable_host``, as tests/app/test_orchestrator.py): the calibration's parts fanned out in one episode,
the gate before any hole, the holes' parts fanned out, and a judge that fails or is refused never
sinking the run."""
from __future__ import annotations

import json

import pytest
from test_orchestrator import KEYS, SHARDS, _all_actions, called, names, run

from durable_host import CALL_ACTIVITY_WITH_RETRY, WHEN_ANY

pytestmark = pytest.mark.filterwarnings("error:Potential duplicate Task completion")

JUDGED_PLAN = {"setups": list(KEYS), "shards": dict(SHARDS), "side_by_side": True, "judge": True}


def judged_run(**answers):
    return run(plan_evaluation=lambda job: dict(JUDGED_PLAN),
               plan_holes=answers.pop("plan_holes", lambda job: {"calibration": 2, "holes": 3}),
               judge_part=answers.pop("judge_part", lambda job: {"stage": job["stage"], "part": job["part"],
                                                                 "graded": 100, "stopped": False}),
               judging_gate=answers.pop("judging_gate", lambda job: {"counted": True, "why_not": None}),
               time_side_by_side=lambda job: {"done": True, "part": 0, "round": 3}, **answers)


def test_the_holes_are_judged_after_timing_and_before_the_save():
    host, inst = judged_run()
    order = names(host)
    assert inst.output["outcome"] == "saved"
    assert order.index("time_side_by_side") < order.index("plan_holes") < order.index("judge_part")
    assert order.index("judging_gate") < order.index("save_report")
    parts = [(job["stage"], job["part"]) for _, job in called(host, "judge_part")]
    assert parts == [("calibration", 0), ("calibration", 1), ("holes", 0), ("holes", 1), ("holes", 2)]
    # every calibration part before the gate, every hole part after it
    assert max(i for i, n in enumerate(order) if n == "judge_part" and i < order.index("judging_gate")) < \
        order.index("judging_gate") < min(i for i, n in enumerate(order) if n == "judge_part"
                                          and i > order.index("judging_gate"))
    [(_, save)] = called(host, "save_report")
    assert save["judged"] is True and "judging_failed" not in save


def test_each_stages_parts_are_scheduled_at_once_each_retried():
    host, inst = judged_run()
    for stage, parts in (("calibration", 2), ("holes", 3)):
        first = next(n for n, (_, state) in enumerate(inst.episodes)
                     if any(a.get("functionName") == "judge_part" and f'"{stage}"' in a["input"]
                            for a in _all_actions(state)))
        _, state = inst.episodes[first]
        fan_out = state["actions"][0][-1]  # this episode's one new action: a WhenAny of the retried calls
        assert fan_out["actionType"] == WHEN_ANY and len(fan_out["compoundActions"]) == parts
        calls = _all_actions({"actions": [fan_out]})
        assert [json.loads(a["input"])["part"] for a in calls] == list(range(parts))
        assert {a["actionType"] for a in calls} == {CALL_ACTIVITY_WITH_RETRY}


def test_a_judge_under_the_gate_grades_no_hole():
    host, _ = judged_run(judging_gate=lambda job: {"counted": False, "why_not": "kappa 0.21 ..."})
    assert [job["stage"] for _, job in called(host, "judge_part")] == ["calibration", "calibration"]
    [(_, save)] = called(host, "save_report")
    assert save["judged"] is True


def test_a_refused_judging_is_saved_with_the_peoples_numbers():
    host, inst = judged_run(plan_holes=lambda job: {"refused": "the judge is of the MiniLM family ..."})
    assert "judge_part" not in names(host) and "judging_gate" not in names(host)
    assert inst.output["outcome"] == "saved"
    [(_, save)] = called(host, "save_report")
    assert save["judged"] is True  # the plan kept the report and why: the save reads them


def test_a_judge_that_stops_answering_never_sinks_the_run():
    def judge_part(job):
        if job["stage"] == "holes" and job["part"] == 1:
            raise RuntimeError("the judge at https://x.openai.azure.com answered 503 3 time(s)")
        return {"stage": job["stage"], "part": job["part"], "graded": 100, "stopped": False}

    host, inst = judged_run(judge_part=judge_part)
    assert inst.output["outcome"] == "saved"
    [(_, save)] = called(host, "save_report")
    assert save["judging_failed"].startswith("a part of the holes failed after 3 attempts: RuntimeError: the judge at")


def test_a_judging_that_cannot_be_planned_saves_the_run_unjudged_saying_why():
    def plan_holes(job):
        raise RuntimeError("storage went away")

    host, inst = judged_run(plan_holes=plan_holes)
    assert inst.output["outcome"] == "saved"
    [(_, save)] = called(host, "save_report")
    assert save["judged"] is False and save["judging_failed"].startswith("planning the judging failed")


def test_a_plan_from_before_judging_saves_as_it_began():
    host, _ = run(plan_evaluation=lambda job: {"setups": list(KEYS), "shards": dict(SHARDS), "side_by_side": True},
                  time_side_by_side=lambda job: {"done": True, "part": 0, "round": 3})
    assert not {"plan_holes", "judge_part", "judging_gate"} & set(names(host))
    [(_, save)] = called(host, "save_report")
    assert "judged" not in save
