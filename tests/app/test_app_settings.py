"""The app's settings: read once from the environment, defaults as the README table says, bad values named."""
from __future__ import annotations

import tempfile
from pathlib import Path

import pytest

from app.settings import AppSettings, SettingsError


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


@pytest.mark.parametrize("value, trusted",
                         [("True", True), ("true", True), ("False", False), ("", False), ("1", False)])
def test_signed_in_callers_are_trusted_only_when_the_platform_says_authentication_is_on(value, trusted):
    assert AppSettings.from_environ({"WEBSITE_AUTH_ENABLED": value}).app_service_auth is trusted
    assert AppSettings.from_environ({}).app_service_auth is False


# -- the three places a setting is written agree ------------------------------------------------------

import json  # noqa: E402
import re  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent.parent
HOST_ONLY = {"FUNCTIONS_WORKER_RUNTIME"}  # the Functions host's own, not the app's


def readme_settings() -> dict[str, str]:
    """Setting name -> default, from the settings table (docs/azure.md, linked from the README)."""
    text = (ROOT / "docs" / "azure.md").read_text(encoding="utf-8").split("\n## Settings", 1)[1].split("\n\n", 2)[2]
    rows = {}
    for line in text.split("\n\n", 1)[0].splitlines()[2:]:
        cells = [c.strip() for c in line.strip("|").split("|")]
        for name in re.findall(r"`([A-Za-z_]+\*?)`", cells[0]):
            rows[name] = cells[2].strip("`")
    return rows


def read_names() -> set[str]:
    """Every environment name app/settings.py reads."""
    source = (ROOT / "app/settings.py").read_text(encoding="utf-8")
    return set(re.findall(r'(?:text|_whole_number)\((?:env, )?"([A-Z_]+)"', source)) | {"AZURE_SEARCH_API_KEY*"}


def test_every_setting_the_app_reads_is_in_the_readme_table_and_the_example_settings():
    table = readme_settings()
    example = json.loads((ROOT / "local.settings.example.json").read_text(encoding="utf-8"))["Values"]
    assert read_names() <= set(table)
    assert set(example) - HOST_ONLY == {n.rstrip("*") for n in table} - {"AzureWebJobsStorage__accountName"}


def test_the_readme_table_gives_the_defaults_the_app_uses():
    table, settings = readme_settings(), AppSettings.from_environ({})
    assert table["EVALUATION_CONTAINER"] == settings.container
    assert table["EVALUATION_TARGETS"] == settings.targets_json
    assert table["EVALUATION_DEBOUNCE_SECONDS"] == str(settings.debounce_seconds)
    assert table["EVALUATION_BY"] == settings.by and table["EVALUATION_TIMED"] == str(settings.timed)
    assert table["EVALUATION_TIME_BUDGET"] == str(settings.time_budget)
    assert table["EVALUATION_EQUALLY_FAST_MS"] == str(settings.equally_fast_ms) == "5"
    assert table["EVALUATION_ADMIN_ROLE"] == settings.admin_role
    assert table["EVALUATION_INDEX_CACHE"] == "<tempdir>/retrieval-eval-indexes"
    assert settings.index_cache == Path(tempfile.gettempdir()) / "retrieval-eval-indexes"


def test_search_keys_are_read_only_under_the_prefix_specs_may_name_and_kept_out_of_repr():
    from app.settings import SEARCH_API_KEY_PREFIX
    from evaluation.target_specs import API_KEY_PREFIX

    settings = AppSettings.from_environ({"AZURE_SEARCH_API_KEY_DOCS": "k1", "OTHER_SECRET": "k2",
                                         "EVALUATION_STORAGE_CONNECTION_STRING": "AccountKey=k3"})
    assert SEARCH_API_KEY_PREFIX == API_KEY_PREFIX
    assert settings.search_api_keys == {"AZURE_SEARCH_API_KEY_DOCS": "k1"}
    assert "k1" not in repr(settings) and "k3" not in repr(settings)


