"""One settings object for a run: built from keywords, the command line or the app, checked once."""
from __future__ import annotations

import argparse
from dataclasses import asdict

import pytest

from evaluation.errors import UsageError
from evaluation.settings import DEFAULT_TIMED, EvaluationSettings


def test_keywords_go_over_the_given_settings_and_over_the_defaults_otherwise():
    base = EvaluationSettings(timed=7, by="chunk")
    assert EvaluationSettings.of(base, timed=9) == EvaluationSettings(timed=9, by="chunk")
    assert EvaluationSettings.of(base) is base
    assert EvaluationSettings.of(timed=3).timed == 3 and EvaluationSettings.of().timed == DEFAULT_TIMED == 50


def test_a_keyword_that_is_no_setting_is_refused_as_python_refuses_it():
    with pytest.raises(TypeError, match="'timd' is not a setting of a run.*Did you mean \"timed\""):
        EvaluationSettings.of(timd=3)


def test_a_bad_setting_is_refused_when_built_whatever_builds_it():
    with pytest.raises(UsageError, match="too shallow"):
        EvaluationSettings.of(depth=10)
    with pytest.raises(UsageError, match='"page" is not a grain'):
        EvaluationSettings.from_json({"by": "page"})


def test_a_plan_made_before_a_setting_existed_gets_its_default_and_the_json_round_trips():
    settings = EvaluationSettings(timed=12, seed=3, alpha=0.1)
    assert EvaluationSettings.from_json(asdict(settings)) == settings
    older = {k: v for k, v in asdict(settings).items() if k not in {"time_margin", "time_budget"}}
    assert EvaluationSettings.from_json(older) == EvaluationSettings(timed=12, seed=3, alpha=0.1)


def test_the_command_lines_arguments_give_the_settings_with_the_margin_in_percent():
    args = argparse.Namespace(balance=2, time_points=6, by="evidence", depth=30, timed=20, seed=1, alpha=0.01,
                              resamples=2000, time_margin=25, time_floor=8, time_budget=5.0, only=None)
    assert EvaluationSettings.from_args(args) == EvaluationSettings(
        balance=2, time_points=6, by="evidence", depth=30, timed=20, seed=1, alpha=0.01, resamples=2000,
        time_margin=0.25, time_floor=8, time_budget=5.0)


def test_the_apps_settings_give_the_ones_a_team_may_set():
    import dataclasses
    from types import SimpleNamespace

    from app.settings import AppSettings

    assert {"by", "timed", "time_budget", "equally_fast_ms"} <= {f.name for f in dataclasses.fields(AppSettings)}
    app = SimpleNamespace(by="chunk", timed=12, time_budget=3, equally_fast_ms=20, container="runs")  # in part
    assert EvaluationSettings.from_app(app) == EvaluationSettings(by="chunk", timed=12, time_budget=3,
                                                                  equally_fast_ms=20)
