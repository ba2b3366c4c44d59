"""Blob addresses, and reading and writing through Azurite as through Azure."""
from __future__ import annotations

import pytest

from evaluation.store.blob import DEV_ACCOUNT, container_client, parse_address, same_endpoint
from evaluation.errors import StoreError
from evaluation.store.sources import is_blob_address, read_bytes
from evaluation.store import BlobStore, open_store

from conftest import GOLDEN_RAW


# -- addresses (no network) -----------------------------------------------------------------------

def test_an_azure_address_names_account_container_and_prefix():
    address = parse_address("https://evalstore.blob.core.windows.net/runs/team-a/evals")

    assert (address.account_url, address.account, address.container, address.path) == (
        "https://evalstore.blob.core.windows.net", "evalstore", "runs", "team-a/evals")
    assert not address.path_style


def test_an_azurite_address_names_the_account_first():
    address = parse_address("http://127.0.0.1:10000/devstoreaccount1/runs/golden/v1.jsonl")

    assert (address.account_url, address.account, address.container, address.path) == (
        "http://127.0.0.1:10000/devstoreaccount1", DEV_ACCOUNT, "runs", "golden/v1.jsonl")
    assert address.path_style


@pytest.mark.parametrize("text, fix", [
    ("https://evalstore.blob.core.windows.net", "names no container"),
    ("http://127.0.0.1:10000/devstoreaccount1", "account then the container"),
    ("ftp://somewhere/x", "not a Blob address"),
])
def test_an_incomplete_address_says_what_to_add(text, fix):
    with pytest.raises(StoreError, match=fix):
        parse_address(text)


def test_a_connection_string_for_another_account_is_refused():
    connection_string = ("DefaultEndpointsProtocol=https;AccountName=other;AccountKey=a2V5;"
                         "EndpointSuffix=core.windows.net")
    with pytest.raises(StoreError, match="use one account for both"):
        container_client(parse_address("https://evalstore.blob.core.windows.net/runs"),
                         connection_string=connection_string)


AZURITE_KEY = "a" * 86 + "=="
AZURITE_CONNECTION = ("DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;"
                      f"AccountKey={AZURITE_KEY};BlobEndpoint=http://127.0.0.1:10000/devstoreaccount1;")
AZURE_CONNECTION = (
    "DefaultEndpointsProtocol=https;AccountName=evalstore;AccountKey=a2V5;EndpointSuffix=core.windows.net"
)


@pytest.mark.parametrize("address, connection_string", [
    ("http://127.0.0.1:9999/devstoreaccount1/runs", AZURITE_CONNECTION),       # another port
    ("http://localhost:10000/devstoreaccount1/runs", AZURITE_CONNECTION),      # another host
    ("http://10.0.0.7:10000/devstoreaccount1/runs", AZURITE_CONNECTION),
    ("https://evalstore.blob.core.usgovcloudapi.net/runs", AZURE_CONNECTION),  # the same account name, another cloud
], ids=["port", "localhost", "other-host", "other-cloud"])
def test_an_address_on_another_endpoint_than_the_connection_strings_is_refused_naming_both(address, connection_string):
    # the client goes where the connection string says: an address naming anywhere else would be believed
    # and read or written somewhere it does not name (issue 37)
    with pytest.raises(StoreError) as refused:
        open_store(address, connection_string=connection_string)

    endpoint = parse_address(address).account_url
    assert f"the address is on the Blob endpoint {endpoint} but the connection string is for" in str(refused.value)


@pytest.mark.parametrize("address, connection_string", [
    ("http://127.0.0.1:10000/devstoreaccount1/runs", AZURITE_CONNECTION),
    ("HTTP://127.0.0.1:10000/devstoreaccount1/runs/team-a", AZURITE_CONNECTION),
    ("http://127.0.0.1:10000/devstoreaccount1/runs", "UseDevelopmentStorage=true"),
    ("https://evalstore.blob.core.windows.net/runs", AZURE_CONNECTION),
    ("https://EvalStore.Blob.Core.Windows.Net:443/runs", AZURE_CONNECTION),  # the same endpoint, written otherwise
], ids=["azurite", "scheme-case", "development-storage", "azure", "case-and-port"])
def test_an_address_on_the_connection_strings_endpoint_is_opened_there(address, connection_string):
    client = container_client(parse_address(address), connection_string=connection_string)

    assert client.url.rstrip("/").endswith("/runs") and same_endpoint(parse_address(address).account_url,
                                                                       client.url.rsplit("/", 1)[0])


