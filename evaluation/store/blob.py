"""Azure Blob Storage behind three small calls: read a blob, write a new blob, list blob names.

This is the only module that imports ``azure.storage.blob`` (and, with ``azure_token.py`` for
the judge's tokens, ``azure.identity`` or ``azure.core``), and it imports them inside functions so the
rest of the library loads without them. Azure's exceptions
stop here: an absent blob becomes ``FileNotFoundError`` (callers treat it like a missing file), and
everything else becomes a ``StoreError`` whose sentence names the address and the fix.

Addresses:

- ``https://<account>.blob.core.windows.net/<container>/<prefix...>``: signed in with the credential
  given, else ``DefaultAzureCredential``.
- ``http://127.0.0.1:10000/devstoreaccount1/<container>/<prefix...>``: path style, the account first,
  as Azurite serves it. Without a connection string, the development account's well-known key is used
  (published by Microsoft; the same as ``UseDevelopmentStorage=true``).
- With a connection string, the account and endpoint come from it and the address gives only the
  container and the prefix (its account must be the connection string's).

Addresses are read strictly (``parse_address``): the scheme in any case, an account of 3-24 lowercase
letters and digits on a ``<account>.blob.<cloud suffix>`` host over https (or an emulator host with
the account in the path), a container named as Azure allows, no query (a SAS token is not read from
the address) and no ``.`` or ``..`` segment; a scheme without its ``//`` (``https:/acct...``) is refused
with the address it should be. Anything else is a sentence with a valid example, never
a guess that sends the run, or a sign-in token, somewhere else.

Every client fails fast: three attempts at most, 1 s apart, a 5 s connection timeout, so an
unreachable endpoint is one sentence within seconds (about 2 s when the port refuses), not minutes.
"""
from __future__ import annotations

import contextlib
import ipaddress
import logging
import re
from dataclasses import dataclass
from typing import Any, Iterator
from urllib.parse import unquote, urlsplit

from ..errors import BlobTooLarge  # noqa: F401  (its name before the naming rule, importable here as before)
from ..errors import BlobTooLargeError, InputTooLargeError, StoreError, first_line, printable, shown
from ..extras import needs
from .address import ADDRESS_SHOWN, malformed_address

log = logging.getLogger(__name__)

DEV_ACCOUNT = "devstoreaccount1"
# Azurite's development account key: public, documented by Microsoft, accepted only by the emulator.
DEV_ACCOUNT_KEY = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
EXAMPLE = ("https://<account>.blob.core.windows.net/<container>/<path>, or for Azurite "
           "http://127.0.0.1:10000/devstoreaccount1/<container>/<path>")
# How hard a client tries (see the module docstring): seconds, and attempts after the first.
RETRIES = 2
BACKOFF_S = 1
CONNECTION_TIMEOUT_S = 5
READ_TIMEOUT_S = 30

_ACCOUNT = re.compile(r"[a-z0-9]{3,24}")
_BLOB_HOST = re.compile(r"(?P<account>[a-z0-9]{3,24})\.blob\.(?:[a-z0-9-]+\.)+[a-z]{2,}")
_CONTAINER = re.compile(r"(?!.*--)[a-z0-9][a-z0-9-]{1,61}[a-z0-9]|\$root|\$web")


@dataclass(frozen=True)
class BlobAddress:
    """A parsed Blob address: where the account answers, the container, and the path inside it."""

    text: str
    account_url: str  # https://<account>.blob.core.windows.net, or http://host:port/<account> (path style)
    account: str
    container: str
    path: str         # blob name or prefix, without leading or trailing "/"; may be ""

    @property
    def path_style(self) -> bool:
        return self.account_url.rstrip("/").endswith("/" + self.account)


def _is_path_style(host: str) -> bool:
    """Azurite and other emulators answer on an IP or a plain host name, with the account in the path."""
    if ".blob." in host:
        return False
    try:
        ipaddress.ip_address(host)
        return True
    except ValueError:
        return "." not in host  # localhost, or a compose service name such as "azurite"


def container_problem(name: str) -> str | None:
    """Why ``name`` cannot name a Blob container (Azure's rule), or None when it can."""
    if _CONTAINER.fullmatch(name):
        return None
    return (f"{shown(name)} is not a container name (3-63 lowercase letters, digits and single hyphens, starting and "
            "ending with a letter or digit)")


