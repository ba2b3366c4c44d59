"""The Function App races as the library does, and a race whose host is killed midway resumes with the same
picks: the real activities against Azurite, evaluate_golden replayed by ``durable_host``, on a target whose
reranked setup costs a cross-encoder's seconds a question (``test_race.Costly``, opened in place of the
collection's index) and finds about half of what the others find over 200 questions.

The app times first, then searches a round of shards per look with a ``race_look`` between rounds; the
report equals ``evaluate``'s on the same golden file with the same clock, the stopped setup's later
shards never run, and a host that dies after a look (its last completion never recorded, so that
activity runs again, as the extension's at-least-once delivery does) is replayed from the kept
history by another host into the same report."""
from __future__ import annotations

import copy
import itertools
import json

import pytest

from durable_host import (TASK_COMPLETED, TASK_FAILED, TASK_SCHEDULED, DurableHost, Work, call_client_function,
                          event_grid, registered)
from triggers.golden_changed import golden_changed

from test_race import BEHIND, N, RERANKED, Costly, answers, rows

pytestmark = [pytest.mark.azurite]

TIMED = 10
SHARD_QUESTIONS = 7  # a batch of 10 questions in two shards
RERANKED_HERE = RERANKED.replace("t.", "local.", 1)


@pytest.fixture
def racing_app(app, monkeypatch):
    from activities import _shared
    from app import settings as app_settings, steps
    from evaluation import evaluate
    from evaluation.run import time_setups_part

    target = Costly("local", answers(BEHIND), held={f"d{i}" for i in range(N)})

    def opened(*args, **kwargs):  # the collection's target, whatever its spec: the costly fake, one for the run
        return target

    monkeypatch.setattr(steps, "open_collection_target", opened)
    monkeypatch.setattr(_shared, "open_collection_target", opened)
    monkeypatch.setenv("EVALUATION_TIMED", str(TIMED))
    monkeypatch.setenv("EVALUATION_SHARD_QUESTIONS", str(SHARD_QUESTIONS))
    app_settings.current_settings.cache_clear()
    app.target = target  # what each activity searched, for the tests to read

    def ticking():  # every timed search takes 1 ms, in the app and in the library: reports compare whole
        ticks = itertools.count()
        return lambda: next(ticks) * 0.001

    monkeypatch.setitem(time_setups_part.__kwdefaults__, "clock", ticking())
    monkeypatch.setitem(evaluate.__kwdefaults__, "clock", ticking())
    return app


def save(app) -> bytes:
    data = "".join(json.dumps(row) + "\n" for row in rows()).encode("utf-8")
    app.save("docs/golden.jsonl", data)
    call_client_function(registered(golden_changed), client=app.client,
                         event=event_grid(app.subject("docs/golden.jsonl"), event_id="ev-1"))
    return data


def the_report(app) -> dict:
    [name] = [n for n in app.names("docs/retrieval/runs/") if n.endswith(".json")]
    return json.loads(app.read(name))


def library_report(app, report: dict, tmp_path) -> dict:
    """``evaluate`` on the same golden bytes, with the app's run id and date."""
    from evaluation import evaluate

    path = tmp_path / "golden.jsonl"
    path.write_bytes(app.read("docs/golden.jsonl"))
    target = Costly("local", answers(BEHIND), held={f"d{i}" for i in range(N)})
    return evaluate(target, path, created_at=report["created_at"], run_id=report["id"], timed=TIMED)


def same_but_where_it_was_read(report: dict, other: dict) -> None:
    """Equal but for where the golden file was read from (a Blob address, a local copy); the app's
    settings are whole numbers where the library's are floats (20 == 20.0)."""
    a, b = copy.deepcopy(report), json.loads(json.dumps(other))
    for one in (a, b):
        one["golden"].pop("source")
    assert a == b


def test_the_app_races_round_by_round_and_reports_what_the_library_reports(racing_app, tmp_path):
    save(racing_app)
    racing_app.host.run()

    report = the_report(racing_app)
    same_but_where_it_was_read(report, library_report(racing_app, report, tmp_path))
    assert report["race"]["stopped"] == [RERANKED_HERE]
    stopped = next(s for s in report["setups"] if s["key"] == RERANKED_HERE)["stopped"]
    log = [(name, job) for _, name, job in racing_app.host.activity_log]
    names = [name for name, _ in log]
    assert names.index("time_side_by_side") < names.index("rank_shard")  # timed first, then the rounds
    looks = [job["look"] for name, job in log if name == "race_look"]
    assert looks == list(range(1, stopped["look"] + 1))  # a look after each round, until it stopped
    reranked_shards = [job["shard"] for name, job in log if name == "rank_shard" and job["key"] == RERANKED_HERE]
    assert reranked_shards == list(range(len(reranked_shards)))  # its shards in order, round by round
    # it searched the questions it is reported with, and no other: its later rounds never ran
    batched = {q for call in racing_app.target.calls if call[0] == "batch" and call[1] == RERANKED_HERE
               for q in call[2]}
    timed = {call[2] for call in [c for c in racing_app.target.calls if c[0] == "search" and c[1] == RERANKED_HERE][1:]}
    # (the first search is the untimed warm-up, on the plan's first question)
    assert batched | timed == {f"where is d{qid[1:]}" for qid in stopped["questions"]}


def run_until(host: DurableHost, done) -> None:
    """Step the host (moving its clock to each next timer) until ``done()``."""
    for _ in range(100_000):
        if done():
            return
        if not host.step():
            host.now = min(w.fire_at for w in host.work if w.kind == "timer")
    raise AssertionError("never got there")


def restarted(host: DurableHost, instance_id: str) -> DurableHost:
    """Another host taking over from ``host``'s kept history, as after a crash: a completion not yet
    recorded in the history is lost, so its activity is sent again (at-least-once)."""
    again = DurableHost(host.orchestrators, host.activities, now=host.now)
    inst = copy.deepcopy(host.instances[instance_id])
    lost = [e for e in inst.inbox if e["EventType"] in (TASK_COMPLETED, TASK_FAILED)]
    inst.inbox = [e for e in inst.inbox if e not in lost]
    scheduled = {e["EventId"]: e for e in inst.history if e["EventType"] == TASK_SCHEDULED}
    again.instances[instance_id] = inst
    again.work = copy.deepcopy([w for w in host.work if w.instance == instance_id]) + [
        Work("activity", instance_id, e["TaskScheduledId"], name=scheduled[e["TaskScheduledId"]]["Name"],
             input=scheduled[e["TaskScheduledId"]]["Input"]) for e in lost]
    return again


def test_a_host_killed_after_a_look_is_taken_over_and_the_race_ends_with_the_same_report(racing_app, tmp_path):
    save(racing_app)
    host = racing_app.host
    [instance_id] = host.instances
    run_until(host, lambda: any(name == "race_look" and job["look"] == 3 for _, name, job in host.activity_log))

    again = restarted(host, instance_id)
    again.run()

    report = the_report(racing_app)
    assert again.instances[instance_id].output["outcome"] == "saved"
    same_but_where_it_was_read(report, library_report(racing_app, report, tmp_path))
    assert report["race"]["stopped"] == [RERANKED_HERE]
    # the look whose answer was lost ran again, and decided the same: no round was searched twice
    retaken = [job["look"] for _, name, job in again.activity_log if name == "race_look"]
    assert retaken[0] == 3
    ranked_before = {(job["key"], job["shard"]) for _, name, job in host.activity_log if name == "rank_shard"}
    ranked_after = {(job["key"], job["shard"]) for _, name, job in again.activity_log if name == "rank_shard"}
    assert ranked_after and not ranked_before & ranked_after
