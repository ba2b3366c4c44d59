"""Labels from a TREC qrels file, for the questions of a golden file (or a topics file) by their ids.

A team that already judges its collection the TREC way keeps ``qrels``: ``qid 0 docno grade`` a line
(whitespace between fields; the second is ignored, as trec_eval ignores it; grade 0 = judged, not
relevant). ``read_qrels`` reads one, with every mistake named by line; ``with_qrels`` gives a golden
file's questions those labels: a row whose id the qrels name takes the qrels' grades (its own
``expected`` is replaced, and said so), a row they do not name keeps its own labels, or, with none,
is left out with a warning (a topic nobody judged). A topics file is a golden file whose rows need no
``expected`` (``{"id": "301", "question": "..."}``), or TREC's tab-separated ``qid<TAB>text`` lines.

The labelled questions are then one golden file, written as ``save_questions`` writes it: that is
the file a run keeps (``golden_dataset/<sha256>.jsonl``) and whose sha256 names it, so the run can be
made again from the store alone. The qrels' ``%XX`` escapes (``report.trec``'s, for ids with spaces)
are read back.
"""
from __future__ import annotations

import dataclasses
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping
from urllib.parse import unquote

from ..errors import GoldenFileError, at_most
from ..jsonl import as_utf8, decode_text
from ..store.sources import Fetcher
from .records import MAX_GRADE, Golden, Question, parse_expected, split_grades
from .scan import load_raw
from .wording import line_list, plural, quoted

_WHOLE_GRADE = re.compile(r"(?P<number>[-+]?[0-9]{1,30})(?:\.0*)?")
QRELS_MAX_BYTES = 256 * 1024 * 1024  # TREC collections' qrels run to tens of MB; past this it is not qrels


@dataclass(frozen=True)
class Qrels:
    """A qrels file read: per question id, each judged docno with its grade, in the file's order."""

    source: str
    labels: dict[str, dict[str, int]]
    negative: int = 0  # grades below 0 (TREC's "junk" -1, -2), read as 0: judged, not relevant


def read_qrels(source: str | Path, *, fetcher: Fetcher | None = None, encoding: str | None = None) -> Qrels:
    """The qrels at ``source`` (a path, ``s3://`` or Blob address), read as UTF-8 unless ``encoding``
    names another; a ``GoldenFileError`` naming the file, every bad line (at most 20 shown) and the fix,
    when any line is not ``qid 0 docno grade``, and the line and the encoding it looks like when it is not
    UTF-8."""
    try:
        raw = load_raw(source, fetcher=fetcher, max_bytes=QRELS_MAX_BYTES, setting="the qrels limit")
    except GoldenFileError as err:  # load_raw speaks of golden files
        raise GoldenFileError(str(err).replace("golden file", "qrels file")) from None
    text, why = decode_text(raw, encoding)
    if text is None:
        raise GoldenFileError(f"{source}: {why}")
    labels: dict[str, dict[str, int]] = {}
    first_line: dict[tuple[str, str], int] = {}
    problems: list[str] = []
    negative = 0
    for number, line in enumerate(text.splitlines(), start=1):
        fields = line.split()
        if not fields or fields[0].startswith("#"):
            continue
        if len(fields) != 4:
            problems.append(f"line {number}: {len(fields)} fields; a qrels line is `qid 0 docno grade`, "
                            "as in `q7 0 report.pdf 2`")
            continue
        qid, _, docno, grade_text = (unquote(f) if "%" in f else f for f in fields)
        whole = _WHOLE_GRADE.fullmatch(grade_text)  # 2.0 is 2, as a CSV or pandas export writes grades
        if whole is None:
            problems.append(f"line {number}: grade {quoted(grade_text)} is not a whole number; write 0 (judged, "
                            f"not relevant) to {MAX_GRADE}")
            continue
        grade = int(whole.group("number"))
        if grade > MAX_GRADE:
            problems.append(f"line {number}: grade {grade} is over {MAX_GRADE}; check the fourth field")
            continue
        try:
            parse_expected(docno)
        except ValueError as err:
            problems.append(f"line {number}: {err}")
            continue
        if (qid, docno) in first_line:
            problems.append(f"line {number}: {quoted(docno)} is judged again for {quoted(qid)} (first on line "
                            f"{first_line[qid, docno]}); judge each document once per question")
            continue
        first_line[qid, docno] = number
        if grade < 0:
            negative += 1
            grade = 0
        labels.setdefault(qid, {})[docno] = grade
    if problems:
        shown = at_most([f"  {p}" for p in problems], indent="  ")
        raise GoldenFileError(
            "\n".join([f"{source}: {plural(len(problems), 'line')} cannot be read as qrels:", *shown])
        )
    if not labels:
        raise GoldenFileError(f"{source}: no judgement in the file; a qrels file holds `qid 0 docno grade` lines")
    return Qrels(source=str(source), labels=labels, negative=negative)


