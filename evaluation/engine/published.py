"""An embedded index kept in Blob storage or S3: published once from a built folder, fetched once per
fingerprint into a local cache, where runs open it read-only.

Layout under the index's address (``https://<acct>.blob.core.windows.net/indexes/docs``, or
``s3://<bucket>/indexes/docs`` for the AWS flow, through boto3's default credentials)::

    current.json                 {"format": 1, "fingerprint": "<fp>"}: the version runs use now
    <fp>/files.json              every file of that version: path, bytes, sha256
    <fp>/manifest.json ...       the index folder as ``build_index`` wrote it

A version is written whole before ``current.json`` names it, and never changed after its
``files.json`` exists, so a run that pinned a fingerprint can still fetch it after a newer one is
published (old versions stay until someone deletes them). A fetch checks every file's sha256
against ``files.json`` and the manifest's fingerprint against the version's name before the
folder is moved into place; a fetch that stops half way leaves nothing behind.
"""
from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
import tempfile
from pathlib import Path, PurePosixPath
from typing import Any

from ..errors import SearchIndexError
from ..files import locked, sha256_file
from .index import MANIFEST, read_manifest

log = logging.getLogger(__name__)

PUBLISHED_FORMAT = 1
CURRENT = "current.json"
FILES = "files.json"
KEEP_FETCHED = 2  # fingerprints of one address kept in the cache: the newest, and the one before
_FETCHED_MARK = ".fetched"


class _Place:
    """Where a published index lives: a Blob container, or an S3 bucket, and the folder in it (``root``).
    Names given to its methods are whole names in the container or bucket."""

    root: str

    def __enter__(self) -> _Place:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def read(self, name: str) -> bytes:
        raise NotImplementedError

    def write(self, name: str, data: bytes) -> None:
        raise NotImplementedError

    def upload(self, name: str, path: Path) -> None:
        raise NotImplementedError

    def download(self, name: str, path: Path) -> None:
        raise NotImplementedError


class _BlobPlace(_Place):
    def __init__(self, address: str, connection_string: str | None, credential: Any) -> None:
        from ..store.blob import container_client, parse_address

        parsed = parse_address(address)
        self.container = container_client(parsed, connection_string=connection_string, credential=credential)
        self.root = parsed.path

    def __exit__(self, *exc: object) -> None:
        self.container.close()

    def read(self, name: str) -> bytes:
        from ..store.blob import read_blob

        return read_blob(self.container, name)

    def write(self, name: str, data: bytes) -> None:
        from ..store.blob import write_blob

        write_blob(self.container, name, data)

    def upload(self, name: str, path: Path) -> None:
        from ..store.blob import upload_file

        upload_file(self.container, name, path)

    def download(self, name: str, path: Path) -> None:
        from ..store.blob import download_file

        download_file(self.container, name, path)


class _S3Place(_Place):
    def __init__(self, address: str) -> None:
        from ..store.s3 import parse_s3_address, s3_client

        parsed = parse_s3_address(address)
        self.client, self.bucket, self.root = s3_client(), parsed.bucket, parsed.key

    def read(self, name: str) -> bytes:
        from ..store.s3 import read_object

        return read_object(self.client, self.bucket, name)

    def write(self, name: str, data: bytes) -> None:
        from ..store.s3 import write_object

        write_object(self.client, self.bucket, name, data)

    def upload(self, name: str, path: Path) -> None:
        from ..store.s3 import upload_path

        upload_path(self.client, self.bucket, name, path)

    def download(self, name: str, path: Path) -> None:
        from ..store.s3 import download_path

        download_path(self.client, self.bucket, name, path)


def _place(address: str, connection_string: str | None, credential: Any) -> _Place:
    from ..store.s3 import is_s3_address

    return _S3Place(address) if is_s3_address(address) else _BlobPlace(address, connection_string, credential)