def _refuse(address: str, why: str) -> StoreError:
    return StoreError(f"{printable(_without_secrets(address), ADDRESS_SHOWN)}: {why}; a Blob address reads {EXAMPLE}")


def _without_secrets(address: str) -> str:
    """``address`` as a sentence may repeat it: its query (a SAS token, more often than not) and a user name
    with its password are secrets that a terminal or a CI log must never show, so each is written "…"."""
    scheme, sep, rest = address.partition("://")
    if not sep:
        return address
    rest = re.sub(r"^[^/?#]*@", "…@", rest)
    return scheme + sep + re.sub(r"[?#].*", "?…", rest, flags=re.S)


def parse_address(address: str) -> BlobAddress:
    """Split a Blob address into account, container and path; a sentence when it is not one (see the
    module docstring for what is allowed)."""
    malformed = malformed_address(address)
    if malformed is not None:
        raise _refuse(address, malformed)
    try:
        parts = urlsplit(address)
        host = (parts.hostname or "").lower()
        port = parts.port
    except ValueError as err:
        raise _refuse(address, f"not a valid address ({err})") from err
    scheme = parts.scheme.lower()
    if scheme not in ("http", "https") or not host:
        raise _refuse(address, "not a Blob address")
    if parts.query or parts.fragment:
        raise _refuse(address, "the address holds a query or fragment (a SAS token is not read from it: sign "
                               "in, or set AZURE_STORAGE_CONNECTION_STRING)")
    if parts.username is not None or any(ch.isspace() for ch in address):
        raise _refuse(address, "the address holds a user name or spaces")
    segments = [unquote(s) for s in parts.path.split("/") if s]
    if any(s in (".", "..") for s in segments):
        raise _refuse(address, 'the path holds a "." or ".." segment')
    origin = f"{scheme}://{host if ':' not in host else f'[{host}]'}" + (f":{port}" if port is not None else "")
    if _is_path_style(host):
        if len(segments) < 2:
            raise StoreError(f"{printable(address, ADDRESS_SHOWN)}: an emulator address names the account then "
                             f"the container, for example {printable(origin, ADDRESS_SHOWN)}/{DEV_ACCOUNT}/runs")
        account, container, rest = segments[0], segments[1], segments[2:]
        if not _ACCOUNT.fullmatch(account):
            raise _refuse(address, f"{shown(account)} is not a storage account name (3-24 lowercase letters and "
                                   "digits)")
        account_url = f"{origin}/{account}"
    else:
        named = _BLOB_HOST.fullmatch(host)
        if named is None:
            raise _refuse(address, f"{printable(host, ADDRESS_SHOWN)} is not a Blob endpoint "
                                   "(<account>.blob.core.windows.net, the account 3-24 lowercase letters and digits)")
        if scheme != "https":
            raise _refuse(address, "Azure Storage is reached over https")
        if not segments:
            raise StoreError(f"{printable(address, ADDRESS_SHOWN)}: the address names no container; add it after "
                             f"the host, for example {printable(origin, ADDRESS_SHOWN)}/runs")
        account, container, rest = named.group("account"), segments[0], segments[1:]
        account_url = origin
    problem = container_problem(container)
    if problem:
        raise _refuse(address, problem)
    return BlobAddress(text=address, account_url=account_url, account=account, container=container,
                       path="/".join(rest))


def client_options() -> dict[str, Any]:
    """What every Blob client here is built with: few retries, short timeouts (module docstring)."""
    with needs("azure", "a Blob address", StoreError):
        from azure.storage.blob import LinearRetry

    # The SDK's default (15 s, then 18 s, 24 s, ... apart) is what made an unreachable endpoint take 80 s.
    return {"retry_policy": LinearRetry(backoff=BACKOFF_S, random_jitter_range=0, retry_total=RETRIES),
            "connection_timeout": CONNECTION_TIMEOUT_S, "read_timeout": READ_TIMEOUT_S}


