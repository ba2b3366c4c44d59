"""``report RUN|latest --store STORE --out report.html``: one run as the HTML page people look at.

The page is the one ``evaluate --save-to`` keeps beside the run, rendered again from the stored report
and the store's older runs on the same golden file. It names questions by id; ``--with-questions``
adds their text from the golden file the store kept for that run (the page then holds question text:
give it only to people who may read the golden file).
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..errors import StoreError, UsageError, named
from ..files import Output, check_outputs, write_whole
from ..report.style import HTML_PAGE
from .common import local_path, plain
from .runs_cmd import _open, _store_argument


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("report", help="one run as a self-contained HTML page",
                                   description=plain(__doc__.splitlines()[0]))
    parser.add_argument("run_id", metavar="RUN", help="a run id, or 'latest'")
    _store_argument(parser)
    parser.add_argument("--out", required=True, type=local_path,
                        help="the HTML file to write (made, or replacing a page this tool wrote), or - for stdout")
    parser.add_argument("--with-questions", action="store_true",
                        help="show question text read from the golden file the store kept for the run")
    parser.set_defaults(handler=write_report)


def write_report(args: argparse.Namespace) -> int:
    from ..golden.texts import question_texts
    from ..report.html import run_page

    store = _open(args)
    report = store.report(args.run_id)
    questions = None
    if args.with_questions:
        try:
            questions = question_texts(store.golden(str(report.golden.sha256)), report)
        except StoreError as err:
            raise StoreError(f"{err} (run {report.id}); leave out --with-questions to name questions by id") from err
    page = run_page(report, store, questions=questions)
    if args.out == "-":
        sys.stdout.write(page)
        return 0
    out = Path(args.out)
    _refuse_to_replace_an_input(out, args.store)
    write_whole(out, page, what="the page")
    print(f"Wrote run {report.id} to {named(out)}")
    return 0


def _refuse_to_replace_an_input(out: Path, store: str) -> None:
    """An output never replaces an input: nothing inside a local store (whose files are never written
    over), and no existing file that is not a page this tool wrote (a golden file, a corpus, a
    report.json: ``files.check_outputs``)."""
    from ..store import is_blob_address

    if not is_blob_address(store) and Path(store).is_dir():
        root = Path(store).resolve()
        if root in out.resolve().parents:
            raise UsageError(f"--out {out} is inside the store {store}, whose files are never written over; "
                             "write the page somewhere else")
    check_outputs([Output(out, HTML_PAGE, "--out", "the page")])
