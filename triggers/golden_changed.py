"""``golden_changed``: Event Grid ``BlobCreated`` for ``<collection>/golden.jsonl`` -> one debounced run.

The trigger hashes the blob's bytes as they are now (not as the event saw them: a later save's bytes
are what a run should read), streamed and only after its size is within ``EVALUATION_GOLDEN_MAX_BYTES``
(``app.golden``), and starts ``evaluate_golden`` once per collection and sha256 (see
``triggers.starting``). Delivery is at least once and may come out of order; both fold into the same
instance id. Anything it cannot act on (another event type, another blob, a golden file already
gone or over the size limit) is logged and acknowledged; only a fault that may pass (storage or the
Durable extension out of reach) is raised, so that Event Grid delivers the event again.
"""
from __future__ import annotations

import asyncio
import logging

import azure.durable_functions as df
import azure.functions as func

from app.golden import GoldenTooLarge, golden_version
from app.settings import current_settings
from app.storage import collection_folder
from evaluation.store.collections import collection_of
from triggers.starting import instance_id, newest_report_sha256, start_once

log = logging.getLogger(__name__)

bp = df.Blueprint()

BLOB_CREATED = "Microsoft.Storage.BlobCreated"
_SUBJECT_PREFIX = "/blobServices/default/containers/"


def blob_of(subject: str) -> tuple[str, str] | None:
    """``(container, blob name)`` from a Blob event's subject; None for any other subject."""
    if not subject.startswith(_SUBJECT_PREFIX):
        return None
    container, marker, name = subject[len(_SUBJECT_PREFIX):].partition("/blobs/")
    return (container, name) if marker and container and name else None


@bp.event_grid_trigger(arg_name="event")
@bp.durable_client_input(client_name="client")
async def golden_changed(event: func.EventGridEvent, client: df.DurableOrchestrationClient) -> None:
    settings = current_settings()
    if event.event_type != BLOB_CREATED:
        log.info("event %s is %s, not %s: ignored", event.id, event.event_type, BLOB_CREATED)
        return
    where = blob_of(event.subject or "")
    if where is None or where[0] != settings.container:
        log.info("event %s is for %s, outside the container %s: ignored", event.id, event.subject, settings.container)
        return
    collection = collection_of(where[1])
    if collection is None:
        log.info("event %s is for %s, not a collection's golden.jsonl: ignored", event.id, where[1])
        return
    folder = collection_folder(settings, collection)
    try:  # a StoreError here is raised: Event Grid retries
        version = await asyncio.to_thread(golden_version, settings, folder)
    except GoldenTooLarge as err:  # saving it again will not make it smaller: acknowledge, and say why
        log.warning("event %s: %s; no run starts", event.id, err)
        return
    if version is None:
        log.warning("event %s: %s is gone already; nothing to run", event.id, folder.address("golden.jsonl"))
        return
    sha256 = version.sha256
    instance = instance_id("golden", collection, sha256)
    job = {"collection": collection, "sha256": sha256, "debounce_seconds": settings.debounce_seconds,
           "trigger": "golden_changed", "state": None}
    outcome = await start_once(client, instance, job, reported=lambda: newest_report_sha256(folder))
    log.info("event %s: collection %s golden %s -> instance %s %s", event.id, collection, sha256[:12],
             instance, outcome)
