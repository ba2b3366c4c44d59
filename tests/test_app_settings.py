"""The app's settings: read once from the environment, defaults as the README table says, bad values named."""
from __future__ import annotations

import tempfile
from pathlib import Path

import pytest

from app_settings import AppSettings, SettingsError


def test_defaults_when_nothing_is_set():
    settings = AppSettings.from_environ({})
    assert (settings.container, settings.targets_json, settings.debounce_seconds) == ("collections", "{}", 60)
    assert (settings.only, settings.skip, settings.by, settings.timed) == ((), (), "doc", 50)
    assert settings.index_cache == Path(tempfile.gettempdir()) / "retrieval-eval-indexes"
    assert settings.admin_role == "admin" and settings.storage_account_url is None


def test_values_are_read_and_patterns_split_on_commas():
    settings = AppSettings.from_environ({"EVALUATION_SKIP": " hybrid_reranked, keyword_semantic ,",
                                         "EVALUATION_DEBOUNCE_SECONDS": "5", "EVALUATION_CONTAINER": "golden",
                                         "EVALUATION_STORAGE_ACCOUNT_URL": "https://acct.blob.core.windows.net"})
    assert settings.skip == ("hybrid_reranked", "keyword_semantic")
    assert (settings.debounce_seconds, settings.container) == (5, "golden")
    assert settings.storage_account_url == "https://acct.blob.core.windows.net"


@pytest.mark.parametrize("value", ["-1", "1.5", "nan", "inf", "soon"])
def test_a_number_setting_that_is_not_a_whole_number_is_named_with_its_default(value):
    with pytest.raises(SettingsError, match=r"EVALUATION_DEBOUNCE_SECONDS=.* whole number of 0 or more \(default 60\)"):
        AppSettings.from_environ({"EVALUATION_DEBOUNCE_SECONDS": value})


@pytest.mark.parametrize("value, trusted", [("True", True), ("true", True), ("False", False), ("", False), ("1", False)])
def test_signed_in_callers_are_trusted_only_when_the_platform_says_authentication_is_on(value, trusted):
    assert AppSettings.from_environ({"WEBSITE_AUTH_ENABLED": value}).app_service_auth is trusted
    assert AppSettings.from_environ({}).app_service_auth is False
