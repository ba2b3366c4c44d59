"""A fake Azure AI Search service (and Azure OpenAI embeddings deployment) behind an azure-core transport.

It answers the REST API the way the service documents it, over an in-memory index, so the real SDK
code runs and every request can be asserted:

- ``GET /indexes('<name>')``: the index definition; ``GET /indexes('<name>')/search.stats``: counts.
- ``PUT /indexes('<name>')``: a new definition, ``If-Match`` on its ``@odata.etag`` (412 when it changed
  since), no field removed or retyped, each semantic configuration naming searchable string fields
  (400 otherwise, with the service's words); the ETag then changes.
- ``POST /indexes('<name>')/docs/search.post.search``: ``search`` (BM25 by the backend, ``*`` for all),
  ``vectorQueries`` (``kind: vector`` with a vector of the field's dimensions, ``kind: text`` only on a
  field whose profile has a vectorizer), several lists fused by RRF (k = 60), ``queryType: semantic``
  with ``semanticConfiguration`` (the top 50 reranked, ``@search.rerankerScore`` 0-4), ``filter``
  (``search.in`` and ``eq ... or ...`` on filterable fields), ``facets`` (facetable fields),
  ``select`` (retrievable fields), ``top``/``skip``: 50 a page without ``top``, 1000 a page above it,
  with ``@odata.nextLink`` and ``@search.nextPageParameters`` for the rest.
- ``POST /openai/deployments/<name>/embeddings``: ``{"data": [{"index", "embedding"}]}``.

``semantic_quota``: semantic queries the free plan still allows; once spent, a semantic query is
answered as the service documents it (HTTP 402, ``SEMANTIC_QUOTA_MESSAGE``) and every other query still
runs (None: no limit).

Anything else is a 400 with the service's error shape. ``fail(...)`` queues canned answers (429 with
Retry-After, 401, 403, ...) for requests whose path contains a given text.
"""
from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from typing import Any, Callable, Protocol, Sequence
from urllib.parse import parse_qs, unquote, urlparse

from azure.core.credentials import AccessToken
from azure.core.exceptions import ServiceRequestError
from azure.core.pipeline.transport import HttpTransport
from azure.core.rest._http_response_impl import HttpResponseImpl
from azure.core.utils import CaseInsensitiveDict

ENDPOINT = "https://svc.search.windows.net"
OPENAI_ENDPOINT = "https://aoai.openai.azure.com"
API_KEY = "test-admin-key"
TOKEN = "test-token"
RRF_K = 60
# learn.microsoft.com/rest/api/searchservice/http-status-codes, "402 Payment Required": returned when the
# monthly allocation of free semantic ranker requests is exhausted, with this message. The page names no
# error code, so the body's code is empty, as the service leaves it on other errors (the 404 below).
SEMANTIC_QUOTA_MESSAGE = ("Free Query Semantic Usage exceeded for the month. Please enable semantic billing to "
                          "continue using semantic search https://aka.ms/SemanticPriceDocPage")
_SEARCH_KEYS = {"search", "queryType", "semanticConfiguration", "select", "top", "skip", "vectorQueries", "filter",
                "facets", "count", "searchMode", "searchFields", "semanticErrorHandling", "orderby",
                "scoringProfile", "minimumCoverage", "vectorFilterMode"}
_VECTOR_QUERY_KEYS = {"kind", "vector", "text", "fields", "k", "exhaustive", "weight", "oversampling"}
_LITERAL = r"'(?:[^']|'')*'"


class Backend(Protocol):
    """How the fake index scores: a list of documents (dicts of field values) and its rankers."""

    documents: list[dict]

    def keyword(self, text: str) -> list[tuple[int, float]]:
        """Matching documents for search text, best first, as (position, BM25 score)."""

    def similarity(self, field: str, vector: Sequence[float]) -> list[float]:
        """Cosine similarity of every document's ``field`` vector with ``vector``."""

    def vectorize(self, field: str, text: str) -> list[float]:
        """What the field's vectorizer would make of ``text``."""

    def semantic(self, text: str, position: int) -> float:
        """The semantic ranker's score, 0 to 4."""

    def embed(self, deployment: str, text: str) -> list[float]:
        """What an Azure OpenAI deployment would make of ``text``."""


