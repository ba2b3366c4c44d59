"""Which targets a collection searches: target specs, where they come from, and opening one.

Two places name them. The app setting ``EVALUATION_TARGETS`` maps collection names to lists of specs;
a ``targets.json`` beside a collection's golden file (``{"targets": [...]}``) replaces that entry for
its collection. A spec::

    {"name": "local", "engine": "embedded", "index": "https://<acct>.blob.core.windows.net/indexes/docs",
     "rerank_candidates": 20}
    {"name": "search", "engine": "azure_search", "endpoint": "https://<svc>.search.windows.net",
     "index": "docs-index", "api_key_env": null, "fields": {"id": "chunk_id", "doc_id": "parent_id"}}

Every mistake is a ``TargetConfigError`` sentence naming where the spec was written (the setting and
collection, or the file), the key, and the fix, with the closest key for a typo.

Whoever may save a golden file may write ``targets.json``, so a ``targets.json`` is trusted less than
the app setting: its embedded indexes must live in the app's own storage account, its Azure AI
Search endpoints must be ``https://<service>.search.windows.net`` or the app's ``AZURE_SEARCH_ENDPOINT``
(and an Azure OpenAI endpoint ``https://<resource>.openai.azure.com`` or ``AZURE_OPENAI_ENDPOINT``),
and it cannot name an API key. The app's managed identity never signs a request to anywhere else.

Engines: ``embedded`` opens an index published to Blob or S3 (``python3 -m evaluation index CORPUS --out
<address>``), fetched once per fingerprint into a local cache. ``azure_search`` takes the Azure AI
Search target's own options (``evaluation.azure_search.options``), checked there; its state is the
target's ``describe()["state"]``.
"""
from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Mapping
from urllib.parse import urlsplit

from .errors import JsonLineError, TargetConfigError, did_you_mean, shown
from .store.blob import same_endpoint
from .jsonl import parse_json
from .target import Target

if TYPE_CHECKING:
    from .engine.opened import OpenedIndexes

ENGINES = ("embedded", "azure_search")
SETTING = "EVALUATION_TARGETS"
API_KEY_PREFIX = "AZURE_SEARCH_API_KEY"  # api_key_env may only name a setting that starts so
_NAME = re.compile(r"[A-Za-z0-9_-]{1,40}")
_SETTING_EXAMPLE = ('{"docs": [{"name": "local", "engine": "embedded", '
                    '"index": "https://<account>.blob.core.windows.net/indexes/docs"}]}')
_FILE_EXAMPLE = '{"targets": [{"name": "local", "engine": "embedded", "index": "https://<account>.blob.core.windows.net/indexes/docs"}]}'

# The keys an embedded spec takes: key -> required. An azure_search spec's keys are the Azure AI
# Search target's options (evaluation.azure_search.options), checked there.
_EMBEDDED_KEYS = {"name": True, "engine": True, "index": True, "rerank_candidates": False,
                  "fusion_candidates": False, "cross_encoder": False}


@dataclass(frozen=True)
class TargetSpec:
    """One target of a collection, as configured; ``source`` says where it was written."""

    name: str
    engine: str
    index: str                      # embedded: the Blob or S3 address of a published index; azure_search: its name
    source: str
    rerank_candidates: int = 20  # engine.target.RERANK_CANDIDATES (an Azure AI Search target's: 30)
    fusion_candidates: int = 50
    cross_encoder: bool = True
    endpoint: str | None = None     # azure_search
    api_key_env: str | None = None  # azure_search: the app setting holding an admin key
    options: Mapping[str, Any] = field(default_factory=dict)  # azure_search: the target's checked options

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON, to pin a run's targets in its working files (``from_dict`` reads it back)."""
        return {**asdict(self), "options": json.loads(json.dumps(self.options))}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> TargetSpec:
        return cls(**{**data, "options": dict(data.get("options") or {})})


@dataclass(frozen=True)
class Trust:
    """What a ``targets.json`` may point at: the app's own storage account (the AWS flow: its own S3
    bucket), its search endpoint and its Azure OpenAI endpoint."""

    storage_account_url: str | None   # https://<acct>.blob.core.windows.net (or Azurite's); None on AWS
    search_endpoint: str | None = None
    openai_endpoint: str | None = None
    s3_bucket: str | None = None      # the AWS flow's bucket: a targets.json's indexes must be in it


