"""The compiled fast check (fastjsonschema) that lets a conforming golden row skip jsonschema's walk must
agree with jsonschema on every row: a row it passed that jsonschema rejects would be read with a
mistake nobody was told of, and a row it rejected that jsonschema accepts would get no sentence."""
from __future__ import annotations

import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from evaluation.golden import schema
from evaluation.golden.schema import FIELDS, row_errors, row_schema

JUDGE = Draft202012Validator(row_schema())

# Strings near the schema's edges: blank, padded, control characters, page suffixes good and bad.
EDGY_STRINGS = st.sampled_from([
    "", " ", "\t", "\n", "report.pdf", " report.pdf", "report.pdf ", "report.pdf\n", "re\x00port",
    "re\x85port", "report.pdf#page=1", "report.pdf#page=0", "report.pdf#page=41", "report.pdf#page=",
    "report.pdf#page=1234567890", "#page=3", "a#page=3#page=4", "guides/keys.md", "How often?", "q1",
])
STRINGS = st.one_of(EDGY_STRINGS, st.text(max_size=12))
SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-3, 3), st.floats(allow_nan=False), STRINGS)
VALUES = st.one_of(SCALARS, st.lists(st.one_of(STRINGS, SCALARS), max_size=4),
                   st.dictionaries(STRINGS, SCALARS, max_size=2))
KEYS = st.one_of(st.sampled_from([*FIELDS, "body", "expected_ids", "Question"]), st.text(max_size=6))
ROWS = st.one_of(
    st.dictionaries(KEYS, VALUES, max_size=7),
    # Rows that are nearly right, so both verdicts come up often.
    st.fixed_dictionaries(
        {"question": STRINGS, "expected": st.lists(STRINGS, min_size=0, max_size=3)},
        optional={"id": STRINGS, "hint": STRINGS, "draft": SCALARS, "reference": STRINGS,
                  "evidence": st.one_of(STRINGS, st.lists(STRINGS, max_size=2), SCALARS)}),
    st.one_of(SCALARS, st.lists(SCALARS, max_size=2)),  # not an object at all
)


@settings(max_examples=3000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ROWS)
def test_the_fast_check_and_jsonschema_give_every_row_the_same_verdict(row):
    assert schema._conforms(row) == JUDGE.is_valid(row), json.dumps(row)


@given(ROWS)
@settings(max_examples=300, deadline=None)
def test_a_row_breaking_the_schema_still_gets_its_sentences(row):
    if not JUDGE.is_valid(row) and isinstance(row, dict):
        assert row_errors(row, 3)


def test_the_fast_check_never_changes_the_row_it_reads():
    row = {"question": "How often are keys rotated?", "expected": ["security.pdf#page=3"]}
    before = json.dumps(row, sort_keys=True)
    assert schema._conforms(row)
    assert json.dumps(row, sort_keys=True) == before


def test_a_conforming_row_is_never_walked_by_jsonschema(monkeypatch):
    """The speed the plan activity counts on: jsonschema only explains the rows the fast check rejects."""
    walked = []
    real = schema._validator

    class Spy:
        def iter_errors(self, row):
            walked.append(row)
            return real().iter_errors(row)

    monkeypatch.setattr(schema, "_validator", lambda: Spy())
    assert row_errors({"question": "How?", "expected": ["a.md"]}, 1) == []
    assert walked == []
    assert row_errors({"question": "How?", "expected": []}, 1)
    assert len(walked) == 1
