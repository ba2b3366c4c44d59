"""A value someone gave comes back in a sentence short, quoted and printable (issue 37): one helper,
``errors.shown``, used by the app's 400s and 404s, the command line's refusals and ``did_you_mean``'s
callers, so a 50 MB collection name is answered in about 100 bytes, never 50 MB."""
from __future__ import annotations

import json
import re
import time

import pytest

from api import routes, site
from evaluation.errors import TargetConfigError, did_you_mean, printable, shown
from evaluation.store import LocalStore
from evaluation.store.collections import LocalCollections
from evaluation.target_specs import parse_target_specs

from conftest import run_cli
from test_api_routes import body, call, fill, settings
from test_triggers import post, published  # noqa: F401 - the fixture

MB50 = 50 * 1024 * 1024  # 52,428,800 characters
SAID = "(52,428,800 characters)"


# -- the helper -------------------------------------------------------------------------------------

def test_a_value_over_the_limit_is_a_short_quoted_prefix_with_its_length_said():
    said = shown("a" * MB50)

    assert said == '"' + "a" * 59 + '…" ' + SAID  # 59 characters and "…": the 60 of ECHO_LIMIT
    assert shown("docs") == '"docs"' and shown("a" * 60) == '"' + "a" * 60 + '"'  # at the limit: whole


def test_control_characters_lone_surrogates_and_reordering_marks_are_escaped_onto_one_printable_line():
    said = shown('a\nb\t"c"\\\x00\x7f\x85\u2028\u202e\ud800')

    assert said == '"a\\nb\\t\\"c\\"\\\\\\u0000\\u007f\\u0085\\u2028\\u202e\\ud800"'
    said.encode("utf-8")  # a lone surrogate would make this raise
    assert said.isprintable()


def test_a_value_that_is_not_text_is_named_by_its_kind_and_size_never_by_its_contents():
    assert shown([0] * 1_000_000) == "a list of 1,000,000 items"
    assert shown({"a": 1}) == "an object of 1 key" and shown([]) == "a list of 0 items"
    assert (shown(True), shown(None), shown(3), shown(2.5)) == ("true", "null", "3", "2.5")
    assert shown(10 ** 5000) == "a whole number of about 5,000 digits"  # str() of it raises in Python 3.11


def test_printable_cuts_and_escapes_as_shown_does_without_the_quotes():
    assert printable("Ada \x07Admin\ud800") == "Ada \\u0007Admin\\ud800"
    assert printable("a" * MB50) == "a" * 59 + "… " + SAID


def test_did_you_mean_answers_a_huge_word_at_once_and_still_finds_a_close_one():
    # 20 MB compared character by character took about 5 s here; no word 2.4 times a choice's length is close
    started = time.perf_counter()
    assert did_you_mean("x" * 20_000_000, ["golden", "collection", "force"]) == ""
    assert time.perf_counter() - started < 1.0
    assert did_you_mean("colection", ["golden", "collection", "force"]) == ' Did you mean "collection"?'
    assert did_you_mean("golden-file", ["golden"]) == ' Did you mean "golden"?'  # 11 < 2.4 x 6: still compared


# -- the app's answers ------------------------------------------------------------------------------

@pytest.fixture
def runs(tmp_path, make_report):
    fill(lambda name: LocalStore(tmp_path / name), make_report)
    with site.use(settings=settings(), collections=LocalCollections(tmp_path)):
        yield


def small_refusal(response, status: int) -> str:
    """The refusal's sentence, once its status is ``status`` and its whole body under 1 KB."""
    assert response.status_code == status
    assert len(response.get_body()) < 1024, len(response.get_body())
    return body(response)["error"]


@pytest.mark.parametrize("url, status", [
    ("/api/v1/evaluations?collection=" + "c" * MB50, 404),
    ("/api/v1/evaluations?limit=" + "9" * MB50, 400),                 # int() refuses over 4,300 digits
    ("/api/v1/evaluations/" + "r" * MB50, 400),                       # not a run id: over 128 characters
    ("/api/v1/evaluations/latest?collection=" + "c" * MB50, 404),
], ids=["collection", "limit", "run-id", "latest-of-collection"])
def test_a_50_mb_value_in_a_route_comes_back_as_a_short_prefix_with_its_length(runs, url, status):
    assert SAID in small_refusal(call(routes.list_evaluations if "/evaluations?" in url else routes.get_evaluation,
                                      url), status)


def test_a_50_mb_value_in_a_targets_setting_comes_back_short():
    for bad in ({"c" * MB50: [{"engine": "embedded"}]}, {"docs": [{"engine": "e" * MB50}]},
                {"docs": [{"engine": "embedded", "x" * MB50: 1}]}):
        with pytest.raises(TargetConfigError) as refused:
            parse_target_specs(json.dumps(bad))
        assert len(str(refused.value)) < 1024 and SAID in str(refused.value)


@pytest.mark.azurite
@pytest.mark.parametrize("request_body", [
    {"collection": "c" * MB50}, {"c" * MB50: "docs"}, {"golden": "https://x/" + "g" * MB50},
    {"collection": "docs", "force": "f" * MB50}, {"collection": ["c" * MB50]},
], ids=["collection", "key", "golden", "force", "collection-in-a-list"])
def test_evaluate_now_answers_a_50_mb_value_with_a_400_under_1_kb(published, request_body):  # noqa: F811 - the fixture imported above
    code, answer, response = post(published, request_body)

    assert code == 400 and len(response.get_body()) < 1024, len(response.get_body())
    assert re.search(r"\(52,428,8\d\d characters\)|^a list of 1 item cannot name", answer["error"]), answer["error"]
    assert published.host.requests == []


# -- the command line -------------------------------------------------------------------------------

@pytest.mark.parametrize("argv", [
    ["evaluate", "--index", "x", "--golden", "g.jsonl", "--threads", "t" * 100_000],
    ["evaluate", "--index", "x", "--golden", "g.jsonl", "--only", " " * 100_000],
    ["evaluate", "--index", "x", "--golden", "g.jsonl", "--balance", "1" * 100_000],  # inf: not a number of points
    ["runs", "list", "--store", "runs", "--limit", "-" + "1" * 100_000],
], ids=["threads", "only", "balance", "runs-limit"])
def test_a_100_kb_argument_is_refused_in_one_short_sentence(capsys, argv):
    # 128 KB is the most one argument can be on Linux (MAX_ARG_STRLEN)
    with pytest.raises(SystemExit) as done:
        run_cli(capsys, *argv)
    err = capsys.readouterr().err
    assert done.value.code == 2 and len(err) < 1024, err[:300]
    assert "(100,000 characters)" in err or "(100,001 characters)" in err
