"""Which targets a collection searches: target specs, where they come from, and opening one.

Two places name them. The app setting ``EVALUATION_TARGETS`` maps collection names to lists of specs;
a ``targets.json`` beside a collection's golden file (``{"targets": [...]}``) replaces that entry for
its collection. A spec::

    {"name": "local", "engine": "embedded", "index": "https://<acct>.blob.core.windows.net/indexes/docs",
     "rerank_candidates": 30}
    {"name": "search", "engine": "azure_search", "endpoint": "https://<svc>.search.windows.net",
     "index": "docs-index", "api_key_env": null, "fields": {"id": "chunk_id", "doc_id": "parent_id"}}

Every mistake is a ``TargetConfigError`` sentence naming where the spec was written (the setting and
collection, or the file), the key, and the fix, with the closest key for a typo.

Whoever may save a golden file may write ``targets.json``, so a ``targets.json`` is trusted less than
the app setting: its embedded indexes must live in the app's own storage account, its Azure AI
Search endpoints must be ``https://<service>.search.windows.net`` or the app's ``AZURE_SEARCH_ENDPOINT``,
and it cannot name an API key. The app's managed identity never signs a request to anywhere else.

Engines: ``embedded`` opens an index published to Blob (``python -m evaluation index CORPUS --out
<address>``), fetched once per fingerprint into a local cache. ``azure_search`` is parsed and checked
here; opening it plugs in where ``open_target`` and ``target_state`` say so.
"""
from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Mapping
from urllib.parse import urlsplit

from .errors import EvaluationError, TargetConfigError, did_you_mean
from .target import Target

ENGINES = ("embedded", "azure_search")
SETTING = "EVALUATION_TARGETS"
API_KEY_PREFIX = "AZURE_SEARCH_API_KEY"  # api_key_env may only name a setting that starts so
FIELD_ROLES = ("id", "doc_id", "page", "text")
_NAME = re.compile(r"[A-Za-z0-9_-]{1,40}")
_SETTING_EXAMPLE = ('{"docs": [{"name": "local", "engine": "embedded", '
                    '"index": "https://<account>.blob.core.windows.net/indexes/docs"}]}')
_FILE_EXAMPLE = '{"targets": [{"name": "local", "engine": "embedded", "index": "https://<account>.blob.core.windows.net/indexes/docs"}]}'

# The keys each engine's spec takes: key -> (required, what it must be). The lead wires new Azure AI
# Search options here and in ``_azure_search_spec`` when the Azure AI Search target lands.
_KEYS: dict[str, dict[str, tuple[bool, str]]] = {
    "embedded": {"name": (True, "a name"), "engine": (True, "an engine"), "index": (True, "a Blob address"),
                 "rerank_candidates": (False, "a whole number from 1 to 1000"),
                 "fusion_candidates": (False, "a whole number from 20 to 1000"),
                 "cross_encoder": (False, "true or false")},
    "azure_search": {"name": (True, "a name"), "engine": (True, "an engine"), "index": (True, "an index name"),
                     "endpoint": (False, "an https address"), "api_key_env": (False, "a setting name or null"),
                     "fields": (False, "an object of field names")},
}


@dataclass(frozen=True)
class TargetSpec:
    """One target of a collection, as configured; ``source`` says where it was written."""

    name: str
    engine: str
    index: str                      # embedded: the Blob address of a published index; azure_search: its name
    source: str
    rerank_candidates: int = 30
    fusion_candidates: int = 50
    cross_encoder: bool = True
    endpoint: str | None = None     # azure_search
    api_key_env: str | None = None  # azure_search: the app setting holding an admin or query key
    fields: Mapping[str, str] = field(default_factory=dict)  # azure_search: role -> field name

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON, to pin a run's targets in its working files (``from_dict`` reads it back)."""
        return {**asdict(self), "fields": dict(self.fields)}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> TargetSpec:
        return cls(**{**data, "fields": dict(data.get("fields") or {})})


@dataclass(frozen=True)
class Trust:
    """What a ``targets.json`` may point at: the app's own storage account, and its search endpoint."""

    storage_account_url: str          # https://<acct>.blob.core.windows.net (or Azurite's account URL)
    search_endpoint: str | None = None


# -- parsing -------------------------------------------------------------------------------------------

