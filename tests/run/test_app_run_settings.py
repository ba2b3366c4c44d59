"""``AppRunSettings``: how a run in parts is planned (``plan_app_run``), as one frozen object checked with
sentences before the golden file is read, built from keywords (``of``, the run's ``EvaluationSettings``
fields included) or from the Function App's settings (``from_app``, what the planning activity passes).
What a plan reuses and how it is cut is tests/run/test_app_run.py's and tests/run/test_reuse.py's."""
from __future__ import annotations

import dataclasses

import pytest

from app.settings import AppSettings
from evaluation.errors import UsageError
from evaluation.run import AppRunSettings, PlanContext, plan_app_run
from evaluation.settings import EvaluationSettings
from fakes import ANSWERS, ListTarget, write_golden

ROWS = [{"id": "a", "question": "where is alpha", "expected": ["alpha"]},
        {"id": "b", "question": "where is beta", "expected": ["beta"]},
        {"id": "c", "question": "where is gamma", "expected": ["gamma"]}]


def test_the_defaults_are_the_ones_written_beside_their_rules():
    from evaluation.run.retime import DEFAULT_MAX_AGE_DAYS
    from evaluation.run.shards import DEFAULT_SHARD_SECONDS

    assert AppRunSettings() == AppRunSettings(retime="when-changed", retime_max_days=DEFAULT_MAX_AGE_DAYS,
                                              shard_seconds=DEFAULT_SHARD_SECONDS, most_questions=0, only=None,
                                              skip=(), evaluation=EvaluationSettings())
    assert (DEFAULT_MAX_AGE_DAYS, DEFAULT_SHARD_SECONDS) == (7, 180.0)


def test_from_app_reads_every_setting_the_planning_activity_used_to_pass_by_hand():
    app = AppSettings.from_environ({"EVALUATION_RETIME": "always", "EVALUATION_RETIME_MAX_DAYS": "3",
                                    "EVALUATION_SHARD_SECONDS": "60", "EVALUATION_SHARD_QUESTIONS": "5",
                                    "EVALUATION_ONLY": "local.keyword.*, local.dense.*", "EVALUATION_SKIP": "*.colbert",
                                    "EVALUATION_TIMED": "9", "EVALUATION_BY": "chunk"})
    assert AppRunSettings.from_app(app) == AppRunSettings(
        retime="always", retime_max_days=3, shard_seconds=60, most_questions=5,
        only=("local.keyword.*", "local.dense.*"), skip=("*.colbert",),
        evaluation=EvaluationSettings(timed=9, by="chunk", time_budget=20, equally_fast_ms=5))
    # no EVALUATION_ONLY: every setup (None), not none of them (an empty list)
    assert AppRunSettings.from_app(AppSettings.from_environ({})).only is None


@pytest.mark.parametrize(("given", "sentence"), [
    ({"retime": "sometimes"}, "retime must be one of when-changed, always, not 'sometimes'"),
    ({"retime_max_days": -1}, "retime_max_days must be a number of days, 0 or more, not -1"),
    ({"retime_max_days": float("inf")}, "retime_max_days must be a number of days, 0 or more, not inf"),
    ({"shard_seconds": 0}, "a shard's seconds must be a number over 0, not 0"),
    ({"most_questions": -1}, "the most questions a shard holds must be a whole number of 0 (no bound) or more"),
    ({"only": "local.dense.*"}, "only is a list of setup patterns, not one string: give ['local.dense.*']"),
    ({"evaluation": {"timed": 3}}, "evaluation must be an EvaluationSettings, not dict"),
])
def test_a_setting_no_run_could_be_planned_with_is_refused_with_its_sentence(given, sentence):
    with pytest.raises(UsageError) as refused:
        AppRunSettings(**given)
    assert str(refused.value).startswith(sentence)


def test_keywords_of_either_object_go_over_the_settings_and_a_misspelt_one_names_the_setting_meant():
    base = AppRunSettings(retime="always", evaluation=EvaluationSettings(timed=5, seed=2))
    over = AppRunSettings.of(base, timed=3, most_questions=2, only=["t.keyword.*"])
    assert over == dataclasses.replace(base, most_questions=2, only=("t.keyword.*",),
                                       evaluation=EvaluationSettings(timed=3, seed=2))
    # the EvaluationSettings alone, as plan_app_run took it before
    assert AppRunSettings.of(EvaluationSettings(timed=4), retime="always") == AppRunSettings(
        retime="always", evaluation=EvaluationSettings(timed=4))
    assert AppRunSettings.of(base) is base
    with pytest.raises(TypeError, match='\'retim\' is not a setting of a run in parts or of a run.* Did you mean '
                                        '"retime"'):
        AppRunSettings.of(base, retim="always")


def test_plan_app_run_still_takes_every_keyword_it_took_before_the_settings_object():
    import inspect

    from evaluation.run import app_run_settings
    from evaluation.settings import NAMES as EVALUATION_NAMES

    before = {"targets", "golden", "newest", "retime", "retime_max_days", "shard_seconds", "most_questions", "only",
              "skip", "created_at", "run_id", "held_before", "warn", "settings", "fetcher"}
    # a keyword, a field of its settings, or a field of its context (the run's id and date, warn, fetcher, held_before)
    taken = (set(inspect.signature(plan_app_run).parameters) | app_run_settings.NAMES
             | {f.name for f in dataclasses.fields(PlanContext)})
    assert before - taken == set() and "keywords" in taken  # and, as before, EvaluationSettings' fields:
    assert AppRunSettings.of(**dict.fromkeys(EVALUATION_NAMES & {"timed", "seed"}, 3)).evaluation.timed == 3


def test_plan_app_run_plans_the_same_from_the_object_as_from_its_keywords(tmp_path):
    target = ListTarget("t", ANSWERS, held={"alpha", "beta", "gamma"})
    golden = write_golden(tmp_path, ROWS)
    common = {"newest": None, "context": PlanContext(created_at="2026-12-01T10:00:00Z", run_id="run-1")}
    by_keywords = plan_app_run(target, golden, only=["t.keyword.*"], timed=1, most_questions=1, **common)
    by_object = plan_app_run(target, golden, settings=AppRunSettings(only=("t.keyword.*",), most_questions=1,
                                                                     evaluation=EvaluationSettings(timed=1)), **common)
    by_evaluation = plan_app_run(target, golden, settings=EvaluationSettings(timed=1), only=["t.keyword.*"],
                                 most_questions=1, **common)
    assert by_object == by_keywords == by_evaluation
    assert [s.key for s in by_object.plan.setups] == ["t.keyword.bm25"]
    # one question timed, the other two ranked in shards of at most one
    timed = by_object.plan.timed_question_ids
    assert len(timed) == 1 and by_object.shards == {"t.keyword.bm25": [[q] for q in "abc" if q not in timed]}


def test_a_bad_setting_is_refused_before_the_golden_file_is_read(tmp_path):
    target = ListTarget("t", ANSWERS, held={"alpha"})
    with pytest.raises(UsageError, match="retime must be one of"):
        plan_app_run(target, tmp_path / "no-such-golden.jsonl", newest=None, retime="sometimes")
    with pytest.raises(UsageError, match="a shard's seconds must be a number over 0"):
        plan_app_run(target, tmp_path / "no-such-golden.jsonl", newest=None, shard_seconds=0)
