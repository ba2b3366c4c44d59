"""Contract tests at the HTTP level: the real SDK talks to a fake service shaped like the REST API
(tests/azure_fake.py); each test asserts the requests sent and what the target makes of the answers."""
from __future__ import annotations

import json

import pytest

from azure_fake import (API_KEY, ENDPOINT, OPENAI_ENDPOINT, SEMANTIC_QUOTA_MESSAGE, FakeAzureSearch,
                        FakeTokenCredential, TinyBackend,
                        bag_vector, example_definition, example_target, parse_filter)
from evaluation.azure_search.filters import FILTER_CHARS, doc_id_filters
from evaluation.errors import SearchServiceError
from evaluation.run import plan_run, run_setup
from fakes import write_golden

QUESTION = "managed identity roles"
SELECT = "chunk_id,parent_id,page,chunk"
SEMANTIC = {"queryType": "semantic", "semanticConfiguration": "default", "semanticErrorHandling": "fail"}


def _text(field: str, k: int = 50) -> dict:
    return {"kind": "text", "text": QUESTION, "fields": field, "k": k}


def _vector(field: str, k: int = 50) -> dict:
    return {"kind": "vector", "vector": bag_vector(QUESTION), "fields": field, "k": k}


# contentVector has a vectorizer (the question travels as text); titleVector does not (the Azure
# OpenAI deployment embeds it, and the vector travels).
EXPECTED_BODIES = {
    "search.keyword.bm25": {"search": QUESTION, "select": SELECT, "top": 20},
    "search.keyword_semantic.bm25": {"search": QUESTION, "select": SELECT, "top": 20, **SEMANTIC},
    "search.dense.contentVector": {"select": SELECT, "top": 20, "vectorQueries": [_text("contentVector")]},
    "search.dense.titleVector": {"select": SELECT, "top": 20, "vectorQueries": [_vector("titleVector")]},
    "search.dense.contentVector+titleVector": {"select": SELECT, "top": 20,
                                               "vectorQueries": [_text("contentVector"), _vector("titleVector")]},
    "search.hybrid.contentVector": {"search": QUESTION, "select": SELECT, "top": 20,
                                    "vectorQueries": [_text("contentVector")]},
    "search.hybrid.titleVector": {"search": QUESTION, "select": SELECT, "top": 20,
                                  "vectorQueries": [_vector("titleVector")]},
    "search.hybrid.contentVector+titleVector": {"search": QUESTION, "select": SELECT, "top": 20,
                                                "vectorQueries": [_text("contentVector"), _vector("titleVector")]},
    "search.hybrid_semantic.contentVector": {"search": QUESTION, "select": SELECT, "top": 20, **SEMANTIC,
                                             "vectorQueries": [_text("contentVector")]},
    "search.hybrid_semantic.titleVector": {"search": QUESTION, "select": SELECT, "top": 20, **SEMANTIC,
                                           "vectorQueries": [_vector("titleVector")]},
    "search.hybrid_semantic.contentVector+titleVector": {
        "search": QUESTION, "select": SELECT, "top": 20, **SEMANTIC,
        "vectorQueries": [_text("contentVector"), _vector("titleVector")]},
    # The cross-encoder rescores the top 30 (rerank_candidates), so 30 are asked for.
    "search.hybrid_reranked.contentVector": {"search": QUESTION, "select": SELECT, "top": 30,
                                             "vectorQueries": [_text("contentVector")]},
    "search.hybrid_reranked.titleVector": {"search": QUESTION, "select": SELECT, "top": 30,
                                           "vectorQueries": [_vector("titleVector")]},
    "search.hybrid_reranked.contentVector+titleVector": {
        "search": QUESTION, "select": SELECT, "top": 30,
        "vectorQueries": [_text("contentVector"), _vector("titleVector")]},
}


