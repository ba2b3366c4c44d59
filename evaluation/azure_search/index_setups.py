"""Which setups an index can do, and why the others are left out. Pure data: no SDK, no network.

Setups, each present only when the index can do it (V = the vector choices: each usable vector field
alone, and all of them fused when there are two or more):

    keyword            BM25 over the searchable fields                 needs a searchable text field
    keyword_semantic   BM25, reordered by the semantic ranker          + a semantic configuration
    dense      x V     the vector queries alone (several: fused by RRF) needs a query vector per field
    hybrid     x V     search text + vector queries, fused by RRF      both of the above
    hybrid_semantic x V  hybrid, reordered by the semantic ranker      + a semantic configuration
    hybrid_reranked x V  hybrid, the top ``rerank_candidates`` reordered by the embedded engine's
                         cross-encoder                                 + a retrievable text field

An index with a semantic configuration and two usable vector fields: 1 + 1 + 3 + 3 + 3 + 3 = 14.

A vector field is usable when its question can become a vector: the index's own vectorizer (a
``VectorizableTextQuery``: the service embeds the text), else the Azure OpenAI embeddings deployment
the options name (when its dimensions fit), else a bundled model with the field's dimensions.
``query_vectors`` in the options picks the source for a field explicitly; it must fit the index.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from ..errors import UsageError, did_you_mean
from ..target import Setup
from .definition import IndexShape, ResolvedFields, VectorField
from .options import AZURE_OPENAI, ENGINE, VECTORIZER, AzureSearchOptions

RRF_K = 60  # the service's reciprocal rank fusion constant


@dataclass(frozen=True)
class QueryVectorSource:
    """Where a vector field's query vector comes from."""

    field: str
    kind: str          # "vectorizer" | "azure_openai" | "bundled"
    name: str          # the vectorizer's, deployment's or model's name
    chosen_by: str     # "the index" | "options" | "dimensions"

    def describe(self) -> str:
        what = {"vectorizer": f"the index's vectorizer {self.name}",
                "azure_openai": f"Azure OpenAI deployment {self.name}",
                "bundled": f"bundled model {self.name}"}[self.kind]
        if self.chosen_by == "dimensions":
            what += " (chosen by its dimensions: name the field's model in query_vectors if it holds another's)"
        elif self.chosen_by == "options":
            what += " (named in query_vectors)"
        return what


@dataclass(frozen=True)
class LeftOut:
    """Setups (or a vector field) the index cannot do, and what it would need."""

    what: str
    reason: str

    def to_dict(self) -> dict[str, str]:
        return {"what": self.what, "reason": self.reason}


def query_vector_sources(shape: IndexShape, options: AzureSearchOptions, bundled: Mapping[str, int], *,
                         where: str) -> tuple[dict[str, QueryVectorSource], list[LeftOut]]:
    """A source for each vector field the target uses, in the index's order, and the fields left out.

    ``bundled``: the installed bundled models and their dimensions. A ``UsageError`` when the options
    name a field the index lacks or a source that cannot serve the field.
    """
    by_name = {v.name: v for v in shape.vector_fields}
    names = list(by_name)
    for name in list(options.vector_fields or ()) + list(options.query_vectors):
        if name not in by_name:
            have = ", ".join(names) or "none"
            raise UsageError(f'{where}: "{name}" is not a vector field of index {shape.name}.'
                             f"{did_you_mean(name, names)} Its vector fields: {have}")
    chosen = (
        [by_name[n] for n in options.vector_fields] if options.vector_fields is not None else list(by_name.values())
    )
    sources: dict[str, QueryVectorSource] = {}
    left_out: list[LeftOut] = []
    for field in chosen:
        source = _explicit(field, options, bundled, where) if field.name in options.query_vectors \
            else _default(field, options, bundled)
        if isinstance(source, LeftOut):
            left_out.append(source)
        else:
            sources[field.name] = source
    return sources, left_out


