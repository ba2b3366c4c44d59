"""Target specs: the EVALUATION_TARGETS setting and a collection's targets.json, every mistake said as a
sentence naming where, the key and the fix; what a targets.json may point at; opening a spec."""
from __future__ import annotations

import json

import pytest

from evaluation.errors import TargetConfigError
from evaluation.target_specs import (SearchDefaults, TargetAccess, TargetSpec, Trust, open_target,
                                     parse_collection_targets, parse_target_specs, target_state, targets_for)

ACCOUNT = "https://evalstore.blob.core.windows.net"
INDEX = f"{ACCOUNT}/indexes/docs"
TRUST = Trust(storage_account_url=ACCOUNT, search_endpoint="https://corp-search.example.net")
LOCAL = {"name": "local", "engine": "embedded", "index": INDEX}
SEARCH = {"name": "search", "engine": "azure_search", "endpoint": "https://svc.search.windows.net",
          "index": "docs-index", "fields": {"id": "chunk_id", "doc_id": "parent_id", "page": "page", "text": "chunk"}}


def setting(**collections):
    return json.dumps(collections)


# -- the app setting -------------------------------------------------------------------------------

def test_the_setting_maps_each_collection_to_its_specs_with_defaults_filled_in():
    specs = parse_target_specs(setting(docs=[{**LOCAL, "rerank_candidates": 50}, SEARCH], manuals=[LOCAL]))

    local, search = specs["docs"]
    assert (local.name, local.engine, local.index, local.rerank_candidates, local.fusion_candidates,
            local.cross_encoder) == ("local", "embedded", INDEX, 50, 50, True)
    assert local.source == 'EVALUATION_TARGETS["docs"][0]'
    assert (search.endpoint, search.index, search.options["fields"]["doc_id"]) == (
        "https://svc.search.windows.net", "docs-index", "parent_id")
    assert search.options["rerank_candidates"] == 30  # the Azure AI Search target's own defaults
    assert specs["manuals"][0].rerank_candidates == 20  # the embedded engine's depth (bench_rerank_depth.py)


def test_an_azure_search_spec_takes_the_apps_endpoint_and_embeddings_deployment_when_it_names_none():
    defaults = SearchDefaults(search_endpoint="https://default.search.windows.net/",
                              openai_endpoint="https://aoai.openai.azure.com", openai_deployment="embed")
    [spec] = parse_target_specs(setting(docs=[{k: v for k, v in SEARCH.items() if k != "endpoint"}]),
                                defaults=defaults)["docs"]

    assert spec.endpoint == "https://default.search.windows.net"
    assert spec.options["azure_openai"]["endpoint"] == "https://aoai.openai.azure.com"
    assert spec.options["azure_openai"]["deployment"] == "embed"


def test_an_empty_setting_configures_nothing_and_a_collection_without_targets_is_named():
    with pytest.raises(
        TargetConfigError,
        match=r'no targets are configured for collection "manual"\. '
        r'Did you mean "manuals"\? Add it to the app setting EVALUATION_TARGETS',
    ):
        targets_for("manual", parse_target_specs(setting(manuals=[LOCAL])), None,
                    targets_json_source="manual/targets.json", trust=TRUST)
    assert parse_target_specs("{}") == {}


