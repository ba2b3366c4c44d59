"""A corpus with no word the keyword index can read ("x y": one-character words only) is a sentence, not the
last resort's "max() arg is an empty sequence" from bm25s (issue 46's second probe pass)."""
from __future__ import annotations

import io
from contextlib import redirect_stderr, redirect_stdout

import pytest


@pytest.mark.parametrize("text", ["x y", "the and of", "a b. c d"])
def test_index_of_a_corpus_without_a_readable_word_says_so(tmp_path, text):
    from evaluation.cli import main

    corpus = tmp_path / "c.jsonl"
    corpus.write_text(f'{{"id": "a", "text": "{text}"}}\n', encoding="utf-8")
    err = io.StringIO()
    with redirect_stdout(io.StringIO()), redirect_stderr(err):
        code = main(["index", str(corpus), "--out", str(tmp_path / "i"), "--models", "hash"])
    said = err.getvalue()
    assert code == 1 and "this is a bug" not in said, said
    assert "no word the keyword index can read" in said, said
    assert not (tmp_path / "i").exists() or not any((tmp_path / "i").iterdir())
