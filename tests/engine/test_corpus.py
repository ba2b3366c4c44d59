"""Reading a corpus: JSONL rows and folders of Markdown / text files, every problem by line."""
from __future__ import annotations

import json

import pytest

from evaluation.engine.corpus import check_corpus, read_corpus
from evaluation.errors import CorpusError


def test_a_folder_given_by_a_relative_path_reads_every_markdown_and_text_file(tmp_path, monkeypatch):
    (tmp_path / "docs" / "guide").mkdir(parents=True)
    (tmp_path / "docs" / "guide" / "install.md").write_text("# Install\n\nUse pip.\n", encoding="utf-8")
    (tmp_path / "docs" / "notes.txt").write_text("Plain words.\n", encoding="utf-8")
    (tmp_path / "docs" / "image.png").write_bytes(b"\x89PNG")
    (tmp_path / "docs" / ".hidden.md").write_text("# secret\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    corpus = read_corpus("docs")
    assert [d.id for d in corpus] == ["guide/install.md", "notes.txt"]
    assert corpus.get("guide/install.md").title == "Install"
    assert corpus.get("notes.txt").source_uri == (tmp_path / "docs" / "notes.txt").as_uri()


def test_a_jsonl_corpus_keeps_titles_metadata_and_pages(tmp_path):
    path = tmp_path / "c.jsonl"
    path.write_text(json.dumps({"id": "r.pdf", "text": "one\ftwo\fthree", "title": "R", "metadata": {"y": 1}}) + "\n",
                    encoding="utf-8")
    document = read_corpus(path).get("r.pdf")
    assert document.pages == ("one", "two", "three")
    assert document.metadata == {"y": 1} and document.title == "R"


def test_the_corpus_hash_is_of_its_bytes(tmp_path):
    import hashlib

    path = tmp_path / "c.jsonl"
    path.write_bytes(b'{"id": "a", "text": "x"}\n')
    assert read_corpus(path).sha256 == hashlib.sha256(path.read_bytes()).hexdigest()


def test_every_bad_row_is_reported_with_its_line_and_the_fix(tmp_path):
    path = tmp_path / "bad.jsonl"
    path.write_text('[1]\n{"id": 3, "text": ""}\n{"id": "ok", "text": "fine", "metadata": "x"}\n', encoding="utf-8")
    problems = [str(p) for p in check_corpus(path)]
    assert problems == [
        'line 1: not an object; each line must be one object like {"id": "a", "text": "..."}',
        'line 2: needs "id", a non-empty string, for example "id": "guide.md"',
        'line 2: needs "text", a non-empty string with the document\'s words',
        'line 3: "metadata" must be an object, for example "metadata": {"lang": "en"}',
    ]


def test_a_missing_or_empty_corpus_is_a_sentence(tmp_path):
    with pytest.raises(CorpusError, match="no such corpus"):
        read_corpus(tmp_path / "nope.jsonl")
    (tmp_path / "empty").mkdir()
    with pytest.raises(CorpusError, match=r"holds no \.md, \.markdown or \.txt files, the only ones a folder corpus "
                                          r"reads; add some"):
        read_corpus(tmp_path / "empty")
    (tmp_path / "empty" / "blank.md").write_text("  \n", encoding="utf-8")
    with pytest.raises(CorpusError, match="blank.md: the file is empty"):
        read_corpus(tmp_path / "empty")


# -- lines as JSONL reads them (one reading for the corpus and the golden file) ---------------------

def corpus_problems(tmp_path, raw: bytes) -> list[str]:
    path = tmp_path / "c.jsonl"
    path.write_bytes(raw)
    return [str(p) for p in check_corpus(path)]


def test_a_unicode_line_separator_inside_a_string_is_text_not_a_line_break(tmp_path):
    row = {"id": "a.md", "text": "first part\u2028second part\u0085third\u2029fourth"}
    path = tmp_path / "c.jsonl"
    path.write_text(json.dumps(row, ensure_ascii=False) + "\n" + json.dumps({"id": "b.md", "text": "more"}) + "\n",
                    encoding="utf-8")

    corpus = read_corpus(path)

    assert [d.id for d in corpus] == ["a.md", "b.md"] and corpus.get("a.md").text == row["text"]


def test_comment_lines_are_skipped_and_later_lines_keep_their_numbers(tmp_path):
    raw = b'# exported 2026-11-30\n  # {"id": "old.md", "text": "put aside"}\n{"id": "a.md", "text": "x"}\n{"id": 1}\n'
    assert corpus_problems(tmp_path, raw) == [
        'line 4: needs "id", a non-empty string, for example "id": "guide.md"',
        "line 4: needs \"text\", a non-empty string with the document's words"]
    (tmp_path / "c.jsonl").write_bytes(raw.replace(b'{"id": 1}\n', b""))
    assert [d.id for d in read_corpus(tmp_path / "c.jsonl")] == ["a.md"]


@pytest.mark.parametrize("raw, line, says", [
    (b'{"id": "a.md", "text": "caf\xe9"}\n', 1,  # byte 28 = len('{"id": "a.md", "text": "caf') + 1
     "not UTF-8 text (byte 28 of the line); save the file as UTF-8"),
    (b'{"id": "a.md", "text": "x"}\n{"id": "b.md", "text": "bad \\ud800 escape"}\n', 2, "holds the escape \\ud800"),
    (b'{"id": "a.md", "text": "x", "metadata": {"score": NaN}}\n', 1, "holds NaN, which is not a number JSON allows"),
    (b'{"id": "a.md", "text": "x", "metadata": {"score": -Infinity}}\n', 1, "holds -Infinity"),
    (b'{"id": "a.md", "text": "x", "metadata": {"score": 1e999}}\n', 1,
     "holds the number 1e999, too large to be finite"),
])
def test_bytes_and_values_a_corpus_cannot_hold_are_refused_with_their_line(tmp_path, raw, line, says):
    problems = corpus_problems(tmp_path, raw)
    assert len(problems) == 1 and problems[0].startswith(f"line {line}: {says}")


def test_one_jsonl_reading_for_corpus_and_golden_file(tmp_path):
    from evaluation.golden import check_golden

    raw = (b'# a comment\n{"id": "q1", "question": "Why \xe9?", "expected": ["a.md"]}\n'
           b'{"question": "Why \\ud800?", "expected": ["a.md"]}\n{"question": "Ok\xe2\x80\xa8?", "expected": '
           b'["a.md"]}\n'
           b'{"question": "How?", "expected": ["a.md"], "draft": NaN}\n')
    (tmp_path / "golden.jsonl").write_bytes(raw)
    result = check_golden(tmp_path / "golden.jsonl")
    byte = len(b'{"id": "q1", "question": "Why ') + 1  # the first byte of the line that is not UTF-8
    assert [(e.line, e.message[:26]) for e in result.errors] == [
        (2, f"not UTF-8 text (byte {byte} of"), (3, "holds the escape \\ud800, h"), (5, "holds NaN, which is not a ")]
    assert (result.rows, result.ready) == (4, 1)


# -- document ids a golden file can name -----------------------------------------------------------

@pytest.mark.parametrize("doc_id, says", [
    ("report.pdf#page=2", 'holds "#page=", so a golden file would read it as a page of "report.pdf"'),
    ("a\tb.md", "holds a line break, tab or other control character"),
    ("a\nb.md", "holds a line break, tab or other control character"),
    (" padded.md ", 'has a space at the start or end, which a golden file cannot name; write "padded.md"'),
])
def test_ids_a_golden_file_cannot_name_as_written_are_refused(tmp_path, doc_id, says):
    raw = (
        json.dumps({"id": "fine.md", "text": "x"}) + "\n" + json.dumps({"id": doc_id, "text": "words"}) + "\n"
    ).encode()
    problems = corpus_problems(tmp_path, raw)
    assert len(problems) == 1 and problems[0].startswith("line 2: id ") and says in problems[0]


def test_a_folder_file_whose_path_reads_as_a_page_is_refused(tmp_path):
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "fine.md").write_text("Fine words.", encoding="utf-8")
    (tmp_path / "docs" / "scan#page=3.md").write_text("Other words.", encoding="utf-8")
    (tmp_path / "docs" / "tab\there.md").write_text("More words.", encoding="utf-8")
    problems = [str(p) for p in check_corpus(tmp_path / "docs")]
    assert [p.split(":", 1)[0] for p in problems] == ["scan#page=3.md", "tab\there.md"]
    assert all("the path is the document's id" in p for p in problems)