def test_every_setup_sends_the_request_body_its_method_needs():
    target, fake = example_target()
    setups = target.setups()
    assert [s.key for s in setups] == list(EXPECTED_BODIES)
    for setup in setups:
        before = len(fake.searches)
        target.search(setup, QUESTION, 20)
        (sent,) = fake.searches[before:]
        assert sent.method == "POST" and sent.path == "/indexes('docs-index')/docs/search.post.search"
        assert sent.params["api-version"] == target.service.api_version
        assert sent.headers["api-key"] == API_KEY
        assert sent.body == EXPECTED_BODIES[setup.key], setup.key


def test_no_vector_query_on_keyword_no_search_text_on_dense_both_on_hybrid():
    for key, body in EXPECTED_BODIES.items():
        method = key.split(".")[1]
        assert ("vectorQueries" in body) == (method != "keyword" and method != "keyword_semantic"), key
        assert ("search" in body) == (not method.startswith("dense")), key
        assert (body.get("queryType") == "semantic") == method.endswith("_semantic"), key


def test_a_field_without_vectorizer_is_embedded_by_the_azure_openai_deployment():
    target, fake = example_target()
    setup = next(s for s in target.setups() if s.key == "search.dense.titleVector")
    target.search(setup, QUESTION, 20)
    (embedding,) = [r for r in fake.requests if "/embeddings" in r.path]
    assert embedding.path == "/openai/deployments/embed/embeddings"
    assert embedding.params == {"api-version": "2024-10-21"}
    assert embedding.body == {"input": [QUESTION]}
    assert embedding.headers["api-key"] == API_KEY


def test_results_become_hits_with_page_score_and_the_semantic_rankers_score():
    target, fake = example_target()
    keyword, semantic = target.setups()[:2]
    hits = target.search(keyword, "retention records page", 20)
    assert [(h.id, h.doc_id, h.page) for h in hits] == [("report.pdf:0", "report.pdf", 4)]
    assert hits[0].score == 4.5 and hits[0].reranker_score is None   # 3 words matched, 1.5 each
    assert hits[0].text.startswith("Retention of records")
    assert hits[0].to_row() == ["report.pdf:0", "report.pdf", 4, 4.5]
    hits = target.search(semantic, QUESTION, 20)
    answer = {r["chunk_id"]: r for r in _last_answer(fake, target, semantic)}
    assert [h.reranker_score for h in hits] == [answer[h.id]["@search.rerankerScore"] for h in hits]
    assert [h.score for h in hits] == [answer[h.id]["@search.score"] for h in hits]
    assert hits[0].reranker_score == 4.0                                # all 3 words of the question
    assert hits[0].to_row() == ["o'brien:0", "o'brien's notes.md", 1, hits[0].score, 4.0]
    assert [h.reranker_score for h in hits] == sorted((h.reranker_score for h in hits), reverse=True)


def _last_answer(fake: FakeAzureSearch, target, setup) -> list[dict]:
    """What the service answered to the last search, asked again of the fake directly."""
    return fake._search(fake.searches[-1].body)["value"]


def test_hybrid_reranked_orders_the_top_candidates_by_the_cross_encoder_and_keeps_the_rest_in_place():
    target, fake = example_target(rerank_candidates=2)
    setup = next(s for s in target.setups() if s.key == "search.hybrid_reranked.contentVector")
    hits = target.search(setup, "managed identity", 20)
    service_order = [r["chunk_id"] for r in _last_answer(fake, target, setup)]
    assert fake.searches[-1].body["top"] == 20  # max(depth 20, 2 candidates)
    assert sorted(h.id for h in hits[:2]) == sorted(service_order[:2])
    assert hits[0].reranker_score >= hits[1].reranker_score
    assert [h.id for h in hits[2:]] == service_order[2:] and all(h.reranker_score is None for h in hits[2:])


