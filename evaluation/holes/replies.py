"""The judge's reply cache in Blob storage, for the Function App's judging activities: the same keys as
the local ``ReplyCache`` (``golden.writing.cache.prompt_key``: the model's name and the messages), so a
warm save asks the model nothing, whichever instance asks.

One blob a reply, ``<prefix>/<sha256 key>.json`` holding ``{"sha256": key, "reply": text}``, written only
when absent (``write_new_blob``): the activities that grade parts at once never write the same blob
(each pair is in one part), and a reply kept is never replaced. A blob that does not read as a reply of
its own key (damaged, or written by hand) is skipped with a warning, and the reply asked for again:
the cache costs a call, never a run. Any storage failure on a read is the same as a miss; on a write it
is logged and the grade still counts (the next run asks again).

The blobs hold model replies, whose reasons may quote the passage: keep the prefix inside the
collection's folder, read by whoever may read the golden file, never beside the runs.
"""
from __future__ import annotations

import json
import logging
import re
from typing import Any

from ..errors import InputTooLargeError, StoreError
from ..store.blob import list_blob_names, read_blob, write_new_blob

log = logging.getLogger(__name__)

_KEY = re.compile(r"[0-9a-f]{64}")
MOST_BYTES = 64 * 1024  # a grade and a sentence; anything larger is not a reply this judge asked for


class BlobReplies:
    """``get(key) -> reply | None`` and ``put(key, reply)`` over a container's ``prefix`` (``ReplyCache``'s
    two methods). ``keys()`` lists what is kept (one listing, for tests and counts)."""

    def __init__(self, container: Any, prefix: str) -> None:
        self.container, self.prefix = container, prefix.rstrip("/")
        self.written = self.read = 0

    def _name(self, key: str) -> str:
        if not _KEY.fullmatch(key):
            raise ValueError(f"{key!r} is not a reply key (the sha256 of a prompt, in hex)")
        return f"{self.prefix}/{key}.json"

    def get(self, key: str) -> str | None:
        name = self._name(key)
        try:
            raw = read_blob(self.container, name, max_bytes=MOST_BYTES)
        except FileNotFoundError:
            return None
        except (StoreError, InputTooLargeError, OSError) as err:
            log.warning("the judge's reply cache could not read %s (%s); asking the model again", name, err)
            return None
        try:
            row = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, ValueError):
            row = None
        if not isinstance(row, dict) or row.get("sha256") != key or not isinstance(row.get("reply"), str):
            log.warning("the judge's reply cache holds %s, which is not a reply of its key; asking the model again",
                        name)
            return None
        self.read += 1
        return row["reply"]

    def put(self, key: str, reply: str) -> None:
        name = self._name(key)
        data = json.dumps({"sha256": key, "reply": reply}, ensure_ascii=False).encode("utf-8")
        try:
            if write_new_blob(self.container, name, data):
                self.written += 1
        except (StoreError, OSError) as err:
            log.warning("the judge's reply cache could not keep %s (%s); the next run asks again", name, err)

    def keys(self) -> list[str]:
        return [name.rsplit("/", 1)[-1][:-len(".json")] for name in list_blob_names(self.container, self.prefix + "/")]
