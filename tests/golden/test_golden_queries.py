"""An ElectriPy queries file (``id``, ``query``, ``relevant_ids``, ``metadata``) read as golden questions."""
from __future__ import annotations

from evaluation.golden import Question, check_golden_bytes, golden_from_bytes
from evaluation.golden.queries import chunk_document, chunk_labels_as_documents

QUERIES = (b'# their documented example, then one naming a document\n'
           b'{"id": "q1", "query": "hello", "relevant_ids": ["doc-1:0"]}\n'
           b'\n'
           b'{"id": "q2", "query": "key rotation", "relevant_ids": ["doc-2", "doc-3:4"], "metadata": {"t": 1}}\n')


def test_a_queries_file_reads_as_questions_with_relevant_ids_as_expected():
    golden = golden_from_bytes(QUERIES, "q.jsonl")
    assert golden.format == "queries" and golden.problems == ()
    assert golden.questions == (Question(id="q1", question="hello", expected=("doc-1:0",), line=2),
                                Question(id="q2", question="key rotation", expected=("doc-2", "doc-3:4"), line=4))


def test_golden_check_says_it_read_an_electripy_queries_file():
    check = check_golden_bytes(QUERIES, "q.jsonl")
    assert check.ok and check.ready == 2
    assert check.summary().splitlines()[0].startswith("q.jsonl (ElectriPy queries file")


def test_a_golden_row_in_a_queries_file_is_an_error_on_its_line_and_the_other_rows_stay():
    raw = QUERIES + b'{"question": "How often?", "expected": ["doc-2"]}\n'
    golden = golden_from_bytes(raw, "q.jsonl")
    assert [q.id for q in golden.questions] == ["q1", "q2"]
    assert [(p.line, p.message) for p in golden.problems] == [
        (5, "a golden-file row, but the file's first row is an ElectriPy queries row; keep one format per file")]


def test_a_queries_row_in_a_golden_file_is_an_error_on_its_line():
    raw = b'{"question": "How often?", "expected": ["doc-2"]}\n' + QUERIES
    golden = golden_from_bytes(raw, "g.jsonl")
    assert golden.format == "jsonl"
    assert [p.line for p in golden.problems] == [3, 5]
    assert all("an ElectriPy queries row, but the file's first row is a golden-file row" in p.message
               for p in golden.problems)


def test_each_mistake_of_a_queries_row_is_named_with_its_fix():
    raw = (b'{"id": "q1", "query": "hello", "relevant_ids": ["doc-1:0"]}\n'
           b'{"id": "", "query": " ", "relevant_ids": "doc-1", "metadata": 3, "relevant": 1}\n'
           b'{"id": "q3", "query": "twice", "relevant_ids": ["a", "a"]}\n'
           b'{"id": "q1", "query": "hello again", "relevant_ids": ["b"]}\n')
    messages = {(p.line, p.message.split(";")[0].split(",")[0]) for p in golden_from_bytes(raw, "q").problems}
    assert messages == {
        (2, '"relevant" is not a field. Did you mean "relevant_ids"?'),
        (2, '"id" must be a non-empty string'),
        (2, '"query" must be a non-empty string'),
        (2, '"relevant_ids" must be a non-empty list of chunk or document ids'),
        (2, '"metadata" must be an object'),
        (3, '"relevant_ids" names "a" twice'),
        (4, 'id "q1" is used again (first on line 1)'),
    }


def test_a_chunk_id_names_its_document_and_only_a_number_after_the_last_colon_makes_one():
    assert [chunk_document(x) for x in ("doc-1:0", "a:b:12", "doc-1", "doc:01", "doc:", ":3")] == \
        ["doc-1", "a:b", None, None, None, None]


def test_chunk_labels_are_judged_by_their_document_unless_a_document_has_that_name():
    questions = [Question(id="q1", question="x", expected=("doc-1:0", "doc-1:3", "notes:2")),
                 Question(id="q2", question="y", expected=("doc-2",))]
    documents = {"doc-1", "notes", "notes:2", "doc-2"}
    out, mapped = chunk_labels_as_documents(questions, lambda ids: documents & set(ids))
    assert mapped == {"doc-1:0": "doc-1", "doc-1:3": "doc-1"}
    assert [q.expected for q in out] == [("doc-1", "notes:2"), ("doc-2",)]


def test_a_graded_chunk_label_read_as_its_document_keeps_its_grade_the_higher_of_two():
    # judged by document, "doc-1:0" graded 3 makes doc-1 a grade-3 document (nDCG gains 3, as the golden
    # file said), not a grade-1 one; two chunks of one document give it the higher of their grades
    question = Question(id="q1", question="x", expected={"doc-1:0": 3, "doc-1:4": 2, "doc-2": 1, "doc-3": 0})
    out, _ = chunk_labels_as_documents([question], lambda ids: {"doc-1", "doc-2", "doc-3"} & set(ids))
    assert out[0].judgements == {"doc-1": 3, "doc-2": 1, "doc-3": 0}


def test_evaluate_takes_a_queries_file_says_so_and_judges_its_chunk_labels_by_document(tmp_path):
    import json
    import subprocess
    import sys
    from pathlib import Path

    corpus = tmp_path / "c.jsonl"
    corpus.write_text('{"id": "doc-1", "text": "Hello world. A greeting.", "source_uri": "memory://"}\n'
                      '{"id": "doc-2", "text": "Signing keys are rotated every 90 days.", "metadata": {"t": 1}}\n',
                      encoding="utf-8")
    queries = tmp_path / "q.jsonl"
    queries.write_text('{"id": "q1", "query": "hello", "relevant_ids": ["doc-1:7"]}\n'
                       '{"id": "q2", "query": "how often are signing keys rotated", "relevant_ids": ["doc-2"]}\n',
                       encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "evaluation", "evaluate", "--corpus", str(corpus), "--queries",
                           str(queries), "--models", "hash", "--only", "keyword", "--quiet", "--json",
                           "--index-dir", str(tmp_path / "idx")], cwd=Path(__file__).parent.parent.parent,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "as ElectriPy queries file" in done.stderr
    assert "1 relevant id names a chunk (doc-1:7 -> doc-1)" in done.stderr
    report = json.loads(done.stdout)
    keyword = next(s for s in report["setups"] if s["key"] == "local.keyword.bm25")
    assert keyword["summary"]["found"]["1"] == 2 / 2  # doc-1:7 names no chunk here, yet doc-1 is found first