def _service_from_connection_string(connection_string: str) -> Any:
    with needs("azure", "a Blob address", StoreError):
        from azure.storage.blob import BlobServiceClient

    try:
        return BlobServiceClient.from_connection_string(connection_string, **client_options())
    except ValueError as err:
        raise StoreError(f"the storage connection string cannot be used ({err}); copy it again "
                         "from the storage account's Access keys page") from err


def _signed_in_service(account_url: str, credential: Any) -> Any:
    """A service client for ``account_url`` signed in with ``credential``, else ``DefaultAzureCredential``."""
    with needs("azure", "a Blob address", StoreError):
        from azure.storage.blob import BlobServiceClient
        from azure.identity import DefaultAzureCredential

    if credential is None:
        credential = DefaultAzureCredential()
    return BlobServiceClient(account_url, credential=credential, **client_options())


def same_endpoint(one: str, other: str) -> bool:
    """Whether two Blob endpoints (``https://<acct>.blob.core.windows.net``, Azurite's
    ``http://127.0.0.1:10000/devstoreaccount1``) are one: the same scheme, host and port (443 and 80
    written or not) and path, whatever the case of the scheme and host and a trailing "/". The one rule
    for every place an address is matched against the endpoint the app or a connection string names."""
    return _endpoint_key(one) == _endpoint_key(other)


def _endpoint_key(url: str) -> tuple[str, str, int | None, str] | None:
    try:
        parts = urlsplit(url.strip())
        port = parts.port
    except ValueError:  # a port that is not a number: matches nothing, not even itself
        return None
    scheme = parts.scheme.lower()
    return scheme, (parts.hostname or "").lower(), port or {"https": 443, "http": 80}.get(scheme), \
        parts.path.rstrip("/")


def container_client(address: BlobAddress, *, connection_string: str | None = None,
                     credential: object | None = None) -> Any:
    """A ``ContainerClient`` for the address's container, signed in as the module docstring says. With a
    connection string, the address must be on the connection string's endpoint (account, host, port):
    the client goes where the connection string says, so an address naming anywhere else is refused
    rather than read or written somewhere it does not name."""
    if connection_string:
        service = _service_from_connection_string(connection_string)
        if service.account_name and service.account_name != address.account:
            raise StoreError(f"{printable(address.text, ADDRESS_SHOWN)}: the address names account "
                             f"{shown(address.account)} but the connection string is for "
                             f"{shown(service.account_name)}; use one account for both")
        endpoint = service.url.rstrip("/")
        if not same_endpoint(address.account_url, endpoint):
            raise StoreError(f"{printable(address.text, ADDRESS_SHOWN)}: the address is on the Blob endpoint "
                             f"{address.account_url} but the connection string is for {endpoint}; write the "
                             f"address on {endpoint}, or use the connection string of the account it names")
    elif credential is None and address.path_style and address.account == DEV_ACCOUNT:
        service = _signed_in_service(address.account_url,
                                     {"account_name": DEV_ACCOUNT, "account_key": DEV_ACCOUNT_KEY})
    elif credential is None and address.path_style:
        raise StoreError(f"{address.text}: an emulator account other than {DEV_ACCOUNT} needs its "
                         "connection string; set AZURE_STORAGE_CONNECTION_STRING")
    else:
        service = _signed_in_service(address.account_url, credential)
    return service.get_container_client(address.container)


@contextlib.contextmanager
def _translated(where: str) -> Iterator[None]:
    """Azure's errors as sentences; ``ResourceNotFoundError`` for a blob passes on as FileNotFoundError."""
    from azure.core.exceptions import (AzureError, ClientAuthenticationError, HttpResponseError,
                                       ResourceNotFoundError, ServiceRequestError, ServiceResponseError)

    try:
        yield
    except ResourceNotFoundError as err:
        if getattr(err, "error_code", None) == "ContainerNotFound":
            raise StoreError(f"{where}: the container does not exist; create it (the infra deploy does) "
                             "or check the address") from err
        raise FileNotFoundError(f"{where}: no such blob") from err
    except ClientAuthenticationError as err:
        raise StoreError(f"{where}: not signed in or not allowed ({first_line(err)}); sign in with "
                         "`az login` and hold 'Storage Blob Data Contributor', or set "
                         "AZURE_STORAGE_CONNECTION_STRING") from err
    except ServiceRequestError as err:
        raise StoreError(f"{where}: cannot reach the storage account ({first_line(err)}); check the "
                         "address, and for Azurite that the emulator is running") from err
    except HttpResponseError as err:
        raise StoreError(f"{where}: the storage service refused the request "
                         f"({err.status_code} {getattr(err, 'error_code', None) or first_line(err)})") from err
    except ServiceResponseError as err:
        raise StoreError(f"{where}: the storage account did not answer in time ({first_line(err)}); "
                         "try again, and check the address") from err
    except AzureError as err:  # anything else the SDK raises: still one sentence
        raise StoreError(f"{where}: the storage request failed ({type(err).__name__}: {first_line(err)})") from err