def _join(*parts: str) -> str:
    return "/".join(p.strip("/") for p in parts if p.strip("/"))


def publish_index(folder: str | Path, address: str, *, connection_string: str | None = None,
                  credential: Any = None) -> dict[str, Any]:
    """Upload the built index in ``folder`` to ``address`` and make it the current version.

    Returns ``{"fingerprint", "files", "bytes", "reused"}``; ``reused`` is True when that version was
    already published whole (then only ``current.json`` is written).
    """
    folder = Path(folder)
    manifest = read_manifest(folder)
    if manifest is None or "fingerprint" not in manifest:
        raise SearchIndexError(f"{folder}: no index here to publish; build one with "
                               f"`python3 -m evaluation index CORPUS --out {folder}`")
    fingerprint = manifest["fingerprint"]
    place = _place(address, connection_string, credential)
    version = _join(place.root, fingerprint)
    files = sorted(p for p in folder.rglob("*") if p.is_file() and not p.name.startswith("."))
    listing = {"format": PUBLISHED_FORMAT, "fingerprint": fingerprint,
               "files": [{"path": p.relative_to(folder).as_posix(), "bytes": p.stat().st_size,
                          "sha256": sha256_file(p)} for p in files]}
    with place:
        try:
            published = json.loads(place.read(_join(version, FILES)))
        except FileNotFoundError:
            published = None
        reused = published == listing
        if not reused:
            for path in files:
                place.upload(_join(version, path.relative_to(folder).as_posix()), path)
            place.write(_join(version, FILES), json.dumps(listing, indent=1).encode("utf-8"))
        place.write(_join(place.root, CURRENT),
                    json.dumps({"format": PUBLISHED_FORMAT, "fingerprint": fingerprint}).encode("utf-8"))
    total = sum(f["bytes"] for f in listing["files"])
    log.info("published index %s (%d files, %d bytes) to %s", fingerprint[:12], len(files), total, address)
    return {"fingerprint": fingerprint, "files": len(files), "bytes": total, "reused": reused}


def published_fingerprint(address: str, *, connection_string: str | None = None, credential: Any = None) -> str:
    """The fingerprint of the version ``address`` names as current (one small read, no download)."""
    with _place(address, connection_string, credential) as place:
        try:
            raw = place.read(_join(place.root, CURRENT))
        except FileNotFoundError as err:
            raise SearchIndexError(f"{address}: no published index here; publish one with "
                                   f"`python3 -m evaluation index CORPUS --out {address}`") from err
    try:
        current = json.loads(raw)
        fingerprint = current["fingerprint"]
    except (ValueError, KeyError, TypeError) as err:
        raise SearchIndexError(f"{address}/{CURRENT} is not a published index's pointer; publish the index "
                               "again") from err
    if not isinstance(fingerprint, str) or len(fingerprint) != 64 or not fingerprint.isalnum():
        raise SearchIndexError(f"{address}/{CURRENT} names no fingerprint; publish the index again")
    return fingerprint


def fetch_index(address: str, cache: str | Path, *, fingerprint: str | None = None,
                connection_string: str | None = None, credential: Any = None) -> Path:
    """The local folder holding the published index at ``address``, downloaded into ``cache`` once.

    ``fingerprint`` pins a version (a run fetches the version it planned with, even after a newer
    one is published); without it, the current one. Every file is checked (see the module
    docstring); a damaged or tampered download raises ``SearchIndexError`` and leaves nothing.
    """
    fingerprint = fingerprint or published_fingerprint(address, connection_string=connection_string,
                                                       credential=credential)
    home = Path(cache) / hashlib.sha256(address.rstrip("/").encode("utf-8")).hexdigest()[:16]
    folder = home / fingerprint
    if (folder / _FETCHED_MARK).is_file():
        (folder / _FETCHED_MARK).touch()  # most recently used: kept by the pruning below
        return folder
    home.mkdir(parents=True, exist_ok=True)
    with locked(home / ".lock"):  # one download per folder, whoever else is fetching on this machine
        if not (folder / _FETCHED_MARK).is_file():
            _download(address, fingerprint, home, folder, connection_string, credential)
            _prune(home, keep=folder)
    return folder


