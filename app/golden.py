"""A collection's golden file as the app reads it: never more than ``EVALUATION_GOLDEN_MAX_BYTES``,
hashed as it streams in, and named by the ETag of the version read.

Before, the triggers downloaded the whole file to hash it: a 112 MB golden file was hashed and its
run started, at a 302 MB peak in the trigger (issue 22, probe 9). Now its size is asked first and a
file over the limit is refused unread, with a sentence naming the setting. The ETag lets the report
be kept only while the file still holds the bytes the run read (``save_while_golden``).

The same rules serve the AWS flow (``aws/``): a ``CollectionFolder`` in a Blob container or in an S3
bucket (``evaluation.store.s3_folder``) answers the golden file's version, its ETag and deletes alike.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from app.settings import AppSettings
from evaluation.errors import BlobTooLargeError, StoreError
from evaluation.store import LATEST
from evaluation.store.collections import GOLDEN_NAME, CollectionFolder
from evaluation.store.runs import PAGE_NAME, REPORT_NAME, RUNS_DIR

SETTING = "EVALUATION_GOLDEN_MAX_BYTES"


class GoldenTooLarge(Exception):
    """The golden file is over the size limit; the sentence names the file, its size and the setting."""


@dataclass(frozen=True)
class GoldenVersion:
    """One version of a golden file: its sha256, the ETag it had, and its bytes when they were asked for."""

    sha256: str
    etag: str
    raw: bytes | None = None


def golden_version(settings: AppSettings, folder: CollectionFolder, *, read: bool = False) -> GoldenVersion | None:
    """The golden file now (None when there is none); ``GoldenTooLarge`` above the limit, before any byte
    is read. Its bytes come too with ``read`` (bounded by the same limit)."""
    limit = settings.golden_max_bytes
    try:
        found = folder.golden_version(max_bytes=limit, read=read)
    except BlobTooLargeError as err:
        raise GoldenTooLarge(f"{folder.address(GOLDEN_NAME)} is {err.size:,} bytes, more than the {limit:,} that "
                             f"{SETTING} allows; split the questions into collections of their own, or raise "
                             f"{SETTING} in the app's configuration (the Function App's, or the AWS flow's Lambda "
                             "environment)") from err
    if found is None:
        return None
    sha256, etag, raw = found
    return GoldenVersion(sha256, etag, raw)


def still_holds(folder: CollectionFolder, version: GoldenVersion) -> bool:
    """Whether the golden file is still the version read (its ETag unchanged)."""
    return folder.golden_has_etag(version.etag)


def save_while_golden(settings: AppSettings, folder: CollectionFolder, sha256: str, run_id: str,
                      save: Callable[[], Any]) -> dict[str, Any]:
    """``save()`` the run's report (and its page) only while the golden file holds the bytes ``sha256``
    names: ``{"saved": True, "report": blob name}``, else ``{"saved": False, "sha256": what it holds now}``
    (that save's own run reports on it).

    Blob conditions hold only for the blob a request writes, so the report is written and then the golden
    file asked, with ``If-Match`` on the ETag read before, whether it is still that version; when it is
    not (a save landed in between), the report and its page are deleted again. A report never stays for
    bytes no longer in the file, and a save is never blocked (a lease on the golden file would refuse the
    team's upload). ``save`` is called only when ``folder.store`` does not hold the run yet (a retried
    activity saved it already)."""
    seen = _golden_now(settings, folder)
    if seen is None or seen.sha256 != sha256:
        _take_back(folder, run_id)  # an earlier attempt may have kept it already
        return {"saved": False, "sha256": seen.sha256 if seen else None}
    if not folder.store.has(run_id):
        save()
    if not still_holds(folder, seen):
        _take_back(folder, run_id)
        now = _golden_now(settings, folder)
        return {"saved": False, "sha256": now.sha256 if now else None}
    return {"saved": True, "report": report_name(folder, run_id)}


def newest_report_sha256(folder: CollectionFolder) -> str | None:
    """The sha256 of the golden file the collection's newest report was made from; None without one (what
    both flows' triggers ask before starting a run again under a name that already ran)."""
    try:
        report = folder.store.report(LATEST)
    except StoreError:  # no run yet, or one that cannot be read: nothing says these bytes were reported
        return None
    return report.golden.sha256


def report_name(folder: CollectionFolder, run_id: str) -> str:
    """The report's blob name in the container: ``<collection>/retrieval/runs/<id>/report.json``."""
    return f"{folder.name}/{RUNS_DIR}/{run_id}/{REPORT_NAME}"


def _golden_now(settings: AppSettings, folder: CollectionFolder) -> GoldenVersion | None:
    try:
        return golden_version(settings, folder)
    except GoldenTooLarge:  # replaced by a file over the limit: not the run's bytes
        return None


def _take_back(folder: CollectionFolder, run_id: str) -> None:
    """Delete the run's report, then its page (a page without its report is never listed)."""
    folder.delete([f"{RUNS_DIR}/{run_id}/{REPORT_NAME}", f"{RUNS_DIR}/{run_id}/{PAGE_NAME}"])
