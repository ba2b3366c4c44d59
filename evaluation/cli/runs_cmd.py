"""``runs list | show | export | import``: read the reports a run store keeps, and keep a run a save could not.

``--store`` is a folder, ``s3://bucket/prefix`` (boto3's default credentials and settings), a Blob
address or an Azurite address. For Blob, the connection string comes from
``AZURE_STORAGE_CONNECTION_STRING`` when it is set (read here, at the edge, and nowhere else);
otherwise Azure sign-in is used (Azurite: the development account).
"""
from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any
from pathlib import Path

from ..errors import EvaluationError, named, printable_texts, shown
from ..settings import DEFAULT_MIN_GRADE, RANK_AMONG
from ..store.run_report import RunReport
from .common import (add_env_file_option, add_store_option, load_env_file_option, local_path, open_read_store, plain,
                     store_address)

CONNECTION_STRING_VARIABLE = "AZURE_STORAGE_CONNECTION_STRING"
EXPORT_FORMATS = ("csv", "trec", "azure", "all")


def register(subparsers: argparse._SubParsersAction) -> None:
    runs = subparsers.add_parser("runs", help="list, show and export the runs a store keeps",
                                 description=plain(__doc__.splitlines()[0]))
    actions = runs.add_subparsers(dest="runs_command", metavar="ACTION", required=True)

    listing = actions.add_parser("list", help="the runs in a store, newest first")
    _store_argument(listing)
    listing.add_argument("--limit", type=_count, default=20, help="how many runs (default 20)")
    listing.add_argument("--offset", type=_count, default=0, help="how many of the newest to skip")
    listing.add_argument("--json", action="store_true", help="print JSON instead of a table")
    listing.set_defaults(handler=list_runs)

    show = actions.add_parser("show", help="one run's report")
    show.add_argument("run_id", metavar="ID", help="a run id, or 'latest'")
    _store_argument(show)
    show.add_argument("--json", action="store_true", help="print the report as JSON")
    show.add_argument("--details", action="store_true",
                      help="also print the paired tests against the top and their intervals")
    show.add_argument("--wide", action="store_true",
                      help="print every column of the table however wide (by default it fits 100 columns)")
    show.add_argument("--questions", action="store_true",
                      help="also list each question, where the picks found it, and its text when the store "
                           "keeps the golden file (a report holds no text)")
    show.set_defaults(handler=show_run)

    export = actions.add_parser("export", help="one run's results as CSV tables, TREC files and Azure evaluator rows")
    export.add_argument("run_id", metavar="ID", help="a run id, or 'latest'")
    _store_argument(export)
    export.add_argument("--out", required=True, type=lambda text: Path(local_path(text)),
                        help="folder to write into (made if absent)")
    export.add_argument("--format", choices=EXPORT_FORMATS, default="all", help="what to write (default all)")
    export.add_argument("--by", choices=("doc", "chunk"), default=None,
                        help="grain of the TREC units and the evaluator rows (default: the report's; needed for "
                             "evidence reports)")
    export.add_argument("--rank-among", choices=RANK_AMONG, default=None,
                        help="how a rank is read in the TREC run and the evaluator rows (default: the report's, so "
                             "trec_eval, ranx, ir_measures and Azure's evaluator give the report's numbers): among "
                             "results as returned, or among documents")
    export.set_defaults(handler=export_run)

    keep = actions.add_parser("import", help="keep in a store the run an unsaved-run-<id>.json holds",
                              description="Keep in a store the run an unsaved-run-<id>.json holds: the file "
                                          "evaluate writes when it cannot save a finished run. The report is "
                                          "checked as a kept one is, then saved with its page, as the save "
                                          "would have; the file is left where it is.")
    keep.add_argument("file", metavar="FILE", type=local_path, help="the unsaved-run-<id>.json to keep")
    _store_argument(keep)
    keep.add_argument("--golden", metavar="GOLDEN", type=local_path,
                      help="the golden file the run read, to keep beside it (its sha256 must be the report's)")
    keep.set_defaults(handler=import_run)


def _store_argument(parser: argparse.ArgumentParser) -> None:
    add_store_option(parser)
    add_env_file_option(parser)


