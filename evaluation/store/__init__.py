"""Where runs live: the run store (a folder or a Blob container), Blob access, and reading bytes from
an address. Only ``blob`` touches the Azure SDK, and only when a Blob address is used."""
from __future__ import annotations

from .runs import (GOLDEN_DIR, LATEST, PAGE_NAME, REPORT_FORMAT, REPORT_NAME, RUNS_DIR, BlobStore, LocalStore, RunStore,
                   check_run_id, new_run_id, open_store, report_bytes)
from .sources import is_blob_address, read_bytes

__all__ = ["GOLDEN_DIR", "LATEST", "PAGE_NAME", "REPORT_FORMAT", "REPORT_NAME", "RUNS_DIR", "BlobStore", "LocalStore",
           "RunStore", "check_run_id", "is_blob_address", "new_run_id", "open_store", "read_bytes",
           "report_bytes"]