@dataclass(frozen=True)
class SearchDefaults:
    """The app's defaults for Azure AI Search specs: AZURE_SEARCH_ENDPOINT, and the embeddings deployment
    (AZURE_OPENAI_ENDPOINT + AZURE_OPENAI_EMBEDDING_DEPLOYMENT) for vector fields without a vectorizer."""

    search_endpoint: str | None = None
    openai_endpoint: str | None = None
    openai_deployment: str | None = None


# -- parsing -------------------------------------------------------------------------------------------

def parse_target_specs(value: str | bytes | Mapping[str, Any], *, source: str = SETTING,
                       defaults: SearchDefaults = SearchDefaults()) -> dict[str, tuple[TargetSpec, ...]]:
    """The app setting's value: ``{collection: [spec, ...]}`` -> specs per collection.

    ``defaults`` fill in an Azure AI Search spec that names no endpoint or embeddings deployment.
    Raises ``TargetConfigError`` for the first mistake, said as a sentence.
    """
    data = _json(value, source, _SETTING_EXAMPLE)
    if not isinstance(data, dict):
        raise TargetConfigError(f"{source} must be a JSON object mapping each collection to its targets, "
                                f"for example {_SETTING_EXAMPLE}")
    specs = {}
    for collection, items in data.items():
        where = f"{source}[{shown(collection)}]"
        if not isinstance(items, list) or not items:
            raise TargetConfigError(f"{where} must be a non-empty list of target specs, for example "
                                    f"{_SETTING_EXAMPLE}")
        specs[collection] = _specs(items, where, defaults=defaults, trust=None)
    return specs


def parse_collection_targets(value: str | bytes | Mapping[str, Any], *, source: str, trust: Trust,
                             defaults: SearchDefaults | None = None) -> tuple[TargetSpec, ...]:
    """A ``targets.json``: ``{"targets": [spec, ...]}``, checked against ``trust`` (module docstring)."""
    data = _json(value, source, _FILE_EXAMPLE)
    if not isinstance(data, dict) or "targets" not in data:
        raise TargetConfigError(f'{source} must be an object with "targets", for example {_FILE_EXAMPLE}')
    extra = [k for k in data if k != "targets"]
    if extra:
        raise TargetConfigError(f'{source}: {shown(extra[0])} is not a key of targets.json.'
                                f'{did_you_mean(extra[0], ["targets"])} It holds only "targets".')
    items = data["targets"]
    if not isinstance(items, list) or not items:
        raise TargetConfigError(f'{source}: "targets" must be a non-empty list of target specs, for example '
                                f"{_FILE_EXAMPLE}")
    defaults = defaults or SearchDefaults(search_endpoint=trust.search_endpoint)
    return _specs(items, f"{source}: targets", defaults=defaults, trust=trust)


def targets_for(collection: str, configured: Mapping[str, tuple[TargetSpec, ...]], targets_json: bytes | None,
                *, targets_json_source: str, trust: Trust,
                defaults: SearchDefaults | None = None) -> tuple[TargetSpec, ...]:
    """The specs ``collection`` searches: its ``targets.json`` when there is one, else the setting's entry."""
    if targets_json is not None:
        return parse_collection_targets(targets_json, source=targets_json_source, trust=trust, defaults=defaults)
    if collection in configured:
        return configured[collection]
    known = sorted(configured)
    hint = did_you_mean(collection, known)
    raise TargetConfigError(f"no targets are configured for collection {shown(collection)}.{hint} Add it to the app "
                            f"setting {SETTING} ({', '.join(map(repr, known)) or 'which names none yet'}), "
                            f"or save {targets_json_source} beside its golden file")


def _json(value: str | bytes | Mapping[str, Any], source: str, example: str) -> Any:
    if isinstance(value, Mapping):
        return value
    try:
        text = value.decode("utf-8-sig") if isinstance(value, bytes) else value
        return parse_json(text, strict=False)
    except UnicodeDecodeError as err:
        raise TargetConfigError(f"{source} is not UTF-8 text; save it as UTF-8 JSON") from err
    except JsonLineError as err:
        if err.decode is not None:
            raise TargetConfigError(f"{source} is not JSON ({err.decode.msg} at line {err.decode.lineno} column "
                                    f"{err.decode.colno}); write it like {example}") from err
        raise TargetConfigError(f"{source} is {err}; write it like {example}") from err  # nested too deeply


