"""Valid input refused, bad input believed (issue 46): a chunk-grain golden file is checked against the chunks
the corpus will make, not its document ids; a grade written 2.0 is the whole number 2; every label problem is
found by line whether or not the JSON schema sees one; a document graded twice is refused in every form; a file
that is not UTF-8 is refused naming the encoding it looks like, or read as --encoding says; a topics .tsv with
--qrels reads in golden check as in evaluate; and the sentences about all-0 grades and labels no run can find
say what is wrong, with a command that runs."""
from __future__ import annotations

import json
import re
import shlex
import subprocess
from pathlib import Path

import pytest
from conftest import run_cli

from evaluation.golden import check_golden, read_golden
from evaluation.golden.qrels import read_qrels
from evaluation.golden.records import Question
from evaluation.errors import GoldenFileError

# "menu" is 80 words: one chunk at the index's default (200 words), six at --chunk-words 20 --overlap-words 5
MENU = " ".join(f"Word{i} soup bread fish." for i in range(20))
DOCUMENTS = [{"id": "menu", "text": MENU}, {"id": "hours", "text": "We open at eight and close at ten."}]


def write(path: Path, rows: list[dict] | str, encoding: str = "utf-8") -> Path:
    text = rows if isinstance(rows, str) else "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows)
    path.write_bytes(text.encode(encoding))
    return path


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    return write(tmp_path / "corpus.jsonl", DOCUMENTS)


def evaluate(capsys, tmp_path: Path, *argv: str) -> tuple[int, str, str]:
    """``evaluate`` on the hash model (no model to load), kept nowhere, its index in tmp_path."""
    return run_cli(capsys, "evaluate", *argv, "--models", "hash", "--no-save", "--quiet",
                   *(("--index-dir", str(tmp_path / "index")) if "--corpus" in argv else ()))


# -- 1. the grain is known before the index exists ---------------------------------------------------

CHUNK_GOLDEN = [{"question": "What soup is on the menu?", "expected": ["menu:0"]},
                {"question": "When do you open?", "expected": ["hours:0"]}]


def test_a_chunk_grain_file_runs_with_the_corpus_as_it_runs_with_the_index_built_from_it(tmp_path, corpus, capsys):
    golden = write(tmp_path / "golden.jsonl", CHUNK_GOLDEN)

    checked, out, _ = run_cli(capsys, "golden", "check", str(golden), "--corpus", str(corpus), "--by", "chunk")
    assert checked == 0 and "Ready to run." in out

    by_corpus, out, err = evaluate(capsys, tmp_path, "--corpus", str(corpus), "--golden", str(golden), "--by", "chunk",
                                   "--json")
    assert by_corpus == 0, err  # was: "no question names a chunk the corpus holds", before any index was built
    by_index, again, err = evaluate(capsys, tmp_path, "--index", str(tmp_path / "index"), "--golden", str(golden),
                                    "--by", "chunk", "--json")
    assert by_index == 0, err
    found = [{e["key"]: e["summary"]["counts"] for e in json.loads(text)["setups"]} for text in (out, again)]
    assert found[0] == found[1] and found[0]["local.keyword.bm25"]["10"] == 2  # both chunks found, both ways


def test_chunk_ids_are_checked_against_the_chunks_the_corpus_will_be_cut_into(tmp_path, corpus, capsys):
    golden = write(tmp_path / "golden.jsonl", [{"question": "What soup?", "expected": ["menu:3"]}])

    # at the default 200 words "menu" is one chunk: menu:3 names nothing, said before any index is built
    code, out, _ = run_cli(capsys, "golden", "check", str(golden), "--corpus", str(corpus), "--by", "chunk")
    assert code == 1 and 'line 1: "menu:3" is not a chunk of the corpus as its index will cut it' in out
    code, _, err = evaluate(capsys, tmp_path, "--corpus", str(corpus), "--golden", str(golden), "--by", "chunk")
    assert code == 1 and 'no question can be scored: none of the 1 question names a chunk the corpus holds ("menu:3"' \
        in err and not (tmp_path / "index").exists()

    # cut at 20 words it is the fourth of six chunks: the same file is ready, and runs
    small = ("--chunk-words", "20", "--overlap-words", "5")
    code, out, _ = run_cli(capsys, "golden", "check", str(golden), "--corpus", str(corpus), "--by", "chunk", *small)
    assert code == 0 and "Ready to run." in out
    code, _, err = evaluate(capsys, tmp_path, "--corpus", str(corpus), "--golden", str(golden), "--by", "chunk", *small)
    assert code == 0, err


# -- 2. golden rows ------------------------------------------------------------------------------------

