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
    with pytest.raises(CorpusError, match="holds no documents"):
        read_corpus(tmp_path / "empty")
    (tmp_path / "empty" / "blank.md").write_text("  \n", encoding="utf-8")
    with pytest.raises(CorpusError, match="blank.md: the file is empty"):
        read_corpus(tmp_path / "empty")
