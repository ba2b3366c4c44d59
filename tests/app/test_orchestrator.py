"""evaluate_golden replayed through the Durable SDK from histories built as the extension sends them.

The first test writes its history out by hand; the others let ``durable_host`` append each episode's
events the way the extension does (see its docstring), with scripted activities, so each test tells
one story: what the activities answered, and what the orchestrator scheduled and returned.
"""
from __future__ import annotations

import json
from datetime import timedelta
from itertools import pairwise

import pytest

from durable_host import (CALL_ACTIVITY_WITH_RETRY, CREATE_TIMER, EXECUTION_STARTED, ORCHESTRATOR_STARTED, START,
                          WHEN_ALL, WHEN_ANY, DurableHost, event, orchestration_context, registered, replay)
from orchestrators.evaluate_golden import RETRY, evaluate_golden

# A completion the SDK cannot match to a task (a history with wrong event ids) only warns: fail instead.
pytestmark = pytest.mark.filterwarnings("error:Potential duplicate Task completion")

ORCHESTRATOR = registered(evaluate_golden)
SHA = "a" * 64
NEWER = "b" * 64
KEYS = ["local.keyword.bm25", "local.dense.bge-small", "local.hybrid_reranked.bge-small"]
SHARDS = {KEYS[0]: 1, KEYS[1]: 1, KEYS[2]: 3}  # the reranked setup's batch in three shards
WORK = [(KEYS[0], 0), (KEYS[1], 0), (KEYS[2], 0), (KEYS[2], 1), (KEYS[2], 2)]  # (setup, shard), in fan-out order
SAVED = "docs/retrieval/runs/RUN/report.json"
SAVE_JOB = {"collection": "docs", "sha256": SHA, "debounce_seconds": 60, "trigger": "golden_changed", "state": None}
NOW_JOB = {**SAVE_JOB, "debounce_seconds": 0, "trigger": "evaluate_now", "state": {"local": "f" * 64}}


class Script:
    """Activities that answer as told: a happy run unless a test changes one answer."""

    def __init__(self, **answers):
        self.answers = {
            "golden_hash": lambda job: {"sha256": SHA},
            "keep_golden": lambda job: {"kept": True},
            "check_golden_copy": lambda job: {"ok": True, "errors": 0},
            "plan_evaluation": lambda job: {"setups": list(KEYS), "shards": dict(SHARDS)},
            "rank_shard": lambda job: {"key": job["key"], "shard": job["shard"], "ok": True},
            "time_setup": lambda job: {"key": job["key"], "ok": True},
            "save_report": lambda job: {"saved": True, "report": SAVED.replace("RUN", job["run_id"])},
            "discard_run_files": lambda job: {"discarded": 5},
            "refuse_run": lambda job: {"report": SAVED.replace("RUN", job["run_id"])},
            **answers,
        }

    def host(self) -> DurableHost:
        return DurableHost({"evaluate_golden": ORCHESTRATOR}, self.answers)


def run(job=SAVE_JOB, **answers):
    host = Script(**answers).host()
    host.start_new("evaluate_golden", "golden-docs-aaaaaaaaaaaa-0123", json.dumps(job))
    host.run()
    return host, host.instances["golden-docs-aaaaaaaaaaaa-0123"]


def called(host, name=None):
    return [(n, job) for _, n, job in host.activity_log if name is None or n == name]


def names(host):
    return [n for _, n, _ in host.activity_log]


# -- one history written out by hand ---------------------------------------------------------------

def test_the_first_episode_of_a_save_schedules_only_the_debounce_timer():
    history = [
        {"EventType": ORCHESTRATOR_STARTED, "EventId": -1, "IsPlayed": False, "Timestamp": "2026-11-30T09:00:00.000Z"},
        {"EventType": EXECUTION_STARTED, "EventId": -1, "IsPlayed": False, "Timestamp": "2026-11-30T09:00:00.000Z",
         "Name": "evaluate_golden", "Version": "", "Input": json.dumps(SAVE_JOB), "ParentInstance": None,
         "OrchestrationInstance": {"InstanceId": "golden-docs-x", "ExecutionId": "e1"}, "Tags": None},
    ]

    state = replay(ORCHESTRATOR, orchestration_context(history, "golden-docs-x", json.dumps(SAVE_JOB)))

    assert state["isDone"] is False
    assert state["actions"] == [[{"actionType": CREATE_TIMER, "fireAt": "2026-11-30T09:01:00.000000Z",
                                  "isCanceled": False}]]  # 09:00 + 60 s
    assert state["customStatus"]["stage"] == "waiting"


