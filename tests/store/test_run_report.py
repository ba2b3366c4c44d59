"""The report's read model: built once from the kept JSON, the JSON given back whole, every older shape read
as today's in ``RunReport.from_json`` alone (one test per line of ``UPGRADES``)."""
from __future__ import annotations

import copy
import hashlib
import json
from pathlib import Path

import pytest

from evaluation.store.run_report import UPGRADES, RunReport

PAGE = Path(__file__).parent.parent / "fixtures" / "page"
SAMPLES = Path(__file__).resolve().parent.parent.parent / "samples"


def _fixture() -> dict:
    return json.loads((PAGE / "report.json").read_text(encoding="utf-8"))


def _round_trips(report: dict) -> None:
    kept = copy.deepcopy(report)
    model = RunReport.from_json(report)
    assert report == kept  # reading never changes the JSON it reads
    assert model.to_json() == kept
    given = model.to_json()
    given["golden"]["sha256"] = "changed by an edge"  # a whole copy each time: an edge may change its own
    assert model.to_json() == kept
    assert RunReport.from_json(model.to_json()) == model


def test_the_page_fixture_round_trips_and_reads_its_numbers():
    report = _fixture()
    _round_trips(report)
    model = RunReport.from_json(report)
    first = report["setups"][0]
    setup = model.setup(first["key"])
    assert setup is not None and setup.summary is not None
    assert setup.summary.count(10) == first["summary"]["counts"]["10"]
    assert setup.summary.median_ms == first["summary"]["median_ms"]
    assert model.picks["finds_the_most"] == report["picks"]["finds_the_most"]
    assert [s.key for s in model.setups] == [s["key"] for s in report["setups"]]


def test_the_reports_tests_build_round_trip(make_report):
    _round_trips(make_report())
    _round_trips(make_report(setups={"local.keyword.bm25": {"q1": ["doc-a"]}, "local.dense.x": None}))


def test_a_report_a_real_run_makes_round_trips(tmp_path):
    from evaluation import evaluate
    from fakes import ANSWERS, ListTarget, write_golden

    golden = write_golden(tmp_path, [{"question": "where is alpha", "expected": ["alpha"]},
                                     {"question": "where is beta", "expected": ["beta"]}])
    report = evaluate(ListTarget("t", ANSWERS, held={"alpha", "beta", "gamma"}), golden)
    _round_trips(report)
    model = RunReport.from_json(report)
    assert model.ran and all(s.summary is not None and s.summary.questions == 2 for s in model.ran)


@pytest.mark.slow
def test_a_report_of_evaluate_on_the_shipped_sample_round_trips(sample_index):
    from evaluation import EmbeddedTarget, evaluate, open_index

    report = evaluate(EmbeddedTarget(open_index(sample_index), cross_encoder=False), SAMPLES / "golden.jsonl")
    _round_trips(json.loads(json.dumps(report)))  # as the store keeps it
    model = RunReport.from_json(report)
    assert len(model.ran) == len([s for s in report["setups"] if s.get("summary")]) > 1
    assert model.tiers is not None and model.significance is not None


def test_printable_escapes_every_text_once_and_keeps_result_rows():
    report = _fixture()
    key = report["setups"][0]["key"]
    report["setups"][0]["key"] = report["setups"][0]["key"] + "\x1b[31m"
    report["picks"] = {name: (report["setups"][0]["key"] if value == key else value)
                       for name, value in report["picks"].items()}
    shown = RunReport.from_json(report).printable()
    assert shown.escaped and shown.printable() is shown
    assert "\x1b" not in shown.setups[0].key and shown.picks["finds_the_most"] in {s.key for s in shown.setups}
    assert shown.setups[0].results == report["setups"][0]["results"]


# -- every older shape, read as today's ---------------------------------------------------------------

def test_every_upgrade_is_listed_once():
    assert len(UPGRADES) == len(set(UPGRADES)) == 11


