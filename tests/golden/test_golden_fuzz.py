"""Fuzz: random bytes, mutated rows and random objects never crash check_golden or read_golden.

Beyond "no unhandled exception" (``read_golden`` may raise ``GoldenFileError`` only), every case
checks that the two agree: the same rows fail, the same questions are ready, and ``read_golden``
raises exactly when ``check_golden`` reports a whole-file error. Runs are derandomized, so CI sees
the same cases every time; ``CASES_RUN`` counts them and the last test reports the total.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from evaluation.errors import GoldenFileError
from evaluation.golden import read_golden, run_problems
from evaluation.golden import check_golden

FIXTURES = Path(__file__).parent.parent / "fixtures" / "golden"
SEED_LINES = [line for case in ("valid", "bedrock", "template_rows", "drafts", "short_evidence")
              for line in (FIXTURES / f"{case}.jsonl").read_text(encoding="utf-8").splitlines() if line.strip()]
KEYS = ["id", "question", "expected", "reference", "evidence", "hint", "draft", "conversationTurns",
        "expeted", "Question", "prompt", "content", "text", "referenceResponses", ""]
JSONSCHEMA_WORDING = ("is not of type", "is not valid under", "does not match", "Additional properties",
                      "is a required property", "has non-unique elements", "should be non-empty")
CASES_RUN: dict[str, int] = {}

scalars = (st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=12)
           | st.sampled_from(["report.pdf#page=0", "a.md#page=1", "#page=2", " a.md", "x#page=01", "", "   "]))
# Two levels deep is enough to reach every type rule; deeper nesting is left to the mutated rows.
json_values = scalars | st.lists(scalars, max_size=3) | st.dictionaries(st.sampled_from(KEYS) | st.text(max_size=6),
                                                                        scalars | st.lists(scalars, max_size=2),
                                                                        max_size=3)


def exercise(raw: bytes, folder: Path) -> None:
    """Feed ``raw`` to both readers; assert they agree and never raise anything unplanned."""
    path = folder / "golden.jsonl"
    path.write_bytes(raw)
    result = check_golden(path)
    as_dict = result.to_dict()
    assert json.loads(json.dumps(as_dict)) == as_dict
    result.summary().encode("utf-8")  # printable, whatever the file held
    assert not any(phrase in p.message for p in result.errors for phrase in JSONSCHEMA_WORDING)
    line_count = raw.count(b"\n") + 1
    assert all(p.line is None or 1 <= p.line <= line_count for p in result.errors + result.warnings)
    try:
        golden = read_golden(path)
    except GoldenFileError as err:
        assert str(err)
        assert any(p.line is None for p in result.errors)
        return
    # a file that reads may still not run (no question labelled): the check's errors are exactly what
    # makes plan_run refuse it, row errors first, then the file's own
    assert list(run_problems(golden)) == list(result.errors)
    assert [p.line for p in golden.problems] == [p.line for p in result.errors if p.line is not None]
    assert len(golden.labelled) == result.ready
    assert len({q.id for q in golden.questions + golden.unfilled_rows}) == len(golden.questions + golden.unfilled_rows)
    assert all(question.expected_items for question in golden.labelled)  # a row that passed parses


def run_cases(name: str, strategy: st.SearchStrategy[bytes], examples: int, folder: Path) -> int:
    """Run ``examples`` derandomized cases of ``strategy`` through ``exercise``; return how many ran."""
    ran = 0

    @settings(max_examples=examples, deadline=None, database=None, derandomize=True,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
    @given(strategy)
    def one(raw: bytes) -> None:
        nonlocal ran
        ran += 1
        exercise(raw, folder)

    one()
    CASES_RUN[name] = ran
    return ran


# --- strategies -------------------------------------------------------------------------------------

def _mutate_row(row: dict[str, Any], draw: Callable[..., Any]) -> Any:
    """One structural change to a parsed row: drop, rename or retype a key, or poke inside a value."""
    keys = list(row)
    action = draw(st.sampled_from(["drop", "rename", "retype", "poke", "add"]))
    if action == "add" or not keys:
        return {**row, draw(st.sampled_from(KEYS) | st.text(max_size=8)): draw(json_values)}
    key = draw(st.sampled_from(keys))
    if action == "drop":
        return {k: v for k, v in row.items() if k != key}
    if action == "rename":
        new = draw(st.sampled_from(KEYS) | st.text(max_size=8))
        return {(new if k == key else k): v for k, v in row.items()}
    if action == "retype":
        return {**row, key: draw(json_values)}
    value = row[key]
    if isinstance(value, list) and value:
        at = draw(st.integers(0, len(value) - 1))
        return {**row, key: [*value[:at], draw(json_values), *value[at:]]}
    if isinstance(value, str):
        return {**row, key: draw(st.sampled_from(["", " ", value + "#page=0", value * 2, value.upper()]))}
    return {**row, key: [value, value]}


@st.composite
def mutated_files(draw: Callable[..., Any]) -> bytes:
    """A file of seed rows, some changed structurally, some cut or spliced with junk as text."""
    lines = []
    for _ in range(draw(st.integers(1, 6))):
        line = draw(st.sampled_from(SEED_LINES))
        how = draw(st.sampled_from(["keep", "row", "row", "truncate", "junk", "blank", "duplicate"]))
        if how == "row":
            line = json.dumps(_mutate_row(json.loads(line), draw), ensure_ascii=draw(st.booleans()))
        elif how == "truncate":
            line = line[: draw(st.integers(0, len(line)))]
        elif how == "junk":
            at = draw(st.integers(0, len(line)))
            line = (
                line[:at] + draw(st.text(max_size=6) | st.sampled_from(['"', "}", "{", ",", "\\", "\x00"])) + line[at:]
            )
        elif how == "blank":
            line = draw(st.sampled_from(["", "  ", "\t"]))
        elif how == "duplicate" and lines:
            line = lines[-1]
        lines.append(line)
    text = draw(st.sampled_from(["\n", "\r\n"])).join(lines)
    raw = text.encode("utf-8", "surrogatepass")
    return (b"\xef\xbb\xbf" if draw(st.booleans()) else b"") + raw


random_objects = st.lists(st.dictionaries(st.sampled_from(KEYS), json_values, max_size=5), min_size=1, max_size=3).map(
    lambda rows: "\n".join(json.dumps(row) for row in rows).encode("utf-8"))
random_bytes = st.binary(max_size=300) | st.lists(st.binary(max_size=40), max_size=6).map(b"\n".join)


# --- tests ------------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("fuzz")


def test_random_bytes_never_crash_the_readers(folder):
    assert run_cases("random bytes", random_bytes, 700, folder) >= 700


def test_mutated_rows_never_crash_the_readers(folder):
    assert run_cases("mutated rows", mutated_files(), 650, folder) >= 650


def test_random_objects_never_crash_the_readers(folder):
    assert run_cases("random objects", random_objects, 300, folder) >= 300


@pytest.mark.parametrize("raw, message", [
    (b"[" * 100_000, "nested too deeply to read"),
    (b'{"question": "Why?", "expected": ["a", ' + b"[" * 990 + b"]" * 990 + b", " + b"[" * 990 + b"]" * 990 + b"]}",
     "nested too deeply to read"),
    (b'{"question": "Why?", "expected": ["a.md"], "draft": ' + b"9" * 5000 + b"}",
     "not valid JSON (a number too long to read)"),
    (b"\xff\xfe{\x00", "not UTF-8 text (byte 1 of the line)"),
])
def test_pathological_lines_become_one_sentence_each(raw, message, folder):
    exercise(raw, folder)
    errors = check_golden(folder / "golden.jsonl").errors
    assert errors[0].line == 1 and errors[0].message.startswith(message)


def test_lone_surrogate_escapes_are_refused_with_their_line(folder):
    raw = (rb'{"question": "Why \ud800?", "expected": ["a.md"]}' + b"\n"
           rb'{"question": "Fine \ud83d\ude00?", "expected": ["b.md"]}' + b"\n"
           rb'{"question": "How?", "expected": ["c.md"], "expeted\udfff": 1}')
    exercise(raw, folder)
    result = check_golden(folder / "golden.jsonl")
    assert [(e.line, e.message[:23]) for e in result.errors] == [(1, "holds the escape \\ud800"),
                                                                  (3, "holds the escape \\udfff")]
    assert [q.question for q in read_golden(folder / "golden.jsonl").questions] == ["Fine \U0001F600?"]


def test_the_fuzz_ran_at_least_1500_cases():
    total = sum(CASES_RUN.values())
    print(f"golden fuzz cases run: {CASES_RUN} total {total}")
    assert total >= 1500 or len(CASES_RUN) < 3  # run alone (-k), this test has nothing to count
