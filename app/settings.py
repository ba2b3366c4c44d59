"""The Function App's settings, read once from the environment into a frozen record.

This is the only module of the app that reads ``os.environ``; the library never does. Every setting
here also appears in the settings table of ``docs/azure.md``, in ``local.settings.example.json`` and in the Bicep
``appSettings`` (``tests/infra/test_infra_settings.py`` checks all three against the code).
"""
from __future__ import annotations

import functools
import math
import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping, overload

from evaluation.settings import GRAINS

SEARCH_API_KEY_PREFIX = "AZURE_SEARCH_API_KEY"  # equals evaluation.target_specs.API_KEY_PREFIX (tested)


class SettingsError(ValueError):
    """An app setting holds a value the app cannot use; the message names the setting and the fix."""


@dataclass(frozen=True)
class AppSettings:
    storage_account_url: str | None       # EVALUATION_STORAGE_ACCOUNT_URL: https://<acct>.blob.core.windows.net
    storage_connection_string: str | None = field(repr=False)  # EVALUATION_STORAGE_CONNECTION_STRING: local only
    container: str                        # EVALUATION_CONTAINER: holds <collection>/golden.jsonl
    targets_json: str                     # EVALUATION_TARGETS: collection -> target specs (parsed by the library)
    debounce_seconds: int                 # EVALUATION_DEBOUNCE_SECONDS: durable timer before a run
    only: tuple[str, ...]                 # EVALUATION_ONLY: setup patterns to run (empty: all)
    skip: tuple[str, ...]                 # EVALUATION_SKIP: setup patterns to leave out
    by: str                               # EVALUATION_BY: grain (doc, chunk, evidence)
    timed: int                            # EVALUATION_TIMED: questions timed one by one per setup
    time_budget: int                      # EVALUATION_TIME_BUDGET: seconds of timed searches per setup (0: none)
    index_cache: Path                     # EVALUATION_INDEX_CACHE: where embedded indexes are downloaded
    search_endpoint: str | None           # AZURE_SEARCH_ENDPOINT: default Azure AI Search endpoint
    openai_endpoint: str | None           # AZURE_OPENAI_ENDPOINT: query embeddings without a vectorizer
    openai_embedding_deployment: str | None  # AZURE_OPENAI_EMBEDDING_DEPLOYMENT
    admin_role: str                       # EVALUATION_ADMIN_ROLE: app role allowed to download golden files
    app_service_auth: bool = False        # WEBSITE_AUTH_ENABLED (set by the platform when App Service
                                          # authentication is on): only then is X-MS-CLIENT-PRINCIPAL trusted
    sign_in_client_id: str | None = None  # EVALUATION_SIGN_IN_CLIENT_ID: the Entra app people sign in to (audience)
    sign_in_issuer: str | None = None     # EVALUATION_SIGN_IN_ISSUER: https://login.microsoftonline.com/<tenant>/v2.0
    sign_in_jwks_url: str | None = None   # EVALUATION_SIGN_IN_JWKS_URL: the tenant's published signing keys (JWKS)
    golden_max_bytes: int = 16 * 1024 * 1024  # EVALUATION_GOLDEN_MAX_BYTES: a larger golden file is refused unread
    shard_seconds: int = 180  # EVALUATION_SHARD_SECONDS: estimated seconds of one setup's searches per activity
    shard_questions: int = 0              # EVALUATION_SHARD_QUESTIONS: most questions an activity ranks (0: no bound)
    retime: str = "when-changed"          # EVALUATION_RETIME: "always" times every setup live, every run
    retime_max_days: int = 7  # EVALUATION_RETIME_MAX_DAYS: times older than this are measured again
    opened_indexes: int = 2  # EVALUATION_OPENED_INDEXES: opened embedded indexes one process keeps (0: none)
    equally_fast_ms: int = 5              # EVALUATION_EQUALLY_FAST_MS: search times this close never decide a pick
    # The judge of the holes (evaluation.holes): a chat deployment on AZURE_OPENAI_ENDPOINT, signed in as the
    # app's identity; none: no judging
    judge_deployment: str | None = None   # EVALUATION_JUDGE_DEPLOYMENT
    judge_max_cost: float | None = None   # EVALUATION_JUDGE_MAX_COST: the cap per run, in the price table's currency
    judge_calibration: int = 100          # EVALUATION_JUDGE_CALIBRATION: labels set aside to measure the judge on
    judge_min_kappa: float = 0.4          # EVALUATION_JUDGE_MIN_KAPPA: the low end of kappa's interval to reach
    judge_picks_from: str = "human"       # EVALUATION_JUDGE_PICKS_FROM: human, or judged
    judge_allow_family: bool = False      # EVALUATION_JUDGE_ALLOW_FAMILY: judge with a family under test anyway
    judge_prices: str | None = None       # EVALUATION_JUDGE_PRICES: a price table as JSON (none: the shipped one)
    judge_pairs: int = 100                # EVALUATION_JUDGE_PAIRS: pairs one judging activity grades
    exhaustive: bool = False              # EVALUATION_EXHAUSTIVE: "true" searches every setup on every question
    # AZURE_SEARCH_API_KEY*: keys that target specs name in "api_key_env"; kept out of repr and logs
    search_api_keys: Mapping[str, str] = field(default_factory=dict, repr=False, hash=False, compare=False)

    @classmethod
    def from_environ(cls, environ: Mapping[str, str] | None = None) -> AppSettings:
        env = os.environ if environ is None else environ

        @overload
        def text(name: str) -> str | None: ...
        @overload
        def text(name: str, default: str) -> str: ...

        def text(name: str, default: str | None = None) -> str | None:
            value = env.get(name, "").strip()
            return value or default

        return cls(
            storage_account_url=text("EVALUATION_STORAGE_ACCOUNT_URL"),
            storage_connection_string=text("EVALUATION_STORAGE_CONNECTION_STRING"),
            container=_container(env, "EVALUATION_CONTAINER", "collections"),
            targets_json=text("EVALUATION_TARGETS", "{}"),
            debounce_seconds=_whole_number(env, "EVALUATION_DEBOUNCE_SECONDS", 60),
            only=_patterns(text("EVALUATION_ONLY", "")),
            skip=_patterns(text("EVALUATION_SKIP", "")),
            by=_choice(env, "EVALUATION_BY", GRAINS, "doc"),
            timed=_whole_number(env, "EVALUATION_TIMED", 50),
            time_budget=_whole_number(env, "EVALUATION_TIME_BUDGET", 20),
            index_cache=Path(text("EVALUATION_INDEX_CACHE",
                                  str(Path(tempfile.gettempdir()) / "retrieval-eval-indexes"))),
            search_endpoint=text("AZURE_SEARCH_ENDPOINT"),
            openai_endpoint=text("AZURE_OPENAI_ENDPOINT"),
            openai_embedding_deployment=text("AZURE_OPENAI_EMBEDDING_DEPLOYMENT"),
            admin_role=text("EVALUATION_ADMIN_ROLE", "admin"),
            app_service_auth=(text("WEBSITE_AUTH_ENABLED", "") or "").lower() == "true",
            sign_in_client_id=text("EVALUATION_SIGN_IN_CLIENT_ID"),
            sign_in_issuer=text("EVALUATION_SIGN_IN_ISSUER"),
            sign_in_jwks_url=text("EVALUATION_SIGN_IN_JWKS_URL"),
            golden_max_bytes=_whole_number(env, "EVALUATION_GOLDEN_MAX_BYTES", 16 * 1024 * 1024),
            shard_seconds=_at_least_one(env, "EVALUATION_SHARD_SECONDS", 180),
            shard_questions=_whole_number(env, "EVALUATION_SHARD_QUESTIONS", 0),
            retime=_choice(env, "EVALUATION_RETIME", ("when-changed", "always"), "when-changed"),
            retime_max_days=_whole_number(env, "EVALUATION_RETIME_MAX_DAYS", 7),
            opened_indexes=_whole_number(env, "EVALUATION_OPENED_INDEXES", 2),
            equally_fast_ms=_whole_number(env, "EVALUATION_EQUALLY_FAST_MS", 5),
            judge_deployment=text("EVALUATION_JUDGE_DEPLOYMENT"),
            judge_max_cost=_amount(env, "EVALUATION_JUDGE_MAX_COST"),
            judge_calibration=_at_least_one(env, "EVALUATION_JUDGE_CALIBRATION", 100),
            judge_min_kappa=_kappa(env, "EVALUATION_JUDGE_MIN_KAPPA", 0.4),
            judge_picks_from=_choice(env, "EVALUATION_JUDGE_PICKS_FROM", ("human", "judged"), "human"),
            judge_allow_family=_choice(env, "EVALUATION_JUDGE_ALLOW_FAMILY", ("false", "true"), "false") == "true",
            judge_prices=text("EVALUATION_JUDGE_PRICES"),
            judge_pairs=_at_least_one(env, "EVALUATION_JUDGE_PAIRS", 100),
            exhaustive=_choice(env, "EVALUATION_EXHAUSTIVE", ("false", "true"), "false") == "true",
            search_api_keys={name: value for name, value in env.items()
                             if name.startswith(SEARCH_API_KEY_PREFIX) and value.strip()},
        )