@dataclass
class Recorded:
    method: str
    path: str
    params: dict[str, str]
    headers: dict[str, str]
    body: Any

    @property
    def is_search(self) -> bool:
        return self.path.endswith("/docs/search.post.search")


@dataclass
class _Fault:
    path_contains: str
    status: int
    headers: dict[str, str]
    body: dict
    times: int
    after: int = 0  # matching requests to let through first
    method: str | None = None  # only requests of this method (None: any)


class FakeAzureSearch(HttpTransport):
    def __init__(self, definition: dict, backend: Backend, *, stats: dict | None = None, api_key: str = API_KEY,
                 token: str = TOKEN, deployments: Sequence[str] = ()) -> None:
        self.definition = definition
        self.backend = backend
        self.stats = stats or {"documentCount": len(backend.documents), "storageSize": 4096 * len(backend.documents),
                               "vectorIndexSize": 1024 * len(backend.documents)}
        self.api_key, self.token = api_key, token
        self.deployments = set(deployments)
        self.semantic_quota: int | None = None
        self.requests: list[Recorded] = []
        self._faults: list[_Fault] = []
        self._fields = {f["name"]: f for f in definition["fields"]}

    # -- what tests use ---------------------------------------------------------------------------
    def fail(self, path_contains: str, status: int, *, times: int = 1, after: int = 0, headers: dict | None = None,
             code: str = "", message: str = "", method: str | None = None) -> None:
        """Answer ``times`` requests whose path contains ``path_contains`` (and of ``method``, when given)
        with ``status`` (0: the connection fails), once ``after`` such requests have gone through."""
        self._faults.append(_Fault(path_contains, status, dict(headers or {}),
                                   {"error": {"code": code or str(status), "message": message or f"HTTP {status}"}},
                                   times, after, method))

    @property
    def searches(self) -> list[Recorded]:
        return [r for r in self.requests if r.is_search]

    # -- the transport ----------------------------------------------------------------------------
    def __enter__(self):
        return self

    def __exit__(self, *args) -> None:
        pass

    def open(self) -> None:
        pass

    def close(self) -> None:
        pass

    def send(self, request, **kwargs):
        url = urlparse(request.url)
        params = {k: v[0] for k, v in parse_qs(url.query).items()}
        body = json.loads(request.content) if request.content else None
        recorded = Recorded(request.method, unquote(url.path), params, dict(request.headers), body)
        self.requests.append(recorded)
        for fault in self._faults:
            if fault.times > 0 and fault.path_contains in recorded.path and fault.method in (None, recorded.method):
                if fault.after > 0:
                    fault.after -= 1
                    continue
                fault.times -= 1
                if fault.status == 0:  # the connection itself failed
                    raise ServiceRequestError("Connection refused")
                return _response(request, fault.status, fault.body, fault.headers)
        if not self._authorised(recorded, url.netloc):
            return _response(request, 401, {"error": {"code": "Unauthorized", "message": "Access denied"}})
        try:
            status, answer = self._route(recorded, url.netloc)
        except _BadRequest as err:
            status, answer = 400, {"error": {"code": "InvalidRequestParameter", "message": str(err)}}
        return _response(request, status, answer)

    def _authorised(self, recorded: Recorded, host: str) -> bool:
        headers = {k.lower(): v for k, v in recorded.headers.items()}
        return headers.get("api-key") == self.api_key or headers.get("authorization") == f"Bearer {self.token}"

    def _route(self, r: Recorded, host: str) -> tuple[int, dict]:
        name = self.definition["name"]
        if host == urlparse(OPENAI_ENDPOINT).netloc:
            match = re.fullmatch(r"/openai/deployments/([^/]+)/embeddings", r.path)
            if r.method != "POST" or not match or match.group(1) not in self.deployments:
                return 404, {"error": {"code": "DeploymentNotFound", "message": "The API deployment for this "
                                       "resource does not exist."}}
            return 200, {"object": "list", "data": [
                {"object": "embedding", "index": i, "embedding": self.backend.embed(match.group(1), text)}
                for i, text in enumerate(r.body["input"])]}
        if "api-version" not in r.params:
            raise _BadRequest("The api-version query parameter is required")
        match = re.fullmatch(r"/indexes\('([^']*)'\)(/.*)?", r.path)
        if not match or match.group(1) != name:
            missing = match.group(1) if match else r.path
            return 404, {"error": {"code": "", "message": f"No index with the name '{missing}' was found in "
                                                         "the service 'svc'."}}
        rest = match.group(2) or ""
        if r.method == "GET" and rest == "":
            return 200, {"@odata.context": f"{ENDPOINT}/$metadata#indexes/$entity", **self.definition}
        if r.method == "PUT" and rest == "":
            return self._update(r)
        if r.method == "GET" and rest == "/search.stats":
            return 200, {"@odata.context": f"{ENDPOINT}/$metadata#Microsoft.Azure.Search.V2019_05_06.IndexStatistics",
                         **self.stats}
        if r.method == "POST" and rest == "/docs/search.post.search":
            if (r.body or {}).get("queryType") == "semantic" and self.semantic_quota is not None:
                if self.semantic_quota <= 0:
                    return 402, {"error": {"code": "", "message": SEMANTIC_QUOTA_MESSAGE}}
                self.semantic_quota -= 1
            return 200, self._search(r.body or {})
        raise _BadRequest(f"unsupported request {r.method} {r.path}")

    def _update(self, r: Recorded) -> tuple[int, dict]:
        """``PUT /indexes('<name>')``, as the service answers it (module docstring)."""
        match = {k.lower(): v for k, v in r.headers.items()}.get("if-match")
        if match is not None and match != self.definition.get("@odata.etag"):
            return 412, {"error": {"code": "", "message": "The precondition given in one of the request headers "
                                                          "evaluated to false. No change was made to the resource "
                                                          "from this request."}}
        body = r.body or {}
        if body.get("name") != self.definition["name"]:
            raise _BadRequest("The index name in the request body must match the name in the URL.")
        before = {f["name"]: f["type"] for f in self.definition["fields"]}
        after = {f["name"]: f["type"] for f in body.get("fields") or []}
        if any(after.get(name) != kind for name, kind in before.items()):
            raise _BadRequest("Existing field(s) cannot be removed or have their type changed.")
        fields = {f["name"]: f for f in body["fields"]}
        for configuration in (body.get("semantic") or {}).get("configurations") or []:
            prioritized = configuration.get("prioritizedFields") or {}
            named = [prioritized.get("titleField", {}).get("fieldName")] + [
                f["fieldName"] for key in ("prioritizedContentFields", "prioritizedKeywordsFields")
                for f in prioritized.get(key) or []]
            for name in filter(None, named):
                spec = fields.get(name)
                if spec is None or spec.get("type") != "Edm.String" or not spec.get("searchable"):
                    raise _BadRequest(f"The field '{name}' in semantic configuration '{configuration.get('name')}' "
                                      "must be a searchable field of type Edm.String.")
        number = int(str(self.definition.get("@odata.etag", '"0x0"')).strip('"'), 16) + 1
        self.definition = {**body, "@odata.etag": f'"{number:#x}"'}
        self._fields = fields
        return 200, {"@odata.context": f"{ENDPOINT}/$metadata#indexes/$entity", **self.definition}

    # -- searching --------------------------------------------------------------------------------
    def _search(self, body: dict) -> dict:
        unknown = set(body) - _SEARCH_KEYS
        if unknown:
            raise _BadRequest(f"Invalid request body: unknown parameter(s) {sorted(unknown)}")
        documents = self.backend.documents
        allowed = self._filtered(body.get("filter"))
        text = body.get("search")
        lists: list[list[tuple[int, float]]] = []
        if text not in (None, "", "*"):
            lists.append([(p, s) for p, s in self.backend.keyword(text) if p in allowed])
        for query in body.get("vectorQueries") or []:
            lists.append(self._vector_list(query, allowed))
        if not lists:
            ranked = [(p, 1.0) for p in sorted(allowed)]
        elif len(lists) == 1:
            ranked = lists[0]
        else:
            fused: dict[int, float] = {}
            first: dict[int, tuple[int, int]] = {}
            for n, ranking in enumerate(lists):
                for rank, (p, _) in enumerate(ranking, start=1):
                    fused[p] = fused.get(p, 0.0) + 1.0 / (RRF_K + rank)
                    first.setdefault(p, (n, rank))
            ranked = sorted(fused.items(), key=lambda item: (-item[1], first[item[0]]))
        reranker: dict[int, float] = {}
        if body.get("queryType") == "semantic":
            configurations = [c["name"] for c in (self.definition.get("semantic") or {}).get("configurations", [])]
            if body.get("semanticConfiguration") not in configurations:
                raise _BadRequest(f"Unknown semantic configuration '{body.get('semanticConfiguration')}'")
            if text in (None, "", "*"):
                raise _BadRequest("A semantic query needs search text")
            ranked = ranked[:50]
            reranker = {p: self.backend.semantic(text, p) for p, _ in ranked}
            ranked = sorted(ranked, key=lambda item: -reranker[item[0]])
        select = [s.strip() for s in body["select"].split(",")] if body.get("select") else \
            [n for n, f in self._fields.items() if f.get("retrievable", True) and not _is_vector(f)]
        for name in select:
            if name not in self._fields or not self._fields[name].get("retrievable", True):
                raise _BadRequest(f"Invalid expression: Could not find a retrievable property named '{name}'")
        skip = int(body.get("skip") or 0)
        top = body.get("top")
        page = 50 if top is None else min(int(top), 1000)
        window = ranked[skip:skip + page]
        answer: dict[str, Any] = {
            "@odata.context": f"{ENDPOINT}/indexes('{self.definition['name']}')/$metadata#docs(*)"
        }
        if body.get("count"):
            answer["@odata.count"] = len(ranked)
        if body.get("facets"):
            answer["@search.facets"] = self._facets(body["facets"], [p for p, _ in ranked])
        answer["value"] = [{"@search.score": score,
                            **({"@search.rerankerScore": reranker[p]} if p in reranker else {}),
                            **{name: documents[p].get(name) for name in select}} for p, score in window]
        wanted = len(ranked) - skip if top is None else min(int(top), len(ranked) - skip)
        if wanted > len(window):
            following = {**body, "skip": skip + len(window)}
            if top is not None:
                following["top"] = int(top) - len(window)
            answer["@odata.nextLink"] = (
                f"{ENDPOINT}/indexes('{self.definition['name']}')/docs/search.post.search?api-version=2026-04-01"
            )
            answer["@search.nextPageParameters"] = following
        return answer

    def _vector_list(self, query: dict, allowed: set[int]) -> list[tuple[int, float]]:
        unknown = set(query) - _VECTOR_QUERY_KEYS
        if unknown:
            raise _BadRequest(f"Invalid vector query: unknown parameter(s) {sorted(unknown)}")
        name = query.get("fields")
        spec = self._fields.get(name)
        if spec is None or not _is_vector(spec):
            raise _BadRequest(f"The field '{name}' in the vector field list is not a vector field.")
        if query.get("kind") == "vector":
            vector = query.get("vector") or []
            if len(vector) != spec["dimensions"]:
                raise _BadRequest(f"The vector field '{name}' dimensions must match the field dimensions. "
                                  f"Expected length: {spec['dimensions']}, actual length: {len(vector)}")
        elif query.get("kind") == "text":
            if self._vectorizer(spec) is None:
                raise _BadRequest(f"The field '{name}' does not have a vectorizer defined in its profile.")
            vector = self.backend.vectorize(name, query.get("text") or "")
        else:
            raise _BadRequest(f"Unknown vector query kind '{query.get('kind')}'")
        similarities = self.backend.similarity(name, vector)
        ranked = sorted(((p, 1.0 / (2.0 - s)) for p, s in enumerate(similarities) if p in allowed),
                        key=lambda item: (-item[1], item[0]))
        return ranked[:int(query.get("k") or 50)]

    def _vectorizer(self, spec: dict) -> str | None:
        vector_search = self.definition.get("vectorSearch") or {}
        profile = next(
            (p for p in vector_search.get("profiles", []) if p["name"] == spec.get("vectorSearchProfile")), {}
        )
        names = {v["name"] for v in vector_search.get("vectorizers", [])}
        return profile.get("vectorizer") if profile.get("vectorizer") in names else None

    def _filtered(self, expression: str | None) -> set[int]:
        documents = self.backend.documents
        if not expression:
            return set(range(len(documents)))
        name, values = parse_filter(expression)
        spec = self._fields.get(name)
        if spec is None or not spec.get("filterable"):
            raise _BadRequest(f"Invalid expression: '{name}' is not a filterable field.")
        return {p for p, d in enumerate(documents) if str(d.get(name)) in values}

    def _facets(self, facets: list[str], positions: list[int]) -> dict:
        out = {}
        for facet in facets:
            name, _, options = facet.partition(",")
            spec = self._fields.get(name)
            if spec is None or not spec.get("facetable"):
                raise _BadRequest(f"Invalid expression: '{name}' is not a facetable field.")
            count = int(re.search(r"count:(\d+)", options).group(1)) if "count:" in options else 10
            tally: dict[str, int] = {}
            for p in positions:
                value = self.backend.documents[p].get(name)
                tally[value] = tally.get(value, 0) + 1
            ordered = sorted(tally.items(), key=lambda item: (-item[1], str(item[0])))[:count]
            out[name] = [{"count": n, "value": v} for v, n in ordered]
        return out


