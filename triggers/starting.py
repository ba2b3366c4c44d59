"""Starting ``evaluate_golden`` once per golden version: instance ids, and the dedupe rule.

Instance ids follow Durable Functions' rules for any collection name: 1 to 100 characters, not
starting with "@", none of ``/ \\ # ?`` and no control characters. Ours are stricter, made only of
``A-Z a-z 0-9 _ -``, because the Python client puts the id into the extension's URLs unescaped:

    <kind>-<slug>-<sha256[:12]>-<digest[:32]>        at most 6 + 1 + 30 + 1 + 12 + 1 + 32 = 83 characters

``kind`` is ``golden`` (a save) or ``now`` (``evaluate_now``); ``slug`` is the collection name with
every other character run turned into "-", cut to 30 (for people reading the id); ``digest`` is the
sha256 of the kind, the exact collection name, the golden file's sha256 and, for ``evaluate_now``,
the targets' state and any ``force`` nonce. So two names with one slug still get two ids, the same
save twice gets one id, and a changed index gives ``evaluate_now`` a new one.

Dedupe (``start_once``): no instance -> start; Pending, Running, ContinuedAsNew, Suspended -> it is
running; Completed -> it ran, unless the collection's newest report is not for these bytes: then it
starts again under the same id (the extension replaces a Completed instance). Saving A, then B, then A
again would otherwise leave B's report the newest while the file holds A (issue 22, probe 10); a
duplicate delivery of a save whose report is the newest still finds it ran. Failed, Terminated,
Canceled -> start again. A start refused because a racing delivery started the same id first counts
as started, never as an error.
"""
from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import re
from typing import Any, Callable, Mapping

import azure.durable_functions as df

from app.golden import newest_report_sha256  # noqa: F401  (golden_changed and tests import it from here)
from orchestrators.evaluate_golden import evaluate_golden

log = logging.getLogger(__name__)

# The orchestrator's registered name, read from the orchestrator itself: a rename cannot leave the
# triggers starting a function that no longer exists.
ORCHESTRATOR = evaluate_golden.build().get_function_name()
MAX_ID_LENGTH = 100  # Durable Functions' limit
SLUG_LENGTH = 30
_RUNNING = {df.OrchestrationRuntimeStatus.Pending, df.OrchestrationRuntimeStatus.Running,
            df.OrchestrationRuntimeStatus.ContinuedAsNew, df.OrchestrationRuntimeStatus.Suspended}
_RAN = {df.OrchestrationRuntimeStatus.Completed}
# Failed, Terminated, Canceled (and no instance at all) start again.


def instance_id(kind: str, collection: str, sha256: str, state: Mapping[str, Any] | None = None,
                nonce: str | None = None) -> str:
    """The instance id of the run of ``collection``'s golden version ``sha256`` (module docstring)."""
    if kind not in ("golden", "now"):
        raise ValueError(f"kind must be 'golden' or 'now', not {kind!r}")
    slug = re.sub(r"[^A-Za-z0-9_]+", "-", collection).strip("-")[:SLUG_LENGTH].strip("-") or "collection"
    key = json.dumps([kind, collection, sha256, dict(state) if state is not None else None, nonce],
                     sort_keys=True, ensure_ascii=True)
    digest = hashlib.sha256(key.encode("ascii")).hexdigest()[:32]
    made = f"{kind}-{slug}-{sha256[:12]}-{digest}"
    assert len(made) <= MAX_ID_LENGTH and re.fullmatch(r"[A-Za-z0-9_-]+", made), made
    return made


def decide(status: Any) -> str:
    """``"start"``, ``"running"`` or ``"ran"`` for what ``get_status`` said about an instance id."""
    runtime = getattr(status, "runtime_status", None)
    if runtime in _RUNNING:
        return "running"
    if runtime in _RAN:
        return "ran"
    return "start"


async def start_once(client: df.DurableOrchestrationClient, instance: str, job: dict[str, Any],
                     reported: Callable[[], str | None] | None = None) -> str:
    """Start ``evaluate_golden`` as ``instance`` unless it runs or ran; what happened, in a word:
    ``started``, ``restarted`` (after Failed or Terminated), ``rerun`` (it ran, but the newest report,
    as ``reported`` gives its golden sha256, is for other bytes), ``running``, ``ran`` or ``raced``."""
    before = await client.get_status(instance)
    verdict = decide(before)
    if verdict == "ran" and reported is not None and await asyncio.to_thread(reported) != job["sha256"]:
        verdict = "rerun"
    if verdict not in ("start", "rerun"):
        return verdict
    try:
        await client.start_new(ORCHESTRATOR, instance, job)
    except Exception:
        # The extension refuses a start for an id that is Pending or Running (409 Conflict, or 400
        # "already exists" from older extensions). Ask again rather than parse its message: if the
        # id now runs or ran, another delivery of the same save started it.
        after = await client.get_status(instance)
        if decide(after) != "start":
            log.info("instance %s was started by another delivery meanwhile", instance)
            return "raced"
        raise
    if verdict == "rerun":
        return "rerun"
    return "started" if before.runtime_status is None else "restarted"
