"""Times per index state: when a save changes only the golden file, a setup's times may come from the
run that timed it live on the same index state, instead of timing it again.

Why: a timed pass searches up to ``timed`` questions one at a time, uncached, alone on the cores; for
a reranked setup that is up to the 20 s budget plus a warm-up, every save, although nothing that
decides a search's time changed. ``time_state`` is the sha256 of everything that does decide it: the
target as the plan describes it (an embedded index's fingerprint, models, chunking and candidates; an
Azure AI Search index's state), the setup, the software that embeds and scores (the engine's
``software_versions``), the questions its timed pass may search (``judged.timed_ids``: their sha256, in
order) and the timing settings.
Every entry timed live keeps it (``time_state``). A later run reuses that entry's ``times_ms`` when
its own ``time_state`` for the setup is the same, the earlier entry was timed live (no ``timed_in``:
reused times are never reused again, so their age is always the live pass's), and the earlier run is
no older than ``max_age_days``. The reused entry says where its times come from: ``timed_in`` (the run
id), which the report's page and text show as "timed in run <id>, same index state". The sampled
questions' ranks are still searched, in a batch: only the times are reused.
"""
from __future__ import annotations

import hashlib
import json
import logging
from datetime import datetime, timedelta
from typing import Any, Callable, Mapping

from .judged import timed_ids
from .kept_times import times_problem
from ..golden import question_sha256
from .plan import utc
from .planned import Plan

log = logging.getLogger(__name__)

RETIME_CHOICES = ("when-changed", "always")  # EVALUATION_RETIME: reuse times when nothing changed, or never
DEFAULT_MAX_AGE_DAYS = 7  # older times are timed again: the service, the host or its neighbours drift
_TIMING_SETTINGS = ("depth", "timed", "seed", "time_margin", "time_floor", "time_budget")


def time_state(plan: Plan, setup_key: str) -> str:
    """The sha256 of what decides ``setup_key``'s times in this plan (see the module docstring)."""
    from ..engine.identity import software_versions

    setup = plan.setup(setup_key)
    described = {"target": plan.targets.get(setup.target), "setup": setup.to_json(),
                 "software": software_versions(),
                 "sample": [question_sha256(plan.question(qid).question) for qid in timed_ids(plan, setup_key)],
                 # as numbers: the app's settings are whole numbers where the CLI's are floats (7 == 7.0)
                 "settings": {name: _number(getattr(plan.settings, name)) for name in _TIMING_SETTINGS}}
    return hashlib.sha256(json.dumps(described, sort_keys=True, default=str).encode("utf-8")).hexdigest()


def _number(value: Any) -> Any:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else value


def reusable_times(plan: Plan, earlier: Mapping[str, Any] | None, *, max_age_days: float,
                   now: datetime | str | None = None,
                   warn: Callable[[str], None] | None = None) -> dict[str, dict[str, Any]]:
    """Per setup key of ``plan``, the times ``earlier`` (a report) timed live on the same state:
    ``{"times_ms": [...], "timed_in": run id, "time_state": sha256}`` and the side-by-side pass they were
    timed in (``time_pass``) when the entry says. Setups with none are left out.

    Times are believed only from a run dated no later than this plan (a clock that ran ahead would
    otherwise make them look fresh for ever) and only when they are measurements that agree with their
    summary (``kept_times.times_problem``). Times on the same state passed over for either reason are
    named to ``warn`` (by default a logged warning), since the run then times live what it could have
    reused."""
    warn = warn or log.warning
    if not isinstance(earlier, Mapping) or not earlier.get("created_at"):
        return {}
    try:
        age = utc(now or plan.created_at) - utc(earlier["created_at"])
    except (TypeError, ValueError):
        return {}
    if age > timedelta(days=max_age_days):
        return {}
    found = {}
    by_key = {s.get("key"): s for s in earlier.get("setups") or [] if isinstance(s, Mapping)}
    for setup in plan.setups:
        entry = by_key.get(setup.key)
        if (not entry or entry.get("error") is not None or entry.get("timed_in") or not entry.get("times_ms")
                or entry.get("time_state") != time_state(plan, setup.key)):
            continue
        problem = ("it is dated after this run (its created_at is later than this plan's: a clock ran ahead)"
                   if age < timedelta(0) else times_problem(entry))
        if problem is not None:
            warn(f"the times run {str(earlier.get('id'))[:80]} kept for setup {setup.key} are not reused, "
                 f"since {problem}; it is timed again")
            continue
        found[setup.key] = {"times_ms": list(entry["times_ms"]), "timed_in": str(earlier.get("id")),
                               "time_state": entry["time_state"],
                               # setups reused from one side-by-side pass still compare in pairs
                               **({"time_pass": entry["time_pass"]}
                                  if isinstance(entry.get("time_pass"), str) else {})}
    return found
