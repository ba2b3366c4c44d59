"""The state machine's Task states (``infra/aws/template.yaml``), one Lambda handler each: decode the
state's input, make one call, encode the answer as small JSON. The steps are the Function App's
activities' (``app.steps``, ``evaluation.run.app_searches``) on the collection's folder in S3, so a
save gives the same report on AWS as on Azure, and as ``python3 -m evaluation evaluate`` on the same files.

Two steps the Durable orchestrator does in its own code are handlers here, because a state machine
cannot compute them: ``name_run`` (the run id, from the moment the state was entered and the
execution's id, the same on every retry) and ``fold_ranks`` (which setups failed and which ranked, from
the Map state's answers, by the library's rule ``evaluation.run.fan_in``).

Errors: a step raises what may pass (S3 out of reach, a model that did not load), and the state's
``Retry`` tries again; what retries cannot mend (a configuration, a golden file with errors) is an
answer, never an exception, as in the Function App.
"""
from __future__ import annotations

import contextlib
import dataclasses
import json
from datetime import datetime
from typing import Any

from app import steps
from app.settings import AppSettings
from app.storage import open_collection_target
from aws.settings import current_settings
from aws.storage import collection_folder, collection_targets
from evaluation.run import app_searches
from evaluation.run.fan_in import shard_outcomes, timing_failures
from evaluation.store.runs import new_run_id
from evaluation.store.s3_folder import S3CollectionFolder
from evaluation.target_specs import TargetSpec


def folder_of(event: dict[str, Any]) -> tuple[AppSettings, S3CollectionFolder]:
    settings = current_settings()
    return settings.app, collection_folder(settings, event["collection"])


def golden_hash(event: dict[str, Any], context: Any = None) -> dict[str, Any]:
    """{collection} -> {"sha256": the golden file's sha256 now, or None} (``app.steps.golden_hash``)."""
    return steps.golden_hash(*folder_of(event))


def keep_golden(event: dict[str, Any], context: Any = None) -> dict[str, Any]:
    """{collection, sha256} -> {"kept": true}, or {"kept": false, "sha256": what it holds now}."""
    return steps.keep_golden(*folder_of(event), event["sha256"])


def name_run(event: dict[str, Any], context: Any = None) -> dict[str, Any]:
    """{entered: the state's EnteredTime, execution: the execution's id} -> {"run_id", "created_at"}: the
    run named by the moment, its unique part from the execution (as the orchestrator's from its
    replay-safe uuid), so a retried state names the same run."""
    moment = datetime.fromisoformat(event["entered"])
    return {"run_id": new_run_id(moment, unique=event["execution"]), "created_at": moment.isoformat()}


def check_golden_copy(event: dict[str, Any], context: Any = None) -> dict[str, Any]:
    """{collection, sha256} -> {"ok", "errors": how many} for the kept copy."""
    _, folder = folder_of(event)
    return steps.check_golden_copy(folder, event["sha256"])


def refuse_run(event: dict[str, Any], context: Any = None) -> dict[str, Any]:
    """{collection, sha256, run_id, created_at, reason | None} -> {"report": the refused run's report}."""
    return steps.refuse_run(*folder_of(event), event)


def plan_evaluation(event: dict[str, Any], context: Any = None) -> dict[str, Any]:
    """{collection, sha256, run_id, created_at, state} -> ``app.steps.plan_evaluation``'s answer with
    ``work``: one ``{"key", "shard"}`` per shard to rank, the items of the Map state; or {"refused": why}.
    Never a race: every setup searches every question (EVALUATION_EXHAUSTIVE is taken as true)."""
    settings, folder = folder_of(event)
    try:
        specs = collection_targets(current_settings(), folder)
    except steps.REFUSALS as err:
        return {"refused": str(err)}
    # The state machine ranks every shard in one Map state: it has no rounds with a look between them
    # (the Function App's race), so the flow searches every setup on every question, as --exhaustive.
    planned = steps.plan_evaluation(dataclasses.replace(settings, exhaustive=True), folder, event, specs)
    if "refused" not in planned:
        planned["work"] = [{"key": key, "shard": shard} for key in planned["setups"]
                           for shard in range(planned["shards"][key])]
    return planned


