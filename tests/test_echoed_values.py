"""A value someone gave comes back in a sentence short, quoted and printable (issue 37): one helper,
``errors.shown``, used by the app's 400s and 404s, the command line's refusals and ``did_you_mean``'s
callers, so a 50 MB collection name is answered in about 100 bytes, never 50 MB."""
from __future__ import annotations

import time

import pytest

from evaluation.errors import did_you_mean, printable, shown

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
