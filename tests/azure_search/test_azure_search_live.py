"""Opt-in: the same flow on a real Azure AI Search index. Skipped unless an endpoint is set.

    AZURE_SEARCH_LIVE_ENDPOINT=https://<service>.search.windows.net \\
    AZURE_SEARCH_LIVE_INDEX=<index> \\
    [AZURE_SEARCH_LIVE_KEY=<admin key>]            # else DefaultAzureCredential (az login)
    [AZURE_SEARCH_LIVE_FIELDS=doc_id=parent_id,text=chunk]
    [AZURE_SEARCH_LIVE_GOLDEN=golden.jsonl]        # else questions made from the index's own chunks
    python3 -m pytest -q tests/azure_search/test_azure_search_live.py

Without a golden file, the test takes five chunks from the index and asks each chunk's first words as
a question expecting its own document: keyword search must find most of them.
"""
from __future__ import annotations

import json
import os

import pytest

ENDPOINT = os.environ.get("AZURE_SEARCH_LIVE_ENDPOINT")
pytestmark = pytest.mark.skipif(not ENDPOINT or not os.environ.get("AZURE_SEARCH_LIVE_INDEX"),
                                reason="set AZURE_SEARCH_LIVE_ENDPOINT and AZURE_SEARCH_LIVE_INDEX to run against a "
                                       "real Azure AI Search index")


def _target():
    from evaluation.azure_search import AzureSearchTarget, SignIn

    options = {"endpoint": ENDPOINT, "index": os.environ["AZURE_SEARCH_LIVE_INDEX"]}
    if os.environ.get("AZURE_SEARCH_LIVE_KEY"):
        options["api_key_env"] = "AZURE_SEARCH_LIVE_KEY"
    fields = os.environ.get("AZURE_SEARCH_LIVE_FIELDS")
    if fields:
        options["fields"] = dict(pair.split("=", 1) for pair in fields.split(","))
    return AzureSearchTarget.from_options("live", options,
                                          sign_in=SignIn(api_key=os.environ.get("AZURE_SEARCH_LIVE_KEY")))


def _golden_from_the_index(target, tmp_path):
    described = target.describe()
    fields = described["fields"]
    assert fields["text"], "the index needs a text field to make questions from; set AZURE_SEARCH_LIVE_GOLDEN"
    rows = target.service.search({"search_text": "*", "top": 5, "select": [fields["doc_id"], fields["text"]]})
    golden = tmp_path / "golden.jsonl"
    golden.write_text("".join(json.dumps({"id": f"live-{n}", "question": " ".join(str(r[fields["text"]]).split()[:12]),
                                          "expected": [str(r[fields["doc_id"]])]}) + "\n"
                              for n, r in enumerate(rows)), encoding="utf-8")
    return golden


def test_every_setup_of_a_real_index_runs_and_the_report_says_what_was_left_out(tmp_path):
    from evaluation import evaluate

    target = _target()
    own = not os.environ.get("AZURE_SEARCH_LIVE_GOLDEN")
    golden = _golden_from_the_index(target, tmp_path) if own else os.environ["AZURE_SEARCH_LIVE_GOLDEN"]
    report = evaluate([target], golden, timed=2)
    described = report["targets"]["live"]
    assert described["engine"] == "azure_search" and len(described["state"]) == 64
    assert [s["key"] for s in report["setups"] if s["error"]] == []
    assert all(item["what"] and item["reason"] for item in described["left_out"])
    keyword = next(s for s in report["setups"] if s["key"] == "live.keyword.bm25")
    assert keyword["summary"]["found"]["10"] > 0
    if own:  # questions made from the index's own chunks: every expected document is held
        assert report["missing"] == {}
    assert target.holds(["no-such-document-" + "x" * 20]) == set()
