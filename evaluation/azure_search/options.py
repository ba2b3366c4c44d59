"""An Azure AI Search target's options, as a target spec gives them, checked into a frozen record.

The spec (``EVALUATION_TARGETS``, ``targets.json``, or the command line's flags) looks like::

    {"name": "search", "engine": "azure_search", "endpoint": "https://svc.search.windows.net",
     "index": "docs-index", "api_key_env": null,
     "fields": {"id": "chunk_id", "doc_id": "parent_id", "page": "page", "text": "chunk"},
     "semantic_configuration": "default", "semantic": true, "vector_fields": ["contentVector", "titleVector"],
     "query_vectors": {"titleVector": "minilm-l6"},
     "azure_openai": {"endpoint": "https://aoai.openai.azure.com", "deployment": "embed", "dimensions": 1536},
     "rerank_candidates": 30, "vector_k": 50, "exhaustive": false, "concurrency": 4,
     "max_retries": 4, "max_retry_wait": 30}

Only ``endpoint`` and ``index`` are required; everything else has a default read from the index
itself (see ``definition.resolve_fields`` and ``setups.query_vector_sources``). ``api_key_env`` is
the *name* of an environment variable: this library never reads the environment, so whoever builds
the target (the command line, the Function App) reads it and passes the key. Nothing here imports
the Azure SDK.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Mapping

from ..errors import UsageError, did_you_mean, shown

ENGINE = "azure_search"
# Accepted as a query vector source for a field, beside the bundled models' names.
VECTORIZER, AZURE_OPENAI = "vectorizer", "azure_openai"
FIELD_ROLES = ("id", "doc_id", "page", "text")
_KEYS = ("name", "engine", "endpoint", "index", "api_key_env", "fields", "semantic_configuration", "semantic",
         "vector_fields", "query_vectors", "azure_openai", "rerank_candidates", "vector_k", "exhaustive",
         "concurrency", "max_retries", "max_retry_wait", "cross_encoder")
_OPENAI_KEYS = ("endpoint", "deployment", "dimensions", "api_key_env", "api_version")
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_INDEX_NAME = re.compile(r"^[a-z0-9][a-z0-9-]{0,127}$")  # the service's rule: lower case, digits, dashes


@dataclass(frozen=True)
class FieldNames:
    """Which index fields hold a chunk's id, its document's id, its page and its text (None: a default
    chosen from the index definition)."""

    id: str | None = None
    doc_id: str | None = None
    page: str | None = None
    text: str | None = None

    def to_dict(self) -> dict[str, str | None]:
        return {"id": self.id, "doc_id": self.doc_id, "page": self.page, "text": self.text}


@dataclass(frozen=True)
class AzureOpenAIEmbeddings:
    """An Azure OpenAI embeddings deployment that embeds questions for vector fields without a vectorizer.

    ``dimensions``: the vector size it gives (and asks for, on models that can shorten their vectors);
    None uses it for every vector field without a vectorizer, whatever its size.
    """

    endpoint: str
    deployment: str
    dimensions: int | None = None
    api_key_env: str | None = None
    api_version: str = "2024-10-21"


@dataclass(frozen=True)
class AzureSearchOptions:
    endpoint: str
    index: str
    api_key_env: str | None = None
    fields: FieldNames = FieldNames()
    semantic_configuration: str | None = None      # None: the index's default, or its only one
    # semantic ranking asked for: an index without the configuration above (or without any) gets one,
    # naming its title and content fields (definition.semantic_configuration_for), where the sign-in may
    # update the index; where it may not, the semantic setups are left out with the REST body to add
    semantic: bool = False
    vector_fields: tuple[str, ...] | None = None   # None: every vector field of the index
    query_vectors: Mapping[str, str] = field(default_factory=dict)  # field -> vectorizer | azure_openai | model
    azure_openai: AzureOpenAIEmbeddings | None = None
    rerank_candidates: int = 30   # hybrid results the cross-encoder rescores (hybrid_reranked)
    vector_k: int = 50            # nearest neighbours each vector query brings to fusion (at least the depth)
    exhaustive: bool = False      # exact KNN instead of the index's HNSW graph (what production does)
    concurrency: int = 4          # searches in flight during a batch
    max_retries: int = 4          # retries of a throttled (429/503) request before the setup fails
    max_retry_wait: float = 30.0  # seconds; the longest single wait, whatever Retry-After asks for
    cross_encoder: bool = True    # offer hybrid_reranked (the embedded engine's cross-encoder)

    @classmethod
    def parse(cls, options: Mapping[str, Any], *, where: str = "the Azure AI Search target") -> AzureSearchOptions:
        """The options of a target spec, checked; a ``UsageError`` naming ``where``, the key and the fix."""
        if not isinstance(options, Mapping):
            raise UsageError(f"{where}: a target spec is a JSON object, not {type(options).__name__}")
        for key in options:
            if key not in _KEYS:
                raise UsageError(f'{where}: unknown option {shown(key)}.{did_you_mean(str(key), _KEYS)} '
                                 f"Options: {', '.join(_KEYS)}")
        endpoint = _endpoint(options.get("endpoint"), f"{where}: endpoint")
        index = options.get("index")
        if not isinstance(index, str) or not _INDEX_NAME.match(index):
            raise UsageError(f'{where}: index must be the name of an index on the service (lower case letters, '
                             f'digits and dashes), not {shown(index)}')
        return cls(
            endpoint=endpoint, index=index,
            api_key_env=_env_name(options.get("api_key_env"), f"{where}: api_key_env"),
            fields=_fields(options.get("fields"), where),
            semantic_configuration=_optional_str(options.get("semantic_configuration"),
                                                 f"{where}: semantic_configuration"),
            semantic=_flag(options.get("semantic", False), f"{where}: semantic"),
            vector_fields=_vector_fields(options.get("vector_fields"), where),
            query_vectors=_query_vectors(options.get("query_vectors"), where),
            azure_openai=_azure_openai(options.get("azure_openai"), where),
            rerank_candidates=_whole(options.get("rerank_candidates", 30), f"{where}: rerank_candidates", 1),
            vector_k=_whole(options.get("vector_k", 50), f"{where}: vector_k", 1),
            exhaustive=_flag(options.get("exhaustive", False), f"{where}: exhaustive"),
            concurrency=_whole(options.get("concurrency", 4), f"{where}: concurrency", 1),
            max_retries=_whole(options.get("max_retries", 4), f"{where}: max_retries", 0),
            max_retry_wait=_seconds(options.get("max_retry_wait", 30.0), f"{where}: max_retry_wait"),
            cross_encoder=_flag(options.get("cross_encoder", True), f"{where}: cross_encoder"),
        )

    def to_dict(self) -> dict[str, Any]:
        """The options as a spec would write them (no secret is ever held here)."""
        openai = self.azure_openai
        return {"endpoint": self.endpoint, "index": self.index, "api_key_env": self.api_key_env,
                "fields": self.fields.to_dict(), "semantic_configuration": self.semantic_configuration,
                "semantic": self.semantic,
                "vector_fields": list(self.vector_fields) if self.vector_fields is not None else None,
                "query_vectors": dict(self.query_vectors),
                "azure_openai": None if openai is None else {
                    "endpoint": openai.endpoint, "deployment": openai.deployment, "dimensions": openai.dimensions,
                    "api_key_env": openai.api_key_env, "api_version": openai.api_version},
                "rerank_candidates": self.rerank_candidates, "vector_k": self.vector_k,
                "exhaustive": self.exhaustive, "concurrency": self.concurrency, "max_retries": self.max_retries,
                "max_retry_wait": self.max_retry_wait, "cross_encoder": self.cross_encoder}


def _endpoint(value: Any, what: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise UsageError(f"{what} is required: the service's address, e.g. https://<service>.search.windows.net")
    value = value.strip().rstrip("/")
    local = re.match(r"^http://(127\.0\.0\.1|localhost)(:\d+)?$", value)
    if not (re.match(r"^https://[A-Za-z0-9.-]+(:\d+)?$", value) or local):
        raise UsageError(f"{what} {shown(value)} is not a service address: use https://<service>.search.windows.net "
                         "(no path, no query)")
    return value


def _env_name(value: Any, what: str) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or not _ENV_NAME.match(value):
        raise UsageError(f"{what} is the NAME of an environment variable holding the key (e.g. "
                         f"AZURE_SEARCH_KEY), not {shown(value)}; leave it out to sign in with Microsoft Entra ID")
    return value


def _optional_str(value: Any, what: str) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip():
        raise UsageError(f"{what} must be a name, not {shown(value)}")
    return value.strip()


def _fields(value: Any, where: str) -> FieldNames:
    if value is None:
        return FieldNames()
    if not isinstance(value, Mapping):
        raise UsageError(f"{where}: fields is an object such as "
                         '{"id": "chunk_id", "doc_id": "parent_id", "page": "page", "text": "chunk"}')
    for role in value:
        if role not in FIELD_ROLES:
            raise UsageError(f'{where}: fields has no role {shown(role)}.{did_you_mean(str(role), FIELD_ROLES)} '
                             f"Roles: {', '.join(FIELD_ROLES)}")
    return FieldNames(**{role: _optional_str(value.get(role), f"{where}: fields.{role}") for role in FIELD_ROLES})


def _vector_fields(value: Any, where: str) -> tuple[str, ...] | None:
    if value is None:
        return None
    if (not isinstance(value, (list, tuple)) or not value
            or not all(isinstance(v, str) and v.strip() for v in value)):
        raise UsageError(f"{where}: vector_fields is a non-empty list of vector field names, or left out for all")
    if len(set(value)) != len(value):
        raise UsageError(f"{where}: vector_fields names a field twice")
    return tuple(value)


def _query_vectors(value: Any, where: str) -> dict[str, str]:
    if value is None:
        return {}
    from ..engine.model_catalog import EMBEDDER_NAMES

    sources = (VECTORIZER, AZURE_OPENAI, *EMBEDDER_NAMES)
    if not isinstance(value, Mapping):
        raise UsageError(f'{where}: query_vectors maps a vector field to where its query vector comes from, '
                         f'e.g. {{"titleVector": "minilm-l6"}}; sources: {", ".join(sources)}')
    for name, source in value.items():
        if source not in sources:
            raise UsageError(f'{where}: query_vectors[{shown(name)}] is {shown(source)}.'
                             f'{did_you_mean(str(source), sources)} '
                             f"Sources: {', '.join(sources)}")
    return dict(value)


def _azure_openai(value: Any, where: str) -> AzureOpenAIEmbeddings | None:
    if value is None:
        return None
    if not isinstance(value, Mapping):
        raise UsageError(f'{where}: azure_openai is an object such as {{"endpoint": '
                         f'"https://<resource>.openai.azure.com", "deployment": "<embeddings deployment>"}}')
    for key in value:
        if key not in _OPENAI_KEYS:
            raise UsageError(f'{where}: azure_openai has no option {shown(key)}.{did_you_mean(str(key), _OPENAI_KEYS)}')
    endpoint = value.get("endpoint")
    if not isinstance(endpoint, str) or not re.match(r"^https://[A-Za-z0-9.-]+(:\d+)?/?$", endpoint.strip()):
        raise UsageError(f"{where}: azure_openai.endpoint must be https://<resource>.openai.azure.com, "
                         f"not {shown(endpoint)}")
    deployment = _optional_str(value.get("deployment"), f"{where}: azure_openai.deployment")
    if deployment is None:
        raise UsageError(f"{where}: azure_openai.deployment is required: the name of an embeddings deployment")
    dimensions = value.get("dimensions")
    if dimensions is not None:
        dimensions = _whole(dimensions, f"{where}: azure_openai.dimensions", 1)
    return AzureOpenAIEmbeddings(endpoint=endpoint.strip().rstrip("/"), deployment=deployment, dimensions=dimensions,
                                 api_key_env=_env_name(value.get("api_key_env"), f"{where}: azure_openai.api_key_env"),
                                 api_version=_optional_str(value.get("api_version"),
                                                           f"{where}: azure_openai.api_version")
                                 or "2024-10-21")


def _whole(value: Any, what: str, least: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < least:
        raise UsageError(f"{what} must be a whole number of at least {least}, not {shown(value)}")
    return value


def _seconds(value: Any, what: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
        raise UsageError(f"{what} must be a number of seconds (0 or more), not {shown(value)}")
    return float(value)


def _flag(value: Any, what: str) -> bool:
    if not isinstance(value, bool):
        raise UsageError(f"{what} must be true or false, not {shown(value)}")
    return value
