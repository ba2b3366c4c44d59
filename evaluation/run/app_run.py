"""A run done in parts, as the Function App does it: planned in one call, joined in one call.

``plan_app_run`` is step 1 with a warm save's rules: the plan (``plan_run``), what the collection's
newest report lets this run reuse (times: ``retime``; results: ``reuse``), each setup's shards of
what is left to search (``shards``), and the setups that need no timed pass at all. Between the two,
one activity ranks each shard (``rank_setup(..., questions=)``) and one times each setup that is not
settled (``time_setups``). ``join_app_run`` then joins what they kept into the report: each setup's
shards merged with its reused results (``merge_shards``), its times live or reused
(``reused_timing``), the setups that failed said so (``finish_entries``), ranked (``assemble_report``).

``AppPlan`` holds the ``Plan`` and four plain JSON values, so an activity only decodes its job, opens
what it needs, makes one of these calls and writes or encodes the answer; reading and writing the
working files (the plan as its JSON: ``work_files``) is the caller's. How a run in parts is planned is
one ``AppRunSettings`` (``app_run_settings``), which the planning activity builds from the app's settings.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

from ..golden import Golden
from ..settings import EvaluationSettings
from ..store.shape import Report
from ..target import Target
from .app_run_settings import AppRunSettings
from .assemble import assemble_report
from .one_setup import finish_entries
from .plan import PlanContext, plan_run
from .planned import Plan
from .race import RaceState, plan_race, planned_race, raced_through, replay, stopped_entry
from .retime import reusable_times
from .reuse import reusable_ranks, reused_ids, reused_part, reused_timing
from .shards import measured_times, merge_shards, plan_shards, shard_rounds


@dataclass(frozen=True)
class AppPlan:
    """What ``plan_app_run`` gives: the plan, and plain JSON data for the other working files or an answer.

    ``plan``: ``plan_run``'s, its race planned. ``shards``: ``plan_shards``' (setup key -> lists of question ids).
    ``reused_times``: ``reusable_times``' (setup key -> times an earlier run measured live).
    ``reused_ranks``: ``reusable_ranks``' (setup key -> results an earlier run searched).
    ``settled``: the setup keys, in plan order, whose times and sampled questions' results are all
    reused, which need no timed pass. ``rounds``: ``shard_rounds``' (setup key -> the round of each of
    its shards): with a race (``plan.race``) a round of shards per look, every other shard in round 1.
    """

    plan: Plan
    shards: dict[str, list[list[str]]]
    reused_times: dict[str, dict[str, Any]]
    reused_ranks: dict[str, dict[str, Any]]
    settled: list[str]
    rounds: dict[str, list[int]] = field(default_factory=dict)


def plan_app_run(targets: Target | Sequence[Target], golden: Golden | str | Path, *,
                 newest: Mapping[str, Any] | None, context: PlanContext | None = None,
                 settings: AppRunSettings | EvaluationSettings | None = None, **keywords: Any) -> AppPlan:
    """Plan a run to be done in parts, with what ``newest`` (the collection's newest report, or None)
    lets it reuse; ``plan_run``'s arguments (``context``: the run's id and date, ``held_before``, ``warn``,
    ``fetcher``; and the settings' ``only``, ``skip`` and ``evaluation``) go to it unchanged, and so do
    its errors, raised before any search.

    How the run is planned is ``settings``: an ``AppRunSettings``, or the ``EvaluationSettings`` alone;
    any field of either (``retime``, ``retime_max_days``, ``shard_seconds``, ``most_questions``,
    ``only``, ``skip``, ``timed``, ``by``, ...) may be given as a keyword instead, over ``settings``.

    The newest report says how long each setup's searches took (``measured_times``: the shards'
    sizes, at most ``shard_seconds`` of work and ``most_questions`` questions each, 0: no bound), which
    setups it timed live on the same index state (their times are reused unless ``retime`` is
    ``"always"`` or they are older than ``retime_max_days``), and which questions' results it searched
    under the same ranking state (``run.reuse``: left out of the shards, reused when the parts are
    joined; also unless ``retime`` is ``"always"``). ``retime="always"`` (the app's
    ``EVALUATION_RETIME=always``) searches and times everything live. Which expected documents the
    newest run found on each target comes as ``context.held_before`` (``evaluate.held_in_report(newest)``,
    from the layer above), so the run can say "no longer holds" as the command line does.
    """
    options = AppRunSettings.of(settings, **keywords)
    context = context or PlanContext()
    plan = plan_run(targets, golden, only=options.only, skip=options.skip, settings=options.evaluation,
                    context=context)
    plan = plan.with_race(plan_race(plan))  # the costly setups race, a round of shards per look, as evaluate races
    live = options.retime == "always"  # every search and every time live
    times = {} if live else reusable_times(plan, newest, max_age_days=options.retime_max_days, warn=context.warn)
    ranks = {} if live else reusable_ranks(plan, newest)
    shards = plan_shards(plan, measured_ms=measured_times(newest), reused=ranks, shard_seconds=options.shard_seconds,
                         most_questions=options.most_questions)
    settled = [key for key in plan.setup_keys
               if reused_timing(plan, key, times.get(key), ranks.get(key)) is not None]
    return AppPlan(plan=plan, shards=shards, reused_times=times, reused_ranks=ranks, settled=settled,
                   rounds=shard_rounds(plan, shards))


def join_app_run(plan: Plan, *, shard_entries: Mapping[str, Sequence[Mapping[str, Any]]],
                 times: Mapping[str, Mapping[str, Any] | None] | None = None,
                 reused_ranks: Mapping[str, Mapping[str, Any] | None] | None = None,
                 reused_times: Mapping[str, Mapping[str, Any]] | None = None, settled: Iterable[str] = (),
                 failures: Mapping[str, str] | None = None, owned: bool = False) -> Report:
    """The report of a run done in parts, from what its parts kept (the inputs are not changed, unless
    ``owned``: the caller gives ``shard_entries`` and ``reused_ranks`` away, as ``save_report`` does with
    what it decoded from the working files, and the report takes their values without copying them).

    ``shard_entries``: per setup key, the entries ``rank_setup`` gave for its shards (any order; none
    for a setup whose every question was reused). ``reused_ranks``: ``AppPlan.reused_ranks`` as kept
    (None for a setup whose reused results are no longer there: merging then says which questions have
    none). ``times``: per setup key, what its timed pass gave (``time_setups``), None or absent when it
    never ran. ``settled`` and ``reused_times``: ``AppPlan``'s; a settled setup had no timed pass and
    takes its times and sample's results from those (``reused_timing``). ``failures``: per setup key,
    why one of its activities still failed after its retries.

    A setup in ``failures`` is reported failed with that reason and never picked, whatever its shards
    hold; a setup whose search failed in a shard, with that shard's error; a setup with no times, with
    "its timed pass never ran" (``finish_entries``). The others are ranked as one run of
    ``run_setup`` per setup would rank them: merged shards are exactly the entry one batch gives.
    """
    failures = dict(failures or {})
    reused_ranks = reused_ranks or {}
    ranked, timed = _fully_run(plan, shard_entries, times or {}, reused_ranks, reused_times or {}, set(settled),
                               failures, owned)
    stopped: dict[str, Any] = {}
    if plan.race is not None:  # the costly setups, their batches merged as far as each searched
        ranks, failed = _race_ranks(plan, shard_entries, reused_ranks, ranked, timed, failures)
        state = replay(plan, ranks, through=len(plan.race.looks), failed=failed)
        ranked.update(_raced_entries(plan, shard_entries, reused_ranks, failures, failed, state, owned))
        stopped = state.stopped
    # the merged entries are this call's own (merge_shards copies what it takes from the parts), so
    # they are finished and assembled in place, not copied twice more
    entries = [stopped_entry(plan, entry, *stopped[entry["key"]]) if entry["key"] in stopped and entry["error"] is None
               else entry for entry in finish_entries(plan, ranked, timed, failures, owned=True)]
    return assemble_report(plan, entries, owned=True)


def race_look_of_parts(plan: Plan, *, look: int, shard_entries: Mapping[str, Sequence[Mapping[str, Any]]],
                       times: Mapping[str, Mapping[str, Any] | None] | None = None,
                       reused_ranks: Mapping[str, Mapping[str, Any] | None] | None = None,
                       reused_times: Mapping[str, Mapping[str, Any]] | None = None, settled: Iterable[str] = (),
                       failures: Mapping[str, str] | None = None) -> dict[str, Any]:
    """The race's decisions once its rounds up to ``look`` have searched (``race.RaceState.to_dict``: the
    setups still running, and each stopped one's look and comparison), from what the run's parts kept,
    as ``join_app_run`` takes them: the Function App's look between two rounds. The same replay
    ``join_app_run`` makes at the end, so the report stops the setups the rounds stopped."""
    failures = dict(failures or {})
    reused_ranks = reused_ranks or {}
    ranked, timed = _fully_run(plan, shard_entries, times or {}, reused_ranks, reused_times or {}, set(settled),
                               failures, False)
    ranks, failed = _race_ranks(plan, shard_entries, reused_ranks, ranked, timed, failures)
    return replay(plan, ranks, through=look, failed=failed).to_dict()


def _fully_run(plan: Plan, shard_entries: Mapping[str, Sequence[Mapping[str, Any]]],
               times: Mapping[str, Mapping[str, Any] | None], reused_ranks: Mapping[str, Mapping[str, Any] | None],
               reused_times: Mapping[str, Mapping[str, Any]], settled: set[str], failures: Mapping[str, str],
               owned: bool) -> tuple[dict[str, dict[str, Any]], dict[str, Mapping[str, Any]]]:
    """(each setup's merged shards but the raced ones', every setup's times: live, or reused for a settled one)."""
    raced = plan.raced_keys
    ranked = {key: merge_shards(plan, key, list(parts), reused_ranks.get(key), owned=owned)
              for key, parts in shard_entries.items() if key not in failures and key not in raced}
    timed: dict[str, Mapping[str, Any]] = {}
    for key in shard_entries:
        if key in failures or (key in ranked and ranked[key]["error"] is not None):
            continue
        found = (reused_timing(plan, key, reused_times.get(key), reused_ranks.get(key)) if key in settled
                 else times.get(key))
        if found is not None:
            timed[key] = found
    return ranked, timed


def _race_ranks(plan: Plan, shard_entries: Mapping[str, Sequence[Mapping[str, Any]]],
                reused_ranks: Mapping[str, Mapping[str, Any] | None], ranked: Mapping[str, dict[str, Any]],
                timed: Mapping[str, Mapping[str, Any]],
                failures: Mapping[str, str]) -> tuple[dict[str, dict[str, Any]], set[str]]:
    """What the race replays from (``race.replay``): each setup's first relevant positions so far (its
    timed pass, its shards, a warm save's reused results judged again), and the setups that failed."""
    race = planned_race(plan)
    keys = [key for key in race.raced if key in shard_entries and key not in failures]
    failed = set(failures) | {key for key, entry in ranked.items() if entry["error"] is not None}
    failed |= {key for key in [*ranked, *keys] if key not in timed or "times_ms" not in timed[key]}
    failed |= {key for key in keys if any(part.get("error") is not None for part in shard_entries[key])}
    ranks = {key: {**timed[key]["judged"]["ranks"], **entry["ranks"]} for key, entry in ranked.items()
             if key not in failed}
    for key in keys:
        if key in failed:
            continue
        ranks[key] = dict(timed[key]["judged"]["ranks"])
        for part in shard_entries[key]:
            ranks[key].update(part["ranks"])
        reused = reused_ranks.get(key)
        taken = reused_ids(plan, key, reused)
        if reused and taken:  # a warm save's unchanged questions: results the earlier run searched, judged again
            ranks[key].update(reused_part(plan, key, reused, taken)["ranks"])
    return ranks, failed


def _raced_entries(plan: Plan, shard_entries: Mapping[str, Sequence[Mapping[str, Any]]],
                   reused_ranks: Mapping[str, Mapping[str, Any] | None], failures: Mapping[str, str],
                   failed: set[str], state: RaceState, owned: bool) -> dict[str, dict[str, Any]]:
    """The raced setups' merged entries: a setup the race stopped over the batches it searched (its later
    shards never ran), one that failed over what it searched (its entry or its times say why)."""
    found = {}
    for key in planned_race(plan).raced:
        if key not in shard_entries or key in failures:
            continue
        through = raced_through(plan, key, state.stopped[key][0]) if key in state.stopped else None
        if key in failed:
            through = [qid for part in shard_entries[key] for qid in part.get("ranks") or {}]
        found[key] = merge_shards(plan, key, list(shard_entries[key]), reused_ranks.get(key), owned=owned,
                                  through=through)
    return found
