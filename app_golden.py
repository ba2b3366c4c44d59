"""A collection's golden file as the app reads it: never more than ``EVALUATION_GOLDEN_MAX_BYTES``,
hashed as it streams in, and named by the ETag of the version read.

Before, the triggers downloaded the whole file to hash it: a 112 MB golden file was hashed and its
run started, at a 302 MB peak in the trigger (issue 22, probe 9). Now its size is asked first and a
file over the limit is refused unread, with a sentence naming the setting. The ETag lets the report
be kept only while the file still holds the bytes the run read (``activities.report.save_report``).
"""
from __future__ import annotations

from dataclasses import dataclass

from app_settings import AppSettings
from evaluation.store.blob import BlobTooLarge, blob_has_etag, blob_version
from evaluation.store.collections import GOLDEN_NAME, CollectionFolder

SETTING = "EVALUATION_GOLDEN_MAX_BYTES"


class GoldenTooLarge(Exception):
    """The golden file is over the size limit; the sentence names the file, its size and the setting."""


@dataclass(frozen=True)
class GoldenVersion:
    """One version of a golden file: its sha256, the ETag it had, and its bytes when they were asked for."""

    sha256: str
    etag: str
    raw: bytes | None = None


def _name(folder: CollectionFolder) -> str:
    return f"{folder.name}/{GOLDEN_NAME}"


def golden_version(settings: AppSettings, folder: CollectionFolder, *, read: bool = False) -> GoldenVersion | None:
    """The golden file now (None when there is none); ``GoldenTooLarge`` above the limit, before any byte
    is read. Its bytes come too with ``read`` (bounded by the same limit)."""
    limit = settings.golden_max_bytes
    try:
        found = blob_version(folder.container, _name(folder), max_bytes=limit, read=read)
    except BlobTooLarge as err:
        raise GoldenTooLarge(f"{folder.address(GOLDEN_NAME)} is {err.size:,} bytes, more than the {limit:,} that "
                             f"{SETTING} allows; split the questions into collections of their own, or raise "
                             f"{SETTING} in the Function App's configuration") from err
    if found is None:
        return None
    sha256, etag, raw = found
    return GoldenVersion(sha256, etag, raw)


def still_holds(folder: CollectionFolder, version: GoldenVersion) -> bool:
    """Whether the golden file is still the version read (its ETag unchanged)."""
    return blob_has_etag(folder.container, _name(folder), version.etag)
