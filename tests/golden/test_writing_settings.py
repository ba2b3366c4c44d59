"""``WritingSettings``: how ``write_golden`` drafts, as one frozen object with its defaults written once,
checked with sentences before any model call, built from keywords (``of``) or from ``golden write``'s
arguments (``from_args``). The drafting itself is tests/golden/test_write_golden.py's."""
from __future__ import annotations

import dataclasses
import inspect

import pytest

from evaluation.cli import build_parser
from evaluation.errors import UsageError
from evaluation.golden.writing import WritingSettings, write_golden
from evaluation.golden.writing import settings as writing

SETTINGS = [f.name for f in dataclasses.fields(WritingSettings)]
REQUIRED = ["golden", "write", "--corpus", "docs.jsonl", "--out", "golden.jsonl"]


def test_the_defaults_are_the_ones_written_in_the_settings_module():
    assert WritingSettings() == WritingSettings(n=50, mix={"factual": 2, "howto": 1, "comparison": 1, "multihop": 1},
                                                examples=(), scenario="", task="", evolve=1, threshold=0.7,
                                                similarity=0.5, tries=3, seed=0)
    assert (writing.DEFAULT_N, writing.DEFAULT_EVOLVE, writing.DEFAULT_TRIES) == (50, 1, 3)


def test_neither_write_golden_nor_golden_write_writes_a_default_of_its_own():
    # write_golden takes the settings as keywords, with no default beside them; n (positional) is None
    parameters = inspect.signature(write_golden).parameters
    assert parameters["n"].default is None and not set(SETTINGS) - {"n"} & set(parameters)
    # the command line leaves every setting it was not given as None, so WritingSettings' default stands
    args = build_parser().parse_args(REQUIRED)
    assert {name: getattr(args, name, None) for name in SETTINGS} == dict.fromkeys(SETTINGS)
    assert WritingSettings.from_args(args) == WritingSettings()


def test_write_golden_still_takes_every_keyword_it_took_before_the_settings_object():
    before = {"target", "path", "n", "writer", "critic", "examples", "scenario", "task", "mix", "evolve", "threshold",
              "similarity", "tries", "seed", "cache", "progress"}
    assert before - set(inspect.signature(write_golden).parameters) - writing.NAMES == set()


def test_from_args_reads_every_setting_golden_write_takes():
    args = build_parser().parse_args([*REQUIRED, "-n", "7", "--mix", "factual=1,how-to=2", "--scenario", "on call",
                                      "--task", "fix it", "--evolve", "2", "--threshold", "0.6", "--similarity",
                                      "0.4", "--tries", "5", "--seed", "9"])
    assert WritingSettings.from_args(args, examples=["Why does it hang?"]) == WritingSettings(
        n=7, mix={"factual": 1, "howto": 2}, examples=("Why does it hang?",), scenario="on call", task="fix it",
        evolve=2, threshold=0.6, similarity=0.4, tries=5, seed=9)


@pytest.mark.parametrize(("given", "sentence"), [
    ({"n": 0}, "ask for at least 1 question and 1 try, and 0 or more rewrites (n=0, tries=3, evolve=1)"),
    ({"tries": 0}, "ask for at least 1 question and 1 try, and 0 or more rewrites (n=50, tries=0, evolve=1)"),
    ({"evolve": -1}, "ask for at least 1 question and 1 try, and 0 or more rewrites (n=50, tries=3, evolve=-1)"),
    ({"n": "5"}, "n must be a whole number, not '5'"),
    ({"seed": 1.5}, "seed must be a whole number, not 1.5"),
    ({"threshold": 1.2}, "the critic's threshold is a score from 0 to 1, not 1.2"),
    ({"threshold": float("nan")}, "threshold must be a number, not nan"),
    ({"similarity": -2}, "similarity is a cosine from -1 to 1, not -2"),
    ({"mix": {"factul": 1}}, '"factul" is not a kind of question. Did you mean "factual"?'),
    ({"mix": {"factual": -1}}, 'the mix gives "factual" -1; give each kind a whole number of 0 or more'),
    ({"mix": {"factual": 0}}, "the mix asks for no question at all; give at least one kind a weight over 0"),
    ({"examples": "Why does it hang?"}, "examples are questions people ask, given as a list of strings, not one"),
    ({"scenario": 3}, "the scenario is a sentence, not 3"),
])
def test_a_setting_no_run_could_finish_with_is_refused_with_its_sentence(given, sentence):
    with pytest.raises(UsageError) as refused:
        WritingSettings(**given)
    assert str(refused.value).startswith(sentence)


def test_keywords_go_over_a_settings_object_and_a_misspelt_one_names_the_setting_meant():
    base = WritingSettings(n=5, evolve=0)
    assert WritingSettings.of(base, evolve=2) == WritingSettings(n=5, evolve=2)
    assert WritingSettings.of(base) is base and WritingSettings.of() == WritingSettings()
    with pytest.raises(TypeError, match='\'evolv\' is not a setting of write_golden.* Did you mean "evolve"'):
        WritingSettings.of(base, evolv=2)


def test_a_settings_object_cannot_be_changed_once_checked():
    settings = WritingSettings(mix={"factual": 1, "howto": 0})
    with pytest.raises(dataclasses.FrozenInstanceError):
        settings.n = 0  # type: ignore[misc]
    with pytest.raises(TypeError):
        settings.mix["factual"] = -1  # type: ignore[index]
    assert settings.kinds == {"factual": 1}  # a kind of weight 0 is never asked
