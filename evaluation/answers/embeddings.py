"""``openai:<deployment>``: an OpenAI-compatible ``/embeddings`` endpoint as an engine embedder.

So a team measures the embedder its Azure AI Search index really uses (Azure OpenAI, by managed
identity or key; or OpenAI, or any local server that speaks the API). The request goes through the
shared chat route (``evaluation/chat.py``, the judge's and the golden writer's: the same retries, timeouts,
sign-in and error sentences),
to ``<endpoint>/openai/deployments/<deployment>/embeddings?api-version=...`` on Azure and
``<endpoint>/embeddings`` elsewhere, ``{"input": [texts]}`` (plus ``"model"`` off Azure), in batches.

``openai_embedder(settings)`` builds one and registers it with the engine (``models.register_embedder``),
so the scratch index, query vectors, the vector cache (keyed by text hash, ``engine.cache``) and index
identity all name it. Its identity (``ModelInfo.sha256``) is the sha256 of the endpoint, the API
kind, the deployment or model name and the vector size: another endpoint or deployment is another
embedder to every cache and index. What model a deployment serves is the service's to say, not ours:
redeploying another model under the same name is not seen. Rows are scaled to unit length, as the
engine's cosine search needs (OpenAI's are already; a local server's may not be).
"""
from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any, Callable, Sequence

import numpy as np

from ..engine.model_catalog import ModelInfo, register_embedder
from ..errors import ModelError
from ..chat import ChatRoute, ChatSettings

PREFIX = "openai:"
BATCH = 64  # texts a request; Azure OpenAI takes up to 2048 inputs, smaller batches retry cheaper


@dataclass(frozen=True)
class EmbeddingSettings(ChatSettings):
    """``ChatSettings`` (endpoint, ``model`` = the deployment, sign-in) addressed at ``/embeddings``."""

    dimensions: int | None = None  # None: asked of the service with one probe text
    role: str = "embeddings endpoint"  # how the shared route's sentences name the service

    @property
    def url(self) -> str:
        base = self.endpoint.rstrip("/")
        if self.kind == "azure":
            return f"{base}/openai/deployments/{self.model}/embeddings?api-version={self.api_version}"
        return f"{base}/embeddings"


class _Wire(ChatRoute):
    error = ModelError  # the shared route raises its failures as this


class OpenAIEmbedder:
    """``embed_documents`` / ``embed_queries`` over the endpoint; float32 unit rows in the caller's order."""

    def __init__(self, settings: EmbeddingSettings, *, token_provider: Callable[[], str] | None = None,
                 transport: Any = None) -> None:
        self.settings = settings
        self.name = f"{PREFIX}{settings.model}"
        self.threads = 1
        self._client = _Wire(settings, token_provider=token_provider, transport=transport)
        self.requests = 0
        self.dimensions = settings.dimensions or int(self._call(["dimensions probe"]).shape[1])
        self.info = ModelInfo(name=self.name, kind="embedder", source=f"{settings.kind} endpoint {settings.url}",
                              sha256=identity(settings, self.dimensions), dimensions=self.dimensions, pooling=None,
                              max_tokens=0)

    def _call(self, texts: list[str]) -> np.ndarray:
        body: dict[str, Any] = {"input": texts}
        if self.settings.kind == "openai":
            body["model"] = self.settings.model
        self.requests += 1
        reply = self._client._post(body)
        try:
            rows = sorted(reply["data"], key=lambda item: item["index"])
            array = np.asarray([row["embedding"] for row in rows], dtype=np.float64)
        except (KeyError, TypeError, ValueError):
            raise ModelError(f"the embeddings endpoint at {self.settings.url} sent a reply without data[].embedding; "
                             "check that it speaks the OpenAI embeddings API") from None
        if array.ndim != 2 or len(array) != len(texts):
            raise ModelError(f"the embeddings endpoint at {self.settings.url} sent {len(array)} vectors for "
                             f"{len(texts)} texts")
        norms = np.linalg.norm(array, axis=1, keepdims=True)
        if not np.all(norms > 0):
            raise ModelError(f"the embeddings endpoint at {self.settings.url} sent a vector of all zeros")
        return (array / norms).astype(np.float32)

    def _embed(self, items: list[str], batch_size: int,
               progress: Callable[[list[int]], None] | None) -> np.ndarray:
        out = np.zeros((len(items), getattr(self, "dimensions", 0) or 0), dtype=np.float32)
        for start in range(0, len(items), BATCH):
            batch = items[start:start + BATCH]
            rows = self._call(batch)
            if rows.shape[1] != out.shape[1]:
                raise ModelError(f"the embeddings endpoint at {self.settings.url} sent vectors of {rows.shape[1]} "
                                 f"values, not {out.shape[1]}")
            out[start:start + len(batch)] = rows
            if progress is not None:  # the indices done, as models.Embedder._embed reports them
                progress(list(range(start, start + len(batch))))
        return out

    def embed_documents(self, texts: Sequence[str], *, batch_size: int = BATCH,
                        progress: Callable[[int], None] | None = None) -> np.ndarray:
        return self._embed(list(texts), batch_size, None if progress is None else (lambda done: progress(len(done))))

    def embed_queries(self, texts: Sequence[str], *, batch_size: int = BATCH) -> np.ndarray:
        return self._embed(list(texts), batch_size, None)

    def close(self) -> None:
        self._client.close()


def identity(settings: EmbeddingSettings, dimensions: int) -> str:
    described = {"endpoint": settings.endpoint.rstrip("/"), "kind": settings.kind, "model": settings.model,
                 "api_version": settings.api_version if settings.kind == "azure" else None, "dimensions": dimensions}
    return hashlib.sha256(json.dumps(described, sort_keys=True).encode("utf-8")).hexdigest()


def openai_embedder(settings: EmbeddingSettings, *, token_provider: Callable[[], str] | None = None,
                    transport: Any = None) -> OpenAIEmbedder:
    """Build the embedder ``openai:<settings.model>`` and register it with the engine (see the module docstring)."""
    embedder = OpenAIEmbedder(settings, token_provider=token_provider, transport=transport)
    register_embedder(embedder, embedder.info)
    return embedder
