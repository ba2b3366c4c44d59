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
