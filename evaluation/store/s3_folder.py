"""One collection's files in an S3 bucket, as the AWS flow reads and writes them: the same folder as
``collections.CollectionFolder`` (the golden file, its kept copies, ``targets.json``, a run's working
files and its ``RunStore``), with S3 underneath. The layout under ``s3://<bucket>/<collection>/`` is
the container's, so a report, a kept golden file and a run's working files have the same names on
AWS as on Azure, and every command that reads a store reads this one (``--store s3://<bucket>/<collection>``).
"""
from __future__ import annotations

from typing import Any

from .collections import CollectionFolder, check_collection_name
from .runs import S3Store


class S3CollectionFolder(CollectionFolder):
    """The folder ``<collection>/`` of ``bucket``, through ``client`` (a boto3 S3 client)."""

    def __init__(self, client: Any, bucket: str, name: str) -> None:
        self.client, self.bucket = client, bucket
        self.container = None  # no Blob container here: every read and write goes through the methods below
        self.name = check_collection_name(name)
        self.store = S3Store(client, bucket, name)

    def _root(self) -> str:
        return f"s3://{self.bucket}"

    def _read(self, name: str) -> bytes:
        from .s3 import read_object

        return read_object(self.client, self.bucket, name)

    def _write(self, name: str, data: bytes) -> None:
        from .s3 import write_object

        write_object(self.client, self.bucket, name, data)

    def _list(self, prefix: str) -> list[str]:
        from .s3 import list_keys

        return list_keys(self.client, self.bucket, prefix)

    def _delete(self, names: list[str]) -> None:
        from .s3 import delete_keys

        delete_keys(self.client, self.bucket, names)

    def _version(self, name: str, *, max_bytes: int, read: bool) -> tuple[str, str, bytes | None] | None:
        from .s3 import object_version

        return object_version(self.client, self.bucket, name, max_bytes=max_bytes, read=read)

    def _has_etag(self, name: str, etag: str) -> bool:
        from .s3 import object_has_etag

        return object_has_etag(self.client, self.bucket, name, etag)
