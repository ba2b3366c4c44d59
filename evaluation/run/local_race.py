"""Every setup's batch in one process, racing the costly ones (``race``): what ``evaluate`` and the
command line do once the timed pass is done.

The setups that run every question search their whole batch at once, as a run without a race
does; then the raced setups search the race's batches one look at a time, every setup still
running searching the same questions, and after each batch the race's decisions are replayed
(``race.replay``) from everything searched so far: a setup shown to be beyond the picks' largest
allowance stops, the others go on. With ``work`` (a ``WorkFolder``, or anything with ``get(name)`` and
``put(name, value)``) each finished step is kept there as it ends and taken from there instead of
searched again, so a run killed midway resumes where it stopped and decides the same: every decision
is a function of the kept results alone.
"""
from __future__ import annotations

from typing import Any, Mapping, Protocol

from ..target import Target
from .judged import batch_ids
from .one_setup import joined, rank_part
from .planned import Plan
from .race import planned_race, raced_through, replay, stopped_entry
from .searching import Counter
from .shards import look_questions, merge_shards


class Work(Protocol):
    """Where finished steps are kept (``work_folder.WorkFolder``): plain JSON by name."""

    def get(self, name: str) -> Any: ...

    def put(self, name: str, value: Any) -> None: ...


def batch_name(setup_key: str) -> str:
    """The kept name of a fully-run setup's whole batch."""
    return f"entries/{setup_key}"


def look_name(setup_key: str, look: int) -> str:
    """The kept name of a raced setup's batch before look ``look``."""
    return f"race/{setup_key}/{look}"


def rank_planned(targets: Mapping[str, Target], plan: Plan, times: Mapping[str, Mapping[str, Any]], *,
                 counters: Mapping[str, Counter], work: Work | None = None) -> list[dict[str, Any]]:
    """One entry per planned setup, in plan order, from the timed pass's ``times`` (``time_setups``):
    each setup's batch searched (raced ones look by look, see the module docstring), joined with its
    times; a setup whose timed pass or search failed is failed; one the race stopped is ``stopped``."""
    raced = plan.raced_keys
    entries: dict[str, dict[str, Any]] = {}
    for planned in plan.setups:
        key = planned.key
        if key in raced:
            continue
        target, timed, counter = targets[planned.target], times[key], counters[key]
        part = None
        if "times_ms" in timed:
            part = _kept(work, batch_name(key),
                         lambda target=target, key=key, counter=counter: rank_part(target, plan, key,
                                                                                   batch_ids(plan, key), counter),
                         counter)
        entries[key] = joined(plan, key, part, timed, counter)
    if plan.race is not None:
        entries.update(_race(targets, plan, times, entries, counters, work))
    return [entries[key] for key in plan.setup_keys]


def _race(targets: Mapping[str, Target], plan: Plan, times: Mapping[str, Mapping[str, Any]],
          fully_run: Mapping[str, dict[str, Any]], counters: Mapping[str, Counter],
          work: Work | None) -> dict[str, dict[str, Any]]:
    """The raced setups' entries: their batches look by look until each stops or the order ends."""
    race = planned_race(plan)
    failed: dict[str, dict[str, Any]] = {}
    parts: dict[str, list[dict[str, Any]]] = {}
    for key in race.raced:
        if "times_ms" in times[key]:
            parts[key] = []
        else:
            failed[key] = joined(plan, key, None, times[key], counters[key])
    ranks = {key: dict(entry.get("ranks") or {}) for key, entry in fully_run.items() if entry.get("error") is None}
    broken = {key for key, entry in fully_run.items() if entry.get("error") is not None}
    for key in parts:
        ranks[key] = dict(times[key]["judged"]["ranks"])
    state = replay(plan, ranks, through=0, failed=broken | set(failed))
    for look in range(1, len(race.looks) + 1):
        for key in state.running:
            if key in failed:
                continue
            target, counter = targets[plan.setup(key).target], counters[key]
            stage = f"racing: batch {look} of at most {len(race.looks)}"
            part = _kept(work, look_name(key, look),
                         lambda target=target, key=key, counter=counter, look=look, stage=stage: rank_part(
                             target, plan, key, look_questions(plan, key, look), counter, stage), counter)
            if part.get("error") is not None:
                failed[key] = joined(plan, key, merge_shards(plan, key, [*parts[key], part],
                                                             through=raced_through(plan, key, look)),
                                     times[key], counter)
                continue
            parts[key].append(part)
            ranks[key].update(part["ranks"])
        state = replay(plan, ranks, through=look, failed=broken | set(failed))
    found: dict[str, dict[str, Any]] = dict(failed)
    for key, done in parts.items():
        if key in failed:
            continue
        counter = counters[key]
        if key in state.stopped:
            look, comparison = state.stopped[key]
            merged = merge_shards(plan, key, done, through=raced_through(plan, key, look))
            counter.stage(f"stopped by the race after batch {look}")
            counter.finish()
            found[key] = stopped_entry(plan, joined(plan, key, merged, times[key], counter), look, comparison)
        else:
            found[key] = joined(plan, key, merge_shards(plan, key, done), times[key], counter)
    return found


def _kept(work: Work | None, name: str, make: Any, counter: Counter) -> dict[str, Any]:
    """The step kept as ``name`` in ``work`` (its questions counted done on ``counter``: the bar moves on
    past what a resumed run takes), or made now and kept there (a failed step is not kept: a resumed run
    tries it again)."""
    if work is not None:
        found = work.get(name)
        if found is not None:
            counter.stage("kept by the run this one resumes")
            counter.advance(len(found.get("ranks") or {}))
            return found
    made = make()
    if work is not None and made.get("error") is None:
        work.put(name, made)
    return made