def test_a_whole_number_grade_written_with_a_point_is_that_number(tmp_path, corpus, capsys):
    golden = write(tmp_path / "golden.jsonl", [
        {"question": "What soup is on the menu?", "expected": {"menu": 2.0, "hours": 0.0}},
        {"question": "When do you open?", "retrieval_ground_truth": [{"document_id": "hours",
                                                                      "query_relevance_label": 3.0}]}])

    read = read_golden(golden)
    assert [q.judgements for q in read.questions] == [{"menu": 2, "hours": 0}, {"hours": 3}]
    assert all(type(grade) is int for q in read.questions for grade in q.judgements.values())
    assert Question("q", expected={"a": 2.0}).grades == (("a", 2),)
    code, _, err = evaluate(capsys, tmp_path, "--corpus", str(corpus), "--golden", str(golden))
    assert code == 0 and "this is a bug" not in err  # was: ValueError ... not 2.0, "this is a bug"
    qrels = write(tmp_path / "qrels.txt", "q1 0 menu 2.0\nq1 0 hours 0.00\n")
    assert read_qrels(qrels).labels == {"q1": {"menu": 2, "hours": 0}}


@pytest.mark.parametrize("grade", [2.5, -1.0, 1001.0, True, "2"])
def test_a_grade_that_is_no_whole_number_from_0_to_1000_is_still_refused_by_line(tmp_path, grade):
    golden = write(tmp_path / "golden.jsonl", [{"question": "Why?", "expected": {"menu": grade}}])

    errors = [(e.line, e.message) for e in check_golden(golden).errors if e.line]
    assert errors == [(1, 'the grade of "menu" in "expected" must be a whole number from 0 (judged, not relevant) '
                          f'to 1000, not {json.dumps(grade)}; for example "expected": {{"report.pdf#page=41": 3, '
                          '"report.pdf": 1, "faq.md": 0}')]


def test_label_problems_are_found_on_a_row_the_schema_passes_and_beside_another_mistake(tmp_path):
    golden = write(tmp_path / "golden.jsonl", [
        # the schema passes this row: each item is an object, and two objects differ by their grade
        {"question": "When?", "retrieval_ground_truth": [{"document_id": "hours", "query_relevance_label": 1},
                                                         {"document_id": "hours", "query_relevance_label": 3}]},
        # and this one breaks it elsewhere: its labels' mistake is said too, so both are fixed in one go
        {"question": "What?", "draft": "yes", "retrieval_ground_truth": [
            {"document_id": "menu", "query_relevance_label": 2}, {"document_id": "menu", "query_relevance_label": 2}]},
    ])

    errors = [(e.line, e.message) for e in check_golden(golden).errors if e.line]
    assert (1, '"hours" is graded twice in "retrieval_ground_truth"; grade each document or page once') in errors
    assert (2, '"menu" is graded twice in "retrieval_ground_truth"; grade each document or page once') in errors
    assert (2, '"draft" must be true or false, not a string; for example "draft": true') in errors
    with pytest.raises(GoldenFileError, match='graded twice in "retrieval_ground_truth"'):
        from evaluation.golden.check import explain_problems, run_problems

        read = read_golden(golden)
        raise GoldenFileError(explain_problems(read.source, run_problems(read)))


@pytest.mark.parametrize("text, says", [
    ('{"question": "Q?", "expected": {"a.md": 1, "a.md": 2}}', '"a.md" is graded twice in "expected"'),
    ('{"question": "Q?", "expected": ["a.md", "a.md"]}', '"a.md" is in "expected" twice'),
    ('{"question": "Q?", "retrieval_ground_truth": [{"document_id": "a.md", "query_relevance_label": 1}, '
     '{"document_id": "a.md", "query_relevance_label": 2}]}', '"a.md" is graded twice in "retrieval_ground_truth"'),
    ('{"id": "q2", "query": "Q?", "relevant_ids": ["a.md:0", "a.md:0"]}', '"relevant_ids" names "a.md:0" twice'),
], ids=["expected object", "expected list", "ground-truth list", "queries file"])
def test_a_document_graded_twice_is_refused_by_line_in_every_form(tmp_path, text, says):
    first = ('{"id": "q1", "query": "First?", "relevant_ids": ["b.md"]}' if '"query"' in text
             else '{"question": "First?", "expected": ["b.md"]}')  # one format per file
    golden = write(tmp_path / "golden.jsonl", first + "\n" + text + "\n")

    result = check_golden(golden)
    assert not result.ok and any(e.line == 2 and says in e.message for e in result.errors)


