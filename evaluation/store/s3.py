"""Amazon S3 behind the same small calls as Blob: read an object, write a new one, list keys.

This is the only module that imports ``boto3`` (and ``botocore``), inside functions, so the library
loads without it; S3 needs ``pip install boto3``. botocore's errors stop here: an absent object
becomes ``FileNotFoundError`` (callers treat it like a missing file), and everything else becomes a
``StoreError`` whose sentence names the address and the fix.

An address is ``s3://<bucket>/<key or prefix>``, read strictly (``parse_s3_address``): the scheme in
any case, a bucket named as S3 allows (3-63 lowercase letters, digits, ``.`` and ``-``), no port, user,
query or fragment, and no ``.`` or ``..`` segment. Anything else is a sentence with a valid example.

Clients sign in with boto3's default credentials (its environment variables, ``~/.aws``, an instance
or task role) and take boto3's usual settings, ``AWS_ENDPOINT_URL_S3`` for an S3-compatible endpoint
included; or pass a client you built (``open_store(..., s3_client=)``, or a ``fetcher=`` for reads).
Every client here fails fast: two attempts, a 5 s connection timeout, so an unreachable endpoint is
one sentence within seconds, not botocore's default of several retries.
"""
from __future__ import annotations

import contextlib
import re
from dataclasses import dataclass
from typing import Any, Iterator
from urllib.parse import urlsplit

from ..extras import needs
from ..errors import StoreError, first_line

EXAMPLE = "s3://<bucket>/<key or prefix>, for example s3://evals/policies/golden.jsonl"
ATTEMPTS = 2  # botocore counts the first request: one retry
CONNECTION_TIMEOUT_S = 5
READ_TIMEOUT_S = 30

_BUCKET = re.compile(r"(?!xn--)(?!.*\.\.)(?!\d+\.\d+\.\d+\.\d+$)[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]")


@dataclass(frozen=True)
class S3Address:
    """A parsed S3 address: the bucket and the key (an object's, or a prefix) inside it."""

    text: str
    bucket: str
    key: str  # without a leading or trailing "/"; may be ""


def is_s3_address(source: object) -> bool:
    """True for a string starting ``s3://`` in any case (a ``Path`` is never an address)."""
    return isinstance(source, str) and source[:5].lower() == "s3://"


def _refuse(address: str, why: str) -> StoreError:
    return StoreError(f"{address}: {why}; an S3 address reads {EXAMPLE}")


def parse_s3_address(address: str) -> S3Address:
    """Split ``s3://bucket/key`` into bucket and key; a sentence when it is not one (module docstring)."""
    try:
        parts = urlsplit(address)
        port = parts.port
    except ValueError as err:
        raise _refuse(address, f"not a valid address ({err})") from err
    if parts.scheme.lower() != "s3":
        raise _refuse(address, "not an S3 address")
    if parts.query or parts.fragment or "?" in address or "#" in address:
        raise _refuse(address, "the address holds a query or fragment")
    if parts.username is not None or port is not None or any(ch.isspace() for ch in address):
        raise _refuse(address, "the address holds a user name, a port or spaces (the endpoint comes from boto3's "
                               "settings, AWS_ENDPOINT_URL_S3 for one that is not AWS)")
    bucket = parts.netloc
    if not _BUCKET.fullmatch(bucket):
        raise _refuse(address, f"{bucket!r} is not a bucket name (3-63 lowercase letters, digits, '.' and '-', "
                               "starting and ending with a letter or digit)")
    segments = [s for s in parts.path.split("/") if s]
    if any(s in (".", "..") for s in segments):
        raise _refuse(address, 'the path holds a "." or ".." segment')
    return S3Address(text=address, bucket=bucket, key="/".join(segments))


def s3_client() -> Any:
    """A boto3 S3 client with boto3's default credentials and settings, failing fast (module docstring)."""
    with needs("s3", "an s3:// address", StoreError):
        import boto3
        from botocore.config import Config
    config = Config(connect_timeout=CONNECTION_TIMEOUT_S, read_timeout=READ_TIMEOUT_S,
                    retries={"max_attempts": ATTEMPTS, "mode": "standard"})
    with _translated("s3://"):
        return boto3.session.Session().client("s3", config=config)