def parse_filter(expression: str) -> tuple[str, set[str]]:
    """``search.in(f, 'a|b', '|')`` or ``f eq 'a' or f eq 'b'``: the field and the values, unescaped."""
    expression = expression.strip()
    match = re.fullmatch(rf"search\.in\((\w+),\s*({_LITERAL})(?:,\s*({_LITERAL}))?\)", expression)
    if match:
        values = _literal(match.group(2))
        delimiters = _literal(match.group(3)) if match.group(3) else " ,"
        pieces = re.split("|".join(map(re.escape, delimiters)), values)
        return match.group(1), {p for p in pieces if p}
    clauses = re.findall(rf"(\w+) eq ({_LITERAL})(?: or |$)", expression)
    rebuilt = " or ".join(f"{f} eq {lit}" for f, lit in clauses)
    if not clauses or rebuilt != expression or len({f for f, _ in clauses}) != 1:
        raise _BadRequest(f"Invalid expression: Syntax error in filter '{expression[:80]}'")
    return clauses[0][0], {_literal(lit) for _, lit in clauses}


def _literal(token: str) -> str:
    return token[1:-1].replace("''", "'")


def _is_vector(spec: dict) -> bool:
    return spec.get("type", "").startswith("Collection(Edm.") and "dimensions" in spec