def test_a_batch_embeds_each_question_once_and_gives_what_single_searches_give():
    target, fake = example_target()
    setup = next(s for s in target.setups() if s.key == "search.hybrid.contentVector+titleVector")
    questions = ["managed identity roles", "retention of records", "retry throttled requests"]
    batch = target.search_batch(setup, questions, 20)
    embeddings = [r for r in fake.requests if "/embeddings" in r.path]
    assert [r.body for r in embeddings] == [{"input": questions}]
    target.search_batch(setup, questions, 20)
    assert len([r for r in fake.requests if "/embeddings" in r.path]) == 1   # cached for the target's life
    assert batch == [target.search(setup, q, 20) for q in questions]
    assert len([r for r in fake.requests if "/embeddings" in r.path]) == 1 + 3  # single searches embed afresh


def test_a_token_credential_signs_every_request_for_the_right_audience():
    credential = FakeTokenCredential()
    target, fake = example_target(api_key=None, credential=credential)
    setup = next(s for s in target.setups() if s.key == "search.dense.titleVector")
    target.search(setup, QUESTION, 20)
    assert all(r.headers["Authorization"] == "Bearer test-token" for r in fake.requests)
    assert all("api-key" not in r.headers for r in fake.requests)
    assert ("https://search.azure.com/.default",) in credential.scopes
    assert ("https://cognitiveservices.azure.com/.default",) in credential.scopes
    assert target.describe()["auth"] == "Microsoft Entra ID"


# -- refused requests become sentences that say what to check ---------------------------------------

def test_a_401_with_a_key_says_to_check_the_key_in_its_variable():
    fake = FakeAzureSearch(example_definition(), TinyBackend(), api_key="another-key", deployments=["embed"])
    with pytest.raises(SearchServiceError) as caught:
        example_target(fake)[0].setups()
    assert str(caught.value) == (
        f"Azure AI Search at {ENDPOINT} refused to read the definition of index docs-index (HTTP 401): check "
        "that the api key in AZURE_SEARCH_KEY holds a current admin or query key of this service")


def test_a_403_with_an_identity_names_the_roles_it_needs():
    target, fake = example_target(api_key=None, credential=FakeTokenCredential())
    target.setups()
    fake.fail("/docs/search.post.search", 403, code="Forbidden", message="Authorization failed.")
    with pytest.raises(SearchServiceError) as caught:
        target.search(target.setups()[0], QUESTION, 20)
    assert str(caught.value) == (
        f"Azure AI Search at {ENDPOINT} refused to search index docs-index (HTTP 403): give the identity the roles "
        "'Search Index Data Reader' (to search and count documents) and 'Reader' (to read the index "
        "definition) on the service or the index")


def test_a_404_says_to_check_the_index_name():
    with pytest.raises(SearchServiceError) as caught:
        example_target(index="doc-index")[0].setups()
    assert str(caught.value) == (
        f"Azure AI Search at {ENDPOINT} refused to read the definition of index doc-index (HTTP 404): check the "
        "index name: the service has no index 'doc-index' (names are lower case), and that the endpoint is the "
        "service that holds it")


def test_a_403_from_azure_openai_names_its_role():
    target, fake = example_target(api_key=None, credential=FakeTokenCredential())
    fake.fail("/embeddings", 403)
    setup = next(s for s in target.setups() if s.key == "search.dense.titleVector")
    with pytest.raises(SearchServiceError, match=f"Azure OpenAI at {OPENAI_ENDPOINT} refused to embed with "
                                                 "deployment embed \\(HTTP 403\\): give the identity the role "
                                                 "'Cognitive Services OpenAI User'"):
        target.search(setup, QUESTION, 20)


def test_a_semantic_search_the_service_rejects_gives_its_reason():
    target, fake = example_target()
    fake.fail("/docs/search.post.search", 400, message="Semantic search is not enabled for this service.")
    with pytest.raises(SearchServiceError, match=r"\(HTTP 400\): the service rejected the request: Semantic search "
                                                 "is not enabled for this service."):
        target.search(target.setups()[1], QUESTION, 20)


# -- throttling -----------------------------------------------------------------------------------

