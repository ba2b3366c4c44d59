"""An evaluate run end to end with the embedded engine and an Azure AI Search index side by side in one
report: the index is the shipped sample's chunks behind the fake service (tests/azure_fake.py), scored
by the same BM25 and the same stored vectors, so both targets must agree where their setups agree."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from azure_fake import API_KEY, ENDPOINT, SAMPLE_INDEX, FakeAzureSearch, SampleBackend, sample_definition
from evaluation import EmbeddedTarget, evaluate, open_index
from evaluation.azure_search import AzureSearchTarget, SignIn
from evaluation.report.text import render_report

SAMPLES = Path(__file__).resolve().parent.parent.parent / "samples"
QUESTIONS = 8
TIMED = 2
# The cross-encoder reads whole chunks (a few pairs a second on a busy 2-core machine): hybrid_reranked
# rescores 3 candidates here, and the embedded engine's reranked setup, tested elsewhere, is skipped.
RERANK = 3


@pytest.fixture(scope="module")
def sample(sample_index, tmp_path_factory):
    """(opened embedded index, a golden file of the first sample questions and one whose document is gone)."""
    rows = [json.loads(line) for line in (SAMPLES / "golden.jsonl").read_text(encoding="utf-8").splitlines()
            if line.strip()][:QUESTIONS]
    rows.append({"id": "gone", "question": "What does the retired guide say?", "expected": ["retired-guide/intro"]})
    golden = tmp_path_factory.mktemp("golden") / "golden.jsonl"
    golden.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return open_index(sample_index), golden


def _azure(opened, **options) -> tuple[AzureSearchTarget, FakeAzureSearch]:
    fake = FakeAzureSearch(sample_definition(), SampleBackend(opened))
    target = AzureSearchTarget.from_options(
        "search", {"endpoint": ENDPOINT, "index": SAMPLE_INDEX, "api_key_env": "AZURE_SEARCH_KEY",
                   "query_vectors": {"contentVectorMini": "minilm-l6"}, **options},
        sign_in=SignIn(api_key=API_KEY), transport=fake)
    return target, fake


@pytest.mark.slow
def test_the_embedded_engine_and_the_azure_index_side_by_side_in_one_report(sample):
    opened, golden = sample
    azure, fake = _azure(opened, rerank_candidates=RERANK)
    local = EmbeddedTarget(opened)
    report = evaluate([local, azure], golden, timed=TIMED, seed=1, skip=["local.hybrid_reranked*"])
    json.dumps(report)

    by_key = {s["key"]: s for s in report["setups"]}
    azure_keys = [s.key for s in azure.setups()]
    assert len(azure_keys) == 1 + 1 + 3 + 3 + 3 + 3 == 14
    assert set(by_key) == {s.key for s in local.setups() if s.ranker is None} | set(azure_keys)
    assert [k for k, s in by_key.items() if s["error"]] == []
    assert {name: t["engine"] for name, t in report["targets"].items()} == {"local": "embedded",
                                                                          "search": "azure_search"}
    assert report["targets"]["search"]["document_count"] == len(opened.chunks)

    # The same vectors: the same first relevant result everywhere. (Not keyword: the service's is BM25 over
    # the chunks, the embedded engine's also fuses each chunk's document rank, engine/target.py.)
    assert by_key["search.dense.contentVector"]["ranks"] == by_key["local.dense.bge-small"]["ranks"]
    assert by_key["search.dense.contentVectorMini"]["ranks"] == by_key["local.dense.minilm-l6"]["ranks"]

    # The document nobody holds is missing on both, and its question stays in.
    assert (
        report["missing"]["local"]["documents"] == report["missing"]["search"]["documents"] == ["retired-guide/intro"]
    )
    assert report["missing"]["search"]["questions"] == {"gone": ["retired-guide/intro"]}
    assert by_key["search.keyword.bm25"]["summary"]["questions"] == QUESTIONS + 1

    # Semantic setups keep @search.rerankerScore as a fifth element; keyword rows have four.
    semantic_rows = [r for rows in by_key["search.hybrid_semantic.contentVector"]["results"].values() for r in rows]
    assert semantic_rows and all(len(r) == 5 and 0 <= r[4] <= 4 for r in semantic_rows)
    assert all(len(r) == 4 for rows in by_key["search.keyword.bm25"]["results"].values() for r in rows)

    # Every Azure setup counted its requests: one warm-up, then one per question (timed alone or in the
    # batch); nothing throttled.
    keyword = by_key["search.keyword.bm25"]
    assert (keyword["requests"], keyword["retries"]) == (1 + (QUESTIONS + 1), 0)
    assert "requests" not in by_key["local.keyword.bm25"]

    assert report["picks"]["finds_the_most"] in by_key
    text = render_report(report)
    assert "search.hybrid_semantic.contentVector+contentVectorMini" in text and "local.keyword.bm25" in text


def test_the_command_line_compares_the_embedded_engine_and_the_service_in_one_run(sample, sample_index, monkeypatch,
                                                                                  capsys):
    from evaluation.cli import main

    opened, golden = sample
    fake = FakeAzureSearch(sample_definition(), SampleBackend(opened))
    made = AzureSearchTarget.from_options.__func__
    monkeypatch.setattr(AzureSearchTarget, "from_options",
                        classmethod(lambda cls, *args, **kwargs: made(cls, *args, transport=fake, **kwargs)))
    monkeypatch.setenv("TEST_SEARCH_KEY", API_KEY)
    monkeypatch.delenv("AZURE_OPENAI_ENDPOINT", raising=False)
    code = main(["evaluate", "--index", str(sample_index), "--golden", str(golden),
                 "--search-endpoint", ENDPOINT, "--search-index", SAMPLE_INDEX, "--search-key-env", "TEST_SEARCH_KEY",
                 "--search-query-vectors", "contentVectorMini=minilm-l6", "--only", "keyword", "--timed", "1",
                 "--quiet", "--json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    report = json.loads(out)
    assert sorted(s["key"] for s in report["setups"]) == ["local.keyword.bm25", "search.keyword.bm25",
                                                          "search.keyword_semantic.bm25"]
    assert all(r.headers["api-key"] == API_KEY for r in fake.requests)


def test_the_command_line_needs_at_least_one_target_and_an_index_for_an_endpoint(capsys):
    from evaluation.cli import main

    golden = str(SAMPLES / "golden.jsonl")
    assert main(["evaluate", "--golden", golden]) == 2
    assert "name at least one target: COLLECTION, --corpus or --index" in capsys.readouterr().err
    assert main(["evaluate", "--golden", golden, "--search-endpoint", ENDPOINT]) == 2
    assert "--search-endpoint needs --search-index" in capsys.readouterr().err


def test_a_refused_key_on_the_command_line_is_a_sentence_not_a_traceback(sample, monkeypatch, capsys):
    from evaluation.cli import main

    opened, golden = sample
    fake = FakeAzureSearch(sample_definition(), SampleBackend(opened))
    made = AzureSearchTarget.from_options.__func__
    monkeypatch.setattr(AzureSearchTarget, "from_options",
                        classmethod(lambda cls, *args, **kwargs: made(cls, *args, transport=fake, **kwargs)))
    monkeypatch.setenv("TEST_SEARCH_KEY", "an-old-key")
    code = main(["evaluate", "--golden", str(golden), "--search-endpoint", ENDPOINT, "--search-index", SAMPLE_INDEX,
                 "--search-key-env", "TEST_SEARCH_KEY", "--quiet"])
    err = capsys.readouterr().err
    assert code == 1
    assert err.strip() == (f"error: Azure AI Search at {ENDPOINT} refused to read the definition of index "
                           f"{SAMPLE_INDEX} (HTTP 401): check that the api key in TEST_SEARCH_KEY holds a current "
                           "admin or query key of this service")


def test_a_service_that_refuses_beside_the_embedded_engine_fails_its_setups_and_the_others_run(sample, sample_index,
                                                                                               monkeypatch, capsys):
    from evaluation.cli import main

    opened, golden = sample
    fake = FakeAzureSearch(sample_definition(), SampleBackend(opened))
    made = AzureSearchTarget.from_options.__func__
    monkeypatch.setattr(AzureSearchTarget, "from_options",
                        classmethod(lambda cls, *args, **kwargs: made(cls, *args, transport=fake, **kwargs)))
    monkeypatch.setenv("TEST_SEARCH_KEY", "an-old-key")  # the fake refuses it: HTTP 401 on the definition
    code = main(["evaluate", "--index", str(sample_index), "--golden", str(golden), "--search-endpoint", ENDPOINT,
                 "--search-index", SAMPLE_INDEX, "--search-key-env", "TEST_SEARCH_KEY", "--only", "keyword",
                 "--timed", "1", "--quiet"])
    out, err = capsys.readouterr()
    lines = out.splitlines()

    assert code == 0, err
    # the run says so at the top, under its first line (both wrapped at 100 columns), before the table;
    # the service's setup failed with the reason
    top = " ".join(" ".join(lines[:lines.index("")]).split())
    assert ("Target search could not be reached; its setups are reported failed and never "
                                       "picked, and the other targets ran: Azure AI Search at") in top
    assert "(HTTP 401)" in top and all(len(line) <= 100 for line in lines[:lines.index("")])
    assert "warning: target search could not be reached" in err
    assert "Finds the most:    local.keyword.bm25" in out
    failed = lines.index("Failed (never picked):")
    assert lines[failed + 1].startswith("  search.keyword.bm25: ConnectionError: target search could not be reached")


def test_a_run_whose_only_target_is_unreachable_is_still_refused_with_the_reason(sample):
    from evaluation.errors import SearchServiceError
    from evaluation.unreachable import reachable_or_reported

    class Refusing:
        name, engine = "search", "azure_search"

        def setups(self):
            raise SearchServiceError("the service said no")

    with pytest.raises(SearchServiceError, match="the service said no"):
        reachable_or_reported([Refusing(), Refusing()])


def test_azure_setups_are_timed_side_by_side_question_by_question_in_a_rotating_order(sample):
    # what the service is sent: every setup's warm-up, then each timed question on every setup, the order
    # rotating from question to question (issue 39); read back from the request bodies
    from evaluation.run import plan_run, time_setups
    from evaluation.run.side_by_side import round_order

    opened, golden = sample
    azure, fake = _azure(opened)
    keys = ["search.keyword.bm25", "search.dense.contentVector", "search.hybrid.contentVector"]
    plan = plan_run(azure, golden, only=keys, timed=4, time_margin=0)
    before = len(fake.searches)  # the plan's own look-ups of the expected documents

    times = time_setups({"search": azure}, plan, keys)

    def setup_of(body):
        vectors, text = bool(body.get("vectorQueries")), body.get("search") not in (None, "", "*")
        return {(False, True): keys[0], (True, False): keys[1], (True, True): keys[2]}[(vectors, text)]

    sent = [
        (setup_of(r.body), r.body.get("search") or r.body["vectorQueries"][0].get("text"))
        for r in fake.searches[before:]
    ]
    questions = {q.id: q.question for q in plan.questions}
    timed = [questions[i] for i in plan.timed_question_ids]
    expected = [(key, plan.questions[0].question) for key in keys]  # warm-ups first
    expected += [(key, timed[r]) for r in range(4) for key in round_order(keys, r)]
    assert sent[:len(expected)] == expected
    assert len({t["time_pass"] for t in times.values()}) == 1 and all(len(t["times_ms"]) == 4 for t in times.values())