class _BadRequest(Exception):
    pass


class _Response(HttpResponseImpl):
    def __init__(self, request, status: int, body: dict, headers: dict | None = None) -> None:
        merged = CaseInsensitiveDict({"Content-Type": "application/json; odata.metadata=minimal; charset=utf-8",
                                      **(headers or {})})
        super().__init__(request=request, internal_response=None, status_code=status,
                         reason={200: "OK", 400: "Bad Request", 401: "Unauthorized", 402: "Payment Required",
                                 403: "Forbidden", 412: "Precondition Failed",
                                 404: "Not Found", 429: "Too Many Requests",
                                 503: "Service Unavailable"}.get(status, "Error"),
                         content_type=merged["Content-Type"], headers=merged, stream_download_generator=None)
        self._content = json.dumps(body).encode("utf-8")
        self._is_closed = True
        self._is_stream_consumed = True


def _response(request, status: int, body: dict, headers: dict | None = None) -> _Response:
    return _Response(request, status, body, headers)


class FakeTokenCredential:
    """A token credential that always signs in (what DefaultAzureCredential gives in Azure)."""

    def __init__(self, token: str = TOKEN) -> None:
        self.token = token
        self.scopes: list[tuple[str, ...]] = []

    def get_token(self, *scopes: str, **kwargs) -> AccessToken:
        self.scopes.append(scopes)
        return AccessToken(self.token, 4_102_444_800)  # 2100-01-01


