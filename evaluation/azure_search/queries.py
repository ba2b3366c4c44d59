"""The search request for one question with one setup, as plain data (the service module turns the
vector queries into the SDK's models). Pure: no SDK, no network.

    keyword            search text; no vector query
    keyword_semantic   search text, queryType semantic with the configuration name
    dense              vector queries only; no search text
    hybrid             search text and vector queries (the service fuses them by RRF)
    hybrid_semantic    hybrid, queryType semantic with the configuration name
    hybrid_reranked    hybrid, ``top`` raised to ``rerank_candidates`` so the cross-encoder sees them all

``top`` is the depth asked for; ``select`` the fields the target reads. Each vector query brings
``k = max(vector_k, top)`` neighbours, so every setup can fill its depth. Semantic ones fail rather
than fall back to the unranked order (``semanticErrorHandling: fail``): a partial answer would be
scored as the semantic ranker's.
"""
from __future__ import annotations

from typing import Any, Sequence

from ..target import Setup
from .definition import ResolvedFields


def top_for(setup: Setup, depth: int) -> int:
    if setup.ranker == "cross-encoder":
        return max(depth, int(setup.options.get("rerank_candidates", depth)))
    return depth


def search_request(setup: Setup, question: str, depth: int, *, fields: ResolvedFields,
                   vectors: Sequence[list[float] | None]) -> dict[str, Any]:
    """Keyword arguments for ``SearchClient.search``; ``vectors[i]`` is the query vector for
    ``setup.models[i]``, or None where the index's vectorizer embeds the text."""
    top = top_for(setup, depth)
    request: dict[str, Any] = {"top": top, "select": fields.select}
    if setup.retrieval in ("keyword", "hybrid"):
        request["search_text"] = question
    if setup.ranker == "semantic":
        request.update(query_type="semantic", semantic_configuration_name=setup.options["semantic_configuration"],
                       semantic_error_mode="fail")
    if setup.retrieval in ("dense", "hybrid"):
        if len(vectors) != len(setup.models):
            raise ValueError(f"setup {setup.key} needs {len(setup.models)} query vectors, got {len(vectors)}")
        k = max(int(setup.options.get("vector_k", top)), top)
        exhaustive = bool(setup.options.get("exhaustive", False))
        request["vector_queries"] = [
            {"kind": "text", "text": question, "fields": field, "k": k, "exhaustive": exhaustive} if vector is None
            else {"kind": "vector", "vector": list(vector), "fields": field, "k": k, "exhaustive": exhaustive}
            for field, vector in zip(setup.models, vectors, strict=True)]
    return request
