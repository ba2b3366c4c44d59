"""The Function App against Azurite, for the trigger and end-to-end tests: its settings, a collection's
files, a published index, and the stand-in Durable extension the real client talks to."""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from durable_host import DurableHost, registered


@dataclass
class App:
    """One test's app: its own container in Azurite, its settings, its Durable host."""

    azurite: Any
    container: str
    host: DurableHost
    client: str  # the durable client binding JSON

    @property
    def account_url(self) -> str:
        return self.azurite.blob_endpoint

    def address(self, path: str) -> str:
        return f"{self.azurite.blob_endpoint}/{self.container}/{path}"

    def save(self, path: str, data: bytes) -> None:
        from azure.storage.blob import BlobServiceClient

        with BlobServiceClient.from_connection_string(self.azurite.connection_string) as service:
            service.get_container_client(self.container).upload_blob(path, data, overwrite=True)

    def delete(self, path: str) -> None:
        from azure.storage.blob import BlobServiceClient

        with BlobServiceClient.from_connection_string(self.azurite.connection_string) as service:
            service.get_container_client(self.container).delete_blob(path)

    def names(self, prefix: str = "") -> list[str]:
        from azure.storage.blob import BlobServiceClient

        with BlobServiceClient.from_connection_string(self.azurite.connection_string) as service:
            return sorted(service.get_container_client(self.container).list_blob_names(name_starts_with=prefix))

    def read(self, path: str) -> bytes:
        from azure.storage.blob import BlobServiceClient

        with BlobServiceClient.from_connection_string(self.azurite.connection_string) as service:
            return service.get_container_client(self.container).download_blob(path).readall()

    def subject(self, path: str, container: str | None = None) -> str:
        return f"/blobServices/default/containers/{container or self.container}/blobs/{path}"


def publish_fake_index(app: App, folder: Path, path: str, fingerprint: str) -> str:
    """Publish a folder holding only a manifest: enough for ``target_state`` (no model needed)."""
    from evaluation.engine.published import publish_index

    folder.mkdir(parents=True, exist_ok=True)
    (folder / "manifest.json").write_text(json.dumps({"format": 1, "fingerprint": fingerprint}))
    publish_index(folder, app.address(path), connection_string=app.azurite.connection_string)
    return app.address(path)


@pytest.fixture
def app(azurite, monkeypatch, tmp_path):
    """Settings pointing at a fresh container (the app's only environment), and a started host."""
    from app import settings as app_settings
    from activities import golden, judging, planning, report, searches
    from orchestrators.evaluate_golden import evaluate_golden

    container = azurite.new_container()
    monkeypatch.setenv("EVALUATION_STORAGE_CONNECTION_STRING", azurite.connection_string)
    monkeypatch.setenv("EVALUATION_CONTAINER", container)
    monkeypatch.setenv("EVALUATION_INDEX_CACHE", str(tmp_path / "index-cache"))
    monkeypatch.setenv("EVALUATION_TARGETS", json.dumps(
        {"docs": [{"name": "local", "engine": "embedded",
                   "index": f"{azurite.blob_endpoint}/{container}/indexes/docs"}]}))
    for name in ("EVALUATION_STORAGE_ACCOUNT_URL", "EVALUATION_ONLY", "EVALUATION_SKIP", "EVALUATION_TIMED",
                 "EVALUATION_TIME_BUDGET",
                 "EVALUATION_DEBOUNCE_SECONDS", "EVALUATION_SHARD_SECONDS", "EVALUATION_SHARD_QUESTIONS",
                 "AZURE_SEARCH_ENDPOINT", "EVALUATION_JUDGE_DEPLOYMENT", "EVALUATION_JUDGE_MAX_COST",
                 "EVALUATION_JUDGE_PAIRS"):
        monkeypatch.delenv(name, raising=False)
    app_settings.current_settings.cache_clear()
    activities = {name: registered(fn) for module in (golden, planning, searches, judging, report)
                  for name, fn in vars(module).items() if hasattr(fn, "build") and name != "bp"}
    host = DurableHost({"evaluate_golden": registered(evaluate_golden)}, activities)
    client = host.serve()
    yield App(azurite, container, host, client)
    host.close()
    app_settings.current_settings.cache_clear()