@functools.cache
def current_settings() -> AppSettings:
    """The app's settings, read from the environment once per process (tests clear the cache)."""
    return AppSettings.from_environ()


def _patterns(value: str) -> tuple[str, ...]:
    return tuple(p.strip() for p in value.split(",") if p.strip())


def _at_least_one(env: Mapping[str, str], name: str, default: int) -> int:
    value = _whole_number(env, name, default)
    if value < 1:
        raise SettingsError(f"the app setting {name}={env.get(name)!r} must be a whole number of 1 or more "
                            f"(default {default}); fix it in the Function App's configuration")
    return value


def _choice(env: Mapping[str, str], name: str, choices: tuple[str, ...], default: str) -> str:
    value = env.get(name, "").strip().lower() or default
    if value not in choices:
        raise SettingsError(f"the app setting {name}={env.get(name)!r} must be one of {', '.join(choices)} "
                            f"(default {default}); fix it in the Function App's configuration")
    return value


def _container(env: Mapping[str, str], name: str, default: str) -> str:
    """A Blob container's name: a name Azure takes, else a sentence now (at use it was a 503, "retry", for ever)."""
    from evaluation.store.blob import container_problem

    value = env.get(name, "").strip() or default
    problem = container_problem(value)
    if problem:
        raise SettingsError(f"the app setting {name}: {problem} (default {default}); fix it in the Function App's "
                            "configuration")
    return value


def _whole_number(env: Mapping[str, str], name: str, default: int) -> int:
    raw = env.get(name, "").strip()
    if not raw:
        return default
    try:
        value = float(raw)
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or value != int(value) or value < 0:
        raise SettingsError(f"the app setting {name}={raw!r} must be a whole number of 0 or more "
                            f"(default {default}); fix it in the Function App's configuration")
    return int(value)


def _amount(env: Mapping[str, str], name: str) -> float | None:
    """An amount of money, 0 or more; None when the setting is empty (no cap)."""
    raw = env.get(name, "").strip()
    if not raw:
        return None
    try:
        value = float(raw)
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or value < 0:
        raise SettingsError(f"the app setting {name}={raw!r} must be an amount of 0 or more, such as 2.50 (empty: no "
                            "cap); fix it in the Function App's configuration")
    return value


def _kappa(env: Mapping[str, str], name: str, default: float) -> float:
    raw = env.get(name, "").strip()
    if not raw:
        return default
    try:
        value = float(raw)
    except ValueError:
        value = math.nan
    if not -1 <= value <= 1:
        raise SettingsError(f"the app setting {name}={raw!r} must be a kappa from -1 to 1 (default {default}); fix it "
                            "in the Function App's configuration")
    return value