def test_a_throttled_search_is_sent_again_after_the_wait_the_service_asks_for_and_counted():
    waits = []
    target, fake = example_target(sleep=waits.append)
    keyword = target.setups()[0]
    fake.fail("/docs/search.post.search", 429, times=2, headers={"Retry-After": "2"})
    hits = target.search(keyword, QUESTION, 20)
    assert [h.id for h in hits] == ["o'brien:0", "guide:0"]
    assert waits == [2.0, 2.0]
    assert len(fake.searches) == 3
    assert target.counters(keyword.key) == {"requests": 3, "retries": 2}


def test_retry_after_ms_is_honoured_a_long_wait_is_bounded_and_no_header_backs_off():
    waits = []
    target, fake = example_target(sleep=waits.append, max_retry_wait=10)
    keyword = target.setups()[0]
    fake.fail("/docs/search.post.search", 503, headers={"retry-after-ms": "250"})
    fake.fail("/docs/search.post.search", 429, headers={"Retry-After": "600"})
    fake.fail("/docs/search.post.search", 503, times=2)
    target.search(keyword, QUESTION, 20)
    # 250 ms; 600 s bounded to max_retry_wait 10; then 1 * 2**2 and 1 * 2**3 by the retry's number, and the
    # fifth attempt succeeds (four retries allowed).
    assert waits == [0.25, 10.0, 4.0, 8.0]


def test_a_search_still_throttled_after_the_retries_fails_with_a_sentence():
    waits = []
    target, fake = example_target(sleep=waits.append, max_retries=2)
    keyword = target.setups()[0]
    fake.fail("/docs/search.post.search", 429, times=3, headers={"Retry-After": "1"})
    with pytest.raises(SearchServiceError) as caught:
        target.search(keyword, QUESTION, 20)
    assert waits == [1.0, 1.0]
    assert str(caught.value) == (
        f"Azure AI Search at {ENDPOINT} refused to search index docs-index (HTTP 429): the service was still "
        "throttling after 2 retries; lower the target's concurrency, add replicas, or run when it is less busy")
    assert target.counters(keyword.key) == {"requests": 3, "retries": 2}


def test_a_failed_connection_is_retried_and_one_that_stays_down_says_to_check_the_endpoint():
    waits = []
    target, fake = example_target(sleep=waits.append, max_retries=1)
    keyword = target.setups()[0]
    fake.fail("/docs/search.post.search", 0)
    assert [h.id for h in target.search(keyword, QUESTION, 20)] == ["o'brien:0", "guide:0"]
    assert waits == [1.0]
    fake.fail("/docs/search.post.search", 0, times=2)
    with pytest.raises(SearchServiceError, match=f"cannot reach Azure AI Search at {ENDPOINT} to search index "
                                                 "docs-index: Connection refused; check the endpoint address"):
        target.search(keyword, QUESTION, 20)