def test_a_document_judged_twice_for_a_question_in_qrels_is_refused_by_line(tmp_path):
    with pytest.raises(GoldenFileError, match='line 2: "a.md" is judged again for "q1" \\(first on line 1\\)'):
        read_qrels(write(tmp_path / "qrels.txt", "q1 0 a.md 1\nq1 0 a.md 3\n"))


# -- encodings -----------------------------------------------------------------------------------------

def test_a_golden_file_in_windows_1252_is_refused_naming_it_and_read_with_encoding(tmp_path, capsys):
    golden = write(tmp_path / "golden.jsonl", [{"question": "Où est le café?", "expected": ["menu"]}], "cp1252")

    code, out, _ = run_cli(capsys, "golden", "check", str(golden))
    assert code == 1 and ('line 1: not UTF-8 text (byte 16 of the line); save the file as UTF-8: it reads as '
                          'Windows-1252 or Latin-1 ("Où"), so iconv -f CP1252 -t UTF-8 FILE > NEW does it') in out
    code, out, _ = run_cli(capsys, "golden", "check", str(golden), "--encoding", "cp1252")
    assert code == 0 and "Ready to run." in out
    assert read_golden(golden, encoding="cp1252").questions[0].question == "Où est le café?"
    with pytest.raises(SystemExit):
        run_cli(capsys, "golden", "check", str(golden), "--encoding", "klingon")
    assert '"klingon" is not a text encoding Python knows' in capsys.readouterr().err
    # in the library too: a codec that is no text encoding (rot13 turns text into text) is a sentence, not a crash
    with pytest.raises(GoldenFileError, match='"rot13" is not a text encoding Python knows'):
        read_golden(golden, encoding="rot13")
    assert 'golden.jsonl: "base64" is not a text encoding' in str(check_golden(golden, encoding="base64").errors[0])


def test_topics_and_qrels_in_latin_1_are_refused_by_line_never_read_with_replacement_characters(tmp_path, capsys):
    topics = write(tmp_path / "topics.tsv", "q1\tWhat soup?\nq2\tQuand ouvre le café?\n", "latin-1")
    qrels = write(tmp_path / "qrels.txt", "q1 0 menu 1\nq2 0 hours 1\n")

    said = ('topics.tsv: line 2: not UTF-8 text (byte 22 of the line); save the file as UTF-8: it reads as '
            'Windows-1252 or Latin-1 ("café?")')
    with pytest.raises(GoldenFileError, match=re.escape(said)):
        read_golden(topics, qrels=qrels)  # was: read as "caf\ufffd?", another question, without a word
    latin_qrels = write(tmp_path / "qrels-latin.txt", "q1 0 menu 1\nq2 0 caf\xe9.md 1\n", "latin-1")
    said = ('qrels-latin.txt: line 2: not UTF-8 text (byte 9 of the line); save the file as UTF-8: it reads as '
            'Windows-1252 or Latin-1 ("café.md")')
    with pytest.raises(GoldenFileError, match=re.escape(said)):
        read_qrels(latin_qrels)
    assert read_qrels(latin_qrels, encoding="latin-1").labels["q2"] == {"café.md": 1}

    read = read_golden(topics, qrels=qrels, encoding="latin-1")
    assert [q.question for q in read.questions] == ["What soup?", "Quand ouvre le café?"]
    code, out, _ = run_cli(capsys, "golden", "check", str(topics), "--qrels", str(qrels), "--encoding", "latin-1")
    assert code == 0 and "2 questions ready" in out

    # the command the sentence gives, run as given, makes the file that reads
    fixed = tmp_path / "fixed.tsv"
    with pytest.raises(GoldenFileError) as refused:
        read_golden(topics, qrels=qrels)
    command = str(refused.value).rsplit("so ", 1)[1].removesuffix(" does it")
    subprocess.run(command.replace("FILE", shlex.quote(str(topics))).replace("NEW", shlex.quote(str(fixed))),
                   shell=True, check=True)
    assert read_golden(fixed, qrels=qrels).questions[1].question == "Quand ouvre le café?"


# -- topics .tsv with --qrels: golden check reads it as evaluate and score do ----------------------------

def test_golden_check_reads_a_topics_tsv_with_qrels_as_evaluate_and_score_read_it(tmp_path, corpus, capsys):
    topics = write(tmp_path / "topics.tsv", "q1\tWhat soup is on the menu?\nq2\tWhen do you open?\n")
    qrels = write(tmp_path / "qrels.txt", "q1 0 menu 2\nq2 0 hours 1\n")

    code, out, err = run_cli(capsys, "golden", "check", str(topics), "--qrels", str(qrels))
    assert code == 0 and "2 rows, 2 questions ready." in out and "Ready to run." in out, err
    checked = check_golden(topics, qrels=qrels).golden
    assert checked is not None and checked.questions == read_golden(topics, qrels=qrels).questions
    code, _, err = evaluate(capsys, tmp_path, "--corpus", str(corpus), "--golden", str(topics), "--qrels", str(qrels))
    assert code == 0, err


