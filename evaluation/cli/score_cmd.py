"""``score``: score a TREC run file (any tool's) against a golden file, one summary per run tag."""
from __future__ import annotations

import argparse
import json
import sys

from ..measures import MRR, NDCG_10
from .common import add_judging_options
from ..scoring.judging import GRAINS
from ..scoring.metrics import CUTOFFS


def register(subparsers: argparse._SubParsersAction) -> None:
    score = subparsers.add_parser("score", help="score a TREC run against a golden file",
                                  description=__doc__.split(": ", 1)[1])
    score.add_argument("--golden", required=True, help="the golden file (a path, s3://bucket/key or a Blob address), "
                                                       "or topics labelled by --qrels")
    score.add_argument("--run", required=True, help="a TREC run: `qid Q0 docno rank score tag` lines")
    score.add_argument("--by", choices=GRAINS, default="doc",
                       help="what counts as found (default doc; evidence needs text, which a TREC run lacks)")
    score.add_argument("--order", choices=("trec_eval", "rank"), default="trec_eval",
                       help="how each question's results are ordered: trec_eval (default: score descending, "
                            "then docno descending, as trec_eval does) or rank (the rank column as written)")
    add_judging_options(score, readings=False)  # a TREC run holds each docno once: its reading is its own
    score.add_argument("--json", action="store_true", help="print JSON instead of a table")
    score.set_defaults(handler=score_file)


def score_file(args: argparse.Namespace) -> int:
    from ..golden import read_golden
    from ..report.trec import read_trec_run, score_run

    golden = read_golden(args.golden, qrels=args.qrels, warn=lambda text: print(f"warning: {text}", file=sys.stderr))
    scored = score_run(golden, read_trec_run(args.run, order=args.order), by=args.by, min_grade=args.min_grade)
    if args.json:
        print(json.dumps(scored, indent=2, ensure_ascii=False))
    elif not scored:
        print(f"{args.run} holds no results.")
    else:
        print(render_scores(scored))
    return 0


def render_scores(scored: dict[str, dict]) -> str:
    """A table, one row per run tag: found@k as count/questions, MRR and nDCG@10 to 4 places."""
    header = ["run", *[f"@{k}" for k in CUTOFFS], str(MRR), str(NDCG_10)]
    rows = [[tag, *[f"{s['counts'][str(k)]}/{s['questions']}" for k in CUTOFFS], f"{MRR.of(s):.4f}",
             f"{NDCG_10.of(s):.4f}"] for tag, s in scored.items()]
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    return "\n".join("  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths))).rstrip()
                     for r in [header, ["-" * w for w in widths], *rows])