def test_evaluate_now_skips_the_timer_and_checks_the_golden_file_first():
    history = [event(ORCHESTRATOR_STARTED, START),
               event(EXECUTION_STARTED, START, Name="evaluate_golden", Version="", Input=json.dumps(NOW_JOB),
                     OrchestrationInstance={"InstanceId": "now-docs-x", "ExecutionId": "e1"}, ParentInstance=None)]

    state = replay(ORCHESTRATOR, orchestration_context(history, "now-docs-x", json.dumps(NOW_JOB)))

    [action] = _all_actions(state)  # a retried call comes as a WhenAll of one, as the SDK sends it
    assert (action["actionType"], action["functionName"]) == (CALL_ACTIVITY_WITH_RETRY, "golden_hash")
    assert json.loads(action["input"]) == {"collection": "docs"}
    assert action["retryOptions"] == {"firstRetryIntervalInMilliseconds": 5000, "maxNumberOfAttempts": 3}


# -- stories through the host ------------------------------------------------------------------------

def test_a_newer_save_during_the_debounce_ends_the_run_superseded():
    host, inst = run(golden_hash=lambda job: {"sha256": NEWER})

    assert inst.status == "Completed"
    assert inst.output == {"collection": "docs", "sha256": SHA, "outcome": "superseded", "by": NEWER}
    assert names(host) == ["golden_hash"]  # nothing kept, planned or run
    timer_fired_at = next(e for e in inst.history if e["EventType"] == 11)["Timestamp"]
    assert timer_fired_at == "2026-11-30T09:01:00.000000Z"  # the hash is read after the minute, not before


def test_a_save_between_the_hash_and_the_copy_is_superseded_too():
    host, inst = run(keep_golden=lambda job: {"kept": False, "sha256": NEWER})

    assert inst.output["outcome"] == "superseded" and inst.output["by"] == NEWER
    assert names(host) == ["golden_hash", "keep_golden"]


def test_golden_errors_end_the_run_with_the_refusal_saved_where_runs_are_read():
    host, inst = run(check_golden_copy=lambda job: {"ok": False, "errors": 2})

    [(_, refusal)] = called(host, "refuse_run")
    assert refusal["reason"] is None  # the activity saves the golden file's own errors
    assert inst.output == {"collection": "docs", "sha256": SHA, "outcome": "refused", "run_id": refusal["run_id"],
                           "report": f"docs/retrieval/runs/{refusal['run_id']}/report.json"}
    assert names(host) == ["golden_hash", "keep_golden", "check_golden_copy", "refuse_run"]
    assert inst.custom_status["stage"] == "refused" and "2 error(s)" in inst.custom_status["text"]


def test_a_configuration_that_cannot_run_is_refused_with_its_sentence():
    why = "no targets are configured for collection 'docs'"
    host, inst = run(plan_evaluation=lambda job: {"refused": why})

    [(_, refusal)] = called(host, "refuse_run")
    assert refusal["reason"] == why and inst.output["outcome"] == "refused"
    assert "rank_shard" not in names(host) and "discard_run_files" not in names(host)  # nothing was written