# -- 4. sentences that send people the wrong way --------------------------------------------------------

def test_qrels_grading_everything_0_say_so_and_advise_a_golden_check_that_runs(tmp_path, corpus, capsys):
    topics = write(tmp_path / "topics.tsv", "q1\tWhat soup is on the menu?\nq2\tWhen do you open?\n")
    qrels = write(tmp_path / "qrels.txt", "q1 0 menu 0\nq2 0 hours 0\n")

    code, _, err = evaluate(capsys, tmp_path, "--corpus", str(corpus), "--golden", str(topics), "--qrels", str(qrels))
    assert code == 1
    said = ("no question is ready: every document judged for the 2 questions is graded 0 (judged, not relevant), so "
            "none has a document to find")
    assert said in err and 'has "expected" yet' not in err
    advised = re.search(r"`(python3 -m evaluation golden check [^`]+)` shows the same", err)
    assert advised, err
    argv = shlex.split(advised.group(1))[3:]
    assert argv == ["golden", "check", str(topics), "--qrels", str(qrels)]
    code, out, _ = run_cli(capsys, *argv)  # it parses (was "... topics.tsv with labels from qrels.txt": exit 2)
    assert code == 1 and said in out


def test_score_with_qrels_grading_everything_0_says_so_as_golden_check_does(tmp_path, capsys):
    topics = write(tmp_path / "topics.tsv", "q1\tWhat soup is on the menu?\nq2\tWhen do you open?\n")
    qrels = write(tmp_path / "qrels.txt", "q1 0 menu 0\nq2 0 hours 0\n")
    run = write(tmp_path / "run.trec", "q1 Q0 menu 1 2.0 bm25\nq2 Q0 hours 1 2.0 bm25\n")

    code, _, err = run_cli(capsys, "score", "--golden", str(topics), "--qrels", str(qrels), "--run", str(run))

    # was: "no question has expected documents yet ... fill in "expected"", though every question is judged
    assert code == 1 and ("no question is ready: every document judged for the 2 questions is graded 0 (judged, not "
                          "relevant), so none has a document to find") in err
    assert '"expected" and run again' not in err


def test_score_above_every_grade_asks_for_a_lower_min_grade_not_for_labels(tmp_path, capsys):
    topics = write(tmp_path / "topics.tsv", "q1\tWhat soup is on the menu?\n")
    qrels = write(tmp_path / "qrels.txt", "q1 0 menu 2\n")
    run = write(tmp_path / "run.trec", "q1 Q0 menu 1 2.0 bm25\n")

    code, _, err = run_cli(capsys, "score", "--golden", str(topics), "--qrels", str(qrels), "--run", str(run),
                           "--min-grade", "3")

    assert code == 1 and "no question has a document graded 3 or more" in err and "lower --min-grade" in err


def test_golden_check_is_not_ready_when_every_label_is_a_page_of_a_document_without_pages(tmp_path, corpus, capsys):
    golden = write(tmp_path / "golden.jsonl", [{"question": "What soup?", "expected": ["menu#page=2"]},
                                               {"question": "When?", "expected": ["hours#page=1"]}])

    code, out, _ = run_cli(capsys, "golden", "check", str(golden), "--corpus", str(corpus))
    assert code == 1 and "Ready to run." not in out and "Not ready to run." in out
    assert ("no question can be scored: none of the 2 questions names anything the corpus holds as a run at --by doc "
            'can find it, so every setup would find nothing; for example, line 1: "menu#page=2" names a page of '
            '"menu", which has no pages') in out
    code, _, err = evaluate(capsys, tmp_path, "--corpus", str(corpus), "--golden", str(golden))
    assert code == 1 and "no question can be scored" in err and not (tmp_path / "index").exists()
    # with an index built already, the run is refused the same way before any search (was: every setup found 0)
    built = run_cli(capsys, "index", str(corpus), "--out", str(tmp_path / "built"), "--models", "hash", "--quiet")
    assert built[0] == 0
    code, out, err = evaluate(capsys, tmp_path, "--index", str(tmp_path / "built"), "--golden", str(golden))
    assert code == 1 and out == "" and ('no question can be scored: none of the 2 questions names anything the index '
                                        'holds as a run at --by doc can find it') in err