def _explicit(field: VectorField, options: AzureSearchOptions, bundled: Mapping[str, int],
              where: str) -> QueryVectorSource | LeftOut:
    wanted = options.query_vectors[field.name]
    if wanted == VECTORIZER:
        if field.vectorizer is None:
            raise UsageError(f"{where}: query_vectors.{field.name} is {VECTORIZER}, but the field's profile "
                             f"{field.profile} names no vectorizer in the index; attach one or name another source")
        return QueryVectorSource(field.name, "vectorizer", field.vectorizer, "options")
    if wanted == AZURE_OPENAI:
        if options.azure_openai is None:
            raise UsageError(f"{where}: query_vectors.{field.name} is {AZURE_OPENAI}, but no azure_openai "
                             "deployment is configured (endpoint and deployment)")
        return QueryVectorSource(field.name, "azure_openai", options.azure_openai.deployment, "options")
    if wanted not in bundled:
        return LeftOut(f"vector field {field.name}", f"query_vectors names bundled model {wanted}, which is not "
                                                     "installed here (see requirements.txt)")
    if field.dimensions is not None and bundled[wanted] != field.dimensions:
        raise UsageError(f"{where}: query_vectors.{field.name} is {wanted}, which gives {bundled[wanted]} "
                         f"numbers, but the field holds {field.dimensions}")
    return QueryVectorSource(field.name, "bundled", wanted, "options")


def _default(field: VectorField, options: AzureSearchOptions,
             bundled: Mapping[str, int]) -> QueryVectorSource | LeftOut:
    if field.vectorizer is not None:
        return QueryVectorSource(field.name, "vectorizer", field.vectorizer, "the index")
    openai = options.azure_openai
    if openai is not None and (openai.dimensions is None or openai.dimensions == field.dimensions):
        return QueryVectorSource(field.name, "azure_openai", openai.deployment, "the index")
    fits = [name for name, size in bundled.items() if size == field.dimensions]
    if fits:
        return QueryVectorSource(field.name, "bundled", fits[0], "dimensions")
    openai_note = ("no Azure OpenAI embeddings deployment is configured (azure_openai)" if openai is None
                   else f"Azure OpenAI deployment {openai.deployment} gives {openai.dimensions} dimensions")
    models = ", ".join(f"{n}: {d}" for n, d in bundled.items()) or "none installed"
    return LeftOut(f"vector field {field.name}",
                   f"no way to turn a question into its {field.dimensions}-number vector: its profile "
                   f"{field.profile} has no vectorizer, {openai_note}, and no bundled model has "
                   f"{field.dimensions} dimensions ({models})")


@dataclass(frozen=True)
class Rerankers:
    """The rerankers a target can offer, each with why not when it cannot. ``semantic``: the index's semantic
    configuration (None: none), ``semantic_missing`` why it has none although semantic ranking was asked for
    (it could not be added); ``cross_encoder``: the cross-encoder's name when hybrid_reranked may be offered,
    ``cross_encoder_missing`` why not, otherwise."""

    semantic: str | None = None
    semantic_missing: str | None = None
    cross_encoder: str | None = None
    cross_encoder_missing: str | None = None