def parse_target_specs(value: str | bytes | Mapping[str, Any], *, source: str = SETTING,
                       search_endpoint: str | None = None) -> dict[str, tuple[TargetSpec, ...]]:
    """The app setting's value: ``{collection: [spec, ...]}`` -> specs per collection.

    ``search_endpoint`` (the app's ``AZURE_SEARCH_ENDPOINT``) fills in an Azure AI Search spec that
    names no endpoint. Raises ``TargetConfigError`` for the first mistake, said as a sentence.
    """
    data = _json(value, source, _SETTING_EXAMPLE)
    if not isinstance(data, dict):
        raise TargetConfigError(f"{source} must be a JSON object mapping each collection to its targets, "
                                f"for example {_SETTING_EXAMPLE}")
    specs = {}
    for collection, items in data.items():
        where = f"{source}[{json.dumps(collection)}]"
        if not isinstance(items, list) or not items:
            raise TargetConfigError(f"{where} must be a non-empty list of target specs, for example "
                                    f"{_SETTING_EXAMPLE}")
        specs[collection] = _specs(items, where, search_endpoint=search_endpoint, trust=None)
    return specs


def parse_collection_targets(value: str | bytes | Mapping[str, Any], *, source: str, trust: Trust) -> tuple[TargetSpec, ...]:
    """A ``targets.json``: ``{"targets": [spec, ...]}``, checked against ``trust`` (module docstring)."""
    data = _json(value, source, _FILE_EXAMPLE)
    if not isinstance(data, dict) or "targets" not in data:
        raise TargetConfigError(f'{source} must be an object with "targets", for example {_FILE_EXAMPLE}')
    extra = [k for k in data if k != "targets"]
    if extra:
        raise TargetConfigError(f'{source}: "{extra[0]}" is not a key of targets.json.'
                                f'{did_you_mean(extra[0], ["targets"])} It holds only "targets".')
    items = data["targets"]
    if not isinstance(items, list) or not items:
        raise TargetConfigError(f'{source}: "targets" must be a non-empty list of target specs, for example '
                                f"{_FILE_EXAMPLE}")
    return _specs(items, f"{source}: targets", search_endpoint=trust.search_endpoint, trust=trust)


def targets_for(collection: str, configured: Mapping[str, tuple[TargetSpec, ...]], targets_json: bytes | None,
                *, targets_json_source: str, trust: Trust) -> tuple[TargetSpec, ...]:
    """The specs ``collection`` searches: its ``targets.json`` when there is one, else the setting's entry."""
    if targets_json is not None:
        return parse_collection_targets(targets_json, source=targets_json_source, trust=trust)
    if collection in configured:
        return configured[collection]
    known = sorted(configured)
    hint = did_you_mean(collection, known)
    raise TargetConfigError(f"no targets are configured for collection {collection!r}.{hint} Add it to the app "
                            f"setting {SETTING} ({', '.join(map(repr, known)) or 'which names none yet'}), "
                            f"or save {targets_json_source} beside its golden file")


def _json(value: str | bytes | Mapping[str, Any], source: str, example: str) -> Any:
    if isinstance(value, Mapping):
        return value
    try:
        text = value.decode("utf-8-sig") if isinstance(value, bytes) else value
        return json.loads(text)
    except UnicodeDecodeError as err:
        raise TargetConfigError(f"{source} is not UTF-8 text; save it as UTF-8 JSON") from err
    except json.JSONDecodeError as err:
        raise TargetConfigError(f"{source} is not JSON ({err.msg} at line {err.lineno} column {err.colno}); "
                                f"write it like {example}") from err


def _specs(items: list[Any], where: str, *, search_endpoint: str | None, trust: Trust | None) -> tuple[TargetSpec, ...]:
    specs: list[TargetSpec] = []
    for n, item in enumerate(items):
        spec = _spec(item, f"{where}[{n}]", search_endpoint=search_endpoint, trust=trust)
        if any(s.name == spec.name for s in specs):
            raise TargetConfigError(f'{where}[{n}]: the name "{spec.name}" is already used by another target '
                                    "of this collection; setup keys start with the name, so give each its own")
        specs.append(spec)
    return tuple(specs)