def test_host_json_holds_what_the_readme_says():
    host = json.loads((ROOT / "host.json").read_text(encoding="utf-8"))
    durable = host["extensions"]["durableTask"]
    readme = (ROOT / "docs" / "azure.md").read_text(encoding="utf-8")
    assert durable["hubName"] == "RetrievalEvaluation" and "task hub (`RetrievalEvaluation`)" in readme
    assert durable["maxConcurrentActivityFunctions"] == 2 and "2 activities at once per instance" in readme
    assert host["functionTimeout"] == "02:00:00" and "2-hour function timeout" in readme
    assert host["extensionBundle"] == {"id": "Microsoft.Azure.Functions.ExtensionBundle", "version": "[4.*, 5.0.0)"}


@pytest.mark.parametrize("environ", [
    {"EVALUATION_STORAGE_ACCOUNT_URL": "https://acct.blob.core.windows.net"},
    {"EVALUATION_STORAGE_CONNECTION_STRING": "DefaultEndpointsProtocol=https;AccountName=acct;"
                                             "AccountKey=a2V5;EndpointSuffix=core.windows.net"},
])
def test_the_apps_blob_client_tries_three_times_1_s_apart_since_event_grid_and_durable_retry_too(environ):
    from app import storage as app_storage
    from azure.storage.blob import LinearRetry

    app_storage._container.cache_clear()
    container = app_storage.collections_container(AppSettings.from_environ(environ))
    retry = container._config.retry_policy
    assert isinstance(retry, LinearRetry)
    assert (retry.total_retries, retry.backoff, retry.random_jitter_range) == (2, 1, 0)
    assert container._config.transport.connection_config.timeout == 5
    app_storage._container.cache_clear()


def test_shards_and_retiming_have_their_defaults_and_a_retime_that_is_no_choice_is_named():
    defaults = AppSettings.from_environ({})
    assert (defaults.shard_seconds, defaults.shard_questions, defaults.retime, defaults.retime_max_days) == (
        180, 0, "when-changed", 7)
    given = AppSettings.from_environ({"EVALUATION_SHARD_SECONDS": "60", "EVALUATION_SHARD_QUESTIONS": "2",
                                      "EVALUATION_RETIME": " Always ", "EVALUATION_RETIME_MAX_DAYS": "1"})
    assert (given.shard_seconds, given.shard_questions, given.retime, given.retime_max_days) == (60, 2, "always", 1)
    with pytest.raises(SettingsError, match="EVALUATION_RETIME='sometimes' must be one of when-changed, always"):
        AppSettings.from_environ({"EVALUATION_RETIME": "sometimes"})
    with pytest.raises(SettingsError, match="EVALUATION_SHARD_SECONDS='0' must be a whole number of 1 or more"):
        AppSettings.from_environ({"EVALUATION_SHARD_SECONDS": "0"})  # no shard could hold a question


def test_the_grain_is_one_the_library_judges_at_or_named_before_any_run_starts():
    assert AppSettings.from_environ({"EVALUATION_BY": " Chunk "}).by == "chunk"
    # was taken as it was: evaluate_now answered 202 and started a run its plan could only fail
    with pytest.raises(SettingsError, match="EVALUATION_BY='sideways' must be one of doc, chunk, evidence"):
        AppSettings.from_environ({"EVALUATION_BY": "sideways"})


def test_a_container_name_azure_refuses_is_named_with_the_setting_before_any_request():
    assert AppSettings.from_environ({"EVALUATION_CONTAINER": " golden-files "}).container == "golden-files"
    # was read as it was: every evaluate_now answered 503 ("storage out of reach, retry") and the trigger raised
    with pytest.raises(SettingsError, match='EVALUATION_CONTAINER: "Bad_Container!" is not a container name'):
        AppSettings.from_environ({"EVALUATION_CONTAINER": "Bad_Container!"})


def test_opened_indexes_kept_per_process_default_to_two_and_a_bad_value_is_named():
    assert AppSettings.from_environ({}).opened_indexes == 2  # the pinned version and the next one published
    assert AppSettings.from_environ({"EVALUATION_OPENED_INDEXES": "0"}).opened_indexes == 0  # each opens its own
    with pytest.raises(SettingsError, match=r"EVALUATION_OPENED_INDEXES='two' must be a whole number of 0 or more "
                                            r"\(default 2\)"):
        AppSettings.from_environ({"EVALUATION_OPENED_INDEXES": "two"})
