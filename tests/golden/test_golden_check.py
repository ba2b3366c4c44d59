"""check_golden: one fixture per failure mode, each with the exact line and the exact sentence."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from evaluation.engine.corpus import read_corpus
from evaluation.golden import check_golden

from conftest import run_cli

FIXTURES = Path(__file__).parent.parent / "fixtures" / "golden"
ONE_OBJECT = ('; each line must be one object like '
              '{"question": "How often are keys rotated?", "expected": ["report.pdf#page=41"]}')
NEEDS_EXPECTED = ('needs "expected", the documents that answer the question, '
                  'for example "expected": ["report.pdf#page=41"]')
EMPTY_QUESTION = ('"question" is empty; write the question (only a template row, which keeps its "hint", may leave it '
                  'empty)')
NO_DOCUMENTS = ("no question is ready: an Amazon Bedrock dataset names no documents, so none of its {} questions "
                'can be scored yet; label each with "expected", the documents that answer it')

# case -> (rows, ready, unfilled, drafts), errors [(line, message)], warnings [(line, message)]
CASES = {
    "valid": ((3, 3, 0, 0), [], []),
    "not_json": ((2, 1, 0, 0), [(2, "not valid JSON (Expecting ',' delimiter at column 74)" + ONE_OBJECT)], []),
    "not_object": ((2, 1, 0, 0), [(2, "a list, not an object" + ONE_OBJECT)], []),
    "unknown_field": ((3, 1, 0, 0), [
        (2, '"expeted" is not a field. Did you mean "expected"?'),
        (3,
         '"notes" is not a field. Fields are: id, question, expected, retrieval_ground_truth, reference, evidence, '
         'hint, draft.'),
    ], []),
    "missing_expected": ((3, 1, 0, 0), [
        (2, NEEDS_EXPECTED),
        (3, '"expected" is empty; name the documents that answer the question, '
            'for example "expected": ["report.pdf#page=41"]'),
    ], []),
    "empty_question": ((3, 1, 0, 0), [(2, EMPTY_QUESTION), (3, EMPTY_QUESTION)], []),
    "wrong_type": ((4, 1, 0, 0), [
        (2, '"expected" must be a list, not a string; for example "expected": ["backup.md"]'),
        (3, '"draft" must be true or false, not a string; for example "draft": true'),
        (4, '"id" must be a string, not a number; for example "id": "q7"'),
        (4, '"expected" item 2 must be a string, not a number; for example "report.pdf#page=41"'),
    ], []),
    "bad_page": ((3, 1, 0, 0), [
        (2, 'in "expected", "backup.md#page=0" names page 0; pages count from 1, as in "backup.md#page=1"'),
        (3, 'in "expected", "audit.md#page=two" has no page number after "#page="; '
            'write a whole number from 1, as in "audit.md#page=41"'),
    ], []),
    "duplicate_expected": ((2, 1, 0, 0), [
        (2, '"backup.md" is in "expected" twice; name each document or page once'),
    ], []),
    "duplicate_id": ((4, 2, 0, 0), [
        (3, 'id "keys" is used again (first on line 1); give each question its own id'),
        (4, 'id "q2" is used again (first on line 2); give each question its own id'),
    ], []),
    "duplicate_question": ((3, 2, 0, 0), [
        (3, 'the same question as line 1; ask each question once (merge their "expected")'),
    ], []),
    "no_question_ready": ((2, 0, 1, 0), [
        (2, NEEDS_EXPECTED),
        (None, 'no question is ready (1 row with errors and 1 template row waiting for a question); '
               'fix or fill at least one row so it has a "question" and "expected"'),
    ], [
        (None, '1 template row waiting for a question (line 1); write a "question" in each, '
               "or delete the rows you do not need"),
    ]),
    "empty": ((0, 0, 0, 0), [
        (None, 'the file is empty; write one question per line, like {"question": "How often are keys rotated?", '
               '"expected": ["report.pdf#page=41"]}, or start from a template: '
               "python3 -m evaluation golden template --corpus CORPUS --out golden.jsonl"),
    ], []),
    "template_rows": ((4, 1, 3, 0), [], [
        (None, '3 template rows waiting for a question (lines 1, 3-4); write a "question" in each, '
               "or delete the rows you do not need"),
    ]),
    "drafts": ((3, 3, 0, 1), [], [
        (None, '1 draft question not checked yet (line 2); check each one and remove "draft": true'),
    ]),
    "short_evidence": ((2, 2, 0, 0), [], [
        (1, 'evidence quote "90 days" has fewer than three words, so it is not used; '
            "quote at least three words of the document"),
        (2, 'evidence quote "West Europe" has fewer than three words, so it is not used; '
            "quote at least three words of the document"),
    ]),
    # a file that reads, but in which no question can be scored, is not ready to run: an error
    "bedrock": ((2, 0, 0, 0), [(None, NO_DOCUMENTS.format(3))], []),
    "bedrock_no_documents": ((2, 0, 0, 0), [(None, NO_DOCUMENTS.format(2))], []),
    "bedrock_bad_turns": ((5, 0, 0, 0), [
        (2, '"conversationTurn" is not a field. Did you mean "conversationTurns"?'),
        (3, 'turn 2 needs a prompt like "prompt": {"content": [{"text": "How often are keys rotated?"}]}'),
        (4, 'turn 1 has an empty prompt; write the question in its "text"'),
        (4, 'turn 1: "referenceResponses" must be a list like [{"content": [{"text": "Every 90 days."}]}]'),
        (5, "a golden-file row, but the file's first row is an Amazon Bedrock row; keep one format per file"),
        (None, "no question is ready: an Amazon Bedrock dataset names no documents, so its question cannot be "
               'scored yet; label each with "expected", the documents that answer it'),
    ], []),
    "bom": ((2, 2, 0, 0), [], []),
    "blank_lines": ((2, 1, 0, 0), [
        (5, 'in "expected", "backup.md#page=0" names page 0; pages count from 1, as in "backup.md#page=1"'),
    ], []),
    "five_mistakes": ((7, 2, 0, 0), [
        (2, "not valid JSON (Expecting ',' delimiter at column 74)" + ONE_OBJECT),
        (3, '"expeted" is not a field. Did you mean "expected"?'),
        (4, 'in "expected", "regions.md#page=0" names page 0; pages count from 1, as in "regions.md#page=1"'),
        (5, 'the same question as line 1; ask each question once (merge their "expected")'),
        (6, '"draft" must be true or false, not a string; for example "draft": true'),
    ], []),
}


def test_every_fixture_has_a_case_and_every_case_a_fixture():
    assert {p.stem for p in FIXTURES.glob("*.jsonl")} == set(CASES)


@pytest.mark.parametrize("case", sorted(CASES))
def test_check_reports_each_problem_with_its_exact_line_and_sentence(case):
    (rows, ready, unfilled, drafts), errors, warnings = CASES[case]
    result = check_golden(FIXTURES / f"{case}.jsonl").to_dict()
    assert [(e["line"], e["message"]) for e in result["errors"]] == errors
    assert [(w["line"], w["message"]) for w in result["warnings"]] == warnings
    assert (result["rows"], result["ready"], result["unfilled"], result["drafts"]) == (rows, ready, unfilled, drafts)
    assert result["ok"] is (not errors)


def test_to_dict_has_exactly_the_documented_keys_and_is_plain_json():
    result = check_golden(FIXTURES / "five_mistakes.jsonl").to_dict()
    assert list(result) == ["ok", "rows", "ready", "unfilled", "drafts", "errors", "warnings"]
    assert all(set(item) == {"line", "message"} for item in result["errors"] + result["warnings"])
    assert json.loads(json.dumps(result)) == result


def test_missing_file_is_an_error_entry_with_no_line_not_an_exception(tmp_path):
    missing = tmp_path / "golden.jsonl"
    result = check_golden(missing)
    assert not result.ok
    assert result.to_dict()["errors"] == [{
        "line": None,
        "message": f"{missing}: no such golden file. Start one from your corpus with: "
                   f"python3 -m evaluation golden template --corpus CORPUS --out {missing}",
    }]
    assert "Traceback" not in result.summary()


def test_a_folder_given_as_the_golden_file_is_an_error_entry(tmp_path):
    result = check_golden(tmp_path)
    assert [e.line for e in result.errors] == [None]
    assert result.errors[0].message.startswith(f"{tmp_path}: cannot read the golden file (")


def test_summary_names_the_counts_and_every_problem_with_its_line():
    summary = check_golden(FIXTURES / "five_mistakes.jsonl").summary()
    assert summary.splitlines()[0] == f"{FIXTURES / 'five_mistakes.jsonl'}: 7 rows, 2 questions ready."
    assert "5 errors; fix them and check again:" in summary
    assert '  line 3: "expeted" is not a field. Did you mean "expected"?' in summary
    assert summary.endswith("Not ready to run.")
    assert check_golden(FIXTURES / "valid.jsonl").summary().endswith("Ready to run.")


def test_a_field_given_twice_in_one_row_is_an_error(tmp_path):
    path = tmp_path / "golden.jsonl"
    path.write_text('{"question": "Why?", "expected": ["a.md"], "expected": ["b.md"]}\n', encoding="utf-8")
    assert [(e.line, e.message) for e in check_golden(path).errors][0] == (1, '"expected" is given twice; keep one')


def test_an_id_taken_by_default_names_the_line_that_took_it(tmp_path):
    path = tmp_path / "golden.jsonl"
    path.write_text('{"id": "q2", "question": "Why?", "expected": ["a.md"]}\n'
                    '{"question": "How?", "expected": ["a.md"]}\n', encoding="utf-8")
    assert [(e.line, e.message) for e in check_golden(path).errors] == [
        (2, 'id "q2" (the default for line 2) is already used on line 1; give this row its own "id"')]


# --- with a corpus or an index target -------------------------------------------------------------

def write_corpus(tmp_path: Path) -> Path:
    path = tmp_path / "corpus.jsonl"
    rows = [{"id": "security.pdf", "text": "Cover\fKeys are rotated.\fKeys are rotated every 90 days."},
            {"id": "backup.md", "text": "Backups run nightly in two regions."}]
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


def test_expected_documents_the_corpus_does_not_hold_are_warned_with_their_row(tmp_path):
    golden = tmp_path / "golden.jsonl"
    golden.write_text('{"question": "How often are keys rotated?", "expected": ["security.pdf#page=3"]}\n'
                      '{"question": "Where are backups?", "expected": ["backup.md", "regions.md", "dr.md#page=2"]}\n'
                      '{"question": "Who holds the keys?", "expected": ["security.pdf#page=9"]}\n', encoding="utf-8")
    result = check_golden(golden, read_corpus(write_corpus(tmp_path)))
    assert result.ok
    assert [(w.line, w.message) for w in result.warnings] == [
        (2, '"regions.md", "dr.md" are not in the corpus; check the id, or add the document'),
        (3, '"security.pdf#page=9" is past the last page of "security.pdf" (3 pages); check the page number'),
        # line 3's one label is never found as written, so 1 of 3 questions scores 0 in every setup
        (None, "1 of 3 questions (33%, more than 20%) names nothing the corpus holds as a run can find it: they "
               "score 0 in every setup, so the picks rest on the other 2; check their labels (the warnings above "
               "say why)"),
    ]


def test_an_index_target_is_asked_once_with_every_expected_document(tmp_path):
    asked = []

    class Target:  # the shape of an index target: holds(ids) -> the ids it holds
        def holds(self, ids: set[str]) -> set[str]:
            asked.append(set(ids))
            return ids & {"security.pdf"}

    golden = tmp_path / "golden.jsonl"
    golden.write_text('{"question": "How often are keys rotated?", "expected": ["security.pdf#page=3"]}\n'
                      '{"question": "Where are backups?", "expected": ["backup.md"]}\n', encoding="utf-8")
    result = check_golden(golden, Target(), unfound_share=1)  # the line warnings alone, not the share (1 of 2)
    assert asked == [{"security.pdf", "backup.md"}]
    assert [(w.line, w.message) for w in result.warnings] == [
        (2, '"backup.md" is not in the index; check the id, or add the document')]


def test_any_object_with_ids_serves_as_the_corpus(tmp_path):
    class Ids:
        ids = frozenset({"backup.md"})

    result = check_golden(FIXTURES / "valid.jsonl", Ids(), unfound_share=1)
    assert [w.line for w in result.warnings] == [1, 2, 3]


def test_a_file_whose_questions_have_no_expected_is_not_ready_and_says_so():
    summary = check_golden(FIXTURES / "bedrock.jsonl").summary()
    assert "1 error; fix it and check again:" in summary
    assert summary.endswith("Not ready to run.")


# --- labels that cannot be found as written ---------------------------------------------------------

LABELS = ('{"question": "What is on the cover?", "expected": ["backup.md#page=1"]}\n'
          '{"question": "Which chunk says it?", "expected": ["backup.md:0"]}\n'
          '{"question": "Where are the keys?", "expected": ["security.pdf#page=2", "backup.md"]}\n')


def test_a_page_of_a_document_without_pages_is_warned_even_page_one(tmp_path):
    golden = tmp_path / "golden.jsonl"
    golden.write_text(LABELS, encoding="utf-8")

    result = check_golden(golden, read_corpus(write_corpus(tmp_path)), unfound_share=1)

    assert [(w.line, w.message) for w in result.warnings] == [
        (1, '"backup.md#page=1" names a page of "backup.md", which has no pages (no form feed in its text), so it '
            'is never found as written; name "backup.md" alone'),
        (2, '"backup.md:0" is a chunk id, which a run at --by doc never finds as a document; name the document '
            '"backup.md", or judge by chunk (--by chunk)'),
    ]


@pytest.fixture
def index(tmp_path):
    from evaluation.engine.index import IndexSettings, build_index, open_index

    build_index(write_corpus(tmp_path), tmp_path / "index", IndexSettings(models=()))
    return open_index(tmp_path / "index")


def test_an_index_knows_pages_and_chunk_ids_at_every_grain(tmp_path, index):
    golden = tmp_path / "golden.jsonl"
    golden.write_text(LABELS + '{"question": "Which chunk of the cover?", "expected": ["security.pdf:0", '
                               '"security.pdf:9"]}\n',
                      encoding="utf-8")

    by_doc = [(w.line, w.message[:40]) for w in check_golden(golden, index, unfound_share=1).warnings]
    by_chunk = [(w.line, w.message[:40]) for w in check_golden(golden, index, by="chunk", unfound_share=1).warnings]

    assert by_doc == [(1, '"backup.md#page=1" names a page of "back'), (2, '"backup.md:0" is a chunk id, which a run'),
                      (4, '"security.pdf:0" is a chunk id, which a '), (4, '"security.pdf:9" is a chunk id, which a ')]
    assert by_chunk == [(1, '"backup.md#page=1" names a page, which a'),
                        (3, '"security.pdf#page=2" names a page, whic'),
                        (3, '"backup.md" is a document id, which a ru'),
                        (4, '"security.pdf:9" is not a chunk of the i')]


def test_golden_check_with_an_index_at_chunk_grain_on_the_command_line(tmp_path, index, capsys):
    golden = tmp_path / "golden.jsonl"
    golden.write_text('{"question": "Where are backups?", "expected": ["backup.md"]}\n'
                      '{"question": "Which chunk?", "expected": ["security.pdf:9"]}\n', encoding="utf-8")

    code, out, _ = run_cli(capsys, "golden", "check", str(golden), "--index", str(tmp_path / "index"), "--by", "chunk")

    # neither label is a chunk of the index, so a run at --by chunk could find nothing: an error, by name
    assert code == 1 and "no question can be scored: none of the 2 questions names a chunk the index holds" in out
    assert 'line 1: "backup.md" is a document id, which a run at --by chunk never finds' in out
    assert 'line 2: "security.pdf:9" is not a chunk of the index' in out  # only the index's chunks can tell


# --- the nearest-id hint names the id meant first (issue 46: a hand-made bug that no test caught) ------------

@pytest.mark.parametrize("given, held, meant", [
    # differs only in case, with ids closer in spelling as written (case kept) that fill the three places
    ("Guides/Keys.md", ["Guides/Key.md", "Guides/Keys.mdx", "Guides/Kays.md", "guides/keys.md"], "guides/keys.md"),
    # the extension left out, the most natural mistake with a folder corpus
    ("guide", ["guides.md", "guide1.md", "guide2.md", "guide.md"], "guide.md"),
    # the folder left out
    ("keys.md", ["keys.m", "keys.mdx", "key.md", "docs/keys.md"], "docs/keys.md"),
], ids=["case", "extension", "folder"])
def test_the_nearest_ids_name_the_id_meant_before_ids_close_in_spelling(given, held, meant):
    from evaluation.golden.check import nearest_ids

    found = nearest_ids(given, held)
    assert found[0] == meant and len(found) == 3  # then the closest by spelling, to fill the three places


def test_ragas_and_deepeval_field_names_are_mapped_to_ours_by_line(tmp_path):
    # a RAGAS SingleTurnSample with ids, then one with texts, then a DeepEval Golden: each foreign field says
    # what it is here, and a needed field a foreign name stands for is not asked for a second time
    rows = [{"user_input": "Where are keys kept?", "reference_context_ids": ["kv.md"]},
            {"user_input": "How often?", "reference_contexts": ["every 90 days"], "retrieved_contexts": ["x"],
             "response": "90 days"},
            {"input": "Who rotates them?", "expected_output": "The platform team", "retrieval_context": ["y"],
             "actual_output": "ops"}]
    path = tmp_path / "golden.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    said = [(p.line, p.message) for p in check_golden(path).errors]
    assert said[:2] == [(1, '"user_input" is RAGAS\'s name for "question": rename it.'),
                        (1, '"reference_context_ids" is RAGAS\'s name for "expected": rename it (the ids of the '
                            'documents that answer the question).')]
    assert (2, '"reference_contexts" is RAGAS\'s name for "evidence": they are quotes: keep them as "evidence", and '
               'name the documents they come from in "expected", which a question needs.') in said
    assert (2, '"retrieved_contexts" is RAGAS\'s field for what a system retrieved; this tool retrieves for each '
               'question itself: remove it.') in said
    assert (2, NEEDS_EXPECTED) in said  # quotes are not the documents: "expected" is still asked for
    assert (3, '"input" is DeepEval\'s name for "question": rename it.') in said
    assert (3, '"expected_output" is DeepEval\'s name for "reference": rename it (the answer a person would '
               'accept).') in said
    assert not any('needs "question"' in message for _, message in said)
    assert not any("Did you mean" in message for _, message in said)  # no near spelling stands in for the map