class FakeTokenCredential:
    def get_token(self, *scopes, **kwargs):  # never called: no request is made
        raise AssertionError("no request expected")


def test_an_azure_address_signs_in_with_the_credential_given():
    credential = FakeTokenCredential()

    client = container_client(parse_address("https://evalstore.blob.core.windows.net/runs"), credential=credential)

    assert client.url == "https://evalstore.blob.core.windows.net/runs"
    assert client.credential is credential


def test_an_azure_address_without_credential_uses_default_azure_credential():
    from azure.identity import DefaultAzureCredential

    client = container_client(parse_address("https://evalstore.blob.core.windows.net/runs"))

    assert isinstance(client.credential, DefaultAzureCredential)


def test_blob_addresses_are_told_from_paths():
    assert is_blob_address("https://evalstore.blob.core.windows.net/runs/golden.jsonl")
    assert is_blob_address("http://127.0.0.1:10000/devstoreaccount1/runs")
    assert not is_blob_address("tests/fixtures/golden/golden.jsonl")


# -- through Azurite ------------------------------------------------------------------------------

def upload(azurite, container: str, name: str, data: bytes) -> None:
    from azure.storage.blob import BlobServiceClient

    with BlobServiceClient.from_connection_string(azurite.connection_string) as service:
        service.get_container_client(container).upload_blob(name, data)


@pytest.mark.azurite
def test_a_golden_file_read_from_azurite_equals_its_bytes(azurite):
    container = azurite.new_container()
    upload(azurite, container, "golden/v1.jsonl", GOLDEN_RAW)
    address = azurite.address(container, "golden/v1.jsonl")

    assert read_bytes(address) == GOLDEN_RAW
    assert read_bytes(address, connection_string=azurite.connection_string) == GOLDEN_RAW


@pytest.mark.azurite
def test_a_missing_blob_reads_like_a_missing_file(azurite):
    address = azurite.address(azurite.new_container(), "golden/absent.jsonl")

    with pytest.raises(FileNotFoundError, match="absent.jsonl"):
        read_bytes(address)


@pytest.mark.azurite
def test_a_missing_container_is_a_sentence(azurite):
    with pytest.raises(StoreError, match="container does not exist"):
        open_store(azurite.address("nosuchcontainer")).ids()


@pytest.mark.azurite
def test_an_address_without_a_blob_name_cannot_be_read(azurite):
    with pytest.raises(StoreError, match="no blob"):
        read_bytes(azurite.address(azurite.new_container()))


@pytest.mark.azurite
def test_a_store_opened_with_a_connection_string_sees_the_same_runs(azurite, make_report):
    address = azurite.address(azurite.new_container(), "evals")
    report = make_report()
    open_store(address).save(report)

    store = open_store(address, connection_string=azurite.connection_string)

    assert isinstance(store, BlobStore)
    assert store.address == address
    assert store.ids() == [report["id"]]


@pytest.mark.azurite
def test_runs_under_one_prefix_are_not_seen_under_another(azurite, make_report):
    container = azurite.new_container()
    open_store(azurite.address(container, "team-a")).save(make_report())

    assert open_store(azurite.address(container, "team-b")).ids() == []
    assert open_store(azurite.address(container, "team-a")).ids() == [make_report()["id"]]


@pytest.mark.azurite
def test_read_golden_reads_a_blob_address_through_the_same_code(azurite):
    import hashlib

    from evaluation.golden import read_golden

    container = azurite.new_container()
    upload(azurite, container, "golden_dataset/incoming/golden.jsonl", GOLDEN_RAW)
    golden = read_golden(azurite.address(container, "golden_dataset/incoming/golden.jsonl"))
    assert golden.raw == GOLDEN_RAW
    assert golden.sha256 == hashlib.sha256(GOLDEN_RAW).hexdigest()
    assert golden.questions
