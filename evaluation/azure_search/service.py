"""The one place that talks to Azure AI Search (``azure-search-documents``): the index definition, its
document count and (where the role allows) statistics, searches, and looking document ids up. Every service error
becomes a ``SearchServiceError`` whose sentence says what to check (role, key, index name, endpoint).

Two clients, split by job as the SDK does: ``SearchIndexClient`` reads the definition and statistics,
``SearchClient`` searches. Both share one transport and the throttling policy of ``retry``.
"""
from __future__ import annotations

import logging
from contextlib import contextmanager
from typing import Any, Callable, Iterator, Mapping, Sequence, cast

from ..errors import TEXT_LIMIT, SearchServiceError, printable
from .retry import RETRY_STATUSES, RetrySettings, ThrottleRetryPolicy

log = logging.getLogger(__name__)

READER_ROLES = ("'Search Index Data Reader' (to search and count documents) and 'Reader' (to read the "
                "index definition)")
# The REST API's answer when the semantic ranker's free plan has spent its monthly queries (1,000 a
# month): HTTP 402 Payment Required, whose message reads "Free Query Semantic Usage exceeded for the
# month. Please enable semantic billing ..." (learn.microsoft.com/rest/api/searchservice/http-status-codes).
SEMANTIC_QUOTA_STATUS = 402
SEMANTIC_FREE_QUERIES = 1000


def _json_of(response: Any, _model: Any, _headers: Any) -> dict[str, Any]:
    """The REST answer's JSON, as a client call's ``cls`` hook: the call then returns this, not the SDK's model
    (which its annotation names, hence the ``cast`` at each such call)."""
    return response.http_response.json()


