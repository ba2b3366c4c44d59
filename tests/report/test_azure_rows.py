"""A run written as the rows Azure AI Foundry's Document Retrieval evaluator takes, and such rows read back.

The round trip uses the evaluator itself: our rows -> ``azure.ai.evaluation.evaluate`` -> its numbers;
our rows -> our reader -> ``azure_exact`` -> the same numbers, question by question.
"""
from __future__ import annotations

import json
import logging
import math
import random

import pytest
from test_azure_retrieval_metrics import KEYS, evaluator_class, same

from evaluation.errors import EvaluationError
from evaluation.report.azure_rows import evaluator_rows, read_evaluator_rows, write_evaluator_rows
from evaluation.scoring.azure_retrieval import LabelRange, azure_corrected, azure_exact, mean_scores
from evaluation.measures import Measure


def random_run(seed: int, questions: int = 40) -> tuple[dict[str, list[str]], dict[str, dict[str, int]]]:
    """A setup's results (document ids best first, a document repeated where its later chunks came back)
    and graded labels 0-4, with unlabelled documents retrieved and some questions that found nothing."""
    rng = random.Random(seed)
    results, labels = {}, {}
    for q in range(questions):
        docs = [f"doc{d}.md" for d in rng.sample(range(30), 12)]
        labels[f"q{q}"] = {d: rng.randint(0, 4) for d in docs[: rng.randint(1, 6)]}
        if rng.random() < 0.1:
            continue  # nothing came back
        results[f"q{q}"] = [rng.choice(docs) for _ in range(rng.randint(1, 10))]
    return results, labels


def test_results_are_written_once_a_document_with_scores_made_from_the_rank(caplog):
    results = {"q1": ["a.md", "b.md", "a.md", "z.md"], "q9": ["a.md"]}  # a.md's second chunk came 3rd
    labels = {"q1": {"a.md": 4, "b.md": 0}, "q2": {"c.md": 1}, "q3": {}}
    with caplog.at_level(logging.WARNING):
        rows = evaluator_rows(results, labels)
    assert rows == [
        {"query_id": "q1",
         "retrieval_ground_truth": [{"document_id": "a.md", "query_relevance_label": 4},
                                    {"document_id": "b.md", "query_relevance_label": 0}],
         "retrieved_documents": [{"document_id": "a.md", "relevance_score": 3.0},  # 3 distinct documents: 3, 2, 1
                                 {"document_id": "b.md", "relevance_score": 2.0},
                                 {"document_id": "z.md", "relevance_score": 1.0}]},
        {"query_id": "q2", "retrieval_ground_truth": [{"document_id": "c.md", "query_relevance_label": 1}],
         "retrieved_documents": []},  # labelled, nothing came back; q3 has no labels, so no row
    ]
    assert "q9" in caplog.text  # results without labels are left out, and said so


def test_the_written_file_holds_ids_and_numbers_only(tmp_path):
    path = write_evaluator_rows(evaluator_rows(*random_run(1)), tmp_path / "rows.jsonl")
    for line in path.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        assert set(row) == {"query_id", "retrieval_ground_truth", "retrieved_documents"}
        assert all(set(item) == {"document_id", "query_relevance_label"} for item in row["retrieval_ground_truth"])
        assert all(set(item) == {"document_id", "relevance_score"} for item in row["retrieved_documents"])


@pytest.mark.parametrize("seed", [3, 4])
def test_our_rows_scored_by_the_evaluator_equal_our_rows_read_back_and_scored_here(tmp_path, monkeypatch, seed):
    evaluator = evaluator_class()
    from azure.ai.evaluation import evaluate

    path = write_evaluator_rows(evaluator_rows(*random_run(seed)), tmp_path / "rows.jsonl")
    monkeypatch.chdir(tmp_path)  # whatever evaluate() leaves behind stays in the test's folder
    out = evaluate(data=str(path), evaluators={"retrieval": evaluator()})
    theirs = {row["inputs.query_id"]: row["outputs.retrieval.document_retrieval_properties"] for row in out["rows"]}
    read = read_evaluator_rows(path)
    ours = {row.query_id: azure_exact(row.labels, row.retrieved) for row in read}
    assert len(ours) == len(theirs) > 30
    for qid, scores in ours.items():
        properties = scores.properties()
        assert all(same(properties[k], theirs[qid][k]) for k in KEYS), (qid, properties, theirs[qid])
    # the evaluator's one aggregate number is the mean nDCG@3
    mean = mean_scores(ours.values())[Measure("azure.ndcg", 3)]
    assert mean == pytest.approx(out["metrics"]["retrieval.document_retrieval"], abs=1e-9)


