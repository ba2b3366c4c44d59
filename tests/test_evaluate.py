"""evaluate() over hand-made targets: ranks, a failing setup, missing documents, selection, saving."""
from __future__ import annotations

import json

import pytest

from evaluation.errors import UsageError
from evaluation.evaluate import evaluate
from evaluation.steps import select_setups

from fakes import ANSWERS, ListTarget, write_golden


@pytest.fixture
def golden(tmp_path):
    return write_golden(tmp_path, [
        {"id": "a", "question": "where is alpha", "expected": ["alpha"]},
        {"id": "b", "question": "where is beta", "expected": ["beta"]},
        {"id": "c", "question": "where is gamma", "expected": ["gamma"]},
    ])


def test_every_setup_is_ranked_and_the_report_has_the_contracted_keys(golden):
    target = ListTarget("t", ANSWERS, held={"alpha", "beta", "gamma"})
    report = evaluate(target, golden, timed=2)
    assert set(report) >= {"format", "id", "created_at", "golden", "collections", "depth", "question_ids",
                           "rules", "targets", "missing", "picks", "frontier", "by", "setups"}
    assert report["format"] == 1 and report["question_ids"] == ["a", "b", "c"]
    by_key = {s["key"]: s for s in report["setups"]}
    assert by_key["t.keyword.bm25"]["ranks"] == {"a": 1, "b": 2, "c": None}
    assert by_key["t.dense.m"]["ranks"] == {"a": 3, "b": 1, "c": 1}
    assert by_key["t.hybrid.m"]["summary"]["counts"]["1"] == 3
    assert report["picks"]["finds_the_most"] == "t.hybrid.m"
    assert [s["rank"] for s in report["setups"]] == [1, 2, 3]
    assert all(s["summary"]["timed"] == 2 and len(s["times_ms"]) == 2 for s in report["setups"])
    assert set(report["setups"][0]) >= {"key", "target", "engine", "method", "method_label", "models", "ranks",
                                        "times_ms", "error", "summary", "rank", "neighbours"}


def test_one_warm_up_then_a_batch_then_timed_single_searches(golden):
    target = ListTarget("t", ANSWERS, held={"alpha", "beta", "gamma"})
    evaluate(target, golden, only=["keyword"], timed=2)
    kinds = [call[0] for call in target.calls]
    assert kinds == ["search", "batch", "search", "search"]


def test_a_failing_setup_is_reported_and_never_picked_and_the_others_run(golden):
    target = ListTarget("t", ANSWERS, held={"alpha", "beta", "gamma"}, broken={"hybrid"})
    report = evaluate(target, golden)
    broken = next(s for s in report["setups"] if s["key"] == "t.hybrid.m")
    assert broken["error"] == "RuntimeError: the service said no"
    assert broken["rank"] is None and broken["summary"] is None
    assert "t.hybrid.m" not in report["picks"].values()
    assert report["picks"]["finds_the_most"] == "t.dense.m"


def test_a_missing_document_is_warned_at_once_and_kept_and_its_question_stays(golden):
    target = ListTarget("t", ANSWERS, held={"alpha", "beta"})
    warnings = []
    report = evaluate(target, golden, warn=warnings.append)
    assert report["missing"] == {"t": {"documents": ["gamma"], "questions": {"c": ["gamma"]}}}
    assert any("gamma" in w and "c" in w for w in warnings)
    assert report["question_ids"] == ["a", "b", "c"]


def test_only_and_skip_select_setups_and_a_typo_is_named(golden):
    target = ListTarget("t", ANSWERS, held=set())
    assert [s.key for _, s in select_setups([target], only=["dense,hybrid"], skip=["hybrid"])] == ["t.dense.m"]
    assert [s.key for _, s in select_setups([target], only=["t.*.m"], skip=())] == ["t.dense.m", "t.hybrid.m"]
    with pytest.raises(UsageError, match='"hybird" matches no setup. Did you mean "hybrid"?'):
        select_setups([target], only=["hybird"], skip=())


def test_the_report_is_saved_with_its_golden_file(golden, tmp_path):
    from evaluation.store import open_store

    store = open_store(str(tmp_path / "store"))
    report = evaluate(ListTarget("t", ANSWERS, held={"alpha", "beta", "gamma"}), golden, save_to=store)
    assert store.get("latest") == json.loads(json.dumps(report))
    assert store.golden(report["golden"]["sha256"]) == golden.read_bytes()


def test_the_saved_run_has_its_page_which_names_questions_by_id_and_shows_older_runs(golden, tmp_path):
    from evaluation.store import open_store

    store = open_store(str(tmp_path / "store"))
    target = ListTarget("t", ANSWERS, held={"alpha", "beta", "gamma"})
    first = evaluate(target, golden, save_to=store)
    second = evaluate(target, golden, save_to=store)

    page = store.page(second["id"]).decode("utf-8")
    assert "where is alpha" not in page and "where is gamma" not in page
    assert 'data-question="c"' in page  # keyword finds nothing for "where is gamma": question c, by id
    assert f'title="{first["id"]}"' in page and f'title="{second["id"]}"' in page  # both runs, run by run
    assert f'title="{second["id"]}"' not in store.page(first["id"]).decode("utf-8")


def test_judging_by_chunk_uses_chunk_ids(tmp_path):
    path = write_golden(tmp_path, [{"id": "a", "question": "where is alpha", "expected": ["alpha:0"]}])
    report = evaluate(ListTarget("t", ANSWERS, held={"alpha"}), path, by="chunk", only=["keyword"])
    assert report["setups"][0]["ranks"] == {"a": 1}


def test_two_runs_in_the_same_second_get_different_ids(golden):
    target = ListTarget("t", ANSWERS, held={"alpha", "beta", "gamma"})
    from datetime import datetime, timezone

    moment = datetime(2026, 11, 30, 1, 2, 3, tzinfo=timezone.utc)
    first = evaluate(target, golden, only=["keyword"], created_at=moment)
    second = evaluate(target, golden, only=["keyword"], created_at=moment)
    assert first["id"] != second["id"]


def test_two_targets_with_one_name_are_refused_before_any_search(golden):
    first, second = ListTarget("t", ANSWERS, held=set()), ListTarget("t", ANSWERS, held=set())
    with pytest.raises(UsageError, match="two targets share a name"):
        evaluate([first, second], golden)
    assert first.calls == [] and second.calls == []


def test_two_targets_are_ranked_together_and_neighbours_cross_engines(golden):
    class OtherEngine(ListTarget):
        engine = "other"

    report = evaluate([ListTarget("a", ANSWERS, held={"alpha", "beta", "gamma"}),
                       OtherEngine("b", ANSWERS, held={"alpha", "beta", "gamma"})], golden)
    assert len(report["setups"]) == 6 and set(report["targets"]) == {"a", "b"}
    by_key = {s["key"]: s for s in report["setups"]}
    assert "b.hybrid.m" in by_key["a.hybrid.m"]["neighbours"]


def test_a_batch_that_loses_a_question_fails_that_setup_instead_of_scoring_the_wrong_results(golden):
    class ShortBatch(ListTarget):
        def search_batch(self, setup, questions, depth):
            return super().search_batch(setup, questions, depth)[:-1]

    report = evaluate(ShortBatch("t", ANSWERS, held={"alpha", "beta", "gamma"}), golden, only=["keyword"])
    assert report["setups"][0]["error"] == "RuntimeError: the batch search gave 2 result lists for 3 questions"
    assert report["picks"]["finds_the_most"] is None