def test_the_fan_out_schedules_one_retried_activity_per_shard_in_one_episode():
    host, inst = run()

    plan_done = next(n for n, (_, state) in enumerate(inst.episodes)
                     if any(a.get("functionName") == "rank_shard" for a in _all_actions(state)))
    _, state = inst.episodes[plan_done]
    fan_out = state["actions"][0][-1]  # this episode's one new action: a WhenAny of the retried calls
    assert fan_out["actionType"] == WHEN_ANY and len(fan_out["compoundActions"]) == 1 + 1 + 3
    calls = _all_actions({"actions": [fan_out]})
    assert [(json.loads(a["input"])["key"], json.loads(a["input"])["shard"]) for a in calls] == WORK
    assert {a["actionType"] for a in calls} == {CALL_ACTIVITY_WITH_RETRY}
    # every action so far: the timer, golden_hash, keep_golden, check_golden_copy, plan_evaluation, the fan-out
    assert len(_all_actions(state)) == 1 + 4 + len(WORK)
    assert len(called(host, "rank_shard")) == len(WORK) == 5


def test_a_warm_save_skips_the_shards_and_timed_passes_the_plan_found_reused():
    # the keyword setup: every question reused and its times too (settled); the dense one: one shard of
    # the changed questions, times reused but not settled; the reranked one: nothing reused
    warm = {"setups": list(KEYS), "shards": {KEYS[0]: 0, KEYS[1]: 1, KEYS[2]: 3}, "reused_ranks": KEYS[:2],
            "settled": [KEYS[0]]}
    host, inst = run(plan_evaluation=lambda job: dict(warm))

    assert [(job["key"], job["shard"]) for _, job in called(host, "rank_shard")] == WORK[1:]
    assert [job["key"] for _, job in called(host, "time_setup")] == KEYS[1:]
    [(_, save)] = called(host, "save_report")
    assert (save["reused_ranks"], save["settled"]) == (KEYS[:2], [KEYS[0]])
    assert inst.output["outcome"] == "saved"
    assert [s["text"] for s in inst.statuses if s["stage"] == "timing"] == [
        f"timing setup {n} of 2, one after another: {key}" for n, key in enumerate(KEYS[1:], start=1)]


def test_a_settled_setup_whose_shard_failed_is_not_passed_as_settled():
    warm = {"setups": list(KEYS), "shards": {KEYS[0]: 1, KEYS[1]: 1, KEYS[2]: 3}, "reused_ranks": [KEYS[0]],
            "settled": [KEYS[0]]}

    def rank(job):
        if job["key"] == KEYS[0]:
            raise RuntimeError("storage went away")
        return {"key": job["key"], "shard": job["shard"], "ok": True}

    host, inst = run(plan_evaluation=lambda job: dict(warm), rank_shard=rank)

    [(_, save)] = called(host, "save_report")
    assert KEYS[0] in save["failures"] and save["settled"] == []


def test_the_whole_path_ends_with_the_saved_report_and_no_working_files():
    host, inst = run()

    assert names(host) == ["golden_hash", "keep_golden", "check_golden_copy", "plan_evaluation",
                           *["rank_shard"] * 5, "time_setup", "time_setup", "time_setup", "save_report",
                           "discard_run_files"]
    [(_, plan)] = called(host, "plan_evaluation")
    assert plan["run_id"].startswith("20261130T090100000Z-")  # planned after the one-minute timer
    assert plan["created_at"] == "2026-11-30T09:01:00+00:00"
    assert [job["key"] for _, job in called(host, "time_setup")] == KEYS  # one activity each, in order
    [(_, save)] = called(host, "save_report")
    assert save == {"collection": "docs", "sha256": SHA, "run_id": plan["run_id"], "created_at": plan["created_at"],
                    "failures": {}, "reused_ranks": [], "settled": []}
    assert inst.output == {"collection": "docs", "sha256": SHA, "outcome": "saved", "run_id": plan["run_id"],
                           "report": f"docs/retrieval/runs/{plan['run_id']}/report.json"}
    stages = [s["stage"] for s in inst.statuses]
    assert stages[0] == "waiting" and stages[-1] == "saved"
    assert [s["text"] for s in inst.statuses if s["stage"] == "running"] == [
        f"ranking 3 setups: {n} of 5 shards done" for n in range(5)]
    assert [s["text"] for s in inst.statuses if s["stage"] == "timing"] == [
        f"timing setup {n} of 3, one after another: {key}" for n, key in enumerate(KEYS, start=1)]
    assert "saving" in stages