def test_golden_template_from_a_checked_corpus_writes_rows_golden_check_accepts(tmp_path):
    from evaluation.golden import check_golden
    from evaluation.golden.template import golden_template

    ids = ["a b.md", "ünï/cödé.md", "x#page", "q:1", "%20.md", "d#page.md", "e#pag=1"]
    (tmp_path / "c.jsonl").write_text("".join(json.dumps({"id": i, "text": "word " * 30}) + "\n" for i in ids),
                                      encoding="utf-8")
    golden_template(tmp_path / "c.jsonl", tmp_path / "golden.jsonl", n=len(ids))
    rows = [json.loads(line) for line in (tmp_path / "golden.jsonl").read_text(encoding="utf-8").splitlines()]
    assert [row["expected"] for row in rows] == [[i] for i in ids]
    (tmp_path / "golden.jsonl").write_text("".join(json.dumps({**row, "question": f"Which {n}?"}) + "\n"
                                                   for n, row in enumerate(rows)), encoding="utf-8")

    assert check_golden(tmp_path / "golden.jsonl").errors == ()


from hypothesis import given, settings, strategies as st  # noqa: E402


@settings(max_examples=400, deadline=None, database=None, derandomize=True)
@given(st.lists(st.text(st.characters(blacklist_categories=("Cs",)), max_size=4)
                | st.sampled_from(["#page=", "#page=1", "#", " ", "\t", "\n", "=", "\x85", "\u2028"]),
                min_size=1, max_size=5).map("".join))
def test_every_id_the_corpus_allows_parses_back_as_that_whole_document(doc_id):
    from evaluation.engine.corpus import document_id_problem
    from evaluation.golden import parse_expected
    from evaluation.golden.records import ExpectedItem

    if document_id_problem(doc_id) is None:
        assert parse_expected(doc_id) == ExpectedItem(doc_id)


def test_a_folder_says_which_files_it_reads_and_counts_the_ones_it_passed_over(tmp_path):
    # a folder of web pages and a PDF: nothing to read, and the sentence says what was there
    for name in ("a.html", "b.html", "sub/c.HTML", "d.pdf", "notes", ".hidden/e.html"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("<p>x</p>", encoding="utf-8")
    with pytest.raises(CorpusError) as refused:
        read_corpus(tmp_path)
    assert ("the folder holds no .md, .markdown or .txt files, the only ones a folder corpus reads; passed over: "
            "3 .html, 1 (no suffix), 1 .pdf; convert them to text") in str(refused.value)
    # with documents beside them, the corpus reads and keeps the count for the command to say
    (tmp_path / "guide.md").write_text("# Guide\nKeys rotate.", encoding="utf-8")
    corpus = read_corpus(tmp_path)
    assert [d.id for d in corpus] == ["guide.md"] and corpus.passed_over == {".html": 3, ".pdf": 1, "(no suffix)": 1}
