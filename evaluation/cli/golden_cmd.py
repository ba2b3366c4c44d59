"""``python3 -m evaluation golden``: check a golden file, write a template, propose labels, find a cut-off.

``golden check FILE [--json] [--corpus CORPUS | --index DIR]`` prints what is wrong, line by line
(exit 0 when nothing stops a run, 1 when there are errors). ``golden template --corpus CORPUS|--index
DIR --out FILE`` writes rows to fill in, one per sampled document or page. ``golden suggest FILE --index DIR
--out FILE`` proposes expected documents from reference answers as draft rows. ``golden cutoff FILE
--index DIR`` finds the relevance below which the top result is more likely a near miss.
"""
from __future__ import annotations

import argparse
import json
import sys
from typing import Any, Callable

from ..engine.corpus import read_corpus
from ..scoring.judging import GRAINS
from .common import (ProgressBar, add_golden_limit_option, add_target_options, golden_limit, local_path,
                     open_embedded_target)
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
    against.add_argument("--corpus", metavar="CORPUS", type=local_path,
                         help="also warn about labels this corpus cannot match (documents it does not hold, pages "
                              "of documents without pages or past the last one) and evidence quotes none of "
                              "their chunks holds")
    against.add_argument("--index", metavar="DIR", type=local_path, help="the same against an index built by `python3 -m evaluation "
                                                        "index` (its own chunks, so chunk ids too)")
    check.add_argument("--by", choices=GRAINS, default="doc",
                       help="the grain the run will judge at, for the warnings (default doc)")
    add_golden_limit_option(check)
    check.set_defaults(handler=_check)

    template = commands.add_parser("template", help="write rows to fill in from a corpus",
                                   description="Write golden-file rows to fill in: one per sampled document "
                                               "or page, with expected named and a hint of how it starts.")
    source = template.add_mutually_exclusive_group(required=True)
    source.add_argument("--corpus", metavar="CORPUS", type=local_path, help="a corpus JSONL file or folder")
    source.add_argument("--index", metavar="DIR", type=local_path,
                        help="an index built by `python3 -m evaluation index`: the corpus it was built from, "
                             "else its own chunks")
    template.add_argument("--out", metavar="FILE", required=True, help="the golden file to write")
    template.add_argument("-n", type=_at_least_one, default=50, help="how many rows (default 50)")
    template.add_argument("--seed", type=int, default=0, help="the sampling seed (default 0)")
    template.add_argument("--by", choices=("doc", "page"), default="doc",
                          help="sample documents, or pages spread through the corpus (default doc)")
    template.add_argument("--force", action="store_true", help="replace FILE if it exists")
    template.set_defaults(handler=_template)

    suggest = commands.add_parser("suggest", help="propose expected documents from reference answers, as drafts",
                                  description="For rows with a reference answer and no expected documents (an "
                                              "Amazon Bedrock dataset), search with the reference answer and write "
                                              'every row to a new file, the proposals as "draft": true rows to check.')
    suggest.add_argument("file", metavar="FILE", help="the golden file (JSONL, or an Amazon Bedrock dataset)")
    suggest.add_argument("--out", metavar="FILE", required=True, type=local_path, help="the file to write (never an existing one)")
    suggest.add_argument("--setup", metavar="KEY", help="the setup to search with (default: hybrid, every model)")
    suggest.add_argument("--propose", type=_at_least_one, default=1,
                         help="documents proposed per question, best first (default 1)")
    suggest.add_argument("--json", action="store_true", help="print what was proposed as JSON")
    suggest.add_argument("--quiet", action="store_true", help="no progress bar")
    add_target_options(suggest)
    suggest.set_defaults(handler=_suggest)

    cutoff = commands.add_parser("cutoff", help="the relevance below which the top result is more likely a near miss",
                                 description="Search each question once and find the top-result score that best "
                                             "separates answers from near misses: decline to answer below it.")
    cutoff.add_argument("file", metavar="FILE", help="the golden file")
    cutoff.add_argument("--unanswerable", metavar="FILE",
                        help="questions the collection cannot answer (one a line, or JSONL with \"question\")")
    cutoff.add_argument("--setup", metavar="KEY", help="the setup whose scores to cut (default: the reranked "
                                                       "hybrid, else dense, else keyword)")
    cutoff.add_argument("--by", choices=GRAINS, default="doc", help="what counts as the answer (default doc)")
    cutoff.add_argument("--measure", choices=("similarity", "relevance"), default="similarity",
                        help="what is read off the top result: similarity, the cosine with the question (means "
                             "the same in every method), or relevance, the setup's own score, the reranker's "
                             "where one ran (default similarity)")
    cutoff.add_argument("--json", action="store_true", help="print the result as JSON")
    cutoff.add_argument("--quiet", action="store_true", help="no progress bar")
    add_target_options(cutoff)
    cutoff.set_defaults(handler=_cutoff)


def _check(args: argparse.Namespace) -> int:
    if args.index:
        from ..engine.index import open_index
        from ..engine.target import EmbeddedTarget

        corpus = EmbeddedTarget(open_index(args.index), cross_encoder=False)
    else:
        corpus = read_corpus(args.corpus) if args.corpus else None
    result = check_golden(args.file, corpus, by=args.by, **golden_limit(args))
    if corpus is not None and result.ready:
        from ..answers.stale import stale_evidence

        result = result.with_warnings(stale.problem() for stale in stale_evidence(corpus, args.file))
    print(json.dumps(result.to_dict(), indent=2) if args.json else result.summary())
    return 0 if result.ok else 1


def _template(args: argparse.Namespace) -> int:
    if args.index:
        from ..engine.index import open_index
        from ..engine.target import EmbeddedTarget

        source = EmbeddedTarget(open_index(args.index), cross_encoder=False, cache=False)
    else:
        source = args.corpus
    rows = golden_template(source, args.out, n=args.n, seed=args.seed, by=args.by, overwrite=args.force)
    print(f"wrote {len(rows)} template rows to {args.out}; write a question in each, "
          f"then run: python3 -m evaluation golden check {args.out}")
    return 0


def _suggest(args: argparse.Namespace) -> int:
    from ..answers.suggest import suggest_expected

    bar = ProgressBar(args.quiet)
    try:
        target = open_embedded_target(args, bar)
    finally:
        bar.close()
    found = suggest_expected(target, args.file, args.out, setup=args.setup, propose=args.propose)
    print(json.dumps(found.to_dict(), indent=2) if args.json else found.summary())
    return 0


def _cutoff(args: argparse.Namespace) -> int:
    from ..answers.cutoff import answer_cutoff, read_unanswerable

    unanswerable = read_unanswerable(args.unanswerable) if args.unanswerable else []
    bar = ProgressBar(args.quiet)
    try:
        target = open_embedded_target(args, bar)
    finally:
        bar.close()
    found = answer_cutoff(target, args.file, unanswerable, setup=args.setup, by=args.by, measure=args.measure)
    print(json.dumps(found.to_dict(), indent=2) if args.json else found.summary())
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
