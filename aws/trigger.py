"""``golden_saved``: S3 ``ObjectCreated`` for ``<collection>/golden.jsonl`` -> one debounced execution of
the state machine; invoked directly with ``{"collection": ...}``, one execution now (what an ingestion
pipeline calls when it finishes: new documents move the picks as much as new questions do).

The trigger hashes the object's bytes as they are now (not as the event saw them: a later save's bytes
are what a run should read), only after its size is within ``EVALUATION_GOLDEN_MAX_BYTES``
(``app.golden``), and starts the state machine once per collection and sha256. S3 delivers an event at
least once and may deliver two saves' events out of order; both fold into one execution name.

Execution names (``execution_name``) follow Step Functions' rules: 1 to 80 characters, here only
``A-Z a-z 0-9 _ -``::

    <kind>-<slug>-<sha256[:12]>-<digest[:32]>[-r<n>]     at most 6 + 1 + 16 + 1 + 12 + 1 + 32 + 4 = 73

``kind`` is ``golden`` (a save) or ``now``; ``slug`` is the collection name with every other run of
characters turned into "-", cut to 16 (for people reading the list); ``digest`` is the sha256 of the
kind, the exact collection name, the golden file's sha256 and, for ``now``, the targets' state and any
``force`` nonce: two collections with one slug get two names, the same save twice gets one.

Dedupe (``start_once``) stands on Step Functions' own rule: a name is unique per state machine for 90
days, and a start with the name and input of a running execution is the same execution (the input is
made from the name's parts only, so a second delivery's is identical, and Step Functions answers it as
it answered the first: ``started`` names both). When
the name belongs to an execution that has ended, it ran, unless the collection's newest report is not
for these bytes: saving A, then B, then A again stops A's first run as superseded, and B's report (or
none) would otherwise stay while the file holds A. Then the same bytes start again under the next
name of the chain (``-r2``, ``-r3``, ...), whose own dedupe is the same; a failed run starts again
the same way. Anything the trigger cannot act on (another bucket, another key, a file already gone or
over the size limit) is logged and acknowledged; a fault that may pass is raised, so Lambda retries
the event (twice), then keeps it in the dead-letter queue.
"""
from __future__ import annotations

import hashlib
import json
import logging
import re
from typing import Any, Callable, Mapping
from urllib.parse import unquote_plus

from app.golden import GoldenTooLarge, golden_version, newest_report_sha256
from app.storage import collection_target_state
from app.settings import SettingsError
from aws.settings import AwsSettings, current_settings
from aws.storage import collection_folder, collection_targets
from evaluation.errors import StoreError
from evaluation.store.collections import GOLDEN_NAME, CollectionFolder, check_collection_name, collection_of

log = logging.getLogger(__name__)

MAX_NAME_LENGTH = 80  # Step Functions' limit for an execution name
SLUG_LENGTH = 16
MOST_RESTARTS = 50  # names in one (collection, sha256) chain: each costs a save of other bytes in between
KINDS = ("golden", "now")
CREATED = "ObjectCreated:"


def execution_name(kind: str, collection: str, sha256: str, state: Mapping[str, Any] | None = None,
                   nonce: str | None = None, generation: int = 1) -> str:
    """The name of the execution for ``collection``'s golden version ``sha256`` (module docstring)."""
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS}, not {kind!r}")
    slug = re.sub(r"[^A-Za-z0-9_]+", "-", collection).strip("-")[:SLUG_LENGTH].strip("-") or "collection"
    key = json.dumps([kind, collection, sha256, dict(state) if state is not None else None, nonce],
                     sort_keys=True, ensure_ascii=True)
    digest = hashlib.sha256(key.encode("ascii")).hexdigest()[:32]
    made = f"{kind}-{slug}-{sha256[:12]}-{digest}" + (f"-r{generation}" if generation > 1 else "")
    assert len(made) <= MAX_NAME_LENGTH and re.fullmatch(r"[A-Za-z0-9_-]+", made), made
    return made


def _code(err: Exception) -> str:
    return str(((getattr(err, "response", None) or {}).get("Error") or {}).get("Code") or "")


def start_once(stepfunctions: Any, state_machine_arn: str, name: str, job: dict[str, Any],
               reported: Callable[[], str | None]) -> tuple[str, str]:
    """Start the state machine as ``name`` (or the next name of its chain) unless it runs or ran:
    ``(what happened, the name)``, what happened in a word: ``started`` (or found running with the same
    input: Step Functions answers that start as the first), ``running`` (with another input), ``ran`` or
    ``restarted`` (a later name of the chain: the earlier ended without a report for these bytes)."""
    from botocore.exceptions import ClientError

    executions = state_machine_arn.replace(":stateMachine:", ":execution:", 1)
    newest: list[str | None] = []
    for generation in range(1, MOST_RESTARTS + 1):
        named = name if generation == 1 else f"{name}-r{generation}"
        try:
            stepfunctions.start_execution(stateMachineArn=state_machine_arn, name=named,
                                          input=json.dumps(job, sort_keys=True))
        except ClientError as err:
            if _code(err) != "ExecutionAlreadyExists":
                raise
            status = stepfunctions.describe_execution(executionArn=f"{executions}:{named}")["status"]
            if status in ("RUNNING", "PENDING_REDRIVE"):
                return "running", named  # the same bytes with another input (a setting changed): it covers them
            if not newest:
                newest.append(reported())
            if newest[0] == job["sha256"]:
                return "ran", named
            continue  # ended with no report for these bytes (superseded, or failed): the next name
        return ("started" if generation == 1 else "restarted"), named
    raise StoreError(f"{job['collection']}: the golden file with sha256 {job['sha256'][:12]} was started "
                     f"{MOST_RESTARTS} times in 90 days and never reported on; look at those executions "
                     f"({name}...) in the Step Functions console")