@pytest.mark.parametrize("value, says", [
    ('{"docs": [', r"EVALUATION_TARGETS is not JSON \(Expecting value at line 1 column 11\); write it like"),
    ('["docs"]', "must be a JSON object mapping each collection to its targets"),
    (setting(docs=[]), r'EVALUATION_TARGETS\["docs"\] must be a non-empty list'),
    (setting(docs=[{**LOCAL, "engine": "embeded"}]),
     r'\[0\]: "engine" is "embeded"; use "embedded" or "azure_search"\. '
                                                     r'Did you mean "embedded"\?'),
    (setting(docs=[{"name": "local", "index": INDEX}]), '"engine" is missing'),
    (setting(docs=[{**LOCAL, "rerank_candidats": 40}]), r'"rerank_candidats" is not a key of an "embedded" target\. '
                                                        r'Did you mean "rerank_candidates"\?'),
    (setting(docs=[{**LOCAL, "fields": {}}]), r'"fields" is not a key of an "embedded" target \(it belongs to an '
                                              r'"azure_search" target\)'),
    (setting(docs=[{"name": "local", "engine": "embedded"}]), '"index" is missing; give the Blob or S3 address of a '
                                                              "published index"),
    (setting(docs=[{**LOCAL, "name": "my.local"}]), r'"name" must be 1 to 40 letters, digits, "_" or "-"'),
    (setting(docs=[LOCAL, {**LOCAL}]), 'the name "local" is already used by another target'),
    (setting(docs=[{**LOCAL, "index": "/srv/indexes/docs"}]), '"index" must be the Blob or S3 address of a folder'),
    (setting(docs=[{**LOCAL, "index": f"{ACCOUNT}/indexes"}]), "names a container but no folder"),
    (setting(docs=[{**LOCAL, "rerank_candidates": 0}]), r'"rerank_candidates" must be a whole number from 1 to 1000, '
                                                        r"not 0 \(default 20\)"),
    (setting(docs=[{**LOCAL, "rerank_candidates": True}]), "must be a whole number"),
    (setting(docs=[{**LOCAL, "cross_encoder": "no"}]), '"cross_encoder" must be true or false'),
    (setting(docs=[{**SEARCH, "index": "Docs Index"}]), r'\[0\]: index must be the name of an index on the service'),
    (setting(docs=[{**SEARCH, "endpoint": "http://svc.search.windows.net"}]), "is not a service address"),
    (setting(docs=[{**SEARCH, "endpoint": "https://svc.search.windows.net/indexes?x=1"}]), r"\(no path, no query\)"),
    (setting(docs=[{**SEARCH, "vector_feilds": ["v"]}]),
     r'unknown option "vector_feilds"\. Did you mean "vector_fields"\?'),
    (setting(docs=[{**SEARCH, "azure_openai": {"endpoint": "https://aoai.openai.azure.com", "deployment": "e",
                                               "api_key_env": "AZURE_SEARCH_API_KEY_X"}}]),
     "signs in to Azure OpenAI with its managed identity"),
    (setting(docs=[{k: v for k, v in SEARCH.items() if k != "endpoint"}]), "AZURE_SEARCH_ENDPOINT is not set"),
    (setting(docs=[{**SEARCH, "api_key_env": "EVALUATION_STORAGE_CONNECTION_STRING"}]),
     '"api_key_env" must name an app setting starting with AZURE_SEARCH_API_KEY'),
    (setting(docs=[{**SEARCH, "fields": {"doc": "parent_id"}}]), r'fields has no role "doc"\. Did you mean "doc_id"\?'),
])
def test_a_setting_mistake_is_a_sentence_naming_where_and_the_fix(value, says):
    with pytest.raises(TargetConfigError, match=says):
        parse_target_specs(value)


def test_an_api_key_setting_is_allowed_in_the_app_setting():
    [spec] = parse_target_specs(setting(docs=[{**SEARCH, "api_key_env": "AZURE_SEARCH_API_KEY_DOCS"}]))["docs"]

    assert spec.api_key_env == "AZURE_SEARCH_API_KEY_DOCS"


# -- targets.json ---------------------------------------------------------------------------------------

def test_a_targets_json_replaces_the_settings_entry_for_its_collection():
    configured = parse_target_specs(setting(docs=[LOCAL]))
    file = json.dumps({"targets": [{**LOCAL, "name": "fresh", "index": f"{ACCOUNT}/indexes/docs-v2"}]}).encode()

    [spec] = targets_for("docs", configured, file, targets_json_source="docs/targets.json", trust=TRUST)

    assert (spec.name, spec.index, spec.source) == ("fresh", f"{ACCOUNT}/indexes/docs-v2",
                                                    "docs/targets.json: targets[0]")


@pytest.mark.parametrize("targets, says", [
    ([{**LOCAL, "index": "https://attacker.blob.core.windows.net/indexes/docs"}],
     r"\"index\" must be in the app's own storage account \(https://evalstore.blob.core.windows.net\), not "
     r"https://attacker.blob.core.windows.net"),
    ([{**SEARCH, "endpoint": "https://search.attacker.example"}], '"endpoint" must be an Azure AI Search service'),
    ([{**SEARCH, "api_key_env": "AZURE_SEARCH_API_KEY"}], 'a targets.json cannot name "api_key_env"'),
    ([{**SEARCH, "azure_openai": {"endpoint": "https://aoai.attacker.example", "deployment": "e"}}],
     "azure_openai.endpoint must be an Azure OpenAI resource"),
])
def test_a_targets_json_may_point_only_where_the_apps_identity_belongs(targets, says):
    with pytest.raises(TargetConfigError, match=says):
        parse_collection_targets(json.dumps({"targets": targets}), source="docs/targets.json", trust=TRUST)


def test_a_targets_json_may_name_the_apps_own_search_endpoint():
    [spec] = parse_collection_targets(json.dumps({"targets": [{**SEARCH, "endpoint": "https://corp-search.example.net"}]}),
                                      source="docs/targets.json", trust=TRUST)

    assert spec.endpoint == "https://corp-search.example.net"


