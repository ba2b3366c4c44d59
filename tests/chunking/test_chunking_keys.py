"""Build keys: ``<technique>-<size>-<letter>`` round-trips, and a key naming nothing is refused with a sentence."""
from __future__ import annotations

import pytest
from hypothesis import given, strategies as st

from evaluation.chunking import (CHILD_SIZES, LETTERS, SIZES, TECHNIQUES, Build, BuildKeyError, default_builds,
                                 parse_build)
from evaluation.errors import UsageError

builds = st.builds(Build, st.sampled_from(sorted(TECHNIQUES)), st.integers(50, 100_000),
                   st.sampled_from(sorted(LETTERS)))


def test_a_key_names_its_technique_size_and_letter():
    build = parse_build("markdown-1000-h")
    assert build == Build("markdown", 1000, "h")
    assert str(build) == build.key == "markdown-1000-h"
    assert build.overlap == 1000 // 5 == 200


@given(builds)
def test_every_build_round_trips_through_its_key(build):
    assert parse_build(str(build)) == build


@given(st.text(max_size=30))
def test_any_string_either_parses_to_a_build_that_prints_it_back_or_is_refused(key):
    try:
        build = parse_build(key)
    except BuildKeyError:
        return
    assert str(build) == key


@pytest.mark.parametrize("key", ["markdown-1000", "markdwn-1000-h", "markdown-1000-x", "markdown-01000-h",
                                 "markdown-49-h", "Markdown-1000-h", "markdown-1000-h ", "", "markdown-1e3-h"])
def test_a_key_naming_nothing_is_refused_with_a_sentence_saying_what_a_key_is(key):
    with pytest.raises(BuildKeyError) as caught:
        parse_build(key)
    message = str(caught.value)
    assert "<technique>-<size>-<letter>" in message
    assert all(technique in message for technique in TECHNIQUES)
    assert all(f"{letter} {meaning}" in message for letter, meaning in LETTERS.items())
    assert isinstance(caught.value, ValueError) and isinstance(caught.value, UsageError)


def test_a_misspelt_technique_is_answered_with_the_closest_one():
    with pytest.raises(BuildKeyError, match='Did you mean "markdown"'):
        parse_build("markdwn-1000-h")


def test_a_key_is_a_string():
    with pytest.raises(BuildKeyError, match="not int"):
        parse_build(1000)


def test_default_builds_are_every_model_free_technique_at_three_sizes_with_and_without_headings():
    found = default_builds()
    techniques_without_a_model = [t for t in TECHNIQUES if t != "llm"]
    assert len(found) == len(techniques_without_a_model) * 3 * 2 == 36
    assert len(set(found)) == len(found)
    assert {b.size for b in found if b.technique == "parent"} == set(CHILD_SIZES) == {250, 500, 1000}
    assert {b.size for b in found if b.technique == "fixed"} == set(SIZES) == {500, 1000, 2000}
    assert not any(b.needs_chat for b in found)
    assert [str(b) for b in found[:2]] == ["markdown-500-h", "markdown-500-n"]


def test_which_builds_need_a_model():
    assert parse_build("llm-1000-n").needs_chat and parse_build("fixed-1000-c").needs_chat
    assert not parse_build("fixed-1000-l").needs_chat
    assert parse_build("semantic-1000-n").needs_embedder and not parse_build("fixed-1000-n").needs_embedder
    assert parse_build("parent-250-h").parent_size == 250 * 4 and parse_build("markdown-250-h").parent_size is None