def _open(settings: AppSettings) -> Any:
    return lambda pinned: open_collection_target(settings, TargetSpec.from_dict(pinned["spec"]), pinned["state"])


def _cores(alone: bool) -> contextlib.AbstractContextManager[Any]:
    # A Lambda environment runs one invocation at a time: a timed pass has its cores to itself already.
    return contextlib.nullcontext()


def rank_shard(event: dict[str, Any], context: Any = None) -> dict[str, Any]:
    """{collection, run_id, key, shard} -> the ranks of that shard of the setup's batch, kept as
    entries/<key>/<shard>.json; {"key", "shard", "ok"} (``app_searches.rank_shard``)."""
    settings, folder = folder_of(event)
    ok = app_searches.rank_shard(folder, event["run_id"], event["key"], event["shard"],
                                 open_target=_open(settings), cores=_cores)
    return {"key": event["key"], "shard": event["shard"], "ok": ok}


def reason_of(cause: Any) -> str:
    """A failed Lambda's reason from the ``Cause`` a Catch hands on (JSON with errorMessage and
    errorType for a function's error; plain text for a timeout or a service fault)."""
    try:
        said = json.loads(cause) if isinstance(cause, str) else cause
    except ValueError:
        return str(cause)
    if isinstance(said, dict):
        return str(said.get("errorMessage") or said.get("errorType") or said)
    return str(cause)


def fold_ranks(event: dict[str, Any], context: Any = None) -> dict[str, Any]:
    """{keys, shards, settled, attempts, answers: the Map state's, one per shard} -> {"failures": {key:
    why}, "ranked": [keys], "timed": [the ranked keys the plan did not settle]} (``fan_in.shard_outcomes``)."""
    answers = [{**answer, "failed": reason_of(answer["failed"])} if "failed" in answer else answer
               for answer in event["answers"]]
    failures, ranked = shard_outcomes(event["keys"], event["shards"], answers, attempts=event["attempts"])
    settled = set(event.get("settled") or ())
    return {"failures": failures, "ranked": ranked, "timed": [key for key in ranked if key not in settled]}


def time_side_by_side(event: dict[str, Any], context: Any = None) -> dict[str, Any]:
    """{collection, run_id, keys, part} -> one part of every setup's timed pass side by side, at most
    about EVALUATION_SHARD_SECONDS of rounds; {"done", "part", "next_part", "round": rounds so far}."""
    settings, folder = folder_of(event)
    done, rounds = app_searches.time_side_by_side(folder, event["run_id"], event["keys"], event["part"],
                                                  open_target=_open(settings), cores=_cores,
                                                  seconds=settings.shard_seconds)
    return {"done": done, "part": event["part"], "next_part": event["part"] + 1, "round": rounds}


def save_report(event: dict[str, Any], context: Any = None) -> dict[str, Any]:
    """{collection, sha256, run_id, failures, timed, timing_failed: {} or a Catch's error, reused_ranks,
    settled} -> {"saved": true, "report"} or {"saved": false, "sha256": what the golden file holds now}.
    A timed pass that failed after its retries fails every setup it timed (``fan_in.timing_failures``)."""
    failures = dict(event.get("failures") or {})
    failed = event.get("timing_failed") or {}
    if "Cause" in failed or "Error" in failed:
        reason = reason_of(failed.get("Cause") or failed.get("Error"))
        failures.update(timing_failures(event.get("timed") or (), reason))
    return steps.save_report(*folder_of(event), {**event, "failures": failures})


def discard_run_files(event: dict[str, Any], context: Any = None) -> dict[str, Any]:
    """{collection, run_id} -> delete the run's working files: {"discarded": how many}."""
    _, folder = folder_of(event)
    return steps.discard_run_files(folder, event["run_id"])
