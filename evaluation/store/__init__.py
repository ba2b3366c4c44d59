"""Where runs live: the run store (a folder, a Blob container or an S3 bucket), Blob and S3 access, and
reading bytes from an address. Only ``blob`` touches the Azure SDK and only ``s3`` touches boto3, each
only when its kind of address is used."""
from __future__ import annotations

from ..errors import GoldenNotKept, GoldenNotKeptError, RunNotFound, RunNotFoundError  # the old names: aliases
from .runs import (GOLDEN_DIR, LATEST, LEGACY_GOLDEN_DIR, LEGACY_RUNS_DIR, PAGE_NAME, REPORT_FORMAT, REPORT_NAME,
                   RUNS_DIR, BlobStore, LocalStore, RunStore, S3Store, check_run_id, new_run_id, open_store,
                   report_bytes)
from .files_store import FilesStore
from .opening import ReportStore, report_store
from .s3 import is_s3_address
from .sources import Fetcher, is_blob_address, read_bytes

__all__ = ["GOLDEN_DIR", "LATEST", "LEGACY_GOLDEN_DIR", "LEGACY_RUNS_DIR", "PAGE_NAME", "REPORT_FORMAT", "REPORT_NAME",
           "RUNS_DIR", "BlobStore", "Fetcher", "FilesStore", "GoldenNotKept", "GoldenNotKeptError", "LocalStore",
           "ReportStore", "RunNotFound", "RunNotFoundError", "RunStore", "S3Store", "check_run_id", "is_blob_address",
           "is_s3_address", "new_run_id", "open_store", "read_bytes", "report_bytes", "report_store"]
