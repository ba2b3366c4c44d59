"""``evaluate_golden``: one run of a collection's golden version, from the debounce to the saved report.

1. Wait ``debounce_seconds`` on a durable timer (a save from ``golden_changed``; none for
   ``evaluate_now``), then re-read the golden file's hash: a newer save replaced it -> "superseded"
   (that save's own run covers it).
2. Keep the golden bytes once as ``golden_dataset/<sha256>.jsonl``; every later step reads that copy.
3. Check it: errors -> the run is refused, and the refusal (every error by line) is saved where runs
   are read. Plan it: a configuration that cannot run -> refused the same way.
4. Rank every setup's batch, one activity per (setup, shard), all in parallel: the plan cut each
   setup's questions into shards of a few minutes' work (``evaluation.run.shards``), so no activity
   runs long and a recycled instance costs one shard. Each is retried on passing faults; a shard that
   still fails makes its setup failed with the reason (kept, never picked), and the fan-in never
   fails because of it. Questions whose results the newest run searched on the same state are in
   no shard (``evaluation.run.reuse``): a setup with none left has no activity.
5. Time every setup that ranked side by side (``time_side_by_side``: question by question on every
   setup in a rotating order, so load falls on all alike and their times compare in pairs), alone on
   an instance's cores, in parts of at most EVALUATION_SHARD_SECONDS, one after another until the
   pass is done (a recycled instance costs one part; each part resumes where the last stopped). A
   setup the plan settled (its times and its sampled questions' results reused) is not timed. A run
   planned before side-by-side timing (its plan's answer has no ``side_by_side``: in flight across a
   deploy) times one setup per activity, one after another, as it began (``time_setup``).
6. With a judge set (the plan says ``judge``), judge the holes (``activities.judging``): plan the
   judging (the report joined and kept), grade the calibration labels in parts at once, ask the gate,
   and only when the judge's kappa passes grade the holes in parts at once. A refusal or a part whose
   retries run out never sinks the run: it is saved with the people's numbers and says why.
7. Save the report (its judged block with it), unless the golden file changed meanwhile (no older
   report over a newer save); discard the run's working files.

A plan with a race (its answer has ``race``: the costly setups race, ``evaluation.run.race``) times
first (step 5, every setup side by side), then ranks in rounds: round 1 holds every shard of the
setups that search every question and the raced setups' first batch; after each round but the last a
``race_look`` decides, from the run's working files alone, which raced setups go on; the next round
holds the next batch of those. A stopped setup's later shards never run. The decision is an
activity's answer in the history, so a replay or a restarted host schedules the same rounds, and
``save_report`` replays the same race from the same files.

Deterministic: no I/O, no clock but ``context.current_utc_datetime``, no randomness (the run id's
unique part is ``context.new_uuid()``, the same on every replay), no settings. Payloads are collection names, keys,
hashes and short sentences.
"""
from __future__ import annotations

from datetime import timedelta
from typing import Any, Callable, Generator

import azure.durable_functions as df
from azure.durable_functions.models.Task import TaskState

from activities.golden import check_golden_copy, golden_hash, keep_golden, refuse_run
from activities.judging import judge_part, judging_gate, plan_holes
from activities.report import discard_run_files, save_report
from activities.planning import plan_evaluation
from activities.searches import race_look, rank_shard, time_setup, time_side_by_side
from evaluation.run.fan_in import first_line, shard_outcomes, timing_failures
from evaluation.store.runs import new_run_id

bp = df.Blueprint()

# A passing fault (storage, a model load, an instance recycled) gets two more tries, each 5 s after the
# failed one (Python's retry options carry no backoff: the extension's coefficient of 1 applies).
RETRY = df.RetryOptions(first_retry_interval_in_milliseconds=5_000, max_number_of_attempts=3)
FAN_IN_GROUPS = 32  # the rank fan-in waits on at most this many groups of shards (``_wait_for_every``)


