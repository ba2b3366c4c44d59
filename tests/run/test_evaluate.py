"""evaluate() over hand-made targets: ranks, a failing setup, missing documents, selection, saving."""
from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from evaluation.golden.check import NOTHING_FINDABLE
from evaluation.errors import GoldenFileError, UsageError
from evaluation import evaluate
from evaluation.golden import check_golden
from evaluation.run import plan_run, select_setups

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


def test_one_warm_up_then_timed_single_searches_then_a_batch_of_the_other_questions(golden):
    target = ListTarget("t", ANSWERS, held={"alpha", "beta", "gamma"})
    evaluate(target, golden, only=["keyword"], timed=2)
    kinds = [call[0] for call in target.calls]
    assert kinds == ["search", "search", "search", "batch"]
    assert len(target.calls[-1][2]) == 1  # the one question the 2 timed ones leave


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
    assert report["missing"] == {"t": {"unit": "document", "documents": ["gamma"], "questions": {"c": ["gamma"]},
                                       "partly": {}}}
    assert warnings[0] == "t does not hold 1 expected document: gamma; questions that cannot be found there: c"
    # 1 of 3 questions can be found nowhere (33%, more than 20%): said loudly too, and kept in the report
    assert (
        len(warnings) == 2 and "1 of 3 questions (33%, more than 20%) names no document the index holds" in warnings[1]
    )
    assert report["unfound"]["ids"] == ["c"]
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

    report = evaluate(ShortBatch("t", ANSWERS, held={"alpha", "beta", "gamma"}), golden, only=["keyword"], timed=0)
    assert report["setups"][0]["error"] == "RuntimeError: the search gave 2 result lists for 3 questions"
    assert report["picks"]["finds_the_most"] is None


# -- missing documents, like with like ------------------------------------------------------------

def test_a_question_that_still_holds_one_of_its_documents_is_partly_held_not_lost(tmp_path):
    path = write_golden(tmp_path, [
        {"id": "two", "question": "where is alpha", "expected": ["alpha", "gamma#page=2"]},
        {"id": "gone", "question": "where is gamma", "expected": ["gamma", "delta"]},
        {"id": "fine", "question": "where is beta", "expected": ["beta"]},
    ])
    warnings = []
    report = evaluate(ListTarget("t", ANSWERS, held={"alpha", "beta"}), path, warn=warnings.append)
    assert report["missing"]["t"] == {"unit": "document", "documents": ["delta", "gamma"],
                                      "questions": {"gone": ["gamma", "delta"]}, "partly": {"two": ["gamma"]}}
    assert warnings[0] == ("t does not hold 2 expected documents: delta, gamma; questions that cannot be "
                           "found there: gone; questions that lost some of their expected documents: two")
    assert warnings[1:] and "1 of 3 questions (33%" in warnings[1]  # "gone" only: "two" still holds alpha
    assert report["unfound"]["ids"] == ["gone"]


def test_at_chunk_grain_expected_chunk_ids_are_looked_up_among_the_chunks(tmp_path):
    # the target's chunks are "<doc>:0"; alpha:0 is held (and found), alpha:7 is not
    path = write_golden(tmp_path, [{"id": "a", "question": "where is alpha", "expected": ["alpha:0", "alpha:7"]},
                                   {"id": "b", "question": "where is beta", "expected": ["beta:0"]}])
    report = evaluate(ListTarget("t", ANSWERS, held={"alpha", "beta"}), path, by="chunk", only=["keyword"])
    assert report["missing"] == {"t": {"unit": "chunk", "documents": ["alpha:7"], "questions": {},
                                       "partly": {"a": ["alpha:7"]}}}
    assert report["setups"][0]["ranks"] == {"a": 1, "b": 2}


def test_at_chunk_grain_a_target_that_cannot_list_its_chunks_reports_nothing_missing(tmp_path):
    class NoChunks(ListTarget):
        holds_chunks = None

    path = write_golden(tmp_path, [{"id": "a", "question": "where is alpha", "expected": ["alpha:9"]}])
    assert evaluate(NoChunks("t", ANSWERS, held=set()), path, by="chunk", only=["keyword"])["missing"] == {}


