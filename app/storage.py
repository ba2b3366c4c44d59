"""Where the Function App's files are, from its settings: the collections container, one collection's
folder, the targets a collection searches, and those targets opened. Shared by the triggers and the activities; every
rule lives in the library (``evaluation.store.collections``, ``evaluation.target_specs``).

In Azure the app signs in to Blob storage with its managed identity (``EVALUATION_STORAGE_ACCOUNT_URL``);
locally ``EVALUATION_STORAGE_CONNECTION_STRING`` (Azurite) is used instead.
"""
from __future__ import annotations

import functools
from typing import Any

from app.settings import AppSettings, SettingsError
from evaluation.engine.opened import OpenedIndexes
from evaluation.store.collections import TARGETS_NAME, CollectionFolder
from evaluation.target import Target
from evaluation.target_specs import (SearchDefaults, TargetAccess, TargetSpec, Trust, open_target, parse_target_specs,
                                     target_state, targets_for)


def account_url(settings: AppSettings) -> str:
    """The Blob endpoint holding the collections, from the account URL or the connection string."""
    if settings.storage_account_url:
        return settings.storage_account_url.rstrip("/")
    if settings.storage_connection_string:
        from evaluation.store.blob import blob_endpoint

        return blob_endpoint(settings.storage_connection_string)
    raise SettingsError("neither EVALUATION_STORAGE_ACCOUNT_URL nor EVALUATION_STORAGE_CONNECTION_STRING is set; "
                        "set the account URL (https://<account>.blob.core.windows.net) in the Function App's "
                        "configuration, or the connection string in local.settings.json")


@functools.lru_cache(maxsize=8)
def _container(address: str, connection_string: str | None) -> Any:
    # One client per process: clients are thread-safe and keep their connections (and the managed
    # identity's token) between activity calls. It fails fast like every Blob client here (three tries
    # 1 s apart): Event Grid retries a trigger and Durable an activity, each for a long while.
    from evaluation.store.blob import container_client, parse_address

    return container_client(parse_address(address), connection_string=connection_string)


def collections_container(settings: AppSettings) -> Any:
    return _container(f"{account_url(settings)}/{settings.container}", settings.storage_connection_string)


def collection_folder(settings: AppSettings, collection: str) -> CollectionFolder:
    return CollectionFolder(collections_container(settings), collection)


def trust(settings: AppSettings) -> Trust:
    """What a collection's targets.json may point at: this app's storage account, search and OpenAI endpoints."""
    return Trust(storage_account_url=account_url(settings), search_endpoint=settings.search_endpoint,
                 openai_endpoint=settings.openai_endpoint)


def search_defaults(settings: AppSettings) -> SearchDefaults:
    return SearchDefaults(search_endpoint=settings.search_endpoint, openai_endpoint=settings.openai_endpoint,
                          openai_deployment=settings.openai_embedding_deployment)


def collection_targets(settings: AppSettings, folder: CollectionFolder) -> tuple[TargetSpec, ...]:
    """The specs ``folder``'s collection searches (its targets.json, else EVALUATION_TARGETS)."""
    configured = parse_target_specs(settings.targets_json, defaults=search_defaults(settings))
    return targets_for(folder.name, configured, folder.targets_json(),
                       targets_json_source=f"{folder.name}/{TARGETS_NAME}", trust=trust(settings),
                       defaults=search_defaults(settings))


@functools.lru_cache(maxsize=None)
def _opened_indexes(most: int) -> OpenedIndexes:
    return OpenedIndexes(most)


def opened_indexes(settings: AppSettings) -> OpenedIndexes:
    """This process's opened embedded indexes (``engine.opened``), at most EVALUATION_OPENED_INDEXES: the
    worker runs an instance's activities as threads of one process, so its activities on one index
    version share one opened index instead of each opening (and holding) its own."""
    return _opened_indexes(settings.opened_indexes)


def open_collection_target(settings: AppSettings, spec: TargetSpec, state: str | None = None, *,
                           batch_cache: Any = None) -> Target:
    """``spec``'s target opened the one way the app opens targets: into its index cache, with its storage
    connection and search keys, its opened index shared in the process (``opened_indexes``); ``state``
    pins the version a run planned with (an index fingerprint); ``batch_cache``: where an embedded
    target's batches keep vectors and scores (``shared_cache``)."""
    return open_target(spec, cache=settings.index_cache, state=state, access=target_access(settings),
                       batch_cache=batch_cache, opened_indexes=opened_indexes(settings))


def target_access(settings: AppSettings) -> TargetAccess:
    """How the app reaches its targets: its storage connection and the search keys its settings hold."""
    return TargetAccess(connection_string=settings.storage_connection_string, api_keys=settings.search_api_keys)


CACHE_DIR = "retrieval/cache"  # <collection>/retrieval/cache/: the batch path's vectors and scores, in Blob


def shared_cache(folder: CollectionFolder) -> Any:
    """The collection's batch cache in the app's storage account (``engine.shared_cache``): what every
    instance's shards read and add to, so a warm save pays only for its changed questions."""
    from evaluation.engine.shared_cache import SharedCache

    return SharedCache(folder.container, f"{folder.name}/{CACHE_DIR}")


JUDGE_REPLIES_DIR = "retrieval/judge-replies"  # <collection>/retrieval/judge-replies/: the judge's replies


def judge_replies(folder: CollectionFolder) -> Any:
    """The collection's cache of the judge's replies in Blob (``holes.replies``): every judging activity
    reads it first and adds to it, so a warm save asks the judge nothing. Inside the collection's folder,
    beside the golden file, since a reply may quote a passage."""
    from evaluation.holes.replies import BlobReplies

    return BlobReplies(folder.container, f"{folder.name}/{JUDGE_REPLIES_DIR}")


def collection_target_state(settings: AppSettings, spec: TargetSpec) -> str:
    """What ``spec``'s target holds now (its index fingerprint), read as ``open_collection_target`` reads it."""
    return target_state(spec, access=target_access(settings))