@bp.orchestration_trigger(context_name="context", input_type=dict)
def evaluate_golden(context: df.DurableOrchestrationContext) -> Generator[Any, Any, dict]:
    job = context.get_input()
    collection, sha256 = job["collection"], job["sha256"]
    ends = {"collection": collection, "sha256": sha256}

    def status(stage: str, text: str, **more: Any) -> None:
        context.set_custom_status({"stage": stage, "text": text, **more})

    if job.get("debounce_seconds"):
        until = context.current_utc_datetime + timedelta(seconds=job["debounce_seconds"])
        status("waiting", f"waiting until {until.isoformat()} for more saves")
        yield context.create_timer(until)

    status("checking", "checking the golden file")
    now = yield context.call_activity_with_retry(golden_hash, RETRY, {"collection": collection})
    if now["sha256"] != sha256:
        status("superseded", "a newer save replaced the golden file")
        return {**ends, "outcome": "superseded", "by": now["sha256"]}
    kept = yield context.call_activity_with_retry(keep_golden, RETRY, {"collection": collection, "sha256": sha256})
    if not kept["kept"]:
        status("superseded", "a newer save replaced the golden file")
        return {**ends, "outcome": "superseded", "by": kept["sha256"]}

    run = {"collection": collection, "sha256": sha256,
           "run_id": new_run_id(context.current_utc_datetime, unique=context.new_uuid()),
           "created_at": context.current_utc_datetime.isoformat()}
    checked = yield context.call_activity_with_retry(check_golden_copy, RETRY, {"collection": collection,
                                                                                "sha256": sha256})
    if not checked["ok"]:
        return (yield from _refuse(context, run, None, ends, f"the golden file has {checked['errors']} error(s)"))
    planned = yield context.call_activity_with_retry(plan_evaluation, RETRY, {**run, "state": job.get("state")})
    if "refused" in planned:  # nothing was written yet: no working files to discard
        return (yield from _refuse(context, run, planned["refused"], ends, planned["refused"]))

    try:
        saved = yield from _run_setups(context, run, planned, status)
    except Exception:
        yield from _discard(context, run)  # a step still failed after its retries: the run ends Failed
        raise
    yield from _discard(context, run)
    if not saved["saved"]:
        status("superseded", "a newer save replaced the golden file while the setups ran")
        return {**ends, "outcome": "superseded", "by": saved["sha256"], "run_id": run["run_id"]}
    status("saved", f"report saved as {saved['report']}")
    return {**ends, "outcome": "saved", "run_id": run["run_id"], "report": saved["report"]}


def _run_setups(context: df.DurableOrchestrationContext, run: dict, planned: dict,
                status: Any) -> Generator[Any, Any, dict]:
    """Rank in parallel, time side by side (or one after another, for plans from before), save: what
    ``save_report`` answered. A setup the plan ``settled`` (times and sampled questions' results reused)
    has no timed pass."""
    if planned.get("race"):
        return (yield from _race_setups(context, run, planned, status))
    failures, ranked = yield from _rank_all(context, run, planned["setups"], planned["shards"], status)
    settled = set(planned.get("settled") or ())  # plans made before warm saves had none
    timed = [key for key in ranked if key not in settled]
    if planned.get("side_by_side"):
        yield from _time_side_by_side(context, run, timed, failures, status)
    else:  # a plan answered before side-by-side timing: its run replays the actions it began with
        yield from _time_one_by_one(context, run, timed, failures, status)
    job = {**run, "failures": failures, "reused_ranks": planned.get("reused_ranks") or [],
           "settled": [key for key in ranked if key in settled]}
    if planned.get("judge"):
        job = {**job, "judged": True, **(yield from _judge_holes(context, job, status))}
    status("saving", "saving the report")
    return (yield context.call_activity_with_retry(save_report, RETRY, job))


def _judge_holes(context: df.DurableOrchestrationContext, job: dict, status: Any) -> Generator[Any, Any, dict]:
    """Plan the judging, grade the calibration's parts at once, ask the gate, grade the holes' parts at once:
    {} when done (or refused: the plan kept why), {"judging_failed": why} when a step's retries ran out."""
    status("judging", "planning the judging of the holes")
    try:
        planned = yield context.call_activity_with_retry(plan_holes, RETRY, job)
    except Exception as err:  # noqa: BLE001 - retries exhausted: saved unjudged, saying why, never lost
        return {"judged": False, "judging_failed": f"planning the judging failed: {first_line(err)}"}
    if "refused" in planned:
        return {}
    where = {"collection": job["collection"], "sha256": job["sha256"], "run_id": job["run_id"]}
    for stage in ("calibration", "holes"):
        if stage == "holes":
            gate = yield context.call_activity_with_retry(judging_gate, RETRY, where)
            if not gate["counted"]:
                return {}
        tasks = [context.call_activity_with_retry(judge_part, RETRY, {**where, "stage": stage, "part": part})
                 for part in range(planned[stage])]

        def progress(done: int, stage: str = stage, parts: int = len(tasks)) -> None:
            status("judging", f"judging the {stage}: {done} of {parts} parts done", done=done, parts=parts)

        yield from _wait_for_every(context, tasks, progress)
        failed = next((task for task in tasks if task.state is TaskState.FAILED), None)
        if failed is not None:  # the judge stopped answering: the run is saved with the people's numbers
            return {"judging_failed": f"a part of the {stage} failed after {RETRY.max_number_of_attempts} attempts: "
                                      f"{first_line(failed.result)}"}
    return {}


