"""``openai:<deployment>`` against an embeddings server on 127.0.0.1: the request, sign-in, the cache, the matrix."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import numpy as np
import pytest

from evaluation.answers.embeddings import EmbeddingSettings, openai_embedder
from evaluation.engine.cache import model_key
from evaluation.engine.hashing import hash_vector
from evaluation.engine.models import load_embedder, model_info
from evaluation.errors import ModelError

ROOT = Path(__file__).parent.parent.parent


class EmbeddingsServer:
    """Answers ``POST .../embeddings`` with 3 x the hash vector of each input (not unit length, on purpose),
    in reverse order with their ``index`` (as the API allows); records every request."""

    def __init__(self, status: int = 200) -> None:
        self.seen: list[tuple[str, dict, dict]] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)))
                server.seen.append((self.path, {k.lower(): v for k, v in self.headers.items()}, body))
                data = [{"object": "embedding", "index": i, "embedding": (3 * hash_vector(t)).tolist()}
                        for i, t in enumerate(body["input"])][::-1]
                payload = json.dumps(
                    {"object": "list", "data": data} if status == 200 else {"error": {"message": "no"}}
                )
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.end_headers()
                self.wfile.write(payload.encode())

            def log_message(self, *args) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def texts(self) -> list[str]:
        return [t for _, _, body in self.seen for t in body["input"]]

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def server():
    running = EmbeddingsServer()
    yield running
    running.close()


def test_vectors_come_back_in_input_order_scaled_to_unit_length_with_the_openai_request(server):
    embedder = openai_embedder(EmbeddingSettings(endpoint=server.url, model="text-embedding-3-small", api_key="sk-x",
                                                 dimensions=256))
    rows = embedder.embed_documents(["key rotation", "lunch menu"])
    assert np.allclose(rows, np.stack([hash_vector("key rotation"), hash_vector("lunch menu")]), atol=1e-6)
    path, headers, body = server.seen[0]
    assert path == "/v1/embeddings" and headers["authorization"] == "Bearer sk-x"
    assert body == {"input": ["key rotation", "lunch menu"], "model": "text-embedding-3-small"}
    assert load_embedder("openai:text-embedding-3-small") is embedder


def test_azure_openai_is_asked_at_its_deployment_with_a_managed_identity_token(server):
    settings = EmbeddingSettings(endpoint=server.url.removesuffix("/v1"), model="embed-prod", api="azure",
                                 auth="managed_identity", dimensions=256)
    embedder = openai_embedder(settings, token_provider=lambda: "token-1")
    embedder.embed_queries(["how often are keys rotated"])
    path, headers, body = server.seen[0]
    assert path == "/openai/deployments/embed-prod/embeddings?api-version=2024-10-21"
    assert headers["authorization"] == "Bearer token-1" and "api-key" not in headers
    assert body == {"input": ["how often are keys rotated"]}  # Azure names the model by its deployment


def test_the_size_is_asked_of_the_service_once_when_not_given(server):
    embedder = openai_embedder(EmbeddingSettings(endpoint=server.url, model="m", auth="none"))
    assert embedder.dimensions == 256 and server.texts() == ["dimensions probe"]


def test_another_endpoint_or_deployment_is_another_embedder_to_every_cache(server):
    one = openai_embedder(EmbeddingSettings(endpoint=server.url, model="a", auth="none", dimensions=256))
    key_a = model_key("openai:a")
    openai_embedder(EmbeddingSettings(endpoint=server.url.replace("127.0.0.1", "localhost"), model="a", auth="none",
                                      dimensions=256))
    assert model_key("openai:a") != key_a and one.info.sha256 != model_info("openai:a").sha256


def test_a_refusing_endpoint_is_a_model_error_naming_the_endpoint():
    refusing = EmbeddingsServer(status=401)
    try:
        embedder = openai_embedder(EmbeddingSettings(endpoint=refusing.url, model="m", api_key="bad", dimensions=8))
        with pytest.raises(ModelError, match="the embeddings endpoint at http://127.0.0.1"):
            embedder.embed_documents(["x"])
    finally:
        refusing.close()


def test_the_matrix_measures_an_openai_embedder_and_a_second_run_asks_the_cache_not_the_service(server, tmp_path):
    corpus, queries = tmp_path / "c.jsonl", tmp_path / "q.jsonl"
    corpus.write_text('{"id": "doc-1", "text": "Signing keys are rotated every 90 days."}\n'
                      '{"id": "doc-2", "text": "The cafeteria serves lunch at noon."}\n', encoding="utf-8")
    queries.write_text('{"id": "q1", "query": "how often are keys rotated", "relevant_ids": ["doc-1"]}\n',
                       encoding="utf-8")
    arguments = [sys.executable, "-m", "evaluation", "matrix", "--quiet", "--corpus", str(corpus), "--queries",
                 str(queries), "--top-k", "1", "--embedder", "openai:embed-prod", "--methods", "dense",
                 "--openai-endpoint", server.url, "--openai-key-env", "TEST_EMBED_KEY", "--openai-dimensions", "256",
                 "--cache", str(tmp_path / "vectors.sqlite"), "--report-json", str(tmp_path / "out.json"),
                 "--fail-under", "hit_rate@1=1"]
    environment = {**os.environ, "TEST_EMBED_KEY": "sk-test"}
    first = subprocess.run(arguments, cwd=ROOT, capture_output=True, text=True, env=environment, timeout=300)
    assert first.returncode == 0, first.stderr
    assert sorted(server.texts()) == sorted(["Signing keys are rotated every 90 days.",
                                             "The cafeteria serves lunch at noon.", "how often are keys rotated"])
    report = json.loads((tmp_path / "out.json").read_text())
    assert report["embedders"][0]["name"] == "openai:embed-prod" and report["embedders"][0]["real_model"] is True
    asked = len(server.seen)
    second = subprocess.run(arguments, cwd=ROOT, capture_output=True, text=True, env=environment, timeout=300)
    assert second.returncode == 0, second.stderr
    assert len(server.seen) == asked  # every passage and query vector came from the cache file