def _specs(items: list[Any], where: str, *, defaults: SearchDefaults, trust: Trust | None) -> tuple[TargetSpec, ...]:
    specs: list[TargetSpec] = []
    for n, item in enumerate(items):
        spec = _spec(item, f"{where}[{n}]", defaults=defaults, trust=trust)
        if any(s.name == spec.name for s in specs):
            raise TargetConfigError(f'{where}[{n}]: the name "{spec.name}" is already used by another target '
                                    "of this collection; setup keys start with the name, so give each its own")
        specs.append(spec)
    return tuple(specs)


def _spec(item: Any, where: str, *, defaults: SearchDefaults, trust: Trust | None) -> TargetSpec:
    if not isinstance(item, dict):
        raise TargetConfigError(f"{where} must be an object like {json.dumps(json.loads(_FILE_EXAMPLE)['targets'][0])}")
    engine = item.get("engine")
    if engine not in ENGINES:
        said = "missing" if engine is None else shown(engine)
        hint = did_you_mean(engine, ENGINES) if isinstance(engine, str) else ""
        raise TargetConfigError(f'{where}: "engine" is {said}; use "embedded" or "azure_search".{hint}')
    if engine == "embedded":
        for key in item:
            if key not in _EMBEDDED_KEYS:
                why = ' (it belongs to an "azure_search" target)' if key in _azure_search_keys() else ""
                raise TargetConfigError(f'{where}: {shown(key)} is not a key of an "embedded" target{why}.'
                                        f'{did_you_mean(key, _EMBEDDED_KEYS)} Keys: {", ".join(_EMBEDDED_KEYS)}')
    for key in ("name", "index"):
        if key not in item:
            raise TargetConfigError(f'{where}: "{key}" is missing; {_needs(engine, key)}')
    name = item["name"]
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        raise TargetConfigError(f'{where}: "name" must be 1 to 40 letters, digits, "_" or "-" (it starts every '
                                f'setup key, as in "local.keyword.bm25"), '
                                f"not {shown(name)}")
    if engine == "embedded":
        return _embedded_spec(item, where, trust)
    return _azure_search_spec(item, where, defaults, trust)


def _needs(engine: str, key: str) -> str:
    if engine == "embedded" and key == "index":
        return ("give the Blob or S3 address of a published index, for example "
                "https://<account>.blob.core.windows.net/indexes/docs or s3://<bucket>/indexes/docs (publish one with "
                "`python3 -m evaluation index CORPUS --out <address>`)")
    if key == "index":
        return 'give the Azure AI Search index name, for example "docs-index"'
    return 'give each target a name, for example "local" (it starts every setup key)'


def _whole(item: Mapping[str, Any], key: str, where: str, low: int, high: int, default: int) -> int:
    value = item.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise TargetConfigError(f'{where}: "{key}" must be a whole number from {low} to {high}, '
                                f"not {shown(value)} (default {default})")
    return value


def _embedded_spec(item: Mapping[str, Any], where: str, trust: Trust | None) -> TargetSpec:
    from .errors import StoreError
    from .store.blob import parse_address
    from .store.s3 import is_s3_address, parse_s3_address

    index = item["index"]
    try:
        if not isinstance(index, str):
            raise StoreError("not a string")
        if is_s3_address(index):
            s3 = parse_s3_address(index)
            if not s3.key:
                raise StoreError("it names a bucket but no folder in it")
        else:
            address = parse_address(index)
            if not address.path:
                raise StoreError("it names a container but no folder in it")
    except StoreError as err:
        raise TargetConfigError(f'{where}: "index" must be the Blob or S3 address of a folder holding a published '
                                f"index, such as https://<account>.blob.core.windows.net/indexes/docs or "
                                f"s3://<bucket>/indexes/docs, not {shown(index)} ({err}); publish one with "
                                "`python3 -m evaluation index CORPUS --out <address>`") from err
    if trust is not None:
        if is_s3_address(index):
            home = f"bucket (s3://{trust.s3_bucket})" if trust.s3_bucket else "storage account (no S3 bucket)"
            there, allowed = f"s3://{s3.bucket}", trust.s3_bucket == s3.bucket
        else:
            home = f"storage account ({trust.storage_account_url or 'none: the app keeps its files in S3'})"
            there = address.account_url
            allowed = trust.storage_account_url is not None and same_endpoint(there, trust.storage_account_url)
        if not allowed:
            raise TargetConfigError(f'{where}: "index" must be in the app\'s own {home}, '
                                    f"not {there}; a targets.json may only point at indexes the app keeps, so copy "
                                    f"the index there or configure the target in the app setting {SETTING}")
    cross_encoder = item.get("cross_encoder", True)
    if not isinstance(cross_encoder, bool):
        raise TargetConfigError(f'{where}: "cross_encoder" must be true or false, not {shown(cross_encoder)}')
    return TargetSpec(name=item["name"], engine="embedded", index=index.rstrip("/"), source=where,
                      rerank_candidates=_whole(item, "rerank_candidates", where, 1, 1000, 20),
                      fusion_candidates=_whole(item, "fusion_candidates", where, 20, 1000, 50),
                      cross_encoder=cross_encoder)