def test_the_rows_keep_the_runs_order_so_the_evaluators_ranking_is_the_runs(tmp_path):
    results, labels = random_run(5)
    read = read_evaluator_rows(write_evaluator_rows(evaluator_rows(results, labels), tmp_path / "rows.jsonl"))
    for row in read:
        # the exact form ranks by score; on our rows that is the run's order, each document at its first place,
        # so its rank-based numbers equal the corrected ones on the run itself (repeats and all)
        exact = azure_exact(row.labels, row.retrieved).properties()
        run = [(doc_id, 0.0) for doc_id in results.get(row.query_id, [])]
        corrected = azure_corrected(labels[row.query_id], run, 3).properties()
        for mine, theirs in (("ndcg@3", "ndcg@3"), ("xdcg@3", "xdcg@3"), ("top1_relevance", "top1_relevance"),
                             ("top3_max_relevance", "max_relevance@3")):
            assert same(exact[mine], corrected[theirs]), (row.query_id, mine)


def test_rows_written_by_hand_read_as_the_evaluator_reads_them(tmp_path):
    evaluator = evaluator_class()(ground_truth_label_min=0, ground_truth_label_max=12)
    rows = [
        # ties, an unlabelled document, a document listed twice, a label repeated with the same grade
        {"query_id": "a", "query": "text that is not kept",
         "retrieval_ground_truth": [{"document_id": "1", "query_relevance_label": 10},
                                    {"document_id": "2", "query_relevance_label": 2},
                                    {"document_id": "2", "query_relevance_label": 2}],
         "retrieved_documents": [{"document_id": "3", "relevance_score": 5}, {"document_id": "2", "relevance_score": 5},
                                 {"document_id": "1", "relevance_score": 9.5},
                                 {"document_id": "3", "relevance_score": 1}]},
        {"retrieval_ground_truth": [{"document_id": "x", "query_relevance_label": 0}], "retrieved_documents": []},
    ]
    path = tmp_path / "mine.jsonl"
    path.write_text("# written by hand\n\n" + "".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    read = read_evaluator_rows(path, label_range=LabelRange(0, 12))
    assert [r.query_id for r in read] == ["a", "q4"]  # no query_id: q<line>
    assert read[0].labels == {"1": 10, "2": 2} and len(read[0].retrieved) == 4  # repeats in the list are kept
    for row, written in zip(read, rows, strict=True):
        theirs = evaluator(retrieval_ground_truth=written["retrieval_ground_truth"],
                           retrieved_documents=written["retrieved_documents"])["document_retrieval_properties"]
        ours = azure_exact(row.labels, row.retrieved, LabelRange(0, 12)).properties()
        assert all(same(ours[k], theirs[k]) for k in KEYS), (ours, theirs)


# -- bad rows: every one named with its line and the fix -------------------------------------------------

GOOD_LABELS = '[{"document_id": "a", "query_relevance_label": 2}]'


@pytest.mark.parametrize("line, says", [
    ('{"retrieval_ground_truth": [{"document_id": "a", "query_relevance_label": 5}], "retrieved_documents": []}',
     'item 1 ("a"): label 5 is above the label range 0-4; give the range that holds it'),
    ('{"retrieval_ground_truth": [{"document_id": "a", "query_relevance_label": 2.0}], "retrieved_documents": []}',
     "must be written as a whole number, 2, not 2.0"),
    ('{"retrieval_ground_truth": [{"document_id": "a", "query_relevance_label": true}], "retrieved_documents": []}',
     "query_relevance_label must be a whole number, not true"),
    ('{"retrieval_ground_truth": [{"document_id": "a"}], "retrieved_documents": []}',
     'needs "query_relevance_label"'),
    ('{"retrieval_ground_truth": [{"document_id": 7, "query_relevance_label": 2}], "retrieved_documents": []}',
     "document_id must be non-empty text, not 7; write the id in quotes"),
    ('{"retrieval_ground_truth": [], "retrieved_documents": []}',
     "retrieval_ground_truth must be a non-empty list (the evaluator refuses a question without labels)"),
    (f'{{"retrieval_ground_truth": {GOOD_LABELS}}}', 'needs "retrieved_documents", a list that may be empty ([])'),
    (f'{{"retrieval_ground_truth": {GOOD_LABELS}, "retrieved_document": []}}',
     '"retrieved_document" is not a field. Did you mean "retrieved_documents"?'),
    ((f'{{"retrieval_ground_truth": {GOOD_LABELS}, "retrieved_documents": [{{"document_id": "a", '
      '"relevance_score": "high"}, {"document_id": "b"}]}'),
     'item 1 ("a"): relevance_score must be a number, not a string (and 1 more item(s) of the list with a problem)'),
    (('{"retrieval_ground_truth": [{"document_id": "a", "query_relevance_label": 2}, {"document_id": "a", '
      '"query_relevance_label": 3}], "retrieved_documents": []}'),
     'item 2: "a" is labelled 2 in item 1 and 3 here; keep one label a document'),
    (f'{{"query_id": 7, "retrieval_ground_truth": {GOOD_LABELS}, "retrieved_documents": []}}',
     'query_id must be non-empty text, not a number; write it in quotes, as "q1"'),
    (f'{{"retrieval_ground_truth": {GOOD_LABELS}, "retrieved_documents": [], "rank_among": "chunks"}}',
     'rank_among must be one of "results", "documents" (how the list reads a rank), not "chunks"'),
    (f'{{"retrieval_ground_truth": {GOOD_LABELS}, "retrieved_documents": [], "rank_amongst": "results"}}',
     '"rank_amongst" is not a field. Did you mean "rank_among"?'),
    ("[1, 2]", "a list, not a row; a row is one JSON object like"),
    ("{not json", "not valid JSON"),
])
def test_a_bad_row_is_refused_with_its_file_line_and_fix(tmp_path, line, says):
    path = tmp_path / "rows.jsonl"
    good = f'{{"query_id": "ok", "retrieval_ground_truth": {GOOD_LABELS}, "retrieved_documents": []}}'
    path.write_text(f"{good}\n{line}\n", encoding="utf-8")
    with pytest.raises(EvaluationError) as refused:
        read_evaluator_rows(path)
    message = str(refused.value)
    assert message.startswith(f"{path}: 1 line cannot be read as Document Retrieval rows:")
    assert "  line 2: " in message and says in message, message


def test_a_question_twice_is_refused_naming_its_first_line(tmp_path):
    row = f'{{"query_id": "q1", "retrieval_ground_truth": {GOOD_LABELS}, "retrieved_documents": []}}'
    path = tmp_path / "rows.jsonl"
    path.write_text(f"{row}\n{row}\n", encoding="utf-8")
    with pytest.raises(EvaluationError, match='line 2: query_id "q1" is already on line 1; give each question one row'):
        read_evaluator_rows(path)


def test_rows_read_two_ways_in_one_file_are_refused_naming_the_first_line_of_the_other(tmp_path):
    row = '{{"query_id": "{}", "retrieval_ground_truth": {}, "retrieved_documents": [], "rank_among": "{}"}}'
    path = tmp_path / "rows.jsonl"
    path.write_text("\n".join([row.format("q1", GOOD_LABELS, "results"), row.format("q2", GOOD_LABELS, "results"),
                               row.format("q3", GOOD_LABELS, "documents")]) + "\n", encoding="utf-8")
    with pytest.raises(EvaluationError, match='line 3: rank_among is "documents" here and "results" on line 1; rows '
                                              "read two ways cannot be scored together"):
        read_evaluator_rows(path)


def test_whole_file_mistakes_are_said_once(tmp_path):
    path = tmp_path / "rows.json"
    row = {"retrieval_ground_truth": json.loads(GOOD_LABELS), "retrieved_documents": []}
    path.write_text(json.dumps([row, row], indent=2), encoding="utf-8")
    with pytest.raises(EvaluationError, match="one JSON array of 2 items, not one JSON object per line"):
        read_evaluator_rows(path)
    with pytest.raises(EvaluationError, match=r'no such file. Did you mean ".*rows.json"\?'):
        read_evaluator_rows(tmp_path / "rows.jsn")
    (tmp_path / "empty.jsonl").write_text("# nothing yet\n", encoding="utf-8")
    with pytest.raises(EvaluationError, match="no rows; write one JSON object a line"):
        read_evaluator_rows(tmp_path / "empty.jsonl")


def test_labels_are_checked_against_the_range_given(tmp_path):
    path = tmp_path / "rows.jsonl"
    path.write_text('{"retrieval_ground_truth": [{"document_id": "a", "query_relevance_label": 12}], '
                    '"retrieved_documents": [{"document_id": "a", "relevance_score": 1}]}\n', encoding="utf-8")
    with pytest.raises(EvaluationError, match="label 12 is above the label range 0-4"):
        read_evaluator_rows(path)
    (row,) = read_evaluator_rows(path, label_range=LabelRange(0, 12))
    assert row.labels == {"a": 12} and row.retrieved == (("a", 1),) and not math.isnan(
        azure_exact(row.labels, row.retrieved, LabelRange(0, 12)).values[2])