def _count(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = -1
    if value < 0:
        raise argparse.ArgumentTypeError(f"{shown(text)} is not a whole number of runs (0 or more)")
    return value


def _open(args: argparse.Namespace):
    """The store ``--store`` names (the default store when none is), ``--env-file`` read first."""
    load_env_file_option(args)
    given, args.store = args.store, store_address(args.store)
    return open_read_store(given)


def _existing(args: argparse.Namespace):
    """The store ``--store`` names, for a command that reads runs: a folder that is not there is a sentence
    (a typo in --store), where the library's ``ids()`` answers no runs."""
    from ..errors import StoreError

    store = _open(args)
    missing = getattr(store, "missing", lambda: None)()
    if missing:
        raise StoreError(missing)
    return store


def list_runs(args: argparse.Namespace) -> int:
    store = _existing(args)
    skipped = []
    rows = store.history(limit=args.limit, offset=args.offset, on_skip=lambda run_id, why: skipped.append(why))
    for why in skipped:  # named, and left out: one damaged report does not hide the others
        print(f"warning: skipped a run that cannot be read: {why}", file=sys.stderr)
    if args.json:
        print(json.dumps(rows, indent=2, ensure_ascii=False))
        return 0
    if not rows:
        print(f"No runs in {named(store.address)}" + (f" after the newest {args.offset}." if args.offset else "."))
        return 0
    table = [["id", "created", "golden", "questions", "collections", "finds the most (found@10)"]]
    for row in printable_texts(rows):  # what each kept report says, as anyone with write access left it
        ran = {k: v for k, v in row["found_10"].items() if v is not None}
        # The report's own pick (its rank rule breaks ties); older rows without picks: the most found.
        best = row["picks"].get("finds_the_most") or (max(ran, key=lambda k: (ran[k], k)) if ran else None)
        outcome = (f"refused: {row['refused']}" if row.get("refused")
                   else f"{_found(ran.get(best), row['golden'])} {best}" if best else "none ran")
        table.append([row["id"], row["created_at"] or "", (row["golden"]["sha256"] or "")[:12],
                      str(row["golden"]["questions"]), ", ".join(row["collections"]), outcome])
    widths = [max(len(r[i]) for r in table) for i in range(len(table[0]))]
    for r in table:
        print("  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip())
    return 0


def _found(count: Any, golden: dict[str, Any]) -> str:
    """found@10 as every view writes it (``97% (35/36)``), from a count of the labelled questions."""
    from ..measures import FOUND_10

    questions = golden.get("labelled") or golden.get("questions")
    if not isinstance(count, int) or not isinstance(questions, int) or questions <= 0:
        return str(count)
    return FOUND_10.shown(count / questions, count=count, questions=questions)


def show_run(args: argparse.Namespace) -> int:
    store = _existing(args)
    report = store.report(args.run_id)
    if args.json:
        print(json.dumps(report.to_json(), indent=2, ensure_ascii=False))
        return 0
    from ..report.text import render_questions, render_report

    print(render_report(report, details=args.details, wide=args.wide or None))
    if args.questions:
        print()
        print(render_questions(report, kept_question_texts(store, report)))
    return 0


def kept_question_texts(store, report: RunReport) -> dict[str, str] | None:
    """The question texts of the golden file a report was made from, when the store keeps it."""
    from ..errors import StoreError
    from ..golden.texts import question_texts

    try:
        return question_texts(store.golden(str(report.golden.sha256)), report)
    except StoreError:
        return None


def export_run(args: argparse.Namespace) -> int:
    from ..errors import UsageError
    from ..files import Output, check_outputs
    from ..report.azure_rows import AZURE_ROWS, report_evaluator_rows, report_reading, write_evaluator_rows
    from ..report.trec import (QUESTIONS_CSV, SETUPS_CSV, TREC_QRELS, TREC_RUN, export_csv, export_questions_csv,
                               export_trec, unique_file_names)

    if args.format == "csv" and (args.by or args.rank_among):  # the tables hold the report's own numbers
        given = " and ".join(f for f, v in (("--by", args.by), ("--rank-among", args.rank_among)) if v)
        raise UsageError(f"{given} say how the TREC run and the evaluator rows read ranks; the CSV tables hold the "
                         f"report's own numbers, read its way: leave out {given}, or give --format trec, azure or all")
    store = _existing(args)
    run_id = store.resolve(args.run_id)  # checked: file names come from it, never from inside the report
    report = store.get(run_id)
    grain = args.by or report.get("by", "doc")
    if args.format == "azure" and grain == "evidence":  # before anything is written, as TREC refuses it
        raise EvaluationError(f"run {run_id} was judged by evidence: quotes are not documents Azure's evaluator "
                              "ranks, so it has no evaluator rows; give --by doc to write them at document grain")
    if args.out.exists() and not args.out.is_dir():
        raise EvaluationError(f"{args.out}: a file, not a folder; give a folder for --out (made if absent)")
    try:
        args.out.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise EvaluationError(f"{args.out}: cannot make the folder ({err.strerror or err}); "
                              "give a folder you may write to") from err
    stem = args.out / run_id
    keys = [s["key"] for s in report["setups"] if not s.get("error")]
    names = dict(zip(keys, unique_file_names(keys), strict=True))  # a setup's own files, named by its key made safe
    trec = args.format in ("trec", "all")
    azure = args.format in ("azure", "all")  # "all" of an evidence report: export_trec refuses it first
    files = [*((Output(f"{stem}.run.trec", TREC_RUN, what="the TREC run"),
                Output(f"{stem}.qrels.trec", TREC_QRELS, what="the qrels"),
                *(Output(f"{stem}.{name}.run.trec", TREC_RUN, what=f"{key}'s TREC run") for key, name in names.items()))
               if trec else ()),
             *((Output(f"{stem}.setups.csv", SETUPS_CSV, what="the setups table"),
                Output(f"{stem}.questions.csv", QUESTIONS_CSV, what="the questions table"))
               if args.format in ("csv", "all") else ()),
             *((Output(f"{stem}.{name}.azure.jsonl", AZURE_ROWS, what=f"{key}'s evaluator rows")
                for key, name in names.items()) if azure else ())]
    check_outputs(files)  # an export of this run is written again; any other file there is left alone
    reading = report_reading(report)
    among = args.rank_among or reading
    said = "" if among == reading else f" (not the report's reading: it ranked among {reading})"
    own = among == reading and grain == report.get("by", "doc")  # the files give the report's own numbers
    whose = "the report's found@k, MRR, nDCG@10 and recall@k" if own else f"the numbers of that reading at {grain}"
    written: list[Path] = []
    if trec:  # first: it may refuse (evidence), and then nothing is written
        written += export_trec(report, f"{stem}.run.trec", f"{stem}.qrels.trec", by=args.by, rank_among=args.rank_among,
                               setup_paths={key: f"{stem}.{name}.run.trec" for key, name in names.items()})
        level = (report.get("rules") or {}).get("min_grade") or DEFAULT_MIN_GRADE
        print(f"TREC files ranked among {among}{said}, relevance from grade {level}: trec_eval -l {level}, "
              f"ir_measures (rel={level}) and ranx give {whose} on them; one run file per setup "
              "beside the combined one", file=sys.stderr)
    if args.format in ("csv", "all"):
        written += [export_csv(report, f"{stem}.setups.csv"), export_questions_csv(report, f"{stem}.questions.csv")]
    if azure:  # one file a setup: the evaluator scores one run a file
        written += [write_evaluator_rows(report_evaluator_rows(report, key, by=args.by, rank_among=among),
                                         f"{stem}.{name}.azure.jsonl") for key, name in names.items()]
        azure_numbers = "the report's summary.azure" if own else "its numbers for that reading"
        print(f"Azure evaluator rows ranked among {among}{said}, each row saying so: Azure's evaluator gives "
              f"{azure_numbers} on them, and score --azure-rows {whose}{_kept_azure_reading(report, among, own)}",
              file=sys.stderr)
    from ..report.race_words import searched_words, stopped_setups

    # a stopped setup's files hold fewer questions than the others': said, never silent
    for entry in stopped_setups(RunReport.from_json(report)):
        print(f"{entry.key} was {searched_words(entry)}: its lines, rows and evaluator rows cover those "
              "questions only (the setups table's stopped column says why)", file=sys.stderr)
    for path in written:
        print(named(path))
    return 0


def _kept_azure_reading(report: dict, among: str, own: bool) -> str:
    """A sentence when the report's kept Azure numbers were read another way than its rows are: a report
    kept before they followed its reading has them among documents."""
    blocks = [(s.get("summary") or {}).get("azure") for s in report.get("setups") or [] if isinstance(s, dict)
              and isinstance(s.get("summary"), dict)]
    # a damaged report may hold anything there: each reading as text, so a list cannot end the export
    kept = {str(block.get("rank_among", "documents")) for block in blocks if isinstance(block, dict) and block}
    other = sorted(kept - {among})
    if not own or not other:
        return ""
    return (f"; this run kept its Azure numbers read among {other[0]} (a run kept before they followed its reading), "
            f"so score the rows to get them among {among}")


MAX_REPORT_BYTES = 1 << 30  # an unsaved run of 5,000 questions is tens of megabytes: a gigabyte is no report


def import_run(args: argparse.Namespace) -> int:
    """``runs import FILE``: ``evaluate.save_unsaved`` on the file's bytes, into ``--store``."""
    from ..evaluate import save_unsaved

    raw = _local_bytes(args.file, "FILE")
    golden = _local_bytes(args.golden, "--golden") if args.golden else None
    store = _open(args)
    run_id = save_unsaved(store, raw, golden, source=args.file)
    print(f"Kept run {run_id} in {named(store.address)} ({named(store.run_file(run_id))}); {named(args.file)} may be "
          "deleted")
    sha256 = store.get(run_id)["golden"]["sha256"]
    if not store.has_golden(sha256):
        print(f"note: the golden file the run read ({sha256[:12]}…) is not kept in {named(store.address)}; give it "
              "with --golden to keep it, so `runs show --questions` and an admin's page can show question text",
              file=sys.stderr)
    return 0


def _local_bytes(path: str, flag: str) -> bytes:
    """The bytes of the local file ``path``; a sentence for a folder, a pipe or a device (never read:
    a pipe would wait for ever) and for a file too large to be a report."""
    import stat

    from ..errors import InputTooLargeError, nearest_file
    from ..store.sources import read_bytes

    try:
        kind = os.stat(path).st_mode
    except FileNotFoundError:
        raise EvaluationError(f"{flag} {path}: no such file.{nearest_file(path)}") from None
    if not stat.S_ISREG(kind):
        what = "a folder" if stat.S_ISDIR(kind) else "not a regular file"
        raise EvaluationError(f"{flag} {path}: {what}; give the file itself")
    try:
        return read_bytes(path, max_bytes=MAX_REPORT_BYTES)
    except InputTooLargeError as err:
        raise EvaluationError(f"{flag} {err}; that is no report") from err