def test_the_timed_passes_run_one_after_another_never_two_scheduled_at_once():
    host, inst = run()

    timing = [[a for a in _all_actions(state)[-1:] if a.get("functionName") == "time_setup"]
              for _, state in inst.episodes]
    new_timings = [episode for episode in timing if episode]
    assert len(new_timings) == 3  # each scheduled in its own episode, after the one before completed
    order = [n for _, n, _ in host.activity_log]
    first = order.index("time_setup")
    assert order[first:first + 3] == ["time_setup"] * 3 and "rank_shard" not in order[first:]


def test_a_setup_whose_search_failed_is_kept_but_not_timed():
    host, inst = run(rank_shard=lambda job: {"key": job["key"], "shard": job["shard"],
                                             "ok": (job["key"], job["shard"]) != (KEYS[2], 1)})

    assert [job["key"] for _, job in called(host, "time_setup")] == KEYS[:2]
    [(_, save)] = called(host, "save_report")
    assert save["failures"] == {}  # its shard's entry holds its error
    assert inst.output["outcome"] == "saved"


def test_a_shard_whose_retries_run_out_fails_its_setup_and_the_rest_are_timed_and_saved():
    def rank(job):
        if (job["key"], job["shard"]) == (KEYS[2], 1):
            raise RuntimeError("the instance was recycled")
        return {"key": job["key"], "shard": job["shard"], "ok": True}

    host, inst = run(rank_shard=rank)

    tries = [(job["key"], job["shard"]) for _, job in called(host, "rank_shard")]
    assert tries.count((KEYS[2], 1)) == RETRY.max_number_of_attempts == 3
    assert tries.count((KEYS[2], 0)) == tries.count((KEYS[2], 2)) == 1  # its other shards ran once
    [(_, save)] = called(host, "save_report")
    assert save["failures"] == {KEYS[2]: "shard 2 of 3 failed after 3 attempts: "
                                         "RuntimeError: the instance was recycled"}
    assert [job["key"] for _, job in called(host, "time_setup")] == KEYS[:2]  # the failed setup is not timed
    assert inst.output["outcome"] == "saved"
    retry_timers = [e for e in inst.history if e["EventType"] == 10][1:]  # after the debounce timer
    assert len(retry_timers) == 3  # one after each failed try, the last before the task fails (DTFx)


def test_a_shard_that_passes_on_its_second_try_is_not_a_failure():
    tries = []

    def rank(job):
        tries.append((job["key"], job["shard"]))
        if tries.count((KEYS[2], 2)) == 1 and (job["key"], job["shard"]) == (KEYS[2], 2):
            raise ConnectionError("reset by peer")
        return {"key": job["key"], "shard": job["shard"], "ok": True}

    host, inst = run(rank_shard=rank)

    [(_, save)] = called(host, "save_report")
    assert tries.count((KEYS[2], 2)) == 2 and save["failures"] == {}
    assert [job["key"] for _, job in called(host, "time_setup")] == KEYS
    timer = next(e for e in inst.history if e["EventType"] == 10 and e["EventId"] > 0)
    failed = next(e for e in inst.history if e["EventType"] == 6)
    assert _at(timer["FireAt"]) - _at(failed["Timestamp"]) == timedelta(milliseconds=5000)


def test_a_timed_pass_whose_retries_run_out_fails_that_setup_and_the_next_ones_are_timed():
    def time_one(job):
        if job["key"] == KEYS[1]:
            raise MemoryError("the instance ran out of memory")
        return {"key": job["key"], "ok": True}

    host, inst = run(time_setup=time_one)

    [(_, save)] = called(host, "save_report")
    assert list(save["failures"]) == [KEYS[1]]
    assert save["failures"][KEYS[1]].startswith("the timed pass failed: MemoryError")
    assert [job["key"] for _, job in called(host, "time_setup")] == [KEYS[0], KEYS[1], KEYS[1], KEYS[1], KEYS[2]]