def plan_setups(target: str, shape: IndexShape, options: AzureSearchOptions, fields: ResolvedFields,
                sources: Mapping[str, QueryVectorSource], *,
                rerankers: Rerankers) -> tuple[list[Setup], list[LeftOut]]:
    """Every setup the index can do (module docstring), in a stable order, and what is left out, with the
    rerankers ``rerankers`` says it has."""
    semantic, semantic_missing = rerankers.semantic, rerankers.semantic_missing
    cross_encoder, cross_encoder_missing = rerankers.cross_encoder, rerankers.cross_encoder_missing
    left_out: list[LeftOut] = []
    keyword = bool(shape.searchable)
    if not keyword:
        left_out.append(LeftOut("keyword, keyword_semantic, hybrid, hybrid_semantic, hybrid_reranked",
                                "the index has no searchable text field"))
    if semantic is None:
        left_out.append(LeftOut("keyword_semantic, hybrid_semantic", semantic_missing or (
            "the index has no semantic configuration: add one (semantic.configurations) naming its title and "
            'content fields, on a service with the semantic ranker on, or give the target "semantic": true to add '
            "it when it is opened (--search-semantic), where the sign-in may update the index")))
    vectors = {v.name: v for v in shape.vector_fields}
    usable = [name for name in sources]
    choices = [(name,) for name in usable] + ([tuple(sorted(usable))] if len(usable) > 1 else [])
    if not shape.vector_fields:
        left_out.append(LeftOut("dense, hybrid, hybrid_semantic, hybrid_reranked",
                                "the index has no vector field (Collection(Edm.Single) with a vector profile)"))
    elif not usable:
        left_out.append(LeftOut("dense, hybrid, hybrid_semantic, hybrid_reranked",
                                "no vector field can be queried (see the vector fields left out)"))
    rerank_reason = cross_encoder_missing
    if rerank_reason is None and fields.text is None:
        rerank_reason = ("the index has no retrievable text field for the cross-encoder to read: "
                         "name one in fields.text")
    if rerank_reason and usable and keyword:
        left_out.append(LeftOut("hybrid_reranked", rerank_reason))

    def options_for(retrieval: str, ranker: str | None, models: tuple[str, ...]) -> dict[str, Any]:
        found: dict[str, Any] = dict(score_scales(retrieval, ranker, [vectors[m] for m in models],
                                                  rerank_candidates=options.rerank_candidates,
                                                  cross_encoder=cross_encoder))
        if models:
            found.update(vector_k=options.vector_k, exhaustive=options.exhaustive,
                         query_vectors={m: sources[m].describe() for m in models})
        if retrieval == "hybrid" or len(models) > 1:
            found["rrf_k"] = RRF_K
        if ranker == "semantic":
            found["semantic_configuration"] = semantic
        if ranker == "cross-encoder":
            found.update(rerank_candidates=options.rerank_candidates, cross_encoder=cross_encoder)
        return found

    setups: list[Setup] = []

    def add(retrieval: str, models: tuple[str, ...] = (), ranker: str | None = None) -> None:
        setups.append(Setup(target, ENGINE, retrieval, models, ranker, options_for(retrieval, ranker, models)))

    if keyword:
        add("keyword")
        if semantic:
            add("keyword", ranker="semantic")
    for models in choices:
        add("dense", models)
    if keyword:
        for models in choices:
            add("hybrid", models)
        if semantic:
            for models in choices:
                add("hybrid", models, "semantic")
        if not rerank_reason:
            for models in choices:
                add("hybrid", models, "cross-encoder")
    return setups, left_out


def score_scales(retrieval: str, ranker: str | None, vector_fields: Sequence[VectorField], *,
                 rerank_candidates: int, cross_encoder: str | None) -> dict[str, str]:
    """What a setup's scores mean: ``score`` (the service's @search.score) and, for a reranked setup,
    ``reranker_score`` (the score that orders its results)."""
    lists = len(vector_fields) + (1 if retrieval == "hybrid" else 0)
    if retrieval == "keyword":
        score = "@search.score: BM25, unbounded, higher is better"
    elif lists == 1:
        metric = vector_fields[0].metric
        span = {"cosine": "0.333 to 1 (cosine)", "euclidean": "0 to 1 (euclidean)",
                "dotProduct": "0 to 1 (dotProduct)"}.get(metric or "",
                                                         f"higher is better ({metric or 'metric not stated'})")
        score = f"@search.score: vector similarity, {span}"
    else:
        score = (f"@search.score: reciprocal rank fusion of {lists} ranked lists, each adding "
                 f"1/({RRF_K} + rank): at most {lists}/{RRF_K + 1} = {lists / (RRF_K + 1):.4f}")
    scales = {"score": score}
    if ranker == "semantic":
        scales["reranker_score"] = "@search.rerankerScore: the semantic ranker, 0 to 4; it orders the results"
    elif ranker == "cross-encoder":
        scales["reranker_score"] = (f"the {cross_encoder} cross-encoder's logit, unbounded, higher is better; "
                                    f"it orders the top {rerank_candidates} results")
    return scales
