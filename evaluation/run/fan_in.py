"""What a run in parts makes of its fan-out's answers: which setups failed, and why, and which ranked.

A run done in parts (``app_run``) ranks every shard of every setup as its own step, in parallel, each
retried on passing faults by whatever schedules it: Durable Functions' retry options in the Function
App's orchestrator, a Map state's ``Retry`` in the AWS flow's state machine. Both hand the answers
here, so one rule says what a failure means: a shard whose step still failed after its retries makes
its setup failed with that reason, kept in the report and never picked; a setup whose search failed
inside a shard (the step answered ``ok: false``) holds its error in its entry; only the setups whose
every shard searched are timed. Pure data: no I/O, no clock.
"""
from __future__ import annotations

from typing import Any, Iterable, Mapping, Sequence

REASON_LENGTH = 300  # a failed step's reason, as kept in the report: its first line, cut here


def first_line(error: object) -> str:
    """The first line of a failed step's reason (a stack trace may follow it), cut to ``REASON_LENGTH``."""
    lines = [line.strip() for line in str(error).strip().splitlines()]
    text = next((line for line in lines if line), "")
    return (text or (type(error).__name__ if isinstance(error, BaseException) else "no reason given"))[:REASON_LENGTH]


def shard_outcomes(keys: Sequence[str], shards: Mapping[str, int], answers: Iterable[Mapping[str, Any]], *,
                   attempts: int) -> tuple[dict[str, str], list[str]]:
    """``({key: why}, [ranked keys])`` from one answer per (setup, shard) step: ``{"key", "shard", "ok"}``
    when the step answered, ``{"key", "shard", "failed": reason}`` when it still failed after ``attempts``.

    ``why`` names the first failed shard of the setup (``shard 2 of 3 failed after 3 attempts: ...``);
    ranked keys are in ``keys`` order: every shard answered and searched without error. A setup with no
    shard at all (every question's result reused) ranked. A failed setup is in neither list's good side:
    it is never timed, and the report keeps it failed with its reason.
    """
    failures: dict[str, str] = {}
    searched = {key: True for key in keys}
    for answer in sorted(answers, key=lambda a: (str(a["key"]), int(a["shard"]))):
        key, shard = answer["key"], int(answer["shard"])
        if "failed" in answer:
            failures.setdefault(key, f"shard {shard + 1} of {shards[key]} failed after {attempts} attempts: "
                                     f"{first_line(answer['failed'])}")
        elif not answer["ok"]:
            searched[key] = False
    return failures, [key for key in keys if searched[key] and key not in failures]


def timing_failures(keys: Iterable[str], reason: object) -> dict[str, str]:
    """``{key: why}`` for every setup of a timed pass whose step still failed after its retries: none of
    them has times, so none is picked."""
    return {key: f"the timed pass failed: {first_line(reason)}" for key in keys}