def test_a_pick_kept_as_an_object_reads_as_its_setup_key():
    report = _fixture()
    key = report["picks"]["finds_the_most"]
    report["picks"] = {"finds_the_most": {"key": key}, "best_for_balance": {"setup": key},
                       "best_for_time": {"key": 3}}
    assert dict(RunReport.from_json(report).picks) == {"finds_the_most": key, "best_for_balance": key,
                                                       "best_for_time": None}


def test_lost_questions_kept_as_a_mapping_read_as_their_ids():
    report = _fixture()
    report["missing"] = {"old": {"documents": ["d1"], "questions": {"q1": ["d1"], "q2": ["d1"]},
                                 "partly": {"q3": ["d1"]}},
                         "new": {"documents": ["d1"], "questions": ["q1", "q2"], "partly": ["q3"]}}
    missing = RunReport.from_json(report).missing
    assert missing["old"].questions == missing["new"].questions == ("q1", "q2")
    assert missing["old"].partly == missing["new"].partly == ("q3",)
    assert missing["old"].unit == "document"


def test_a_question_kept_with_its_text_reads_with_the_sha256_of_it():
    report = _fixture()
    report["questions"] = [{"id": "a", "expected": ["alpha"], "question": "where is alpha"},
                           {"id": "b", "expected": ["beta"], "sha256": "f" * 64}]
    a, b = RunReport.from_json(report).questions
    assert a.sha256 == hashlib.sha256(b"where is alpha").hexdigest()
    assert b.sha256 == "f" * 64


def test_a_report_without_question_rows_reads_a_row_per_id():
    report = _fixture()
    del report["questions"]
    model = RunReport.from_json(report)
    assert [q.id for q in model.questions] == report["question_ids"] and not model.questions_kept
    assert all(q.expected == () and q.sha256 is None for q in model.questions)


def test_rules_without_min_grade_read_from_grade_1_and_without_a_floor_read_none():
    report = _fixture()
    report["rules"].pop("min_grade", None)
    report["rules"].pop("equally_fast_ms", None)
    rules = RunReport.from_json(report).rules
    assert rules.min_grade == 1 and rules.floor_ms is None
    report["rules"].update(min_grade=2, equally_fast_ms=-1)
    rules = RunReport.from_json(report).rules
    assert rules.min_grade == 2 and rules.floor_ms is None
    report["rules"]["equally_fast_ms"] = 5
    assert RunReport.from_json(report).rules.floor_ms == 5


def test_a_summary_kept_with_an_error_is_no_summary():
    report = _fixture()
    report["setups"][0]["error"] = "RuntimeError: the index is gone"
    model = RunReport.from_json(report)
    assert model.setups[0].summary is None and not model.setups[0].ran
    assert model.setups[1].summary is not None


def test_tiers_of_the_first_shape_read_found_10_at_the_defaults():
    report = _fixture()
    report["tiers"] = {"groups": [["a", "b"]], "pairs": [{}], "ranks": {"a": {"low": 1}},
                       "detectable": {"points": 12, "questions": 4.5}}
    tiers = RunReport.from_json(report).tiers
    assert tiers is not None
    assert (tiers.metric, tiers.alpha, tiers.rank_level, tiers.pairs) == ("found@10", 0.05, 0.95, 1)
    assert tiers.ranks["a"].high == 1 and tiers.detectable is not None and tiers.detectable.power == 0.8


def test_a_time_verdict_whose_key_is_not_text_names_no_setup():
    report = _fixture()
    report["time_tests"] = {"best_for_time": {"anchor": "a", "tied": [{"key": [], "why": "equally fast"},
                                                                       {"key": "b", "why": "cannot tell"}]}}
    test = RunReport.from_json(report).time_tests["best_for_time"]
    assert dict(test.verdicts) == {"b": "cannot tell"} and test.anchor == "a"


def test_rules_without_the_points_read_the_defaults_they_had():
    report = _fixture()
    del report["rules"]["balance_points"], report["rules"]["time_points"]
    rules = RunReport.from_json(report).rules
    assert (rules.balance_points, rules.time_points) == (4, 8)
