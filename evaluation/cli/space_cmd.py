"""``python3 -m evaluation space``: a declared space of setups searched by successive halving.

    python3 -m evaluation space --space space.toml --corpus C --golden G [--work-dir DIR] [--exhaustive]
    python3 -m evaluation space --size-chars 400,800 --models bge-small,minilm-l6 --methods keyword,dense,hybrid \\
        --depths 20,50 --rrf-k 10,60 --corpus C --golden G [--report-json out.json]

Says how many setups and builds the space holds before it starts; prints the pick, its top tier, the
rounds, every setup (a stopped one with the questions it ran) and the cost. A run with --work-dir
killed between rounds and started again with the same arguments goes on where it stopped, with the
same decisions and pick.
"""
from __future__ import annotations

import argparse
import sys

from ..errors import UsageError
from ..files import Output, check_outputs, write_whole
from .common import ProgressBar, local_path, whole

_AXIS_FLAGS = {"techniques": str, "sizes": int, "overlaps": int, "models": str, "methods": str, "depths": int,
               "rrf_k": int}
# sizes and overlaps count characters, as matrix's flags do: the flag's name says so (the file's keys are the axes')
_FLAG_NAMES = {"sizes": "--size-chars", "overlaps": "--overlap-chars"}


def _flag(axis: str) -> str:
    return _FLAG_NAMES.get(axis, "--" + axis.replace("_", "-"))


def _listed(kind: type, flag: str):
    def parse(text: str) -> list:
        parts = [p.strip() for p in text.split(",") if p.strip()]
        if kind is int and not all(p.isdigit() for p in parts):
            raise argparse.ArgumentTypeError(f"{flag} takes whole numbers separated by commas, such as 20,50")
        if not parts:
            raise argparse.ArgumentTypeError(f"{flag} takes at least one value")
        return [kind(p) for p in parts]
    return parse


def register(subparsers) -> None:
    from ..space.declared import DEFAULTS, METHODS

    parser = subparsers.add_parser(
        "space", help="a space of setups (chunkings x models x methods x depths x RRF k) searched by successive "
                      "halving with a valid stop rule",
        description="Declare a space of setups in a TOML or JSON file (--space) or with the axis flags; every index "
                    "a chunking x model needs is built once and shared; the setups are searched in rounds of a "
                    "seeded question order, each after the first a batch of more questions, and a setup stops once its "
                    "anytime-valid paired test (one per setup, against whichever setup led before each question) "
                    "shows it finds fewer than the best over the whole golden file.")
    parser.add_argument("--space", type=local_path, metavar="FILE", help="the space: a .toml or .json file of axes")
    for axis, kind in _AXIS_FLAGS.items():
        flag = _flag(axis)
        extra = {"methods": f" ({', '.join(METHODS)})", "sizes": " in characters",
                 "overlaps": " in characters"}.get(axis, "")
        parser.add_argument(flag, dest=axis, type=_listed(kind, flag), default=None,
                            help=f"{axis} of the space, comma-separated{extra} (default "
                                 f"{','.join(map(str, DEFAULTS[axis]))}); not with --space")
    parser.add_argument("--corpus", required=True, type=local_path, help="corpus JSONL (id, text, ...)")
    parser.add_argument("--golden", required=True, type=local_path, help="the golden file (JSONL)")
    parser.add_argument("--work-dir", type=local_path, metavar="DIR",
                        help="keep the plan, each round and the vectors here: a killed run started again with it "
                             "goes on where it stopped")
    parser.add_argument("--exhaustive", action="store_true", help="every setup on every question, no stops")
    parser.add_argument("--seed", type=whole(0), default=0, help="the question order's seed (default 0)")
    parser.add_argument("--alpha", type=float, default=0.05,
                        help="the most chance, over the seeded order, that the best setup is stopped (default 0.05)")
    parser.add_argument("--margin", type=whole(0), default=0,
                        help="questions a setup must be shown to trail the leader by, more than (default 0: one best)")
    parser.add_argument("--vector-cache", dest="cache", type=local_path, metavar="FILE",
                        help="a vector cache file kept across runs (default: the work folder's)")
    parser.add_argument("--threads", type=whole(1), default=None, help="threads for the embedding models")
    parser.add_argument("--report-json", type=local_path, help="write the report as JSON here")
    parser.add_argument("--quiet", action="store_true", help="no progress")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from ..report.space import SPACE_JSON, space_json, space_text
    from ..space import SpaceSettings, read_space, search_space, space_from_flags

    axes = {axis: getattr(args, axis) for axis in _AXIS_FLAGS}
    if args.space is not None and any(v is not None for v in axes.values()):
        given = next(axis for axis, v in axes.items() if v is not None)
        raise UsageError(f"{_flag(given)} and --space both declare the space; put every axis in "
                         f"{args.space}, or leave --space out")
    space = read_space(args.space) if args.space is not None else space_from_flags(**axes)
    outputs = [Output(args.report_json, SPACE_JSON, "--report-json", "the JSON report")] if args.report_json else []
    check_outputs(outputs, [("the --corpus file", args.corpus), ("the --golden file", args.golden),
                            ("the --space file", args.space)])
    settings = SpaceSettings(seed=args.seed, alpha=args.alpha, margin=args.margin, exhaustive=args.exhaustive,
                             work_dir=args.work_dir, cache=args.cache, threads=args.threads)
    print(f"The space: {space.describe()}.", file=sys.stderr, flush=True)
    bar = ProgressBar(args.quiet)
    try:
        report = search_space(space, args.corpus, args.golden, settings=settings, progress=bar)
    finally:
        bar.close()
    if args.report_json:
        write_whole(args.report_json, space_json(report), what="the JSON report")
    print(space_text(report))
    return 0
