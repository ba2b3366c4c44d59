"""Where the AWS flow's files are: the bucket's S3 client, one collection's folder in it, and the targets
a collection searches. The rules are the library's (``evaluation.store.s3_folder``,
``evaluation.target_specs``) and the Function App's (``app.storage``): only what a ``targets.json`` may
point at differs, the flow's own bucket where the Function App has its storage account."""
from __future__ import annotations

import functools
from typing import Any

from app.storage import search_defaults
from aws.settings import AwsSettings
from evaluation.store.collections import TARGETS_NAME
from evaluation.store.s3_folder import S3CollectionFolder
from evaluation.target_specs import TargetSpec, Trust, parse_target_specs, targets_for


@functools.lru_cache(maxsize=1)
def s3() -> Any:
    """One S3 client per Lambda environment (boto3's default credentials: the function's role), failing
    fast as every client of the library does (``evaluation.store.s3.s3_client``)."""
    from evaluation.store.s3 import s3_client

    return s3_client()


def collection_folder(settings: AwsSettings, collection: str) -> S3CollectionFolder:
    return S3CollectionFolder(s3(), settings.bucket, collection)


def trust(settings: AwsSettings) -> Trust:
    """What a collection's targets.json may point at: the flow's bucket, and the search endpoint set."""
    return Trust(storage_account_url=None, s3_bucket=settings.bucket, search_endpoint=settings.app.search_endpoint,
                 openai_endpoint=settings.app.openai_endpoint)


def collection_targets(settings: AwsSettings, folder: S3CollectionFolder) -> tuple[TargetSpec, ...]:
    """The specs ``folder``'s collection searches (its targets.json, else EVALUATION_TARGETS)."""
    defaults = search_defaults(settings.app)
    configured = parse_target_specs(settings.app.targets_json, defaults=defaults)
    return targets_for(folder.name, configured, folder.targets_json(),
                       targets_json_source=f"{folder.name}/{TARGETS_NAME}", trust=trust(settings), defaults=defaults)