def read_blob(container: Any, name: str, max_bytes: int | None = None) -> bytes:
    """The bytes of blob ``name``; ``FileNotFoundError`` when it is absent, ``InputTooLargeError`` when it
    holds more than ``max_bytes`` (known from the first response, before the rest is downloaded)."""
    with _translated(f"{container.url}/{name}"):
        download = container.download_blob(name)
        if max_bytes is not None and download.size > max_bytes:
            raise InputTooLargeError(f"{container.url}/{name}", max_bytes)
        return download.readall()


def write_new_blob(container: Any, name: str, data: bytes) -> bool:
    """Upload ``data`` as ``name`` in one request, never over an existing blob; False when it existed."""
    from azure.core.exceptions import ResourceExistsError

    with _translated(f"{container.url}/{name}"):
        try:
            container.upload_blob(name, data, overwrite=False)
        except ResourceExistsError:
            return False
    return True


def check_writable(container: Any, probe_name: str) -> None:
    """The container exists, answers and takes a blob: ``probe_name`` is written and deleted again."""
    from azure.core.exceptions import HttpResponseError

    with _translated(container.url):
        container.get_container_properties()
    with _translated(f"{container.url}/{probe_name}"):
        container.upload_blob(probe_name, b"", overwrite=True)
        try:
            container.delete_blob(probe_name)
        except HttpResponseError as err:  # written but not deletable (an immutability policy): saving works
            log.info("could not delete the write check %s: %s", probe_name, first_line(err))


def blob_exists(container: Any, name: str) -> bool:
    """Whether blob ``name`` exists (False in a container that does not)."""
    with _translated(f"{container.url}/{name}"):
        return bool(container.get_blob_client(name).exists())


def list_blob_names(container: Any, prefix: str) -> list[str]:
    """Names of every blob whose name starts with ``prefix``."""
    with _translated(f"{container.url}/{prefix}"):
        return list(container.list_blob_names(name_starts_with=prefix))


def list_folders(container: Any, prefix: str = "") -> list[str]:
    """Names of the folders directly under ``prefix`` (blob name prefixes up to the next "/"), without it."""
    with _translated(f"{container.url}/{prefix}"):
        return [item.name[len(prefix):].rstrip("/") for item in container.walk_blobs(name_starts_with=prefix or None,
                                                                                    delimiter="/")
                if item.name.endswith("/")]


def open_container(container: str, *, account_url: str | None = None, connection_string: str | None = None,
                   credential: object | None = None) -> Any:
    """A ``ContainerClient`` for ``container`` in an account named by its URL (signed in with ``credential``,
    else ``DefaultAzureCredential``) or by a connection string (local and Azurite only)."""
    if connection_string:
        service = _service_from_connection_string(connection_string)
    elif account_url:
        service = _signed_in_service(account_url, credential)
    else:
        raise StoreError("no storage account named: give its URL (https://<account>.blob.core.windows.net) "
                         "or, locally, a connection string")
    return service.get_container_client(container)


def read_blob_bytes(address: str, *, connection_string: str | None = None, max_bytes: int | None = None) -> bytes:
    """The bytes of the blob at ``address``; ``FileNotFoundError`` when it is absent (``max_bytes``: see
    ``read_blob``)."""
    parsed = parse_address(address)
    if not parsed.path:
        raise StoreError(f"{address}: the address names a container but no blob; add the blob's name")
    client = container_client(parsed, connection_string=connection_string)
    with client:
        try:
            return read_blob(client, parsed.path, max_bytes)
        except FileNotFoundError as err:
            raise FileNotFoundError(f"{address}: no such blob") from err


