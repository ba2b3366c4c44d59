"""``compare RUN_A RUN_B --store STORE``: run B against baseline run A, setup by setup, question by question.

Exit 0, or 1 with ``--fail-on-regression`` when a setup's found@10 is significantly lower in B.
"""
from __future__ import annotations

import argparse
import json
import sys

from .common import (add_env_file_option, add_significance_options, add_store_option,
                     load_env_file_option, open_read_store)


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "compare", help="compare two runs: which questions got worse or better, and is it more than noise",
        description="Compare run B with baseline run A on the questions they share (by id and text hash): "
                    "per setup, found@10 and MRR before and after with paired tests, and the questions that moved.")
    parser.add_argument("baseline", metavar="RUN_A", help="the baseline run id, or 'latest'")
    parser.add_argument("current", metavar="RUN_B", help="the run to compare with it, or 'latest'")
    add_store_option(parser, what="the run store holding both")
    add_env_file_option(parser)
    parser.add_argument("--fail-on-regression", action="store_true",
                        help="exit 1 when a setup's found@10 is significantly lower than in RUN_A")
    parser.add_argument("--json", action="store_true", help="print the comparison as JSON")
    add_significance_options(parser)
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from ..report.compare import compare_reports, render_comparison

    load_env_file_option(args)
    store = open_read_store(args.store)
    comparison = compare_reports(store.report(args.baseline), store.report(args.current), alpha=args.alpha,
                                 resamples=args.resamples)
    print(json.dumps(comparison, indent=2) if args.json else render_comparison(comparison))
    return gate(comparison, args.fail_on_regression)


def gate(comparison: dict, fail_on_regression: bool) -> int:
    """1 when asked to fail on a regression and there is one (each is said on stderr), else 0."""
    from ..report.compare import regressions

    if not fail_on_regression:
        return 0
    found = regressions(comparison)
    for sentence in found:
        print(f"regression: {sentence}", file=sys.stderr)
    return 1 if found else 0
