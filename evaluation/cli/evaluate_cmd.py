"""``python -m evaluation evaluate``: every setup on the golden file, ranked, with the three picks."""
from __future__ import annotations

import argparse
import json
import os
import re
import sys
import tempfile

from ..errors import RunNotSavedError, UsageError, did_you_mean
from ..scoring.metrics import CUTOFFS
from .common import (ProgressBar, add_chunking_options, default_index_dir, index_settings, points, setup_pattern,
                     whole)

_FAIL_UNDER = re.compile(r"^(found@([0-9]+)|mrr|ndcg@10)=([0-9]*\.?[0-9]+)$")


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "evaluate", help="search every golden question every way the collection can be searched",
        description="Run every setup (keyword, dense per model and fused, hybrid, hybrid reranked) on the "
                    "golden file's labelled questions; print the ranked table and the three picks.")
    where = parser.add_mutually_exclusive_group(required=True)
    where.add_argument("--corpus", help="a corpus to index (once; reused while unchanged) and search")
    where.add_argument("--index", help="an index folder built by `python -m evaluation index`")
    parser.add_argument("--golden", required=True, help="the golden file (JSONL or a Bedrock dataset)")
    parser.add_argument("--index-dir", help="where --corpus keeps its index (default .index/<corpus name>)")
    parser.add_argument("--save-to", metavar="STORE", help="a folder or Blob address to keep the run in "
                                                             "(checked before the first search)")
    parser.add_argument("--verify", action="store_true",
                        help="check every index file against its sha256 before searching (sizes are always checked)")
    parser.add_argument("--only", action="append", type=setup_pattern,
                        help="run only these setups (glob on the key, or a word: hybrid, dense, bm25, a model); "
                             "repeatable")
    parser.add_argument("--skip", action="append", default=[], type=setup_pattern,
                        help="leave these setups out; repeatable")
    parser.add_argument("--balance", type=points, default=4, help="points for best_for_balance (default 4)")
    parser.add_argument("--time", type=points, default=8, dest="time_points",
                        help="points for best_for_time (default 8)")
    parser.add_argument("--by", default="doc", choices=["doc", "chunk", "page", "evidence"],
                        help="what counts as found (default doc)")
    parser.add_argument("--depth", type=whole(20), default=20, help="results per question (default 20, at least 20)")
    parser.add_argument("--timed", type=whole(0), default=50, help="questions timed per setup (default 50)")
    parser.add_argument("--rerank-candidates", type=whole(1), default=30,
                        help="hybrid results the cross-encoder rescores (default 30)")
    parser.add_argument("--fail-under", action="append", default=[], metavar="METRIC=VALUE",
                        help="exit 1 when the top setup scores below, e.g. found@10=0.8, mrr=0.5; repeatable")
    parser.add_argument("--json", action="store_true", help="print the report as JSON on stdout")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    add_chunking_options(parser)
    parser.set_defaults(handler=run)


def parse_fail_under(values: list[str]) -> list[tuple[str, float]]:
    """``found@10=0.8`` -> ``("found@10", 0.8)``; a ``UsageError`` for anything else, before any search.

    Every metric is a share from 0 to 1, so ``found@10=80`` (a percentage) is refused, not read as a
    rule no setup can ever meet; ``found@010`` is refused too, as no cut-off is written that way.
    """
    metrics = [f"found@{k}" for k in CUTOFFS] + ["mrr", "ndcg@10"]
    rules = []
    for value in values:
        match = _FAIL_UNDER.match(value.strip().lower())
        if not match or (match.group(2) is not None and match.group(2) not in {str(k) for k in CUTOFFS}):
            metric = value.split("=", 1)[0].strip().lower()
            raise UsageError(f'--fail-under "{value}" is not METRIC=VALUE with METRIC one of '
                             f"{', '.join(metrics)} (e.g. found@10=0.8).{did_you_mean(metric, metrics)}")
        share = float(match.group(3))
        if share > 1:
            raise UsageError(f'--fail-under "{value}": {match.group(1)} is a share from 0 to 1, so {share:g} can '
                             f"never be met; write {share / 100:g} for {share:g}%")
        rules.append((match.group(1), share))
    return rules


def missed_thresholds(report: dict, rules: list[tuple[str, float]]) -> list[str]:
    """Sentences for each --fail-under rule the top setup misses (every rule, when nothing ran)."""
    top_key = report["picks"]["finds_the_most"]
    if top_key is None:
        return [f"{metric} >= {wanted:g}: no setup ran" for metric, wanted in rules]
    summary = next(s for s in report["setups"] if s["key"] == top_key)["summary"]
    missed = []
    for metric, wanted in rules:
        got = (summary["found"][metric.split("@")[1]] if metric.startswith("found@")
               else summary["mrr"] if metric == "mrr" else summary["ndcg_10"])
        if got < wanted:
            missed.append(f"{metric} of {top_key} is {got:.4g}, under {wanted:g}")
    return missed


def build_targets(args: argparse.Namespace, bar: ProgressBar):
    from ..engine.index import build_index, open_index
    from ..engine.target import EmbeddedTarget

    if args.corpus:
        folder = args.index_dir or default_index_dir(args.corpus)
        build_index(args.corpus, folder, index_settings(args), progress=bar.stage(), threads=args.threads,
                    verify=args.verify)
        index = open_index(folder)  # just built, or just checked by build_index
    else:
        index = open_index(args.index, verify=args.verify)
    return [EmbeddedTarget(index, rerank_candidates=args.rerank_candidates, threads=args.threads)]


def open_checked_store(address: str):
    """The store at ``address``, checked writable now: seconds before the first search, not after the last."""
    from ..store import is_blob_address, open_store

    connection_string = os.environ.get("AZURE_STORAGE_CONNECTION_STRING") if is_blob_address(address) else None
    store = open_store(address, connection_string=connection_string or None)
    store.check()
    return store


def run(args: argparse.Namespace) -> int:
    from ..evaluate import evaluate
    from ..report.text import render_report

    rules = parse_fail_under(args.fail_under)
    store = open_checked_store(args.save_to) if args.save_to else None
    bar = ProgressBar(args.quiet)
    unsaved = None
    try:
        targets = build_targets(args, bar)
        report = evaluate(targets, args.golden, save_to=store, only=args.only, skip=args.skip,
                          balance=args.balance, time_points=args.time_points, by=args.by, depth=args.depth,
                          timed=args.timed, progress=bar, warn=lambda text: print(f"warning: {text}", file=sys.stderr),
                          fallback_dirs=[os.getcwd(), tempfile.gettempdir()])
    except RunNotSavedError as err:  # the run finished: show it, then say where it was kept instead
        report, unsaved = err.report, err
    finally:
        bar.close()
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        print(render_report(report))
        if store is not None and unsaved is None:
            print(f"\nSaved as run {report['id']} in {store.address}")
    if unsaved is not None:
        print(f"error: {unsaved}", file=sys.stderr)
        return 1
    missed = missed_thresholds(report, rules)
    for sentence in missed:
        print(f"fail-under: {sentence}", file=sys.stderr)
    return 1 if missed else 0