def _race_setups(context: df.DurableOrchestrationContext, run: dict, planned: dict,
                 status: Any) -> Generator[Any, Any, dict]:
    """Time every setup side by side, then rank round by round (see the module docstring), then save:
    what ``save_report`` answered."""
    race, setups, shards = planned["race"], planned["setups"], planned["shards"]
    settled = set(planned.get("settled") or ())
    failures: dict[str, str] = {}
    yield from _time_side_by_side(context, run, [key for key in setups if key not in settled], failures, status)
    raced, rounds = set(race["raced"]), race["rounds"]
    running = [key for key in race["raced"] if key not in failures]
    unsearched: set[str] = set()  # a shard answered that its search failed: its entry says why; no more rounds
    for look in range(1, race["looks"] + 1):
        work = [(key, shard) for key in setups if key not in failures and key not in unsearched
                and (key not in raced or key in running)
                for shard, round_number in enumerate(rounds.get(key, [])) if round_number == look]
        lost, searched = yield from _rank_round(context, run, work, shards, look, race["looks"], status)
        failures.update(lost)
        unsearched.update(key for key, ok in searched.items() if not ok)
        if look < race["looks"] and any(key not in failures and key not in unsearched for key in running):
            status("racing", f"race: deciding after round {look} of {race['looks']}", look=look)
            decided = yield context.call_activity_with_retry(race_look, RETRY, {
                "collection": run["collection"], "run_id": run["run_id"], "look": look, "failures": failures,
                "settled": [key for key in setups if key in settled],
                "reused_ranks": planned.get("reused_ranks") or []})
            running = [key for key in running if key in decided["running"]]
    job = {**run, "failures": failures, "reused_ranks": planned.get("reused_ranks") or [],
           "settled": [key for key in setups if key in settled and key not in failures and key not in unsearched]}
    if planned.get("judge"):
        job = {**job, "judged": True, **(yield from _judge_holes(context, job, status))}
    status("saving", "saving the report")
    return (yield context.call_activity_with_retry(save_report, RETRY, job))


def _rank_round(context: df.DurableOrchestrationContext, run: dict, work: list[tuple[str, int]],
                shards: dict[str, int], look: int, looks: int,
                status: Any) -> Generator[Any, Any, tuple[dict[str, str], dict[str, bool]]]:
    """One round of the race's shards, in parallel: ({key: why} for a setup with a shard whose activity still
    failed after its retries, {key: whether every shard of it this round searched without error})."""
    tasks = [context.call_activity_with_retry(rank_shard, RETRY, {"collection": run["collection"],
                                                                 "run_id": run["run_id"], "key": key, "shard": shard})
             for key, shard in work]

    def progress(done: int) -> None:
        status("running", f"racing: round {look} of {looks}, {done} of {len(tasks)} shards done", done=done,
               shards=len(tasks), look=look)

    yield from _wait_for_every(context, tasks, progress)
    answers = [{"key": key, "shard": shard, "failed": task.result} if task.state is TaskState.FAILED
               else {"key": key, "shard": shard, "ok": task.result["ok"]}
               for (key, shard), task in zip(work, tasks, strict=True)]
    keys = list(dict.fromkeys(key for key, _ in work))
    failures, ranked = shard_outcomes(keys, shards, answers, attempts=RETRY.max_number_of_attempts)
    return failures, {key: key in ranked for key in keys if key not in failures}


def _time_side_by_side(context: df.DurableOrchestrationContext, run: dict, keys: list[str], failures: dict[str, str],
                       status: Any) -> Generator[Any, Any, None]:
    """Time ``keys`` side by side, one part after another until the pass says it is done. A part whose
    retries run out fails every setup of the pass (none has times): ``failures`` says why."""
    part = 0
    while keys:
        status("timing", f"timing {len(keys)} setups side by side, part {part + 1}", part=part, setups=len(keys))
        try:
            answer = yield context.call_activity_with_retry(time_side_by_side, RETRY, {
                "collection": run["collection"], "run_id": run["run_id"], "keys": keys, "part": part})
        except Exception as err:  # noqa: BLE001 - retries exhausted: these setups have no times, so none is picked
            failures.update(timing_failures(keys, err))
            return
        if answer["done"]:
            return
        part += 1


