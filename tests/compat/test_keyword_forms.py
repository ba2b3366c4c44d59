"""The keyword forms users call keep every keyword, in its place, with its default: ``evaluation.evaluate`` and
the rest live in ``evaluation/compat/`` and map onto the core's settings objects (tests/test_structure.py).
The parameters below are what each took when its core was narrowed (issue 50); adding is free."""
from __future__ import annotations

import inspect

import pytest

import evaluation

KEYWORD_FORMS = {
    "evaluate": "targets golden save_to only skip progress created_at run_id warn clock fallback_dirs settings fetcher "
                "reuse_times holes work_dir keywords",
    "sweep": "documents questions settings chat cutter save_to progress created_at chunk chunk_size overlap "
             "embed_heading search open_with fetcher keywords",
    "compare_chunking": "documents golden settings chat answer judge cutter save_to progress created_at search "
                        "workers fetcher open_with cut_with context_with keywords",
    "suggest_expected": "target golden out by top setup propose depth fetcher search",
    "chunking_report": "results golden budget search alpha created skipped scored current model fetcher",
    "check_golden": "source corpus by fetcher max_bytes setting unfound_share qrels encoding chunking",
}
DEFAULTS = {"evaluate": {"skip": (), "reuse_times": False}, "chunking_report": {"budget": 6000, "alpha": 0.05},
            "suggest_expected": {"by": "doc", "propose": 1, "depth": 20}, "check_golden": {"by": "doc"}}


@pytest.mark.parametrize("name", sorted(KEYWORD_FORMS))
def test_a_keyword_form_keeps_its_parameters_and_lives_in_the_compat_layer(name):
    function = getattr(evaluation, name)
    parameters = inspect.signature(function).parameters
    assert list(parameters) == KEYWORD_FORMS[name].split()
    assert {key: parameters[key].default for key in DEFAULTS.get(name, {})} == DEFAULTS.get(name, {})
    assert function.__module__.startswith("evaluation.compat.")


def test_the_same_function_is_reached_from_each_package_users_import_it_from():
    import evaluation.answers
    import evaluation.builds
    import evaluation.golden

    assert evaluation.builds.sweep is evaluation.sweep
    assert evaluation.builds.compare_chunking is evaluation.compare_chunking
    assert evaluation.builds.chunking_report is evaluation.chunking_report
    assert evaluation.answers.suggest_expected is evaluation.suggest_expected
    assert evaluation.golden.check_golden is evaluation.check_golden