def _code(err: Any) -> str:
    response = getattr(err, "response", None) or {}
    return str((response.get("Error") or {}).get("Code") or
               (response.get("ResponseMetadata") or {}).get("HTTPStatusCode") or "")


@contextlib.contextmanager
def _translated(where: str) -> Iterator[None]:
    """botocore's errors as sentences; an absent object passes on as ``FileNotFoundError``."""
    from botocore.exceptions import (BotoCoreError, ClientError, ConnectionError as BotoConnectionError,
                                     NoCredentialsError, NoRegionError, PartialCredentialsError)

    try:
        yield
    except ClientError as err:
        code = _code(err)
        if code == "NoSuchBucket":
            raise StoreError(f"{where}: the bucket does not exist; create it or check the address") from err
        if code in ("NoSuchKey", "404", "NotFound"):
            raise FileNotFoundError(f"{where}: no such object") from err
        if code in ("AccessDenied", "403", "Forbidden", "InvalidAccessKeyId", "SignatureDoesNotMatch",
                    "ExpiredToken"):
            raise StoreError(f"{where}: not signed in or not allowed ({code}); give boto3 credentials that may "
                             "read and write the bucket (AWS_PROFILE, AWS_ACCESS_KEY_ID, or a role)") from err
        raise StoreError(f"{where}: S3 refused the request ({code or first_line(err)})") from err
    except (NoCredentialsError, PartialCredentialsError) as err:
        raise StoreError(f"{where}: no AWS credentials found ({first_line(err)}); boto3 reads them from "
                         "AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, AWS_PROFILE, ~/.aws or a role") from err
    except NoRegionError as err:
        raise StoreError(f"{where}: no AWS region set; set AWS_DEFAULT_REGION or a region in ~/.aws/config") from err
    except BotoConnectionError as err:  # refused, timed out, DNS: after the one retry
        raise StoreError(f"{where}: cannot reach S3 ({first_line(err)}); check the address and the endpoint "
                         "(AWS_ENDPOINT_URL_S3 for an S3-compatible one), and that it is running") from err
    except BotoCoreError as err:  # anything else botocore raises: still one sentence
        raise StoreError(f"{where}: the S3 request failed ({type(err).__name__}: {first_line(err)})") from err


def read_object(client: Any, bucket: str, key: str) -> bytes:
    """The bytes of ``key``; ``FileNotFoundError`` when it is absent."""
    with _translated(f"s3://{bucket}/{key}"):
        return client.get_object(Bucket=bucket, Key=key)["Body"].read()


def write_new_object(client: Any, bucket: str, key: str, data: bytes) -> bool:
    """Put ``data`` as ``key`` in one request that S3 refuses when the key exists (``If-None-Match: *``);
    False when it existed, so two savers of one run id never overwrite each other."""
    from botocore.exceptions import ClientError

    with _translated(f"s3://{bucket}/{key}"):
        try:
            client.put_object(Bucket=bucket, Key=key, Body=data, IfNoneMatch="*")
        except ClientError as err:
            if _code(err) in ("PreconditionFailed", "412", "ConditionalRequestConflict"):
                return False
            raise
    return True


def object_exists(client: Any, bucket: str, key: str) -> bool:
    """Whether ``key`` exists. A missing bucket answers 404 to a HEAD too, so it reads as False here;
    ``check`` and every read and list name a missing bucket."""
    try:
        with _translated(f"s3://{bucket}/{key}"):
            client.head_object(Bucket=bucket, Key=key)
    except FileNotFoundError:
        return False
    return True


def list_keys(client: Any, bucket: str, prefix: str) -> list[str]:
    """Every key that starts with ``prefix`` (all pages)."""
    with _translated(f"s3://{bucket}/{prefix}"):
        pages = client.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix)
        return [item["Key"] for page in pages for item in page.get("Contents") or ()]


def check_writable(client: Any, bucket: str, probe_key: str) -> None:
    """The bucket exists, answers and takes an object: ``probe_key`` is written and deleted again."""
    with _translated(f"s3://{bucket}/{probe_key}"):
        client.put_object(Bucket=bucket, Key=probe_key, Body=b"")
        client.delete_object(Bucket=bucket, Key=probe_key)


