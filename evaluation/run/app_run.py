"""A run done in parts, as the Function App does it: planned in one call, joined in one call.

``plan_app_run`` is step 1 with a warm save's rules: the plan (``plan_run``), what the collection's
newest report lets this run reuse (times: ``retime``; results: ``reuse``), each setup's shards of
what is left to search (``shards``), and the setups that need no timed pass at all. Between the two,
one activity ranks each shard (``rank_setup(..., questions=)``) and one times each setup that is not
settled (``time_setups``). ``join_app_run`` then joins what they kept into the report: each setup's
shards merged with its reused results (``merge_shards``), its times live or reused
(``reused_timing``), the setups that failed said so (``finish_entries``), ranked (``assemble_report``).

Both take and give plain JSON data (``AppPlan`` holds five such values), so an activity only decodes
its job, opens what it needs, makes one of these calls and writes or encodes the answer; reading and
writing the working files is the caller's. How a run in parts is planned is one ``AppRunSettings``
(``app_run_settings``), which the planning activity builds from the app's settings.
"""
from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Sequence

from ..golden import Golden
from ..settings import EvaluationSettings
from ..store.shape import Report
from ..store.sources import Fetcher
from ..target import Target
from .app_run_settings import AppRunSettings
from .assemble import assemble_report
from .one_setup import finish_entries
from .plan import plan_run
from .retime import reusable_times
from .reuse import reusable_ranks, reused_timing
from .shards import measured_times, merge_shards, plan_shards


@dataclass(frozen=True)
class AppPlan:
    """What ``plan_app_run`` gives, each part plain JSON data for a working file or an answer.

    ``plan``: ``plan_run``'s. ``shards``: ``plan_shards``' (setup key -> lists of question ids).
    ``reused_times``: ``reusable_times``' (setup key -> times an earlier run measured live).
    ``reused_ranks``: ``reusable_ranks``' (setup key -> results an earlier run searched).
    ``settled``: the setup keys, in plan order, whose times and sampled questions' results are all
    reused, which need no timed pass.
    """

    plan: dict[str, Any]
    shards: dict[str, list[list[str]]]
    reused_times: dict[str, dict[str, Any]]
    reused_ranks: dict[str, dict[str, Any]]
    settled: list[str]


def plan_app_run(targets: Target | Sequence[Target], golden: Golden | str | Path, *,
                 newest: Mapping[str, Any] | None, created_at: datetime | str | None = None,
                 run_id: str | None = None, held_before: Mapping[str, Iterable[str]] | None = None,
                 warn: Callable[[str], None] | None = None, fetcher: Fetcher | None = None,
                 settings: AppRunSettings | EvaluationSettings | None = None, **keywords: Any) -> AppPlan:
    """Plan a run to be done in parts, with what ``newest`` (the collection's newest report, or None)
    lets it reuse; ``plan_run``'s arguments (``created_at``, ``run_id``, ``held_before``, ``warn``,
    ``fetcher``, and the settings' ``only``, ``skip`` and ``evaluation``) go to it unchanged, and so do
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
    newest run found on each target comes as ``held_before`` (``evaluate.held_in_report(newest)``,
    from the layer above), so the run can say "no longer holds" as the command line does.
    """
    options = AppRunSettings.of(settings, **keywords)
    plan = plan_run(targets, golden, only=options.only, skip=options.skip, created_at=created_at, run_id=run_id,
                    warn=warn, settings=options.evaluation, held_before=held_before, fetcher=fetcher)
    live = options.retime == "always"  # every search and every time live
    times = {} if live else reusable_times(plan, newest, max_age_days=options.retime_max_days, warn=warn)
    ranks = {} if live else reusable_ranks(plan, newest)
    shards = plan_shards(plan, measured_ms=measured_times(newest), reused=ranks, shard_seconds=options.shard_seconds,
                         most_questions=options.most_questions)
    settled = [s["key"] for s in plan["setups"]
               if reused_timing(plan, s["key"], times.get(s["key"]), ranks.get(s["key"])) is not None]
    return AppPlan(plan=plan, shards=shards, reused_times=times, reused_ranks=ranks, settled=settled)


def join_app_run(plan: dict[str, Any], *, shard_entries: Mapping[str, Sequence[Mapping[str, Any]]],
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
    times, reused_ranks, reused_times = times or {}, reused_ranks or {}, reused_times or {}
    settled = set(settled)
    ranked = {key: merge_shards(plan, key, list(parts), reused_ranks.get(key), owned=owned)
              for key, parts in shard_entries.items() if key not in failures}
    timed = {}
    for key, entry in ranked.items():
        if entry["error"] is not None:
            continue
        found = (reused_timing(plan, key, reused_times.get(key), reused_ranks.get(key)) if key in settled
                 else times.get(key))
        if found is not None:
            timed[key] = found
    # the merged entries are this call's own (merge_shards copies what it takes from the parts), so
    # they are finished and assembled in place, not copied twice more
    return assemble_report(plan, finish_entries(plan, ranked, timed, failures, owned=True), owned=True)