class _Clock:
    """A clock only the retry waits move: a search's time is then exactly what it waited."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += seconds


def test_a_run_times_what_a_caller_waits_and_reports_the_retries_and_a_give_up_is_that_setups_error(tmp_path):
    clock = _Clock()
    target, fake = example_target(sleep=clock.sleep, max_retries=1)
    golden = write_golden(tmp_path, [{"id": "q1", "question": QUESTION, "expected": ["o'brien's notes.md"]}])
    plan = plan_run([target], golden, only=["keyword"], timed=1)
    # keyword: warm-up, then the timed search (which gives q1's ranks too: no batch) = 2 requests; the
    # second is throttled once (1.5 s) and sent again.
    fake.fail("/docs/search.post.search", 429, after=1, headers={"Retry-After": "1.5"})
    entry = run_setup(target, plan, "search.keyword.bm25", clock=clock)
    assert entry["error"] is None and entry["ranks"] == {"q1": 1}
    assert entry["times_ms"] == [1.5 * 1000]
    assert (entry["requests"], entry["retries"]) == (3, 1)
    # keyword_semantic: its timed search is throttled twice; one retry allowed, so the setup fails alone.
    fake.fail("/docs/search.post.search", 429, times=2, after=1, headers={"Retry-After": "1"})
    failed = run_setup(target, plan, "search.keyword_semantic.bm25", clock=clock)
    assert failed["error"].startswith("SearchServiceError: Azure AI Search at")
    assert "still throttling after 1 retries" in failed["error"]
    assert (failed["requests"], failed["retries"]) == (3, 1) and failed["summary"] is None


def test_entries_of_targets_that_count_nothing_have_no_counts(tmp_path):
    from fakes import ANSWERS, ListTarget

    target = ListTarget("local", ANSWERS, held={"alpha"})
    golden = write_golden(tmp_path, [{"id": "q1", "question": "where is alpha", "expected": ["alpha"]}])
    entry = run_setup(target, plan_run([target], golden), "local.keyword.bm25")
    assert "retries" not in entry and "requests" not in entry



# -- the semantic ranker's free plan ----------------------------------------------------------------

def test_a_semantic_search_past_the_free_plans_monthly_quota_says_so_and_how_to_go_on():
    target, fake = example_target()
    fake.semantic_quota = 0
    setup = next(s for s in target.setups() if s.key == "search.keyword_semantic.bm25")
    with pytest.raises(SearchServiceError) as caught:
        target.search(setup, QUESTION, 20)
    # The documented answer reached the service's client as sent: 402 and its message, one request (a 402
    # is not throttling, so it is not sent again).
    assert [r.body.get("queryType") for r in fake.searches] == ["semantic"]
    assert str(caught.value) == (
        f"Azure AI Search at {ENDPOINT} refused to search index docs-index (HTTP 402): the semantic ranker's "
        f"free plan has used its 1,000 queries for this month (the service says: {SEMANTIC_QUOTA_MESSAGE}); "
        "switch the service's semantic ranker to the standard plan (the portal's Semantic ranker page, or "
        "infra's semanticSearchPlan=standard), or skip the semantic setups ('*semantic*' in --skip or "
        "EVALUATION_SKIP) until the quota resets next month")


def test_a_run_past_the_semantic_quota_fails_only_the_semantic_setups_and_picks_among_the_rest(tmp_path):
    from evaluation import evaluate

    target, fake = example_target()
    # Two semantic queries left: keyword_semantic's first two searches pass, then the quota is spent.
    fake.semantic_quota = 2
    golden = write_golden(tmp_path, [{"id": "q1", "question": QUESTION, "expected": ["guide.md"]},
                                     {"id": "q2", "question": "retention", "expected": ["report.pdf"]}])
    report = evaluate([target], golden, timed=1, seed=1, skip=["*reranked*"])
    by_key = {s["key"]: s for s in report["setups"]}
    semantic = sorted(k for k in by_key if "semantic" in k.split(".")[1])
    assert semantic == ["search.hybrid_semantic.contentVector", "search.hybrid_semantic.contentVector+titleVector",
                        "search.hybrid_semantic.titleVector", "search.keyword_semantic.bm25"]
    for key in semantic:
        assert "(HTTP 402): the semantic ranker's free plan has used its 1,000 queries" in by_key[key]["error"], key
        assert by_key[key]["summary"] is None, key
    others = [k for k in by_key if k not in semantic]
    assert len(others) == 1 + 3 + 3 and all(by_key[k]["error"] is None for k in others)
    assert set(report["picks"]) == {"finds_the_most", "best_for_balance", "best_for_time"}
    assert set(report["picks"].values()) <= set(others)


# -- missing documents ----------------------------------------------------------------------------

def test_missing_documents_are_looked_up_by_escaped_filters_in_batches_one_request_each():
    target, fake = example_target()
    target.setups()
    wanted = [f"missing-{n:04d}" for n in range(2000)] + ["guide.md", "o'brien's notes.md", "report.pdf"]
    assert target.holds(wanted) == {"guide.md", "o'brien's notes.md", "report.pdf"}
    sent = fake.searches
    filters = doc_id_filters("parent_id", wanted)
    # A filter is 29 characters of search.in(parent_id, '', '|') and 13 for each 12-character id and its
    # delimiter: (8000 - 29 + 1) // 13 = 613 ids to a filter, so 2003 ids take 4 filters.
    assert len(filters) == 4 and len(sent) == 4
    assert [r.body["filter"] for r in sent] == filters
    assert all(len(r.body["filter"]) <= FILTER_CHARS for r in sent)
    assert all(r.body["facets"] == ["parent_id,count:2003"] and r.body["top"] == 0 for r in sent)
    looked_up = set().union(*(parse_filter(r.body["filter"])[1] for r in sent))
    assert looked_up == set(wanted)
    assert "|o''brien''s notes.md|" in sent[-1].body["filter"]  # ids sorted: the quoted one comes last but one


def test_without_a_facetable_document_field_the_lookup_follows_the_next_page_links():
    backend = TinyBackend()
    backend.documents += [{"chunk_id": f"big:{n}", "parent_id": "big.md", "title": "Big", "page": None,
                           "chunk": "filler"} for n in range(120)]
    fake = FakeAzureSearch(example_definition(doc_id_facetable=False), backend, deployments=["embed"])
    target = example_target(fake)[0]
    target.setups()
    assert target.holds(["big.md", "guide.md", "gone.md"]) == {"big.md", "guide.md"}
    bodies = [r.body for r in fake.searches]
    # 122 matching chunks, 50 a page: three requests, the later two from @search.nextPageParameters.
    assert [b.get("skip") for b in bodies] == [None, 50, 100]
    assert all(b["select"] == "parent_id" and "top" not in b for b in bodies)
    assert "not checked" not in target.describe()["missing_check"]


def test_a_document_field_that_is_not_filterable_is_not_checked_and_the_description_says_so(caplog):
    definition = example_definition()
    next(f for f in definition["fields"] if f["name"] == "parent_id")["filterable"] = False
    target = example_target(FakeAzureSearch(definition, TinyBackend(), deployments=["embed"]))[0]
    assert target.holds(["gone.md"]) == {"gone.md"}
    assert "cannot check" in caplog.text
    assert target.describe()["missing_check"].startswith("not checked: parent_id is not filterable")


# -- describing -----------------------------------------------------------------------------------

def test_the_description_has_a_state_that_changes_with_the_documents_or_the_definition():
    target, fake = example_target()
    described = target.describe()
    assert {k: described[k] for k in ("engine", "endpoint", "index", "document_count", "storage_size")} == {
        "engine": "azure_search", "endpoint": ENDPOINT, "index": "docs-index", "document_count": 4,
        "storage_size": 4 * 4096}
    assert described["fields"] == {"id": "chunk_id", "doc_id": "parent_id", "page": "page", "text": "chunk"}
    assert described["semantic_configuration"] == "default"
    assert [v["name"] for v in described["vector_fields"]] == ["contentVector", "titleVector"]
    assert target.describe()["state"] == described["state"]
    fake.backend.documents.append({"chunk_id": "c5", "parent_id": "new.md", "title": "New", "chunk": "new", "page": 1})
    assert target.describe()["state"] != described["state"]
    fake.backend.documents.pop()
    assert target.describe()["state"] == described["state"]
    # The statistics are not in the state: an admin key reads them, the app's identity may not.
    fake.stats["storageSize"] = 5 * 4096
    assert target.describe()["state"] == described["state"]
    changed = example_definition()
    changed["@odata.etag"] = "\"0x8DCB1E3A5F2C0D2\""
    changed["fields"][2]["searchable"] = False
    other = example_target(FakeAzureSearch(changed, TinyBackend(), deployments=["embed"]))[0]
    assert other.describe()["state"] != described["state"]
    json.dumps(described)  # plain JSON, for the plan and the report


def test_the_state_is_read_with_requests_that_reader_and_search_index_data_reader_allow():
    target, fake = example_target(api_key=None, credential=FakeTokenCredential())
    target.describe()
    sent = [(r.method, r.path) for r in fake.requests]
    # Reader: the definition (GET /indexes('docs-index')). Search Index Data Reader: a $count query that
    # returns no rows. The statistics are asked for last, and only for the sizes.
    assert sent == [("GET", "/indexes('docs-index')"), ("POST", "/indexes('docs-index')/docs/search.post.search"),
                    ("GET", "/indexes('docs-index')/search.stats")]
    assert fake.requests[1].body == {"search": "*", "count": True, "top": 0}


def test_a_403_on_the_statistics_leaves_the_sizes_out_and_keeps_the_state():
    readable = example_target(api_key=None, credential=FakeTokenCredential())[0].describe()
    target, fake = example_target(api_key=None, credential=FakeTokenCredential())
    fake.fail("/search.stats", 403, code="Forbidden", message="Authorization failed.")
    described = target.describe()
    assert (described["document_count"], described["storage_size"], described["vector_index_size"]) == (4, None, None)
    assert described["state"] == readable["state"]


def test_a_statistics_error_other_than_403_is_still_the_targets_error():
    target, fake = example_target()
    fake.fail("/search.stats", 404)
    with pytest.raises(SearchServiceError, match=r"refused to read the statistics of index docs-index \(HTTP 404\)"):
        target.describe()


def test_a_count_query_refused_names_the_role_that_allows_it():
    target, fake = example_target(api_key=None, credential=FakeTokenCredential())
    target.setups()
    fake.fail("/docs/search.post.search", 403, code="Forbidden", message="Authorization failed.")
    with pytest.raises(SearchServiceError) as caught:
        target.describe()
    assert str(caught.value).startswith(f"Azure AI Search at {ENDPOINT} refused to count the documents of index "
                                        "docs-index (HTTP 403): give the identity the roles 'Search Index Data "
                                        "Reader' (to search and count documents)")


def test_a_setup_run_twice_on_one_target_counts_only_its_own_requests(tmp_path):
    target, fake = example_target()
    golden = write_golden(tmp_path, [{"id": "q1", "question": QUESTION, "expected": ["guide.md"]},
                                     {"id": "q2", "question": "retention", "expected": ["report.pdf"]}])
    plan = plan_run([target], golden, only=["search.keyword.bm25"], timed=1)
    first = run_setup(target, plan, "search.keyword.bm25")
    again = run_setup(target, plan, "search.keyword.bm25")
    # warm-up 1 + timed 1 + the batch's other question 1, each run
    assert (first["requests"], again["requests"]) == (1 + 1 + 1, 1 + 1 + 1)
    assert target.counters("search.keyword.bm25")["requests"] == 2 * (1 + 1 + 1)


def test_the_text_report_names_what_a_target_left_out_and_which_setups_were_retried(make_report):
    from evaluation.report.text import render_report

    report = make_report()
    report["targets"]["search"] = {"name": "search", "engine": "azure_search", "collection": "docs-index",
                                   "left_out": [{"what": "keyword_semantic, hybrid_semantic",
                                                 "reason": "the index has no semantic configuration"}]}
    report["setups"][0].update(requests=7, retries=2)
    text = render_report(report)
    assert ("Left out on search: keyword_semantic, hybrid_semantic (the index has no semantic configuration)"
            in text.splitlines())
    assert f"  {report['setups'][0]['key']}: 2 retries in 7 requests" in text.splitlines()


def test_each_vector_query_brings_at_least_the_depth_asked_for():
    target, fake = example_target(vector_k=10)
    for setup in target.setups():
        if setup.retrieval != "keyword":
            target.search(setup, QUESTION, 20)
            top = fake.searches[-1].body["top"]
            # vector_k 10 is raised to the top asked for: 20, or 30 where the cross-encoder takes 30
            assert [q["k"] for q in fake.searches[-1].body["vectorQueries"]] == [top] * len(setup.models), setup.key