# -- the example index of the contract tests -------------------------------------------------------

def example_definition(*, semantic: bool = True, vectorizer: bool = True, name: str = "docs-index",
                       dimensions: int = 3, doc_id_facetable: bool = True) -> dict:
    """An index shaped as the service returns it: chunk_id (key), parent_id, title, chunk, page, two
    vector fields (contentVector with a vectorizer, titleVector without), a semantic configuration."""
    definition = {
        "name": name,
        "@odata.etag": "\"0x8DCB1E3A5F2C0D1\"",
        "fields": [
            {"name": "chunk_id", "type": "Edm.String", "key": True, "searchable": True, "filterable": True,
             "retrievable": True, "stored": True, "sortable": True, "facetable": False, "analyzer": "keyword"},
            {"name": "parent_id", "type": "Edm.String", "searchable": False, "filterable": True, "retrievable": True,
             "stored": True, "sortable": False, "facetable": doc_id_facetable},
            {"name": "title", "type": "Edm.String", "searchable": True, "filterable": False, "retrievable": True,
             "stored": True, "sortable": False, "facetable": False},
            {"name": "chunk", "type": "Edm.String", "searchable": True, "filterable": False, "retrievable": True,
             "stored": True, "sortable": False, "facetable": False},
            {"name": "page", "type": "Edm.Int32", "searchable": False, "filterable": True, "retrievable": True,
             "stored": True, "sortable": True, "facetable": True},
            {"name": "contentVector", "type": "Collection(Edm.Single)", "searchable": True, "retrievable": False,
             "stored": False, "dimensions": dimensions, "vectorSearchProfile": "vectorized"},
            {"name": "titleVector", "type": "Collection(Edm.Single)", "searchable": True, "retrievable": False,
             "stored": False, "dimensions": dimensions, "vectorSearchProfile": "plain"},
        ],
        "vectorSearch": {
            "algorithms": [{"name": "hnsw", "kind": "hnsw",
                            "hnswParameters": {"metric": "cosine", "m": 4, "efConstruction": 400, "efSearch": 500}}],
            "profiles": [{"name": "vectorized", "algorithm": "hnsw",
                          **({"vectorizer": "openai"} if vectorizer else {})},
                         {"name": "plain", "algorithm": "hnsw"}],
            "vectorizers": [{"name": "openai", "kind": "azureOpenAI",
                             "azureOpenAIParameters": {"resourceUri": OPENAI_ENDPOINT, "deploymentId": "embed",
                                                       "modelName": "text-embedding-3-small"}}] if vectorizer else [],
        },
    }
    if semantic:
        definition["semantic"] = {"defaultConfiguration": "default", "configurations": [
            {"name": "default", "prioritizedFields": {"titleField": {"fieldName": "title"},
                                                      "prioritizedContentFields": [{"fieldName": "chunk"}],
                                                      "prioritizedKeywordsFields": []}}]}
    return definition


