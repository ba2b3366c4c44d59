"""``python -m evaluation evaluate``: every setup on the golden file, ranked, with the three picks."""
from __future__ import annotations

import argparse
import json
import os
import re
import sys
import tempfile

from ..errors import UsageError
from ..scoring.metrics import CUTOFFS
from .common import ProgressBar, add_chunking_options, default_index_dir, index_settings

CONNECTION_STRING_VARIABLE = "AZURE_STORAGE_CONNECTION_STRING"  # Blob addresses; read here, at the edge
_FAIL_UNDER = re.compile(r"^(found@(\d+)|mrr|ndcg@10)=([0-9]*\.?[0-9]+)$")


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "evaluate", help="search every golden question every way the collection can be searched",
        description="Run every setup (keyword, dense per model and fused, hybrid, hybrid reranked) on the "
                    "golden file's labelled questions; print the ranked table and the three picks.")
    where = parser.add_mutually_exclusive_group(required=True)
    where.add_argument("--corpus", help="a corpus to index (once; reused while unchanged) and search")
    where.add_argument("--index", help="an index folder built by `python -m evaluation index`, or the Blob "
                                       "address it was published to (fetched once into --index-cache)")
    parser.add_argument("--index-cache", help="where a published index is fetched to "
                                              "(default <tempdir>/retrieval-eval-indexes)")
    parser.add_argument("--golden", required=True, help="the golden file (JSONL or a Bedrock dataset)")
    parser.add_argument("--index-dir", help="where --corpus keeps its index (default .index/<corpus name>)")
    parser.add_argument("--save-to", metavar="STORE", help="a folder or Blob address to keep the run in")
    parser.add_argument("--only", action="append", help="run only these setups (glob on the key, or a word: "
                                                        "hybrid, dense, bm25, a model); repeatable")
    parser.add_argument("--skip", action="append", default=[], help="leave these setups out; repeatable")
    parser.add_argument("--balance", type=float, default=4, help="points for best_for_balance (default 4)")
    parser.add_argument("--time", type=float, default=8, dest="time_points",
                        help="points for best_for_time (default 8)")
    parser.add_argument("--by", default="doc", choices=["doc", "chunk", "page", "evidence"],
                        help="what counts as found (default doc)")
    parser.add_argument("--depth", type=int, default=20, help="results per question (default 20)")
    parser.add_argument("--timed", type=int, default=50, help="questions timed per setup (default 50)")
    parser.add_argument("--rerank-candidates", type=int, default=30,
                        help="hybrid results the cross-encoder rescores (default 30)")
    parser.add_argument("--fail-under", action="append", default=[], metavar="METRIC=VALUE",
                        help="exit 1 when the top setup scores below, e.g. found@10=0.8, mrr=0.5; repeatable")
    parser.add_argument("--json", action="store_true", help="print the report as JSON on stdout")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    add_chunking_options(parser)
    parser.set_defaults(handler=run)


def parse_fail_under(values: list[str]) -> list[tuple[str, float]]:
    rules = []
    for value in values:
        match = _FAIL_UNDER.match(value.strip().lower())
        if not match or (match.group(2) and int(match.group(2)) not in CUTOFFS):
            raise UsageError(f'--fail-under "{value}" is not METRIC=VALUE with METRIC one of '
                             f"{', '.join(f'found@{k}' for k in CUTOFFS)}, mrr, ndcg@10 (e.g. found@10=0.8)")
        rules.append((match.group(1), float(match.group(3))))
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

    from ..store.sources import is_blob_address

    described = None
    if args.corpus:
        folder = args.index_dir or default_index_dir(args.corpus)
        build_index(args.corpus, folder, index_settings(args), progress=bar.stage(), threads=args.threads)
    elif is_blob_address(args.index):
        from ..engine.published import fetch_index

        cache = args.index_cache or os.path.join(tempfile.gettempdir(), "retrieval-eval-indexes")
        folder = fetch_index(args.index, cache, connection_string=os.environ.get(CONNECTION_STRING_VARIABLE) or None)
        described = args.index.rstrip("/")
    else:
        folder = args.index
    return [EmbeddedTarget(open_index(folder), rerank_candidates=args.rerank_candidates, threads=args.threads,
                           described_index=described)]


def run(args: argparse.Namespace) -> int:
    from ..evaluate import evaluate
    from ..report.text import render_report

    rules = parse_fail_under(args.fail_under)
    bar = ProgressBar(args.quiet)
    save_to = args.save_to
    if save_to and save_to.startswith(("http://", "https://")):
        from ..store import open_store

        save_to = open_store(save_to, connection_string=os.environ.get(CONNECTION_STRING_VARIABLE))
    try:
        targets = build_targets(args, bar)
        report = evaluate(targets, args.golden, save_to=save_to, only=args.only, skip=args.skip,
                          balance=args.balance, time_points=args.time_points, by=args.by, depth=args.depth,
                          timed=args.timed, progress=bar, warn=lambda text: print(f"warning: {text}", file=sys.stderr))
    finally:
        bar.close()
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        print(render_report(report))
        if args.save_to:
            print(f"\nSaved as run {report['id']} in {args.save_to}")
    missed = missed_thresholds(report, rules)
    for sentence in missed:
        print(f"fail-under: {sentence}", file=sys.stderr)
    return 1 if missed else 0
