"""One vocabulary (issue 42): every command's help is plain text, one default store for every command that
keeps or reads runs, one name per unit for chunk sizes, one spelling per idea; old spellings still work."""
from __future__ import annotations

import argparse
from typing import Iterator

import pytest

from evaluation.cli import build_parser


def every_parser(parser: argparse.ArgumentParser | None = None,
                 words: tuple[str, ...] = ()) -> Iterator[tuple[str, argparse.ArgumentParser]]:
    """The top parser and every command and subcommand under it, by the words that reach it."""
    parser = parser or build_parser()
    yield " ".join(words) or "(top)", parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, child in action.choices.items():
                yield from every_parser(child, (*words, name))


def test_no_help_shows_backticks():
    """Help built from docstrings has its reStructuredText markup stripped, and written help has none."""
    shown = [f"{words}: {line.strip()}" for words, parser in every_parser()
             for line in parser.format_help().splitlines() if "`" in line]
    assert shown == []


def test_golden_template_suggests_a_check_against_the_corpus_it_was_drawn_from(tmp_path, capsys):
    """The suggested ``golden check`` names the corpus, so a label naming no document is caught when it runs."""
    import json
    import shlex

    from conftest import SAMPLES, run_cli

    golden = tmp_path / "golden.jsonl"
    code, out, _ = run_cli(capsys, "golden", "template", "--corpus", str(SAMPLES / "corpus.jsonl"),
                           "--out", str(golden), "-n", "2")
    assert code == 0
    suggested = shlex.split(out.split("then run: ", 1)[1])
    assert suggested[:3] == ["python3", "-m", "evaluation"]
    rows = [json.loads(line) for line in golden.read_text().splitlines()]
    rows = [{**row, "question": f"question {n}?"} for n, row in enumerate(rows)]
    rows[1]["expected"] = ["no-such-document"]
    golden.write_text("".join(json.dumps(row) + "\n" for row in rows))
    code, out, _ = run_cli(capsys, *suggested[3:])
    assert "no-such-document" in out