def _azure_search_keys() -> tuple[str, ...]:
    from .azure_search.options import _KEYS

    return _KEYS


def _azure_search_spec(item: Mapping[str, Any], where: str, defaults: SearchDefaults,
                       trust: Trust | None) -> TargetSpec:
    """Checked by the Azure AI Search target's own options; then what the app allows on top."""
    from .azure_search.options import AzureSearchOptions
    from .errors import UsageError

    options = dict(item)
    if not options.get("endpoint"):
        if not defaults.search_endpoint:
            raise TargetConfigError(f'{where}: "endpoint" is missing and the app setting AZURE_SEARCH_ENDPOINT is '
                                    'not set; add "endpoint": "https://<service>.search.windows.net"')
        options["endpoint"] = defaults.search_endpoint
    if "azure_openai" not in options and defaults.openai_endpoint and defaults.openai_deployment:
        options["azure_openai"] = {"endpoint": defaults.openai_endpoint, "deployment": defaults.openai_deployment}
    try:
        parsed = AzureSearchOptions.parse(options, where=where)
    except UsageError as err:
        raise TargetConfigError(str(err)) from err
    openai = parsed.azure_openai
    if openai is not None and openai.api_key_env:
        raise TargetConfigError(f"{where}: azure_openai.api_key_env cannot be used by the Function App: it signs in "
                                "to Azure OpenAI with its managed identity (Cognitive Services OpenAI User); "
                                "remove api_key_env from azure_openai")
    if parsed.api_key_env is not None:
        if trust is not None:
            raise TargetConfigError(f'{where}: a targets.json cannot name "api_key_env"; the app signs in to '
                                    f"Azure AI Search with its identity, or configure the key in {SETTING}")
        if not re.fullmatch(API_KEY_PREFIX + r"[A-Z0-9_]*", parsed.api_key_env):
            raise TargetConfigError(f'{where}: "api_key_env" must name an app setting starting with '
                                    f'{API_KEY_PREFIX} (such as "{API_KEY_PREFIX}_DOCS"), not "{parsed.api_key_env}"')
    if trust is not None:
        if not (_is_service(parsed.endpoint, ".search.windows.net") or _same(parsed.endpoint, trust.search_endpoint)):
            raise TargetConfigError(f'{where}: "endpoint" must be an Azure AI Search service '
                                    "(https://<service>.search.windows.net) or the app's AZURE_SEARCH_ENDPOINT, not "
                                    f"{parsed.endpoint}; the app's identity signs requests to it")
        if openai is not None and not (_is_service(openai.endpoint, ".openai.azure.com")
                                       or _same(openai.endpoint, trust.openai_endpoint)):
            raise TargetConfigError(f"{where}: azure_openai.endpoint must be an Azure OpenAI resource "
                                    "(https://<resource>.openai.azure.com) or the app's AZURE_OPENAI_ENDPOINT, not "
                                    f"{openai.endpoint}; the app's identity signs requests to it")
    return TargetSpec(name=item["name"], engine="azure_search", index=parsed.index, source=where,
                      endpoint=parsed.endpoint, api_key_env=parsed.api_key_env, options=parsed.to_dict())


def _is_service(url: str, suffix: str) -> bool:
    parts = urlsplit(url)
    return parts.scheme == "https" and (parts.hostname or "").endswith(suffix) and not parts.port