def bag_vector(text: str) -> list[float]:
    """A 3-number embedding: word counts in three buckets by word length, unit length."""
    counts = [0.0, 0.0, 0.0]
    for word in re.findall(r"\w+", text.lower()):
        counts[len(word) % 3] += 1.0
    norm = math.sqrt(sum(c * c for c in counts)) or 1.0
    return [c / norm for c in counts]


@dataclass
class TinyBackend:
    """A handful of chunks with 3-number vectors: enough to check requests, shapes and ordering."""

    documents: list[dict] = field(default_factory=lambda: [
        {"chunk_id": "guide:0", "parent_id": "guide.md", "title": "Guide", "page": None,
         "chunk": "Install the package with pip and sign in with a managed identity."},
        {"chunk_id": "guide:1", "parent_id": "guide.md", "title": "Guide", "page": None,
         "chunk": "Retry throttled requests after the wait the service asks for."},
        {"chunk_id": "report.pdf:0", "parent_id": "report.pdf", "title": "Report", "page": 4,
         "chunk": "Retention of records is seven years on page four."},
        {"chunk_id": "o'brien:0", "parent_id": "o'brien's notes.md", "title": "Notes", "page": 1,
         "chunk": "Managed identity notes: roles for the search service."},
    ])

    def keyword(self, text: str) -> list[tuple[int, float]]:
        words = set(re.findall(r"\w+", text.lower()))
        scored = []
        for p, d in enumerate(self.documents):
            tokens = re.findall(r"\w+", f"{d['title']} {d['chunk']}".lower())
            hits = sum(1 for t in tokens if t in words)
            if hits:
                scored.append((p, round(hits * 1.5, 6)))
        return sorted(scored, key=lambda item: (-item[1], item[0]))

    def similarity(self, field_name: str, vector: Sequence[float]) -> list[float]:
        source = "chunk" if field_name == "contentVector" else "title"
        return [sum(a * b for a, b in zip(bag_vector(d[source]), vector, strict=True)) for d in self.documents]

    def vectorize(self, field_name: str, text: str) -> list[float]:
        return bag_vector(text)

    def semantic(self, text: str, position: int) -> float:
        words = set(re.findall(r"\w+", text.lower()))
        tokens = set(re.findall(r"\w+", self.documents[position]["chunk"].lower()))
        return round(4.0 * len(words & tokens) / max(1, len(words)), 6)

    def embed(self, deployment: str, text: str) -> list[float]:
        return bag_vector(text)