class SearchService:
    """One index on one service. ``credential``: an ``AzureKeyCredential`` or a token credential."""

    def __init__(self, endpoint: str, index: str, *, credential: Any, auth: str, retry: RetrySettings,
                 transport: Any = None, sleep: Callable[[float], None] | None = None,
                 on_send: Callable[[bool], None] | None = None) -> None:
        from azure.search.documents import SearchClient
        from azure.search.documents.indexes import SearchIndexClient

        self.endpoint, self.index, self.auth, self.retry = endpoint, index, auth, retry
        sleeping = {"sleep": sleep} if sleep is not None else {}
        common = {"transport": transport} if transport is not None else {}
        self._search = SearchClient(endpoint=endpoint, index_name=index, credential=credential,
                                    retry_policy=ThrottleRetryPolicy(retry, on_send=on_send, **sleeping), **common)
        self._indexes = SearchIndexClient(endpoint=endpoint, credential=credential, **common,
                                          retry_policy=ThrottleRetryPolicy(retry, on_send=on_send, **sleeping))
        self.api_version = getattr(getattr(self._search, "_config", None), "api_version", None)
        self.index_api_version = getattr(getattr(self._indexes, "_config", None), "api_version", None)

    # -- reading the index ---------------------------------------------------------------------
    def definition(self) -> dict[str, Any]:
        """The index definition as the REST API returns it (JSON)."""
        with self._translated("read the definition of"):
            return cast("dict[str, Any]", self._indexes.get_index(self.index, cls=_json_of))

    def update_definition(self, definition: Mapping[str, Any], etag: str | None) -> dict[str, Any]:
        """PUT ``definition`` as the index's (REST ``PUT /indexes('<name>')``), with ``If-Match`` on the ETag
        it was read under, so an update someone made meanwhile is never written over (HTTP 412); the
        definition the service answers. Needs the right to update indexes: an admin key, or the
        Search Service Contributor role (Reader and Search Index Data Reader may not)."""
        from azure.core.exceptions import HttpResponseError
        from azure.core.rest import HttpRequest

        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if etag:
            headers["If-Match"] = etag
        request = HttpRequest("PUT", f"/indexes('{self.index}')", params={"api-version": self.index_api_version},
                              json=dict(definition), headers=headers)
        with self._translated("update the definition of"):
            response = self._indexes.send_request(request)
            if response.status_code >= 400:
                raise HttpResponseError(response=response)
            if response.status_code == 204 or not response.content:
                return dict(definition)
            return response.json()

    def statistics(self) -> dict[str, Any]:
        """``{"documentCount", "storageSize", "vectorIndexSize"}`` of the index."""
        with self._translated("read the statistics of"):
            return cast("dict[str, Any]", self._indexes.get_index_statistics(self.index, cls=_json_of))

    def statistics_if_allowed(self) -> dict[str, Any] | None:
        """The statistics, or None when the service refuses them with 403.

        Microsoft's role table (learn.microsoft.com/azure/search/search-security-rbac, "permissions
        summary") gives "access quotas and service statistics" to Owner, Contributor and Search Service
        Contributor, not to Reader nor to Search Index Data Reader, the two roles the app holds; so in
        Azure the statistics are an extra, never a need.
        """
        try:
            return self.statistics()
        except SearchServiceError as err:
            if getattr(err.__cause__, "status_code", None) != 403:
                raise
            log.info("index %s: statistics refused (HTTP 403); the storage sizes are left out", self.index)
            return None

    def document_count(self) -> int:
        """How many documents the index holds, from a ``$count`` query (``search=*``, ``count=true``,
        ``top=0``): a query, so Search Index Data Reader allows it, where the statistics need more."""
        with self._translated("count the documents of"):
            results = self._search.search(search_text="*", include_total_count=True, top=0)
            count = results.get_count()
        if count is None:
            raise SearchServiceError(f"Azure AI Search at {self.endpoint} answered a count of index {self.index} "
                                     "without @odata.count; check that the endpoint is an Azure AI Search service")
        return int(count)

    # -- searching -----------------------------------------------------------------------------
    def search(self, request: Mapping[str, Any]) -> list[dict[str, Any]]:
        """The results of one search request (``queries.search_request``), as the SDK gives them."""
        from azure.search.documents.models import VectorizableTextQuery, VectorizedQuery

        arguments = dict(request)
        if "vector_queries" in arguments:
            arguments["vector_queries"] = [
                VectorizableTextQuery(text=q["text"], fields=q["fields"], k_nearest_neighbors=q["k"],
                                      exhaustive=q["exhaustive"] or None) if q["kind"] == "text"
                else VectorizedQuery(vector=q["vector"], fields=q["fields"], k_nearest_neighbors=q["k"],
                                     exhaustive=q["exhaustive"] or None)
                for q in arguments["vector_queries"]]
        with self._translated("search"):
            return list(self._search.search(**arguments))

    def present(self, field: str, filters: Sequence[str], *, facet_limit: int | None) -> set[str]:
        """Values of ``field`` held by the documents each filter matches, one search per filter.

        With ``facet_limit`` (the field is facetable) the values come back as facets, one answer per
        filter; otherwise every match is listed, the SDK following ``@odata.nextLink`` page by page.
        """
        found: set[str] = set()
        for expression in filters:
            with self._translated("look up documents in"):
                if facet_limit is not None:
                    results = self._search.search(search_text="*", filter=expression, top=0,
                                                  facets=[f"{field},count:{facet_limit}"])
                    found.update(str(f["value"]) for f in (results.get_facets() or {}).get(field, []))
                else:
                    results = self._search.search(search_text="*", filter=expression, select=[field])
                    found.update(str(row[field]) for row in results if row.get(field) is not None)
        return found

    # -- errors --------------------------------------------------------------------------------
    @contextmanager
    def _translated(self, doing: str) -> Iterator[None]:
        from azure.core.exceptions import AzureError, ClientAuthenticationError, HttpResponseError

        try:
            yield
        except ClientAuthenticationError as err:
            status = getattr(err, "status_code", None)
            if status is None:  # the credential itself could not get a token
                raise SearchServiceError(
                    f"could not sign in to Azure AI Search at {self.endpoint} to {doing} index {self.index}: "
                    f"{_first_line(err)}; check the identity (az login locally, the managed identity in "
                    "Azure) or set an API key") from err
            raise SearchServiceError(self._refused(status, doing, err)) from err
        except HttpResponseError as err:
            raise SearchServiceError(self._refused(err.status_code, doing, err)) from err
        except AzureError as err:
            raise SearchServiceError(f"cannot reach Azure AI Search at {self.endpoint} to {doing} index "
                                     f"{self.index}: {_first_line(err)}; check the endpoint address and the "
                                     "network path to it") from err

    def _refused(self, status: int | None, doing: str, err: Exception) -> str:
        where = f"Azure AI Search at {self.endpoint} refused to {doing} index {self.index} (HTTP {status})"
        keyed = self.auth.startswith("api key")
        if status == 401:
            fix = (f"check that the {self.auth} holds a current admin or query key of this service" if keyed
                   else "check that the service accepts Microsoft Entra ID (API access control: role-based or "
                        "both) and that the identity signs in to the service's tenant")
        elif status == 403:
            fix = (f"the {self.auth} is not allowed: a query key cannot read the index definition; use an "
                   "admin key, or sign in with an identity" if keyed
                   else f"give the identity the roles {READER_ROLES} on the service or the index")
        elif status == SEMANTIC_QUOTA_STATUS:
            fix = (f"the semantic ranker's free plan has used its {SEMANTIC_FREE_QUERIES:,} queries for this month "
                   f"(the service says: {_first_line(err)}); switch the service's semantic ranker to the standard "
                   "plan (the portal's Semantic ranker page, or infra's semanticSearchPlan=standard), or skip the "
                   "semantic setups ('*semantic*' in --skip or EVALUATION_SKIP) until the quota resets next month")
        elif status == 404:
            fix = (f"check the index name: the service has no index {self.index!r} (names are lower case), "
                   "and that the endpoint is the service that holds it")
        elif status in RETRY_STATUSES:
            fix = (f"the service was still throttling after {self.retry.max_retries} retries; lower the "
                   "target's concurrency, add replicas, or run when it is less busy")
        elif status == 400:
            fix = "the service rejected the request: " + _first_line(err)
        else:
            fix = _first_line(err)
        return f"{where}: {fix}"


def _first_line(err: Exception) -> str:
    """The service's own message (the REST error body's ``error.message``) where there is one: its first
    line, escaped and bounded as any text a service sends (``errors.printable``)."""
    message = getattr(getattr(err, "error", None), "message", None) or getattr(err, "message", None) or str(err)
    return printable(" ".join(str(message).split("\n")[0].split()), TEXT_LIMIT) or type(err).__name__
