"""Query vectors for the vector fields whose index has no vectorizer: a bundled model run here, or an
Azure OpenAI embeddings deployment called over HTTP (``POST {endpoint}/openai/deployments/{deployment}/
embeddings``, body ``{"input": [...]}``, answer ``{"data": [{"index", "embedding"}]}``).

A field with a vectorizer needs nothing from here: its question travels as text and the service embeds
it. ``QueryVectors.for_questions`` embeds each question once per source; ``cached=True`` (a batch)
keeps the vectors for the life of the target, ``cached=False`` (one question, as a caller would)
embeds afresh every time.
"""
from __future__ import annotations

import threading
from typing import Any, Callable, Mapping, Sequence

from ..errors import SearchServiceError
from .options import AzureOpenAIEmbeddings
from .retry import RetrySettings, ThrottleRetryPolicy
from .index_setups import QueryVectorSource

OPENAI_SCOPE = "https://cognitiveservices.azure.com/.default"
_OPENAI_BATCH = 16  # inputs per embeddings request: every deployment accepts this many


class AzureOpenAIEmbedder:
    """Embeds texts with one Azure OpenAI deployment, through azure-core (no openai package needed)."""

    def __init__(self, config: AzureOpenAIEmbeddings, *, credential: Any, retry: RetrySettings,
                 transport: Any = None, sleep: Callable[[float], None] | None = None,
                 on_send: Callable[[bool], None] | None = None) -> None:
        from azure.core import PipelineClient
        from azure.core.credentials import AzureKeyCredential
        from azure.core.pipeline.policies import (AzureKeyCredentialPolicy, BearerTokenCredentialPolicy,
                                                  HeadersPolicy, UserAgentPolicy)

        self.config = config
        self.keyed = isinstance(credential, AzureKeyCredential)
        auth = (AzureKeyCredentialPolicy(credential, "api-key") if self.keyed
                else BearerTokenCredentialPolicy(credential, OPENAI_SCOPE))
        retry_policy = ThrottleRetryPolicy(retry, on_send=on_send, **({"sleep": sleep} if sleep else {}))
        self._retry = retry
        self._client: PipelineClient[Any, Any] = PipelineClient(
            base_url=config.endpoint, transport=transport,
            policies=[HeadersPolicy({"Content-Type": "application/json"}), UserAgentPolicy("retrieval-evaluation"),
                      retry_policy, auth])

    def embed(self, texts: Sequence[str], dimensions: int | None) -> list[list[float]]:
        from azure.core.exceptions import AzureError
        from azure.core.rest import HttpRequest

        out: list[list[float]] = []
        for start in range(0, len(texts), _OPENAI_BATCH):
            batch = list(texts[start:start + _OPENAI_BATCH])
            request = HttpRequest("POST",
                                  f"{self.config.endpoint}/openai/deployments/{self.config.deployment}/embeddings",
                                  params={"api-version": self.config.api_version}, json={"input": batch})
            try:
                response = self._client.send_request(request)
            except AzureError as err:
                raise SearchServiceError(f"cannot reach Azure OpenAI at {self.config.endpoint}: {err}; check the "
                                         "azure_openai endpoint") from err
            if response.status_code != 200:
                raise SearchServiceError(self._refused(response.status_code, response.text()))
            rows = sorted(response.json().get("data") or [], key=lambda row: row.get("index", 0))
            if len(rows) != len(batch):
                raise SearchServiceError(f"Azure OpenAI deployment {self.config.deployment} gave {len(rows)} "
                                         f"embeddings for {len(batch)} questions")
            for row in rows:
                vector = [float(x) for x in row["embedding"]]
                if dimensions is not None and len(vector) != dimensions:
                    raise SearchServiceError(
                        f"Azure OpenAI deployment {self.config.deployment} gives {len(vector)} numbers, but the "
                        f"vector field holds {dimensions}: set azure_openai.dimensions, or name another source "
                        "in query_vectors")
                out.append(vector)
        return out

    def _refused(self, status: int, body: str) -> str:
        where = (f"Azure OpenAI at {self.config.endpoint} refused to embed with deployment "
                 f"{self.config.deployment} (HTTP {status})")
        if status == 401:
            fix = ("check the key in azure_openai.api_key_env" if self.keyed
                   else "check that the identity signs in to the resource's tenant")
        elif status == 403:
            fix = ("give the identity the role 'Cognitive Services OpenAI User' on the Azure OpenAI resource"
                   if not self.keyed else "the key is not allowed to call this deployment")
        elif status == 404:
            fix = f"check the deployment name: the resource has no deployment {self.config.deployment!r}"
        elif status in (429, 503):
            fix = f"still throttled after {self._retry.max_retries} retries; raise the deployment's quota"
        else:
            fix = " ".join(body.split())[:300]
        return f"{where}: {fix}"


class QueryVectors:
    """The query vector of each (field, question), from the field's source."""

    def __init__(self, sources: Mapping[str, QueryVectorSource], dimensions: Mapping[str, int | None], *,
                 openai: AzureOpenAIEmbedder | None, threads: int | None) -> None:
        self.sources = dict(sources)
        self.dimensions = dict(dimensions)
        self.openai = openai
        self.threads = threads
        self._cache: dict[tuple[str, str], list[float]] = {}  # (source name, question) -> vector
        self._lock = threading.Lock()

    def for_questions(self, fields: Sequence[str], questions: Sequence[str], *,
                      cached: bool) -> list[list[list[float] | None]]:
        """Per question, a vector per field (None where the index's vectorizer embeds the text)."""
        per_field: dict[str, Sequence[list[float] | None]] = {}
        for field in fields:
            source = self.sources[field]
            if source.kind == "vectorizer":
                per_field[field] = [None] * len(questions)
            else:
                per_field[field] = self._vectors(source, self.dimensions.get(field), questions, cached=cached)
        return [[per_field[field][i] for field in fields] for i in range(len(questions))]

    def _vectors(self, source: QueryVectorSource, dimensions: int | None, questions: Sequence[str], *,
                 cached: bool) -> list[list[float]]:
        key = f"{source.kind}:{source.name}"
        if not cached:
            return self._embed(source, dimensions, list(questions))
        with self._lock:
            todo = list(dict.fromkeys(q for q in questions if (key, q) not in self._cache))
        if todo:
            for question, vector in zip(todo, self._embed(source, dimensions, todo), strict=True):
                with self._lock:
                    self._cache[(key, question)] = vector
        with self._lock:
            return [self._cache[(key, q)] for q in questions]

    def _embed(self, source: QueryVectorSource, dimensions: int | None, texts: list[str]) -> list[list[float]]:
        if source.kind == "azure_openai":
            if self.openai is None:
                raise SearchServiceError("no Azure OpenAI deployment is configured for query vectors")
            return self.openai.embed(texts, dimensions)
        from ..engine.models import load_embedder

        return load_embedder(source.name, threads=self.threads).embed_queries(texts).tolist()