def _stepfunctions() -> Any:
    import boto3

    return boto3.client("stepfunctions")


def golden_saved(event: dict[str, Any], context: Any = None, *, stepfunctions: Any = None) -> dict[str, Any]:
    """The Lambda handler: an S3 notification's records, or ``{"collection", "force"?}`` for a run now.
    Answers what it did with each (``{"started": [...], "ignored": [...]}``), for the log and for tests."""
    settings = current_settings()
    if not settings.state_machine_arn:
        raise SettingsError("EVALUATION_STATE_MACHINE_ARN is not set on the trigger; infra/aws/template.yaml "
                            "sets it to the state machine it starts")
    client = stepfunctions or _stepfunctions()
    done: dict[str, list[Any]] = {"started": [], "ignored": []}
    if "Records" not in event:
        done["started"].append(_evaluate_now(settings, client, event))
        return done
    for record in event["Records"]:
        started = _saved(settings, client, record)
        done["started" if isinstance(started, dict) else "ignored"].append(started)
    return done


def _saved(settings: AwsSettings, client: Any, record: Mapping[str, Any]) -> dict[str, Any] | str:
    """One S3 record: the execution it started or found, or why it was ignored."""
    name = str(record.get("eventName") or "")
    s3 = record.get("s3") or {}
    bucket = (s3.get("bucket") or {}).get("name")
    key = unquote_plus(str((s3.get("object") or {}).get("key") or ""))  # S3 sends keys URL-encoded, spaces as "+"
    if record.get("eventSource") != "aws:s3" or not name.startswith(CREATED):
        return _ignored(f"event {name or '(none)'} from {record.get('eventSource')} is not an S3 {CREATED}*")
    if bucket != settings.bucket:
        return _ignored(f"event for s3://{bucket}/{key}, outside the bucket {settings.bucket}")
    collection = collection_of(key)
    if collection is None:
        return _ignored(f"event for s3://{bucket}/{key}, not a collection's {GOLDEN_NAME}")
    folder = collection_folder(settings, collection)
    try:  # a StoreError here is raised: Lambda retries the event
        version = golden_version(settings.app, folder)
    except GoldenTooLarge as err:  # saving it again will not make it smaller: acknowledge, and say why
        return _ignored(f"{err}; no run starts")
    if version is None:
        return _ignored(f"{folder.address(GOLDEN_NAME)} is gone already; nothing to run")
    job = {"collection": collection, "sha256": version.sha256, "debounce_seconds": settings.app.debounce_seconds,
           "trigger": "golden_saved", "state": None}
    return _start(settings, client, folder, execution_name("golden", collection, version.sha256), job)


def _evaluate_now(settings: AwsSettings, client: Any, event: Mapping[str, Any]) -> dict[str, Any]:
    """``{"collection", "force"?}``: the golden file as it is now, searched against the targets as they
    are now, with no debounce; the same bytes and the same targets' state run once unless ``force``
    (any string: a pipeline's build id, say) names another run."""
    collection = check_collection_name(event.get("collection"))
    force = event.get("force")
    if force is not None and not isinstance(force, str):
        raise StoreError(f"force must be a string (a nonce such as a pipeline's build id), not {force!r}")
    folder = collection_folder(settings, collection)
    version = golden_version(settings.app, folder)
    if version is None:
        raise StoreError(f"{folder.address(GOLDEN_NAME)} does not exist; save the collection's golden file first")
    state = {spec.name: collection_target_state(settings.app, spec) for spec in collection_targets(settings, folder)}
    job = {"collection": collection, "sha256": version.sha256, "debounce_seconds": 0, "trigger": "evaluate_now",
           "state": state}
    return _start(settings, client, folder, execution_name("now", collection, version.sha256, state, force), job)


def _start(settings: AwsSettings, client: Any, folder: CollectionFolder, name: str,
           job: dict[str, Any]) -> dict[str, Any]:
    assert settings.state_machine_arn is not None
    outcome, named = start_once(client, settings.state_machine_arn, name, job,
                                reported=lambda: newest_report_sha256(folder))
    log.info("collection %s golden %s -> execution %s %s", job["collection"], job["sha256"][:12], named, outcome)
    return {"collection": job["collection"], "sha256": job["sha256"], "execution": named, "outcome": outcome}


def _ignored(why: str) -> str:
    log.info("ignored: %s", why)
    return why