# -- a golden file with errors starts nothing -----------------------------------------------------

def test_a_golden_file_with_any_error_starts_no_run_and_every_problem_is_named_by_line(tmp_path):
    path = tmp_path / "golden.jsonl"
    path.write_text('{"id": "a", "question": "where is alpha", "expected": ["alpha"]}\n'
                    '{"id": "b", "question": "where is beta", "expeted": ["beta"]}\n'
                    'not json\n', encoding="utf-8")
    target = ListTarget("t", ANSWERS, held={"alpha"})
    with pytest.raises(GoldenFileError) as caught:
        evaluate(target, path)
    assert str(caught.value).splitlines() == [
        f"{path}: 2 errors in the golden file, so no run starts; fix them and run again "
        f"(`python3 -m evaluation golden check {path}` shows the same):",
        '  line 2: "expeted" is not a field. Did you mean "expected"?',
        "  line 3: not valid JSON (Expecting value at column 1); each line must be one object like "
        '{"question": "How often are keys rotated?", "expected": ["report.pdf#page=41"]}',
    ]
    assert target.calls == []


GOLDEN_FIXTURES = Path(__file__).parent.parent / "fixtures" / "golden"


@pytest.mark.parametrize("fixture", sorted(p.name for p in GOLDEN_FIXTURES.glob("*.jsonl")))
def test_plan_run_refuses_exactly_the_golden_files_golden_check_finds_errors_in(fixture):
    target = ListTarget("t", ANSWERS, held=set())  # holds none of the ids: both refuse every file that reads
    checked = check_golden(GOLDEN_FIXTURES / fixture, target)
    try:
        plan_run(target, GOLDEN_FIXTURES / fixture)
    except GoldenFileError as err:
        refused = str(err)
    else:
        refused = None
    assert (refused is not None) == (not checked.ok)
    # the file's own errors stop the plan before it asks the target anything; without any, the target's
    # holding none of the ids is the one error both say, in the same sentence
    own = [p for p in checked.errors if not p.message.startswith(NOTHING_FINDABLE)]
    for problem in (own or checked.errors) if refused else ():
        assert problem.message in refused
    assert target.calls == []


# -- what a report holds ----------------------------------------------------------------------------

def test_the_saved_report_holds_no_question_reference_or_quote_text(tmp_path):
    rows = [{"id": "a", "question": "where is alpha", "expected": ["alpha"],
             "reference": "Alpha lives in the first folder.", "evidence": ["alpha is kept in folder one"]},
            {"id": "b", "question": "where is beta", "expected": ["beta"], "reference": "Beta is in the second."},
            {"id": "c", "question": "where is gamma", "expected": ["gamma"]}]
    path = write_golden(tmp_path, rows)
    from evaluation.store import open_store

    store = open_store(str(tmp_path / "store"))
    report = evaluate(ListTarget("t", ANSWERS, held={"alpha", "beta", "gamma"}), path, save_to=store, by="evidence")
    saved = (tmp_path / "store" / "retrieval" / "runs" / report["id"] / "report.json").read_text(encoding="utf-8")
    for row in rows:
        for text in [row["question"], row.get("reference"), *row.get("evidence", [])]:
            if text:
                assert text not in saved and text.casefold() not in saved.casefold(), text
    assert report["questions"] == [{"id": r["id"], "expected": r["expected"],
                                    "sha256": hashlib.sha256(r["question"].encode()).hexdigest()} for r in rows]
    assert store.golden(report["golden"]["sha256"]) == path.read_bytes()  # the text stays in the kept copy


def test_settings_a_run_could_not_finish_with_are_refused_before_any_search(golden):
    target = ListTarget("t", ANSWERS, held=set())
    for options, message in [({"balance": float("nan")}, "balance must be a finite number"),
                             ({"time_points": float("inf")}, "time points must be a finite number"),
                             ({"balance": -1}, "zero or more"), ({"depth": 19}, "too shallow"),
                             ({"timed": 2.5}, "timed questions must be a whole number")]:
        with pytest.raises(UsageError, match=message):
            evaluate(target, golden, **options)
    assert target.calls == []
