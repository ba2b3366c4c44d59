"""``score``: score a TREC run file (any tool's) against a golden file, one summary per run tag; or the rows
Azure AI Foundry's Document Retrieval evaluator takes (``--azure-rows``), by its numbers and ours."""
from __future__ import annotations

import argparse
import json
import sys

from ..errors import TEXT_LIMIT, named, printable
from ..measures import FOUND_10, MRR, NDCG_10
from .common import add_judging_options, path_or_address, plain
from ..scoring.judging import GRAINS
from ..scoring.metrics import CUTOFFS


def register(subparsers: argparse._SubParsersAction) -> None:
    score = subparsers.add_parser("score", help="score a TREC run against a golden file",
                                  description=plain(__doc__.split(": ", 1)[1]))
    score.add_argument("--golden", type=path_or_address,
                       help="the golden file (a path, s3://bucket/key or a Blob address), or topics labelled by "
                            "--qrels")
    score.add_argument("--run", type=path_or_address, help="a TREC run: lines of qid Q0 docno rank score tag")
    score.add_argument("--azure-rows", metavar="FILE", type=path_or_address,
                       help="instead of --golden and --run: JSONL rows as Azure AI Foundry's Document Retrieval "
                            "evaluator takes them (retrieval_ground_truth, retrieved_documents, as runs export "
                            "--format azure writes them, saying their reading in rank_among): its seven numbers, "
                            "exactly and corrected, beside ours, and which reading the rows hold")
    score.add_argument("--by", choices=GRAINS, default="doc",
                       help="what counts as found (default doc; evidence needs text, which a TREC run lacks)")
    score.add_argument("--order", choices=("trec_eval", "rank"), default="trec_eval",
                       help="how each question's results are ordered: trec_eval (default: score descending, "
                            "then docno descending, as trec_eval does) or rank (the rank column as written)")
    add_judging_options(score, readings=False)  # a TREC run holds each docno once: its reading is its own
    score.add_argument("--json", action="store_true", help="print JSON instead of a table")
    score.set_defaults(handler=score_file)


def score_file(args: argparse.Namespace) -> int:
    from ..errors import UsageError
    from ..golden import read_golden
    from ..report.trec import read_trec_run, score_run

    if args.azure_rows:
        if args.golden or args.run or args.qrels:
            raise UsageError("--azure-rows carries its own labels and results; give it alone, or --golden with --run")
        return score_rows(args)
    if not args.golden or not args.run:
        raise UsageError("give --golden FILE and --run FILE (a TREC run), or --azure-rows FILE")
    golden = read_golden(args.golden, qrels=args.qrels, encoding=args.encoding,
                         warn=lambda text: print(f"warning: {text}", file=sys.stderr))
    scored = score_run(golden, read_trec_run(args.run, order=args.order), by=args.by, min_grade=args.min_grade)
    if args.json:
        print(json.dumps(scored, indent=2, ensure_ascii=False))
    elif not scored:
        print(f"{args.run} holds no results.")
    else:
        print(render_scores(scored))
    return 0


def render_scores(scored: dict[str, dict]) -> str:
    """A table, one row per run tag: found@k as a percent with its count, MRR and nDCG@10 to three places
    (``Measure.shown``, as every view writes them). A tag is whatever the run file says: printable, and bounded
    as any name a file gives (``errors.printable``)."""
    found = [FOUND_10.at(k) for k in CUTOFFS]
    header = ["run", *map(str, found), str(MRR), str(NDCG_10)]
    rows = [[printable(tag, TEXT_LIMIT),
             *[m.shown(m.of(s), count=m.count_of(s), questions=s["questions"]) for m in found],
             MRR.shown(MRR.of(s)), NDCG_10.shown(NDCG_10.of(s))] for tag, s in scored.items()]
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    return "\n".join(
        "  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths, strict=True))).rstrip()
        for r in [header, ["-" * w for w in widths], *rows]
    )


def score_rows(args: argparse.Namespace) -> int:
    """``--azure-rows``: our summary and Azure's seven numbers, exactly and corrected, on the rows."""
    from ..report.azure_rows import read_evaluator_rows, score_evaluator_rows

    scored = score_evaluator_rows(read_evaluator_rows(args.azure_rows), min_grade=args.min_grade)
    if args.json:
        print(json.dumps(scored, indent=2, ensure_ascii=False))
        return 0
    print(reading_sentence(args.azure_rows, scored["rank_among"]))
    print(render_scores({args.azure_rows: scored}) if scored["questions"] else
          f"{args.azure_rows}: no row has a document graded {args.min_grade} or more, so found@k, MRR and nDCG are not "
          f"scored")
    azure = scored["azure"]
    print(f"\nAzure AI Foundry's Document Retrieval metrics (labels {azure['label_range']}), mean of {scored['rows']} "
          f"rows:")
    for form in ("exact", "corrected"):
        print(
            f"  {form + ':':10} "
            + ", ".join(f"{name} {'-' if v is None else f'{v:g}'}" for name, v in azure[form].items())
        )
    return 0


def reading_sentence(source: str, rank_among: str | None) -> str:
    """Which reading of a rank evaluator rows hold, said before their numbers (``rank_among`` as the rows
    say it; None when they do not). ``source`` is a file name a person gave: named printable."""
    source = named(source)
    if rank_among == "results":
        return (f"{source}: ranked among results, as the rows say: a document's later results are ids of their own, "
                "so they take up places as the run counted them")
    if rank_among == "documents":
        return f"{source}: ranked among documents, as the rows say: each document once, at its first place"
    return (f"{source}: the rows do not say how they rank (no rank_among), so they are read as Azure's evaluator "
            "reads them: each document once, at its best score (among documents)")