def _time_one_by_one(context: df.DurableOrchestrationContext, run: dict, keys: list[str], failures: dict[str, str],
                     status: Any) -> Generator[Any, Any, None]:
    """Time ``keys`` one ``time_setup`` after another, as runs planned before side-by-side timing do. A
    setup whose retries run out has no times: ``failures`` says why, and the next ones are timed."""
    for n, key in enumerate(keys):
        status("timing", f"timing setup {n + 1} of {len(keys)}, one after another: {key}",
               done=n, setups=len(keys))
        try:
            yield context.call_activity_with_retry(time_setup, RETRY, {"collection": run["collection"],
                                                                       "run_id": run["run_id"], "key": key})
        except Exception as err:  # noqa: BLE001 - retries exhausted: this setup has no times, so is never picked
            failures.update(timing_failures([key], err))


def _rank_all(context: df.DurableOrchestrationContext, run: dict, keys: list[str], shards: dict[str, int],
              status: Any) -> Generator[Any, Any, tuple[dict[str, str], list[str]]]:
    """Rank every shard of every setup in parallel: ({key: why} for the setups with a shard whose
    activity still failed after its retries, [the keys whose every shard searched without error]). A
    setup whose search failed is in neither: its entry holds its error. Only the ranked ones are timed."""
    work = [(key, shard) for key in keys for shard in range(shards[key])]
    tasks = [context.call_activity_with_retry(rank_shard, RETRY, {"collection": run["collection"],
                                                                 "run_id": run["run_id"], "key": key, "shard": shard})
             for key, shard in work]

    def progress(done: int) -> None:
        status("running", f"ranking {len(keys)} setups: {done} of {len(tasks)} shards done", done=done,
               shards=len(tasks), setups=len(keys))

    yield from _wait_for_every(context, tasks, progress)
    answers = [{"key": key, "shard": shard, "failed": task.result} if task.state is TaskState.FAILED
               else {"key": key, "shard": shard, "ok": task.result["ok"]}
               for (key, shard), task in zip(work, tasks, strict=True)]
    return shard_outcomes(keys, shards, answers, attempts=RETRY.max_number_of_attempts)


def _wait_for_every(context: df.DurableOrchestrationContext, tasks: list,
                    progress: Callable[[int], None]) -> Generator[Any, Any, None]:
    """Wait until every task has completed, passed or failed for good, calling ``progress(done)`` before
    each wait. A task failing never ends the wait (``task_all`` alone would fail at the first).

    The tasks wait in at most ``FAN_IN_GROUPS`` groups, so a replay does work in proportion to the tasks,
    not their square: a ``task_any`` over every pending task after each completion walked all of them
    once per completion, on every replay (``bench/bench_orchestrator_replay.py``). With up to that many
    tasks each is its own group and the status counts them one by one."""
    if not tasks:
        return
    progress(0)
    yield context.task_any(tasks)  # the first wait schedules them all at once, in one episode
    size = -(-len(tasks) // FAN_IN_GROUPS)
    groups = [tasks[start:start + size] for start in range(0, len(tasks), size)]
    waits: list[Any] = [context.task_all(group) for group in groups]
    while True:
        for n, wait in enumerate(waits):
            if wait is not None and wait.is_completed:
                # done, or ended early by a member that failed for good: wait again for the rest of it
                groups[n] = [task for task in groups[n] if not task.is_completed]
                waits[n] = context.task_all(groups[n]) if groups[n] else None
        still = [wait for wait in waits if wait is not None]
        if not still:
            return
        progress(len(tasks) - sum(len(group) for group in groups))
        yield context.task_any(still)


def _discard(context: df.DurableOrchestrationContext, run: dict) -> Generator[Any, Any, None]:
    yield context.call_activity_with_retry(discard_run_files, RETRY, {"collection": run["collection"],
                                                                      "run_id": run["run_id"]})


def _refuse(context: df.DurableOrchestrationContext, run: dict, reason: str | None, ends: dict,
            text: str) -> Generator[Any, Any, dict]:
    context.set_custom_status({"stage": "refused", "text": f"refused: {text}"})
    saved = yield context.call_activity_with_retry(refuse_run, RETRY, {**run, "reason": reason})
    return {**ends, "outcome": "refused", "run_id": run["run_id"], "report": saved["report"]}