@pytest.mark.parametrize("raw, says", [
    (b'{"targets": [}', r"docs/targets.json is not JSON \(Expecting value at line 1 column 14\)"),
    (b"\xff\xfe{}", "not UTF-8 text"),
    (b'[{"name": "local"}]', 'must be an object with "targets"'),
    (b'{"target": []}', 'must be an object with "targets"'),
    (b'{"targets": [], "extra": 1}', r'"extra" is not a key of targets.json'),
    (b'{"targets": []}', '"targets" must be a non-empty list'),
    (b'{"targets": ["local"]}', r"docs/targets.json: targets\[0\] must be an object like"),
    (b'{"targets": ' + b"[" * 100_000 + b"]" * 100_000 + b"}", "docs/targets.json is nested too deeply to read"),
])
def test_a_targets_json_mistake_names_the_file(raw, says):
    with pytest.raises(TargetConfigError, match=says):
        parse_collection_targets(raw, source="docs/targets.json", trust=TRUST)


def test_a_spec_goes_through_json_and_back_unchanged():
    for spec in parse_target_specs(setting(docs=[LOCAL, SEARCH]))["docs"]:
        assert TargetSpec.from_dict(json.loads(json.dumps(spec.to_dict()))) == spec


# -- opening ----------------------------------------------------------------------------------------------

@pytest.fixture
def fake_search(monkeypatch):
    """The Azure AI Search target behind the fake service (tests/azure_fake.py), whatever opens it."""
    from azure_fake import FakeAzureSearch, TinyBackend, example_definition
    from evaluation.azure_search import AzureSearchTarget

    fake = FakeAzureSearch(example_definition(), TinyBackend(), deployments=["embed"])
    made = AzureSearchTarget.from_options.__func__
    monkeypatch.setattr(AzureSearchTarget, "from_options",
                        classmethod(lambda cls, *args, **kwargs: made(cls, *args, transport=fake, **kwargs)))
    return fake


def test_an_azure_search_spec_opens_the_target_with_the_key_its_setting_holds(tmp_path, fake_search):
    from azure_fake import API_KEY, ENDPOINT

    [spec] = parse_target_specs(setting(docs=[{**SEARCH, "endpoint": ENDPOINT, "api_key_env": "AZURE_SEARCH_API_KEY",
                                               "fields": {}}]))["docs"]

    target = open_target(spec, cache=tmp_path, access=TargetAccess(api_keys={"AZURE_SEARCH_API_KEY": API_KEY}))
    state = target_state(spec, access=TargetAccess(api_keys={"AZURE_SEARCH_API_KEY": API_KEY}))

    assert target.name == "search" and state == target.describe()["state"] and len(state) == 64
    assert {s.method for s in target.setups()} >= {"keyword", "keyword_semantic"}
    assert all(r.headers["api-key"] == API_KEY for r in fake_search.requests)


def test_an_azure_search_spec_whose_key_setting_is_empty_says_which_to_set(tmp_path, fake_search):
    from azure_fake import ENDPOINT

    [spec] = parse_target_specs(setting(docs=[{**SEARCH, "endpoint": ENDPOINT, "api_key_env": "AZURE_SEARCH_API_KEY",
                                               "fields": {}}]))["docs"]

    with pytest.raises(TargetConfigError, match="api_key_env names AZURE_SEARCH_API_KEY, but it holds no key"):
        open_target(spec, cache=tmp_path, access=TargetAccess(api_keys={}))


def test_an_azure_search_index_that_changed_since_the_run_was_planned_is_refused(tmp_path, fake_search):
    from azure_fake import API_KEY, ENDPOINT
    from evaluation.errors import SearchIndexError

    [spec] = parse_target_specs(setting(docs=[{**SEARCH, "endpoint": ENDPOINT, "api_key_env": "AZURE_SEARCH_API_KEY",
                                               "fields": {}}]))["docs"]
    keys = {"AZURE_SEARCH_API_KEY": API_KEY}
    planned = target_state(spec, access=TargetAccess(api_keys=keys))

    assert open_target(spec, cache=tmp_path, state=planned, access=TargetAccess(api_keys=keys)).name == "search"
    with pytest.raises(SearchIndexError, match="changed since this run was planned"):
        open_target(spec, cache=tmp_path, state="0" * 64, access=TargetAccess(api_keys=keys))


@pytest.mark.azurite
def test_an_embedded_spec_opens_the_published_index_and_describes_it_by_its_address(azurite, sample_index, tmp_path):
    from evaluation.engine.published import publish_index

    container = azurite.new_container()
    address = azurite.address(container, "indexes/docs")
    manifest = publish_index(sample_index, address, connection_string=azurite.connection_string)
    [spec] = parse_target_specs(setting(docs=[{**LOCAL, "index": address, "rerank_candidates": 12}]))["docs"]

    target = open_target(spec, cache=tmp_path, access=TargetAccess(connection_string=azurite.connection_string))

    described = target.describe()
    assert (described["index"], described["fingerprint"]) == (address, manifest["fingerprint"])
    assert target.name == "local" and described["rerank_candidates"] == 12
    in_azurite = TargetAccess(connection_string=azurite.connection_string)
    assert target_state(spec, access=in_azurite) == manifest["fingerprint"]