def _same(url: str, other: str | None) -> bool:
    return other is not None and same_endpoint(url, other)


# -- opening -------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class TargetAccess:
    """How targets are reached, read once at the app's edge: the storage account's ``connection_string``
    (None: ``credential``, a managed identity, or the address alone), and ``api_keys``, the values of the
    settings specs name in ``api_key_env``."""

    connection_string: str | None = None
    credential: Any = None
    api_keys: Mapping[str, str] | None = None


def target_state(spec: TargetSpec, *, access: TargetAccess = TargetAccess()) -> str:
    """What identifies the target's content now: a changed index gives a new state.

    Embedded: the fingerprint of the index version published as current (one small read). Azure AI
    Search: the target's ``describe()["state"]`` (its definition, document count and storage size).
    """
    if spec.engine == "embedded":
        from .engine.published import published_fingerprint

        return published_fingerprint(spec.index, connection_string=access.connection_string,
                                     credential=access.credential)
    state = opened_state(_azure_search_target(spec, access=access, threads=None))
    assert state is not None, "an Azure AI Search target always describes its state"
    return state


def open_target(spec: TargetSpec, *, cache: str | Path, state: str | None = None,
                access: TargetAccess = TargetAccess(), threads: int | None = None,
                batch_cache: Any = None, opened_indexes: OpenedIndexes | None = None) -> Target:
    """The target ``spec`` names, ready to search.

    ``state`` pins what ``target_state`` (or ``opened_state``) gave when the run was planned: an
    embedded index's version is fetched even if a newer one is published since; an Azure AI Search
    index that changed since is refused (a ``SearchIndexError``: its own run covers the new state).
    ``access``: the storage connection and search keys (``TargetAccess``), read at the app's edge.
    ``batch_cache`` (an embedded index only) is where the batch path keeps its query vectors and pair
    scores instead of the SQLite file beside the index: the app's ``engine.shared_cache.SharedCache``.
    ``opened_indexes`` (an ``engine.opened.OpenedIndexes``, an embedded index only) keeps the opened index
    for every target of the process that opens the same version (its address, the pinned or current
    fingerprint, the folder fetched into): the target made around it is still this call's own.
    """
    if spec.engine == "embedded":
        from .engine.index import open_index
        from .engine.published import fetch_index, published_fingerprint
        from .engine.target import EmbeddedTarget

        connection_string, credential = access.connection_string, access.credential
        fingerprint = state or published_fingerprint(spec.index, connection_string=connection_string,
                                                     credential=credential)
        folder = fetch_index(spec.index, cache, fingerprint=fingerprint, connection_string=connection_string,
                             credential=credential)
        index = (opened_indexes.open(spec.index, fingerprint, folder) if opened_indexes is not None
                 else open_index(folder, check_corpus=False))  # a published version: its corpus stayed behind
        return EmbeddedTarget(index, name=spec.name, rerank_candidates=spec.rerank_candidates,
                              fusion_candidates=spec.fusion_candidates, cross_encoder=spec.cross_encoder,
                              threads=threads, described_index=spec.index,
                              cache=batch_cache if batch_cache is not None else True)
    target = _azure_search_target(spec, access=access, threads=threads)
    if state is not None and opened_state(target) != state:
        from .errors import SearchIndexError

        raise SearchIndexError(f"{spec.source}: index {spec.index} on {spec.endpoint} changed since this run was "
                               "planned (its definition or documents); the run that covers the new state reports on it")
    return target


def _azure_search_target(spec: TargetSpec, *, access: TargetAccess, threads: int | None) -> Target:
    from .azure_search import AzureSearchTarget, SignIn
    from .errors import UsageError

    api_key = (access.api_keys or {}).get(spec.api_key_env) if spec.api_key_env else None
    try:
        return AzureSearchTarget.from_options(spec.name, {"name": spec.name, "engine": spec.engine, **spec.options},
                                              sign_in=SignIn(credential=access.credential, api_key=api_key),
                                              threads=threads,
                                              where=spec.source)
    except UsageError as err:  # a key the spec names but the app does not have
        raise TargetConfigError(str(err)) from err


def opened_state(target: Target) -> str | None:
    """The state an opened target holds, for a run to pin (embedded: its index's fingerprint)."""
    described = target.describe()
    return described.get("state") or described.get("fingerprint")