def _spec(item: Any, where: str, *, search_endpoint: str | None, trust: Trust | None) -> TargetSpec:
    if not isinstance(item, dict):
        raise TargetConfigError(f"{where} must be an object like {json.dumps(json.loads(_FILE_EXAMPLE)['targets'][0])}")
    engine = item.get("engine")
    if engine not in ENGINES:
        shown = "missing" if engine is None else f"{json.dumps(engine)}"
        hint = did_you_mean(engine, ENGINES) if isinstance(engine, str) else ""
        raise TargetConfigError(f'{where}: "engine" is {shown}; use "embedded" or "azure_search".{hint}')
    keys = _KEYS[engine]
    for key in item:
        if key not in keys:
            other = next((e for e in ENGINES if e != engine and key in _KEYS[e]), None)
            why = f' (it belongs to an "{other}" target)' if other else ""
            raise TargetConfigError(f'{where}: "{key}" is not a key of an "{engine}" target{why}.'
                                    f'{did_you_mean(key, keys)} Keys: {", ".join(keys)}')
    for key, (required, _) in keys.items():
        if required and key not in item:
            raise TargetConfigError(f'{where}: "{key}" is missing; {_needs(engine, key)}')
    name = item["name"]
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        raise TargetConfigError(f'{where}: "name" must be 1 to 40 letters, digits, "_" or "-" (it starts every '
                                f'setup key, as in "{name if isinstance(name, str) else "local"}.keyword.bm25"), '
                                f"not {json.dumps(name)}")
    if engine == "embedded":
        return _embedded_spec(item, where, trust)
    return _azure_search_spec(item, where, search_endpoint, trust)


def _needs(engine: str, key: str) -> str:
    if engine == "embedded" and key == "index":
        return ("give the Blob address of a published index, for example "
                "https://<account>.blob.core.windows.net/indexes/docs (publish one with "
                "`python -m evaluation index CORPUS --out <address>`)")
    if key == "index":
        return 'give the Azure AI Search index name, for example "docs-index"'
    return f'add "{key}"'


def _whole(item: Mapping[str, Any], key: str, where: str, low: int, high: int, default: int) -> int:
    value = item.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise TargetConfigError(f'{where}: "{key}" must be a whole number from {low} to {high}, '
                                f"not {json.dumps(value)} (default {default})")
    return value


def _embedded_spec(item: Mapping[str, Any], where: str, trust: Trust | None) -> TargetSpec:
    from .store.blob import parse_address
    from .errors import StoreError

    index = item["index"]
    try:
        if not isinstance(index, str):
            raise StoreError("not a string")
        address = parse_address(index)
        if not address.path:
            raise StoreError("it names a container but no folder in it")
    except StoreError as err:
        raise TargetConfigError(f'{where}: "index" must be the Blob address of a folder holding a published '
                                f"index, such as https://<account>.blob.core.windows.net/indexes/docs, not "
                                f"{json.dumps(index)} ({err}); publish one with "
                                "`python -m evaluation index CORPUS --out <address>`") from err
    if trust is not None and _origin(address.account_url) != _origin(trust.storage_account_url):
        raise TargetConfigError(f'{where}: "index" must be in the app\'s own storage account '
                                f"({trust.storage_account_url}), not {address.account_url}; a targets.json may "
                                "only point at indexes the app keeps, so copy the index there or configure the "
                                f"target in the app setting {SETTING}")
    cross_encoder = item.get("cross_encoder", True)
    if not isinstance(cross_encoder, bool):
        raise TargetConfigError(f'{where}: "cross_encoder" must be true or false, not {json.dumps(cross_encoder)}')
    return TargetSpec(name=item["name"], engine="embedded", index=index.rstrip("/"), source=where,
                      rerank_candidates=_whole(item, "rerank_candidates", where, 1, 1000, 30),
                      fusion_candidates=_whole(item, "fusion_candidates", where, 20, 1000, 50),
                      cross_encoder=cross_encoder)


