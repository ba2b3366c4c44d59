"""Where the routes read runs: the app's settings and its collections container, read the one way the
whole app reads them (``app.settings.current_settings``, ``app.storage.collections_container``).

Tests point the routes elsewhere (other settings, a local folder, an Azurite container) with ``use``.
"""
from __future__ import annotations

import contextlib
import threading
from typing import Iterator

from app.settings import AppSettings, current_settings
from app.storage import collections_container
from evaluation.store.collections import BlobCollections, Collections

from .tokens import TokenCheck

_lock = threading.Lock()
_settings: AppSettings | None = None
_collections: Collections | None = None


def settings() -> AppSettings:
    with _lock:
        chosen = _settings
    return chosen if chosen is not None else current_settings()


def collections() -> Collections:
    with _lock:
        chosen = _collections
    # The container client is opened once per process (app.storage); wrapping it costs nothing.
    return chosen if chosen is not None else BlobCollections(collections_container(settings()))


def token_check() -> TokenCheck | None:
    """What a sign-in token must match for the golden download (None: sign-in not configured)."""
    return TokenCheck.from_settings(settings())


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