def read_s3_bytes(address: str, *, client: Any | None = None) -> bytes:
    """The bytes of the object at ``address``; ``FileNotFoundError`` when it is absent."""
    parsed = parse_s3_address(address)
    if not parsed.key:
        raise StoreError(f"{address}: the address names a bucket but no object; add the object's key")
    try:
        return read_object(client or s3_client(), parsed.bucket, parsed.key)
    except FileNotFoundError as err:
        raise FileNotFoundError(f"{address}: no such object") from err


def write_object(client: Any, bucket: str, key: str, data: bytes) -> None:
    """Put ``data`` as ``key`` in one request, replacing whatever was there."""
    with _translated(f"s3://{bucket}/{key}"):
        client.put_object(Bucket=bucket, Key=key, Body=data)


def upload_path(client: Any, bucket: str, key: str, path: Any) -> None:
    """Put the local file at ``path`` as ``key`` (streamed from the file), replacing it."""
    with _translated(f"s3://{bucket}/{key}"), open(path, "rb") as handle:
        client.put_object(Bucket=bucket, Key=key, Body=handle)


def download_path(client: Any, bucket: str, key: str, path: Any) -> None:
    """Stream ``key`` into the local file at ``path``; ``FileNotFoundError`` when it is absent."""
    with _translated(f"s3://{bucket}/{key}"):
        body = client.get_object(Bucket=bucket, Key=key)["Body"]
        with open(path, "wb") as handle:
            for chunk in body.iter_chunks(1 << 20):
                handle.write(chunk)


def delete_keys(client: Any, bucket: str, keys: list[str]) -> None:
    """Delete every key in ``keys`` (a thousand a request, S3's most); one already gone is no error."""
    with _translated(f"s3://{bucket}/"):
        for start in range(0, len(keys), 1000):
            batch = [{"Key": key} for key in keys[start:start + 1000]]
            answer = client.delete_objects(Bucket=bucket, Delete={"Objects": batch, "Quiet": True})
            failed = answer.get("Errors") or []
            if failed:
                first = failed[0]
                raise StoreError(f"s3://{bucket}/{first.get('Key')}: S3 did not delete it ({first.get('Code')}: "
                                 f"{first.get('Message')}); {len(failed)} of {len(batch)} objects were left")


def object_version(client: Any, bucket: str, key: str, *, max_bytes: int,
                   read: bool = False) -> tuple[str, str, bytes | None] | None:
    """``(sha256, etag, bytes or None)`` of one version of ``key``, or None when it is absent: what
    ``blob.blob_version`` gives for a blob, by the same rules. Its size is asked first (one HEAD): above
    ``max_bytes`` it is ``BlobTooLargeError`` and nothing is downloaded. The download carries ``If-Match``
    on the ETag the HEAD saw, so the hash is of exactly that version; a save landing in between is asked
    for again (three times at most)."""
    import hashlib

    from ..errors import BlobTooLargeError

    where = f"s3://{bucket}/{key}"
    for _attempt in range(3):
        try:
            with _translated(where):
                head = client.head_object(Bucket=bucket, Key=key)
        except FileNotFoundError:
            return None
        size, etag = int(head["ContentLength"]), str(head["ETag"])
        if size > max_bytes:
            raise BlobTooLargeError(f"{where} is {size:,} bytes, more than the {max_bytes:,} allowed", size)
        digest, parts = hashlib.sha256(), []
        try:
            with _translated(where):
                body = client.get_object(Bucket=bucket, Key=key, IfMatch=etag)["Body"]
                for chunk in body.iter_chunks(1 << 20):
                    digest.update(chunk)
                    if read:
                        parts.append(chunk)
        except FileNotFoundError:
            return None
        except StoreError as err:
            if _code(err.__cause__) in ("PreconditionFailed", "412"):
                continue  # saved again between the HEAD and the download: ask for the new version
            raise
        return digest.hexdigest(), etag, b"".join(parts) if read else None
    raise StoreError(f"{where} changed three times while it was read; try again when saves have settled")


def object_has_etag(client: Any, bucket: str, key: str, etag: str) -> bool:
    """Whether ``key`` is still the version ``etag`` names (a HEAD with ``If-Match``: 412 -> False)."""
    from botocore.exceptions import ClientError

    try:
        with _translated(f"s3://{bucket}/{key}"):
            try:
                client.head_object(Bucket=bucket, Key=key, IfMatch=etag)
            except ClientError as err:
                if _code(err) in ("PreconditionFailed", "412"):
                    return False
                raise
    except FileNotFoundError:
        return False
    return True