def _azure_search_spec(item: Mapping[str, Any], where: str, search_endpoint: str | None,
                       trust: Trust | None) -> TargetSpec:
    index = item["index"]
    if not isinstance(index, str) or not re.fullmatch(r"[a-z0-9][a-z0-9-]{0,127}", index):
        raise TargetConfigError(f'{where}: "index" must be an Azure AI Search index name (lowercase letters, '
                                f'digits and "-"), not {json.dumps(index)}')
    endpoint = item.get("endpoint") or search_endpoint
    if endpoint is None:
        raise TargetConfigError(f'{where}: "endpoint" is missing and the app setting AZURE_SEARCH_ENDPOINT is not '
                                'set; add "endpoint": "https://<service>.search.windows.net"')
    endpoint = _search_endpoint(endpoint, where)
    if trust is not None and not (endpoint.endswith(".search.windows.net")
                                  or (trust.search_endpoint and _origin(endpoint) == _origin(trust.search_endpoint))):
        raise TargetConfigError(f'{where}: "endpoint" must be an Azure AI Search service '
                                "(https://<service>.search.windows.net) or the app's AZURE_SEARCH_ENDPOINT, not "
                                f"{endpoint}; the app's identity signs requests to it")
    api_key_env = item.get("api_key_env")
    if api_key_env is not None:
        if trust is not None:
            raise TargetConfigError(f'{where}: a targets.json cannot name "api_key_env"; the app signs in to '
                                    f"Azure AI Search with its identity, or configure the key in {SETTING}")
        if not isinstance(api_key_env, str) or not re.fullmatch(API_KEY_PREFIX + r"[A-Z0-9_]*", api_key_env):
            raise TargetConfigError(f'{where}: "api_key_env" must name an app setting starting with '
                                    f'{API_KEY_PREFIX} (such as "{API_KEY_PREFIX}_DOCS"), not {json.dumps(api_key_env)}')
    fields = item.get("fields", {})
    if not isinstance(fields, dict) or any(not isinstance(v, str) or not v for v in fields.values()):
        raise TargetConfigError(f'{where}: "fields" must map roles to field names, for example '
                                '{"id": "chunk_id", "doc_id": "parent_id", "page": "page", "text": "chunk"}')
    for role in fields:
        if role not in FIELD_ROLES:
            raise TargetConfigError(f'{where}: "{role}" is not a field role.{did_you_mean(role, FIELD_ROLES)} '
                                    f"Roles: {', '.join(FIELD_ROLES)}")
    return TargetSpec(name=item["name"], engine="azure_search", index=index, source=where, endpoint=endpoint,
                      api_key_env=api_key_env, fields=dict(fields))


def _search_endpoint(value: Any, where: str) -> str:
    parts = urlsplit(value) if isinstance(value, str) else None
    if (parts is None or parts.scheme != "https" or not parts.hostname or parts.username or parts.port
            or parts.path not in ("", "/") or parts.query or parts.fragment):
        raise TargetConfigError(f'{where}: "endpoint" must be an https address with nothing after the host, '
                                f"such as https://<service>.search.windows.net, not {json.dumps(value)}")
    return f"https://{parts.hostname.lower()}"


def _origin(url: str) -> str:
    return url.rstrip("/").lower()


# -- opening -------------------------------------------------------------------------------------------

def target_state(spec: TargetSpec, *, connection_string: str | None = None, credential: Any = None) -> str:
    """What identifies the target's content now, cheaply: a changed index gives a new state.

    Embedded: the fingerprint of the index version published as current.
    """
    if spec.engine == "embedded":
        from .engine.published import published_fingerprint

        return published_fingerprint(spec.index, connection_string=connection_string, credential=credential)
    # azure_search plugs in here: the Azure AI Search target's describe()["state"].
    raise _not_wired(spec)


def open_target(spec: TargetSpec, *, cache: str | Path, state: str | None = None,
                connection_string: str | None = None, credential: Any = None,
                api_keys: Mapping[str, str] | None = None, threads: int | None = None) -> Target:
    """The target ``spec`` names, ready to search.

    ``state`` pins what ``target_state`` returned when the run was planned (embedded: the index
    version is fetched even if a newer one is published since). ``api_keys`` holds the values of the
    settings Azure AI Search specs name in ``api_key_env``, read at the app's edge.
    """
    if spec.engine == "embedded":
        from .engine.index import open_index
        from .engine.published import fetch_index
        from .engine.target import EmbeddedTarget

        folder = fetch_index(spec.index, cache, fingerprint=state, connection_string=connection_string,
                             credential=credential)
        return EmbeddedTarget(open_index(folder), name=spec.name, rerank_candidates=spec.rerank_candidates,
                              fusion_candidates=spec.fusion_candidates, cross_encoder=spec.cross_encoder,
                              threads=threads, described_index=spec.index)
    # azure_search plugs in here: AzureSearchTarget(endpoint=spec.endpoint, index=spec.index,
    # fields=spec.fields, api key from api_keys[spec.api_key_env] or the credential), checked against state.
    raise _not_wired(spec)


def _not_wired(spec: TargetSpec) -> EvaluationError:
    return TargetConfigError(f'{spec.source}: engine "{spec.engine}" cannot be opened by this build of the app '
                             '(the Azure AI Search target is not part of it yet); use "engine": "embedded" '
                             "or deploy a build that includes it")


def opened_state(target: Target) -> str | None:
    """The state an opened target holds, for a run to pin (embedded: its index's fingerprint)."""
    described = target.describe()
    return described.get("state") or described.get("fingerprint")