def example_options(**overrides) -> dict:
    """A target spec for the example index: Azure OpenAI serves titleVector (no vectorizer)."""
    return {"name": "search", "engine": "azure_search", "endpoint": ENDPOINT, "index": "docs-index",
            "api_key_env": "AZURE_SEARCH_KEY",
            "azure_openai": {"endpoint": OPENAI_ENDPOINT, "deployment": "embed", "dimensions": 3}, **overrides}


def example_target(fake: FakeAzureSearch | None = None, *, sleep: Callable[[float], None] | None = None,
                   api_key: str | None = API_KEY, credential=None, **overrides):
    """(target, fake): the example index behind the fake, signed in with the admin key by default."""
    from evaluation.azure_search import AzureSearchTarget, SignIn

    fake = fake or FakeAzureSearch(example_definition(), TinyBackend(), deployments=["embed"])
    options = example_options(**overrides)
    if api_key is None:
        options.pop("api_key_env", None)
    target = AzureSearchTarget.from_options("search", options,
                                            sign_in=SignIn(credential=credential, api_key=api_key,
                                                           openai_api_key=api_key), transport=fake,
                                            sleep=sleep or (lambda seconds: None))
    return target, fake


# -- the shipped sample as an Azure AI Search index (the end-to-end test) ---------------------------

SAMPLE_INDEX = "sample-index"


def sample_definition() -> dict:
    """The sample corpus's chunks as an index: contentVector holds bge-small vectors and has a vectorizer
    (the fake embeds the text with bge-small, as the index's vectorizer would); contentVectorMini holds
    minilm-l6 vectors and has none (the target embeds questions with the bundled minilm-l6)."""
    definition = example_definition(name=SAMPLE_INDEX, dimensions=384)
    for spec in definition["fields"]:
        if spec["name"] == "titleVector":
            spec["name"] = "contentVectorMini"
    definition["vectorSearch"]["vectorizers"] = [{"name": "bge", "kind": "customWebApi",
                                                  "customWebApiParameters": {"uri": "https://embed.example/bge"}}]
    definition["vectorSearch"]["profiles"][0]["vectorizer"] = "bge"
    return definition


class SampleBackend:
    """Scores like the embedded engine over the same chunks: its BM25 and its stored vectors."""

    def __init__(self, index) -> None:
        import threading

        import numpy as np

        self._np = np
        self.index = index
        self.documents = [{"chunk_id": c.id, "parent_id": c.doc_id, "title": c.title, "page": c.page,
                           "chunk": c.indexed_text} for c in index.chunks]
        self.vectors = {"contentVector": np.asarray(index.vectors["bge-small"], dtype=np.float32),
                        "contentVectorMini": np.asarray(index.vectors["minilm-l6"], dtype=np.float32)}
        self._bge: dict[str, list[float]] = {}
        self._lock = threading.Lock()

    def keyword(self, text: str) -> list[tuple[int, float]]:
        from evaluation.engine.index import bm25_tokenize

        with self._lock:
            ids, scores = self.index.bm25.retrieve(bm25_tokenize([text]), k=len(self.documents), show_progress=False)
        pairs = [(int(i), float(s)) for i, s in zip(ids[0].tolist(), scores[0].tolist(), strict=True) if s > 0]
        return sorted(pairs, key=lambda item: (-item[1], item[0]))

    def similarity(self, field_name: str, vector: Sequence[float]) -> list[float]:
        return (self.vectors[field_name] @ self._np.asarray(vector, dtype=self._np.float32)).tolist()

    def vectorize(self, field_name: str, text: str) -> list[float]:
        from evaluation.engine.models import load_embedder

        with self._lock:
            if text not in self._bge:
                self._bge[text] = load_embedder("bge-small").embed_queries([text])[0].tolist()
            return self._bge[text]

    def semantic(self, text: str, position: int) -> float:
        similarity = float(self.vectors["contentVector"][position] @ self._np.asarray(self.vectorize("", text),
                                                                                     dtype=self._np.float32))
        return round(4.0 * max(0.0, similarity), 6)

    def embed(self, deployment: str, text: str) -> list[float]:
        raise AssertionError("the sample index needs no Azure OpenAI deployment")
