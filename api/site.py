"""Where the routes read runs: the settings (read once) and the container's collections (opened once).

``collections()`` opens ``EVALUATION_CONTAINER`` with the managed identity at
``EVALUATION_STORAGE_ACCOUNT_URL``, or with ``EVALUATION_STORAGE_CONNECTION_STRING`` locally (Azurite).
Tests point the routes elsewhere (a local folder, an Azurite container) with ``use``.
"""
from __future__ import annotations

import contextlib
import threading
from typing import Iterator

from app_settings import AppSettings
from evaluation.store.collections import BlobCollections, Collections

_lock = threading.Lock()
_settings: AppSettings | None = None
_collections: Collections | None = None


def settings() -> AppSettings:
    global _settings
    with _lock:
        if _settings is None:
            _settings = AppSettings.from_environ()
        return _settings


def collections() -> Collections:
    global _collections
    current = settings()
    with _lock:
        if _collections is None:
            from evaluation.store.blob import open_container

            _collections = BlobCollections(open_container(
                current.container, account_url=current.storage_account_url,
                connection_string=current.storage_connection_string))
        return _collections


@contextlib.contextmanager
def use(*, settings: AppSettings | None = None, collections: Collections | None = None) -> Iterator[None]:
    """Within the block, the routes read these settings and these collections (then the ones before)."""
    global _settings, _collections
    with _lock:
        before = (_settings, _collections)
        _settings, _collections = settings, collections
    try:
        yield
    finally:
        with _lock:
            _settings, _collections = before
