"""``python -m evaluation``: one parser, one subcommand module per area, errors handled in one place.

Each ``*_cmd`` module exposes ``register(subparsers)``; it adds its parser and sets ``handler`` to a
function ``(args) -> int`` (the exit code). A library error becomes one sentence on stderr, never a
traceback: exit 1 for a problem with the input, 2 for arguments that do not fit.
"""
from __future__ import annotations

import argparse
import importlib
import logging
import sys
from typing import Sequence

from ..errors import EvaluationError, UsageError

_COMMAND_MODULES = ("golden_cmd", "index_cmd", "evaluate_cmd", "runs_cmd", "report_cmd", "compare_cmd", "score_cmd",
                    "answers_cmd")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m evaluation",
        description="Find which way of searching a collection should use, from its golden file.",
    )
    parser.add_argument("-v", "--verbose", action="store_true", help="log what the library is doing")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in _COMMAND_MODULES:
        try:
            module = importlib.import_module(f"{__name__}.{name}")
        except ModuleNotFoundError as err:
            if err.name == f"{__name__}.{name}":
                continue  # that area is not built yet
            raise
        module.register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
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
    try:
        return int(args.handler(args) or 0)
    except UsageError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    except EvaluationError as err:
        print(f"error: {err}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0
