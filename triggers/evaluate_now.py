"""``evaluate_now``: POST ``{"golden": <blob address>}`` or ``{"collection": name}``, optional ``"force"``.

For ingestion pipelines: new documents change the picks as much as new questions do. The golden file
is checked first (400 with every problem, line and message, when it has errors); otherwise the same
orchestration starts at once, without the debounce, and the answer is 202 with the Durable status
URLs. The instance id adds the targets' state (an embedded index's fingerprint), so the same golden
bytes against the same index is one run: a retried call gets the same instance, a changed index a
new one. ``"force": true`` always starts a new run.

Answers: 202 started (or already running / ran: same URLs), 400 a request or golden file that cannot
run (a sentence; for a golden file with errors the first 100 ``problems`` and ``more_problems``, how
many were left out; a golden file over ``EVALUATION_GOLDEN_MAX_BYTES`` is refused unread), 404 no
golden file there, 503 storage out of reach (retry). Refusals are ``app.http.Refusal``.
"""
from __future__ import annotations

import asyncio
import json
import logging
import uuid
from typing import Any

import azure.durable_functions as df
import azure.functions as func

from app.golden import GoldenTooLarge, golden_version
from app.http import Refusal, refusal_answer
from app.settings import AppSettings, SettingsError, current_settings
from app.storage import account_url, collection_folder, collection_target_state, collection_targets
from evaluation.errors import EvaluationError, StoreError, did_you_mean, shown
from evaluation.golden import check_golden_bytes
from evaluation.store.collections import GOLDEN_NAME, CollectionFolder, check_collection_name, collection_of
from triggers.starting import instance_id, newest_report_sha256, start_once

log = logging.getLogger(__name__)

bp = df.Blueprint()

KEYS = ("golden", "collection", "force")
EXAMPLES = ('{"collection": "docs"} or '
            '{"golden": "https://<account>.blob.core.windows.net/<container>/docs/golden.jsonl"}')


def read_request(req: func.HttpRequest, settings: AppSettings) -> tuple[str, bool]:
    """``(collection, force)`` from the body; a ``Refusal`` (400) naming what to change otherwise."""
    try:
        body = json.loads(req.get_body() or b"null")
    except (ValueError, UnicodeDecodeError) as err:
        raise Refusal(400, f"the body is not JSON ({err}); send {EXAMPLES}") from err
    except RecursionError as err:  # 100,000 nested brackets: Python's parser gives up, and so do we
        raise Refusal(400, f"the body is nested too deeply to read; send {EXAMPLES}") from err
    if not isinstance(body, dict):
        raise Refusal(400, 'the body must be a JSON object: {"collection": "docs"} or {"golden": "<blob address>"}, '
                           'with "force": true to run again')
    for key in body:
        if key not in KEYS:
            raise Refusal(400, f'{shown(key)} is not a key of this request.{did_you_mean(key, KEYS)} '
                               f'Keys: {", ".join(KEYS)}')
    force = body.get("force", False)
    if not isinstance(force, bool):
        raise Refusal(400, f'"force" must be true or false, not {shown(force)}')
    if ("golden" in body) == ("collection" in body):
        raise Refusal(400, 'give exactly one of "golden" (the golden file\'s Blob address) and "collection" (its name)')
    if "collection" in body:
        name = body["collection"]
        if isinstance(name, str) and not _utf8(name):
            raise Refusal(400, f"{shown(name)} cannot name a collection: it is not UTF-8 text (a lone "
                               "surrogate); use the name of a top-level folder of the container, such as \"docs\"")
        try:
            return check_collection_name(name), force
        except StoreError as err:
            raise Refusal(400, str(err)) from err
    return _collection_of_address(body["golden"], settings), force


def _utf8(text: str) -> bool:
    """Whether ``text`` is UTF-8 text: a JSON "\\ud800" escape decodes to a lone surrogate that no blob
    name, URL or log line can carry."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _collection_of_address(address: Any, settings: AppSettings) -> str:
    from evaluation.store.blob import parse_address, same_endpoint

    home = f"{account_url(settings)}/{settings.container}/"
    example = f"{home}<collection>/{GOLDEN_NAME}"
    try:
        parsed = parse_address(address) if isinstance(address, str) and _utf8(address) else None
    except StoreError:
        parsed = None
    collection = collection_of(parsed.path) if parsed else None
    if (parsed is None or collection is None or not same_endpoint(parsed.account_url, account_url(settings))
            or parsed.container != settings.container):
        raise Refusal(400, f'"golden" must be the address of a collection\'s golden file in this app\'s container, '
                           f"such as {example}, not {shown(address)}")
    return collection


def _check_and_state(folder: CollectionFolder, settings: AppSettings) -> tuple[str, dict[str, str]]:
    """The golden file's sha256 and the targets' state; a ``Refusal`` when the run cannot start."""
    try:
        version = golden_version(settings, folder, read=True)
    except GoldenTooLarge as err:
        raise Refusal(400, str(err)) from err
    if version is None:
        raise Refusal(404, f"no golden file at {folder.address(GOLDEN_NAME)}; save one there first")
    assert version.raw is not None, "read=True always brings the bytes"
    check = check_golden_bytes(version.raw, folder.address(GOLDEN_NAME))
    if not check.ok:
        raise Refusal(400, f"{folder.address(GOLDEN_NAME)} has {len(check.errors)} error(s); fix them and call again",
                      [{"line": p.line, "message": p.message} for p in check.errors])
    specs = collection_targets(settings, folder)
    state = {spec.name: collection_target_state(settings, spec) for spec in specs}
    return version.sha256, state


@bp.route(route="evaluate_now", methods=["POST"], auth_level=func.AuthLevel.FUNCTION)
@bp.durable_client_input(client_name="client")
async def evaluate_now(req: func.HttpRequest, client: df.DurableOrchestrationClient) -> func.HttpResponse:
    try:
        settings = current_settings()
    except SettingsError as err:  # the app's own configuration: no retry mends it, so the caller is told which
        log.error("evaluate_now: %s", err)
        return refusal_answer(Refusal(500, str(err)))
    try:
        collection, force = read_request(req, settings)
        folder = collection_folder(settings, collection)
        sha256, state = await asyncio.to_thread(_check_and_state, folder, settings)
    except Refusal as refusal:
        return refusal_answer(refusal)
    except StoreError as err:  # storage out of reach or refusing: worth a retry
        log.warning("evaluate_now: %s", err)
        return refusal_answer(Refusal(503, str(err)))
    except EvaluationError as err:  # the targets' configuration, an index never published: say so
        return refusal_answer(Refusal(400, str(err)))
    nonce = uuid.uuid4().hex if force else None
    instance = instance_id("now", collection, sha256, state, nonce)
    job = {"collection": collection, "sha256": sha256, "debounce_seconds": 0, "trigger": "evaluate_now",
           "state": state}
    outcome = await start_once(client, instance, job, reported=lambda: newest_report_sha256(folder))
    log.info("evaluate_now: collection %s golden %s state %s -> instance %s %s", collection, sha256[:12], state,
             instance, outcome)
    response = client.create_check_status_response(req, instance)
    payload = json.loads(response.get_body())
    payload["evaluation"] = {"collection": collection, "sha256": sha256, "state": state, "outcome": outcome}
    # The standard Durable answer (202, Location, Retry-After, the status URLs), with what was evaluated.
    headers = {k: v for k, v in response.headers.items() if k.lower() != "content-type"}
    return func.HttpResponse(json.dumps(payload), status_code=response.status_code, headers=headers,
                             mimetype="application/json")