def _download(address: str, fingerprint: str, home: Path, folder: Path, connection_string: str | None,
              credential: Any) -> None:
    place = _place(address, connection_string, credential)
    version = _join(place.root, fingerprint)
    staging = Path(tempfile.mkdtemp(prefix=f".{fingerprint[:12]}.fetching-", dir=home))
    try:
        with place:
            try:
                listing = json.loads(place.read(_join(version, FILES)))
            except FileNotFoundError as err:
                raise SearchIndexError(f"{address}: version {fingerprint[:12]} was never published whole "
                                       "(no files.json); publish the index again") from err
            except ValueError as err:
                raise SearchIndexError(f"{address}/{fingerprint}/{FILES} is not readable ({err}); publish "
                                       "the index again") from err
            for item in _listed_files(address, listing, fingerprint):
                local = staging / item["path"]
                local.parent.mkdir(parents=True, exist_ok=True)
                try:
                    place.download(_join(version, item["path"]), local)
                except FileNotFoundError as err:
                    raise SearchIndexError(f"{address}: {fingerprint[:12]}/{item['path']} is listed but "
                                           "missing; publish the index again") from err
                if sha256_file(local) != item["sha256"]:
                    raise SearchIndexError(f"{address}: {fingerprint[:12]}/{item['path']} does not match its "
                                           "checksum in files.json; publish the index again")
        manifest = read_manifest(staging)
        if manifest is None or manifest.get("fingerprint") != fingerprint:
            raise SearchIndexError(f"{address}: version {fingerprint[:12]} holds an index whose manifest "
                                   f"says {str((manifest or {}).get('fingerprint'))[:12]}; publish the index again")
        for path in staging.rglob("*"):  # opened read-only by runs; nobody should write here
            if path.is_file():
                path.chmod(0o444)
        (staging / _FETCHED_MARK).write_text(fingerprint)
        if folder.exists():  # a fetch that stopped before its mark: start over
            shutil.rmtree(folder)
        os.replace(staging, folder)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    log.info("fetched index %s from %s into %s", fingerprint[:12], address, folder)


def _listed_files(address: str, listing: Any, fingerprint: str) -> list[dict[str, Any]]:
    """The listing's files, refusing any path that would land outside the folder."""
    try:
        if listing["fingerprint"] != fingerprint:
            raise ValueError("fingerprint")
        files = listing["files"]
        checked = []
        for item in files:
            path = PurePosixPath(item["path"])
            if path.is_absolute() or ".." in path.parts or not path.parts or item["path"].startswith("."):
                raise ValueError(item["path"])
            checked.append({"path": path.as_posix(), "bytes": int(item["bytes"]), "sha256": str(item["sha256"])})
    except (KeyError, TypeError, ValueError) as err:
        raise SearchIndexError(f"{address}/{fingerprint}/{FILES} is not a listing of this version "
                               f"({err}); publish the index again") from err
    if not any(item["path"] == MANIFEST for item in checked):
        raise SearchIndexError(f"{address}/{fingerprint}/{FILES} lists no {MANIFEST}; publish the index again")
    return checked


def _prune(home: Path, *, keep: Path) -> None:
    """Keep the ``KEEP_FETCHED`` most recently used versions of one address; remove the rest (a run
    that still has one open keeps reading it: its files stay until closed)."""
    fetched = sorted((p for p in home.iterdir() if (p / _FETCHED_MARK).is_file()),
                     key=lambda p: (p == keep, (p / _FETCHED_MARK).stat().st_mtime), reverse=True)
    for old in fetched[KEEP_FETCHED:]:
        shutil.rmtree(old, ignore_errors=True)



