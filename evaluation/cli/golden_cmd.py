"""``python -m evaluation golden``: check a golden file, or write a template to fill in.

``golden check FILE [--json] [--corpus CORPUS]`` prints what is wrong, line by line (exit 0 when
nothing stops a run, 1 when there are errors). ``golden template --corpus CORPUS --out FILE`` writes
rows to fill in, one per sampled document or page.
"""
from __future__ import annotations

import argparse
import json
import sys
from typing import Any, Callable

from ..engine.corpus import read_corpus
from ..golden.check import check_golden
from ..golden.template import golden_template


def register(subparsers: Any) -> None:
    """Add the ``golden`` command and its ``check`` and ``template`` subcommands."""
    golden = subparsers.add_parser("golden", help="check a golden file, or write a template to fill in",
                                   description="Check a golden file, or write a template to fill in.")
    golden.set_defaults(handler=_print_help(golden))
    commands = golden.add_subparsers(dest="golden_command", metavar="SUBCOMMAND")

    check = commands.add_parser("check", help="say what is wrong with each line of a golden file",
                                description="Check every line of a golden file; exit 1 when there are errors.")
    check.add_argument("file", metavar="FILE", help="the golden file (JSONL, or an Amazon Bedrock dataset)")
    check.add_argument("--json", action="store_true", help="print the result as JSON")
    against = check.add_mutually_exclusive_group()
    against.add_argument("--corpus", metavar="CORPUS",
                         help="also warn about labels this corpus cannot match: documents it does not hold, pages "
                              "of documents without pages or past the last one")
    against.add_argument("--index", metavar="DIR",
                         help="the same against an index folder, which also knows its chunk ids")
    check.add_argument("--by", choices=("doc", "chunk", "page", "evidence"), default="doc",
                       help="the grain the run will judge at, for the warnings (default doc)")
    check.set_defaults(handler=_check)

    template = commands.add_parser("template", help="write rows to fill in from a corpus",
                                   description="Write golden-file rows to fill in: one per sampled document "
                                               "or page, with expected named and a hint of how it starts.")
    template.add_argument("--corpus", metavar="CORPUS", required=True, help="a corpus JSONL file or folder")
    template.add_argument("--out", metavar="FILE", required=True, help="the golden file to write")
    template.add_argument("-n", type=_at_least_one, default=50, help="how many rows (default 50)")
    template.add_argument("--seed", type=int, default=0, help="the sampling seed (default 0)")
    template.add_argument("--by", choices=("doc", "page"), default="doc",
                          help="sample documents, or pages spread through the corpus (default doc)")
    template.add_argument("--force", action="store_true", help="replace FILE if it exists")
    template.set_defaults(handler=_template)


def _check(args: argparse.Namespace) -> int:
    corpus = read_corpus(args.corpus) if args.corpus else None
    if args.index:
        from ..engine.index import open_index

        corpus = open_index(args.index)
    result = check_golden(args.file, corpus, by=args.by)
    print(json.dumps(result.to_dict(), indent=2) if args.json else result.summary())
    return 0 if result.ok else 1


def _template(args: argparse.Namespace) -> int:
    rows = golden_template(args.corpus, args.out, n=args.n, seed=args.seed, by=args.by, overwrite=args.force)
    print(f"wrote {len(rows)} template rows to {args.out}; write a question in each, "
          f"then run: python -m evaluation golden check {args.out}")
    return 0


def _at_least_one(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"needs a whole number of at least 1, not {text!r}")
    return value


def _print_help(parser: argparse.ArgumentParser) -> Callable[[argparse.Namespace], int]:
    def handler(args: argparse.Namespace) -> int:
        parser.print_help(sys.stderr)
        return 2

    return handler