def with_qrels(golden: Golden, qrels: Qrels) -> tuple[list[Question], list[str]]:
    """``golden``'s questions labelled by ``qrels`` (see the module docstring), the ones a run keeps; and the
    sentences worth a warning (labels replaced, topics left out, qrels for no question). ``read`` makes
    them the one golden file a run keeps (``questions_jsonl``)."""
    kept, replaced, unjudged = [], [], []
    for question in golden.questions:
        grades = qrels.labels.get(question.id or "")
        if grades is not None:
            if question.judgements:
                replaced.append(question)
            expected, graded = split_grades(grades)
            kept.append(dataclasses.replace(question, expected=expected, grades=graded))
        elif question.expected:
            kept.append(question)
        else:
            unjudged.append(question)
    asked = {q.id for q in golden.questions}
    strangers = [qid for qid in qrels.labels if qid not in asked]
    said = []
    if replaced:
        said.append(f"{golden.source}: the labels of {plural(len(replaced), 'question')} are {qrels.source}'s, not "
                    f"the file's own ({_lines(replaced)})")
    if unjudged:
        said.append(f"{golden.source}: {plural(len(unjudged), 'question')} {qrels.source} does not judge and the "
                    f"file does not label are left out ({_lines(unjudged)})")
    if strangers:
        shown = ", ".join(quoted(q) for q in strangers[:5]) + (
            f" and {len(strangers) - 5} more" if len(strangers) > 5 else ""
        )
        said.append(f"{qrels.source}: {plural(len(strangers), 'question id')} not in {golden.source} ({shown}); "
                    "their judgements are not used")
    if qrels.negative:
        said.append(f"{qrels.source}: {plural(qrels.negative, 'grade')} below 0 read as 0 (judged, not relevant)")
    if not kept:
        raise GoldenFileError(f"{qrels.source} judges none of the questions of {golden.source}; the qrels' first "
                              f"field must be the golden file's question ids (such as "
                              f"{quoted(golden.questions[0].id or 'q1')})"
                              if golden.questions else f"{golden.source} holds no question")
    return kept, said


def _lines(questions: list[Question]) -> str:
    lines = [q.line for q in questions if q.line is not None]
    return line_list(lines) if lines else ", ".join(str(q.id) for q in questions[:5])


def golden_rows(raw: bytes, source: str | Path, qrels: Qrels | None, encoding: str | None = None) -> bytes:
    """The bytes a golden file's scan reads, made once for every reader (``read_golden``, ``check_golden``):
    ``raw`` as UTF-8 (read as ``encoding`` when it names another), and a ``.tsv`` source's topics as rows
    without labels, which only ``qrels`` can label. ``GoldenFileError`` for a ``.tsv`` without qrels and
    for text that is not ``encoding``."""
    raw, why = as_utf8(raw, encoding)
    if why is not None:
        raise GoldenFileError(f"{source}: {why}")
    if not str(source).lower().endswith(".tsv"):
        return raw
    if qrels is None:
        raise GoldenFileError(f"{source}: a topics file (qid<TAB>question) holds no labels; give the judgements "
                              "with --qrels FILE (qrels= in the library)")
    return topics_tsv_rows(raw, source)


def topics_tsv_rows(raw: bytes, source: str | Path) -> bytes:
    """TREC's tab-separated topics, ``qid<TAB>text`` a line, as golden-file rows without labels (for
    ``with_qrels``); a ``GoldenFileError`` naming a line without its tab, or a line that is not UTF-8 (with
    the encoding it looks like: a question read with a character replaced would be another question)."""
    text, why = decode_text(raw)
    if text is None:
        raise GoldenFileError(f"{source}: {why}")
    rows = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        qid, tab, text = line.partition("\t")
        if not tab or not qid.strip() or not text.strip():
            raise GoldenFileError(f"{source}: line {number} is not `qid<TAB>question`; a topics file holds one "
                                  "question a line, its id, a tab, then its text")
        rows.append(json.dumps({"id": qid.strip(), "question": text.strip()}, ensure_ascii=False))
    return ("\n".join(rows) + "\n").encode("utf-8")


def labels_of(qrels: Qrels | None) -> Mapping[str, Mapping[str, int]] | None:
    """The per-question labels the scan takes (None without qrels)."""
    return None if qrels is None else qrels.labels