def write_blob(container: Any, name: str, data: bytes) -> None:
    """Upload ``data`` as ``name`` in one request, replacing whatever was there."""
    with _translated(f"{container.url}/{name}"):
        container.upload_blob(name, data, overwrite=True)


def upload_file(container: Any, name: str, path: Any) -> None:
    """Upload the local file at ``path`` as ``name`` (streamed; large files go in blocks), replacing it."""
    with _translated(f"{container.url}/{name}"), open(path, "rb") as handle:
        container.upload_blob(name, handle, overwrite=True)


def download_file(container: Any, name: str, path: Any) -> None:
    """Stream blob ``name`` into the local file at ``path``; ``FileNotFoundError`` when it is absent."""
    with _translated(f"{container.url}/{name}"), open(path, "wb") as handle:
        container.download_blob(name).readinto(handle)


def delete_blobs(container: Any, names: list[str]) -> None:
    """Delete every blob in ``names``; one already gone is no error."""
    from azure.core.exceptions import ResourceNotFoundError

    for name in names:
        with _translated(f"{container.url}/{name}"):
            try:
                container.delete_blob(name)
            except ResourceNotFoundError:
                pass


def blob_endpoint(connection_string: str) -> str:
    """The Blob endpoint a connection string names (``https://<acct>.blob.core.windows.net``, or
    Azurite's ``http://127.0.0.1:<port>/devstoreaccount1``), without a trailing "/"."""
    from azure.storage.blob import BlobServiceClient

    try:
        service = BlobServiceClient.from_connection_string(connection_string)
    except ValueError as err:
        raise StoreError(f"the storage connection string cannot be used ({err}); copy it again "
                         "from the storage account's Access keys page") from err
    return service.url.rstrip("/")


# -- one version of a blob, named by its ETag (the Function App's golden file) ------------------------

def blob_version(container: Any, name: str, *, max_bytes: int,
                 read: bool = False) -> tuple[str, str, bytes | None] | None:
    """``(sha256, etag, bytes or None)`` of one version of blob ``name``, or None when it is absent.

    Its size is asked first (one HEAD): above ``max_bytes`` it is ``BlobTooLargeError`` and nothing is
    downloaded. The download is then conditional on the ETag the HEAD saw, so the hash is of exactly
    that version; a save landing in between is another version, and the pair is asked again (three
    times at most). The hash is computed over the download's chunks; the bytes are kept only with ``read``.
    """
    import hashlib

    from azure.core import MatchConditions
    from azure.core.exceptions import ResourceModifiedError

    where = f"{container.url}/{name}"
    for _attempt in range(3):
        try:
            with _translated(where):
                properties = container.get_blob_client(name).get_blob_properties()
        except FileNotFoundError:
            return None
        if properties.size > max_bytes:
            raise BlobTooLargeError(f"{where} is {properties.size:,} bytes, more than the {max_bytes:,} allowed",
                                    properties.size)
        digest, parts = hashlib.sha256(), []
        try:
            with _translated(where):
                download = container.download_blob(name, etag=properties.etag,
                                                   match_condition=MatchConditions.IfNotModified)
                for chunk in download.chunks():
                    digest.update(chunk)
                    if read:
                        parts.append(chunk)
        except FileNotFoundError:
            return None
        except StoreError as err:
            if isinstance(err.__cause__, ResourceModifiedError):
                continue  # saved again between the HEAD and the download: ask for the new version
            raise
        return digest.hexdigest(), properties.etag, b"".join(parts) if read else None
    raise StoreError(f"{where} changed three times while it was read; try again when saves have settled")


def blob_has_etag(container: Any, name: str, etag: str) -> bool:
    """Whether blob ``name`` is still the version ``etag`` names (a conditional HEAD: 412 -> False)."""
    from azure.core import MatchConditions
    from azure.core.exceptions import ResourceModifiedError

    try:
        with _translated(f"{container.url}/{name}"):
            try:
                container.get_blob_client(name).get_blob_properties(etag=etag,
                                                                    match_condition=MatchConditions.IfNotModified)
            except ResourceModifiedError:
                return False
    except FileNotFoundError:
        return False
    return True