def test_a_save_while_the_setups_ran_gets_no_report_and_its_files_are_discarded():
    host, inst = run(save_report=lambda job: {"saved": False, "sha256": NEWER})

    assert inst.output["outcome"] == "superseded" and inst.output["by"] == NEWER
    assert names(host)[-2:] == ["save_report", "discard_run_files"]


def test_a_step_that_still_fails_ends_the_run_failed_after_discarding_its_files():
    def save(job):
        raise TimeoutError("storage did not answer")

    host, inst = run(save_report=save)

    assert inst.status == "Failed" and "storage did not answer" in inst.error
    assert names(host)[-1] == "discard_run_files"


def test_replaying_every_episode_again_gives_the_same_actions_status_and_output():
    host, inst = run(rank_shard=lambda job: {"key": job["key"], "shard": job["shard"], "ok": job["key"] != KEYS[0]})

    assert len(inst.episodes) > 10
    for context_json, first in inst.episodes:
        again = replay(ORCHESTRATOR, context_json)
        assert again == first


@pytest.mark.parametrize("job", [SAVE_JOB, NOW_JOB], ids=["golden_changed", "evaluate_now"])
def test_the_run_id_is_the_same_on_every_replay_and_differs_between_instances(job):
    host = Script().host()
    for instance in ("golden-docs-1", "golden-docs-2"):
        host.start_new("evaluate_golden", instance, json.dumps(job))
    host.run()

    ids = {inst: {j["run_id"] for i, n, j in host.activity_log if i == inst and "run_id" in j}
           for inst in ("golden-docs-1", "golden-docs-2")}
    assert all(len(found) == 1 for found in ids.values())
    assert ids["golden-docs-1"] != ids["golden-docs-2"]


def _all_actions(state):
    from durable_host import flatten

    return flatten(state.get("actions") or [])


def _at(text):
    from datetime import datetime

    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def test_the_triggers_start_the_orchestrator_by_the_name_it_is_registered_under():
    """``triggers.starting.ORCHESTRATOR`` is read from the orchestrator itself, so a renamed orchestrator
    cannot leave the triggers starting a function that is not there."""
    from triggers import starting

    built = evaluate_golden.build()
    assert starting.ORCHESTRATOR == built.get_function_name() == "evaluate_golden"
    assert [b.type for b in built.get_bindings()] == ["orchestrationTrigger"]


# -- the fan-in at real sizes -----------------------------------------------------------------------

MANY = {KEYS[0]: 1, KEYS[1]: 20, KEYS[2]: 79}  # 100 shards: groups of 4 (FAN_IN_GROUPS 32)


class SlowShards(DurableHost):
    """The host, with the named (setup, shard) activities run last: after every other activity and
    every timer, as a shard on a slow instance finishes after its neighbours' retries ran out."""

    def __init__(self, slow, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.slow = set(slow)

    def _is_slow(self, work):
        if work.kind != "activity" or work.name != "rank_shard":
            return False
        job = json.loads(work.input)
        return (job["key"], job["shard"]) in self.slow

    def step(self):
        held = [w for w in self.work if self._is_slow(w)]
        self.work = [w for w in self.work if w not in held]
        try:
            if super().step():
                return True
        finally:
            self.work += held
        if held and not any(w.kind == "timer" for w in self.work):
            return super().step()  # nothing else is left: the slow ones run now
        return False


def _many(shards=MANY, host_kind=None, slow=(), **answers):
    script = Script(plan_evaluation=lambda job: {"setups": list(KEYS), "shards": dict(shards)}, **answers)
    host = (SlowShards(slow, {"evaluate_golden": ORCHESTRATOR}, script.answers) if slow else script.host())
    host.start_new("evaluate_golden", "golden-docs-many", json.dumps(NOW_JOB))
    host.run()
    return host, host.instances["golden-docs-many"]


@pytest.fixture(scope="module")
def many_shards():
    """One happy 100-shard run, shared: each run replays its whole history once per event."""
    return _many()


def test_one_replay_of_a_large_fan_in_walks_each_shard_a_bounded_number_of_times(monkeypatch, many_shards):
    """A replay's work grows with the shards, not their square: every compound task the orchestrator
    builds while replaying the whole 100-shard history holds, together, at most 3 x 100 + 32 x 32
    children (a task_any over every pending shard after each completion held about 100 x 100 / 2)."""
    from azure.durable_functions.models import Task as sdk_tasks
    from orchestrators.evaluate_golden import FAN_IN_GROUPS

    host, inst = many_shards
    assert inst.output["outcome"] == "saved" and len(called(host, "rank_shard")) == 100
    last = max(inst.episodes, key=lambda episode: len(episode[0]))[0]

    children = []
    built = sdk_tasks.CompoundTask.__init__

    def counting(self, tasks, *args, **kwargs):
        children.append(len(tasks))
        built(self, tasks, *args, **kwargs)

    monkeypatch.setattr(sdk_tasks.CompoundTask, "__init__", counting)
    replay(ORCHESTRATOR, last)
    retried = 100 + 3  # each retried call is a compound of one (the SDK's), and the three timed passes
    assert sum(children) - retried <= 3 * 100 + FAN_IN_GROUPS ** 2


def test_the_group_waits_add_no_action_so_runs_in_flight_replay_across_them(many_shards):
    """The groups wait on shards already scheduled: every episode's actions are the ones a plain
    task_any fan-out gives (one WhenAny of the retried calls, then the timed passes one by one), with
    no WhenAll the extension would have to match against the history."""
    host, inst = many_shards

    def kinds(actions):
        for action in actions:
            if isinstance(action, list):
                yield from kinds(action)
            else:
                yield action["actionType"]
                yield from kinds(action.get("compoundActions") or [])

    last_state = inst.episodes[-1][1]
    found = list(kinds(last_state["actions"]))
    assert found.count(WHEN_ANY) == 1  # the fan-out's
    # the SDK wraps each retried call in a WhenAll of one, as before; no group adds one
    assert found.count(WHEN_ALL) == found.count(CALL_ACTIVITY_WITH_RETRY) == 4 + 100 + 3 + 1 + 1
    # evaluate_now has no timer: golden_hash .. plan_evaluation, the shards, the timed passes, save, discard
    assert len(_all_actions(last_state)) == 4 + 100 + 3 + 1 + 1


def test_a_large_fan_in_reports_progress_in_steps_of_at_most_one_group(many_shards):
    host, inst = many_shards

    done = [s["done"] for s in inst.statuses if s and s.get("stage") == "running"]
    assert done[0] == 0 and done == sorted(done) and done[-1] < 100
    assert max(b - a for a, b in pairwise(done)) <= 4  # a group: ceil(100 / 32) shards
    assert len(set(done)) >= 100 // 4


def test_a_shard_failing_for_good_while_its_group_waits_on_a_slow_one_still_waits_for_it():
    """Shards 0 and 1 of the reranked setup share a group; 0 fails for good (its group's wait ends
    early) while 1, slow, has not finished: the fan-in waits for 1 again, and only the reranked setup
    fails. The dense setup's shard 3, also slow, shares no group with a failure: it is waited for too."""
    def rank(job):
        if (job["key"], job["shard"]) == (KEYS[2], 0):
            raise RuntimeError("the instance was recycled")
        return {"key": job["key"], "shard": job["shard"], "ok": True}

    host, inst = _many(rank_shard=rank, slow=[(KEYS[2], 1), (KEYS[1], 3)])

    log = names(host)
    ranked = [(job["key"], job["shard"]) for _, job in called(host, "rank_shard")]
    assert ranked.count((KEYS[2], 0)) == 3 and len(set(ranked)) == 100
    assert ranked[-2:] == [(KEYS[1], 3), (KEYS[2], 1)]  # the slow ones really came after the failure
    assert log.index("time_setup") > max(n for n, name in enumerate(log) if name == "rank_shard")
    [(_, save)] = called(host, "save_report")
    assert save["failures"] == {KEYS[2]: "shard 1 of 79 failed after 3 attempts: "
                                         "RuntimeError: the instance was recycled"}
    assert [job["key"] for _, job in called(host, "time_setup")] == KEYS[:2]
    assert inst.output["outcome"] == "saved"


def test_a_large_fan_in_whose_shard_passes_on_its_second_try_is_not_a_failure():
    tries = []

    def rank(job):
        tries.append((job["key"], job["shard"]))
        if (job["key"], job["shard"]) == (KEYS[1], 10) and tries.count((KEYS[1], 10)) == 1:
            raise ConnectionError("reset by peer")
        return {"key": job["key"], "shard": job["shard"], "ok": True}

    host, inst = _many(rank_shard=rank, slow=[(KEYS[1], 11)])

    [(_, save)] = called(host, "save_report")
    assert tries.count((KEYS[1], 10)) == 2 and save["failures"] == {}
    assert [job["key"] for _, job in called(host, "time_setup")] == KEYS


# -- side by side (issue 39) ------------------------------------------------------------------------------

def side_by_side_plan(job):
    return {"setups": list(KEYS), "shards": dict(SHARDS), "side_by_side": True}


def parts_until(last):
    """A ``time_side_by_side`` that is done at part ``last``."""
    return lambda job: {"done": job["part"] == last, "part": job["part"], "round": 10 * (job["part"] + 1)}


def test_a_plan_timed_side_by_side_times_every_ranked_setup_in_one_pass_part_after_part():
    host, inst = run(plan_evaluation=side_by_side_plan, time_side_by_side=parts_until(2))

    assert names(host) == ["golden_hash", "keep_golden", "check_golden_copy", "plan_evaluation",
                           *["rank_shard"] * 5, *["time_side_by_side"] * 3, "save_report", "discard_run_files"]
    [(_, plan)] = called(host, "plan_evaluation")
    assert [job for _, job in called(host, "time_side_by_side")] == [
        {"collection": "docs", "run_id": plan["run_id"], "keys": KEYS, "part": n} for n in range(3)]
    [(_, save)] = called(host, "save_report")
    assert save["failures"] == {} and inst.output["outcome"] == "saved"
    assert [s["text"] for s in inst.statuses if s["stage"] == "timing"] == [
        f"timing 3 setups side by side, part {n}" for n in (1, 2, 3)]
    timing = [[a for a in _all_actions(state)[-1:] if a.get("functionName") == "time_side_by_side"]
              for _, state in inst.episodes]
    assert len([episode for episode in timing if episode]) == 3  # each part after the one before completed


def test_side_by_side_leaves_out_settled_setups_and_setups_whose_search_failed():
    warm = {**side_by_side_plan(None), "shards": {KEYS[0]: 0, KEYS[1]: 1, KEYS[2]: 3}, "reused_ranks": KEYS[:1],
            "settled": [KEYS[0]]}
    host, inst = run(plan_evaluation=lambda job: dict(warm), time_side_by_side=parts_until(0),
                     rank_shard=lambda job: {"key": job["key"], "shard": job["shard"], "ok": job["key"] != KEYS[2]})

    assert [job["keys"] for _, job in called(host, "time_side_by_side")] == [[KEYS[1]]]
    assert "time_setup" not in names(host)


def test_a_side_by_side_part_whose_retries_run_out_fails_every_setup_of_the_pass_and_the_run_is_saved():
    def part(job):
        if job["part"] == 1:
            raise MemoryError("the instance ran out of memory")
        return {"done": False, "part": job["part"], "round": 5}

    host, inst = run(plan_evaluation=side_by_side_plan, time_side_by_side=part)

    assert [job["part"] for _, job in called(host, "time_side_by_side")] == [0, 1, 1, 1]  # its retries, then no more
    [(_, save)] = called(host, "save_report")
    assert list(save["failures"]) == KEYS
    assert all(why.startswith("the timed pass failed: MemoryError") for why in save["failures"].values())
    assert inst.output["outcome"] == "saved"


def test_replaying_every_episode_of_a_side_by_side_run_gives_the_same_actions_status_and_output():
    host, inst = run(plan_evaluation=side_by_side_plan, time_side_by_side=parts_until(1))

    for context_json, first in inst.episodes:
        assert replay(ORCHESTRATOR, context_json) == first


def test_a_run_planned_before_side_by_side_timing_still_times_one_setup_per_activity_as_it_began():
    # its plan's answer, already in its history, has no "side_by_side": in flight across a deploy, it
    # replays the actions it scheduled before (one time_setup per setup, one after another)
    host, inst = run(plan_evaluation=lambda job: {"setups": list(KEYS), "shards": dict(SHARDS)},
                     time_side_by_side=parts_until(0))

    assert [job["key"] for _, job in called(host, "time_setup")] == KEYS
    assert "time_side_by_side" not in names(host) and inst.output["outcome"] == "saved"


# -- a race: timed first, then a round of shards per look, a race_look between ------------------------

RACE = {"looks": 3, "raced": [KEYS[2]], "rounds": {KEYS[0]: [1], KEYS[1]: [1], KEYS[2]: [1, 2, 3]}}


def race_plan(job):
    return {"setups": list(KEYS), "shards": dict(SHARDS), "side_by_side": True, "race": RACE}


def stops_at(look):
    """A ``race_look`` that stops the reranked setup at ``look``."""
    return lambda job: {"looked": job["look"], "running": [] if job["look"] >= look else [KEYS[2]],
                        "stopped": {KEYS[2]: {"look": look}} if job["look"] >= look else {}}


def test_a_race_times_every_setup_first_then_ranks_round_by_round_until_its_setup_stops():
    host, inst = run(plan_evaluation=race_plan, time_side_by_side=parts_until(0), race_look=stops_at(2))

    assert names(host) == ["golden_hash", "keep_golden", "check_golden_copy", "plan_evaluation", "time_side_by_side",
                           "rank_shard", "rank_shard", "rank_shard", "race_look", "rank_shard", "race_look",
                           "save_report", "discard_run_files"]
    # round 1: every shard of the setups that search every question and the raced one's first; round 2: its
    # second; stopped at the look after it, its third shard never runs
    assert [(job["key"], job["shard"]) for _, job in called(host, "rank_shard")] == [
        (KEYS[0], 0), (KEYS[1], 0), (KEYS[2], 0), (KEYS[2], 1)]
    [(_, plan)] = called(host, "plan_evaluation")
    assert [job for _, job in called(host, "race_look")] == [
        {"collection": "docs", "run_id": plan["run_id"], "look": n, "failures": {}, "settled": [], "reused_ranks": []}
        for n in (1, 2)]
    [(_, save)] = called(host, "save_report")
    assert save["failures"] == {} and inst.output["outcome"] == "saved"
    assert [s["text"] for s in inst.statuses if s["stage"] == "racing"] == [
        "race: deciding after round 1 of 3", "race: deciding after round 2 of 3"]


def test_a_raced_setup_that_is_never_stopped_runs_every_round_and_no_look_follows_the_last():
    host, inst = run(plan_evaluation=race_plan, time_side_by_side=parts_until(0), race_look=stops_at(99))

    assert [(job["key"], job["shard"]) for _, job in called(host, "rank_shard")][-2:] == [(KEYS[2], 1), (KEYS[2], 2)]
    assert [job["look"] for _, job in called(host, "race_look")] == [1, 2]
    assert inst.output["outcome"] == "saved"


def test_replaying_every_episode_of_a_race_gives_the_same_actions_status_and_output():
    host, inst = run(plan_evaluation=race_plan, time_side_by_side=parts_until(1), race_look=stops_at(2))

    for context_json, first in inst.episodes:
        assert replay(ORCHESTRATOR, context_json) == first


def test_a_raced_setup_whose_timed_pass_failed_for_good_is_never_ranked():
    def part(job):
        raise MemoryError("the instance ran out of memory")

    host, inst = run(plan_evaluation=race_plan, time_side_by_side=part, race_look=stops_at(2))

    assert "rank_shard" not in names(host) and "race_look" not in names(host)
    [(_, save)] = called(host, "save_report")
    assert list(save["failures"]) == KEYS and inst.output["outcome"] == "saved"
