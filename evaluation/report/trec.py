"""A report's results as CSV tables and TREC files, and TREC runs scored against a golden file.

TREC files are how other tools (trec_eval, pytrec_eval, ir_measures, ranx) read a run:

    run     qid Q0 docno rank score tag        (tag = the setup key)
    qrels   qid 0 docno grade                  (one line per judged unit; grade 0: judged, not relevant)

A docno is the unit judged at the report's grain (``by``, see ``scoring.judging``), read as the report
reads a rank (``rank_among``), so trec_eval, ir_measures, ranx and ``score`` give the report's own
numbers on the files (``trec_docnos``):

- ``doc``: the document id, or ``x.pdf#page=4`` for a result on a page the question judges.
- ``chunk``: the chunk id.
- among ``documents``: each unit once, at its first result. Among ``results``: one line per result, a
  unit's later results under docnos no question judges (their chunk ids), so they take up positions.
- ``evidence``: refused. Quotes are not TREC units; export at ``doc`` instead.

TREC fields are split on whitespace, so ``%``, whitespace and control characters inside an id are
written as ``%25``, ``%20``, ``%1B`` ... and ``read_trec_run`` reads them back. CSV cells that a
spreadsheet would run as a formula (starting with ``=``, ``+``, ``-``, ``@``, tab or CR) are written
with a leading ``'``, so an id ``=HYPERLINK(...)`` is shown, never run.

Reading a run orders each question's results as trec_eval does: score descending, then docno
descending (byte order of the docno as written in the file), whatever the rank column says; with
``order="rank"``, by the rank column instead (then the line order). So ``score`` gives trec_eval's
numbers on any run, ties included (``scoring.metrics`` says where its metrics equal trec_eval's).
"""
from __future__ import annotations

import csv
import io
import logging
import math
import re
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence
from urllib.parse import unquote

from ..errors import EvaluationError, GoldenFileError, did_you_mean, shown
from ..files import OutputKind, write_whole
from ..golden import Question
from ..golden.records import known_id
from ..measures import MRR, NDCG_10
from ..scoring.judging import Rule, judge, ranked_units, row_units
from ..settings import DEFAULT_MIN_GRADE, DEFAULT_RANK_AMONG, RANK_AMONG
from ..scoring.metrics import CUTOFFS, outcome_arrays, recall_matrix, score_matrix, summarise
from ..store.report_parts import SetupResult
from ..store.sources import Fetcher, read_bytes
from ..target import Hit
from .race_words import stopped_sentence

log = logging.getLogger(__name__)

TREC_GRAINS = ("doc", "chunk")
ORDERS = ("trec_eval", "rank")
# Whitespace splits TREC fields; control characters (NUL, ESC, DEL, C1 ...) would reach a terminal or a
# tool reading the file raw: both are written %XX, as is "%" itself, and read back by read_trec_run.
_ESCAPE = re.compile(r"[%\s\x00-\x1f\x7f-\x9f\ud800-\udfff]")  # a lone surrogate (an escape in an old report) too
# A cell a spreadsheet would run as a formula starts with one of these (OWASP, "CSV Injection").
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")

Run = dict[str, dict[str, list[Hit]]]  # tag -> question id -> hits, best first


# -- CSV ------------------------------------------------------------------------------------------

_SETUPS_COLUMNS = ["rank", "key", "method_label", "questions", *[f"found@{k}" for k in CUTOFFS],
                   *[f"recall@{k}" for k in CUTOFFS], *(m.summary_path[0] for m in (MRR, NDCG_10)), "median_ms",
                   "p95_ms", "timed", "error"]
# "stopped": why the race stopped a setup, in words; its other cells are empty (its numbers are over the
# questions it searched, which the sentence gives, never in the columns every question fills)
SETUPS_HEADER = [*_SETUPS_COLUMNS, "stopped"]
QUESTIONS_HEADER = ["key", "question_id", "first_relevant"]
_TREC_RUN_LINE = re.compile(rb"\S+ Q0 \S+ \d+ \S+ \S+\n")
_TREC_QRELS_LINE = re.compile(rb"\S+ 0 \S+ \d+\n")

# What `runs export` writes, each told by its first line, so it replaces only an export of its own kind.
SETUPS_CSV = OutputKind("setups CSV table", own=lambda head: head.startswith(",".join(_SETUPS_COLUMNS).encode()),
                        example="setups.csv")  # tables written before "stopped" are this kind too
QUESTIONS_CSV = OutputKind("questions CSV table",
                           own=lambda head: head.startswith(",".join(QUESTIONS_HEADER).encode()),
                           example="questions.csv")
TREC_RUN = OutputKind("TREC run file", own=lambda head: _TREC_RUN_LINE.match(head) is not None,
                      example="run.trec")
TREC_QRELS = OutputKind("TREC qrels file", own=lambda head: _TREC_QRELS_LINE.match(head) is not None,
                        example="qrels.trec")


def export_csv(report: Mapping[str, Any], path: str | Path) -> Path:
    """One row per setup, in rank order (failed and stopped setups last): found@k and recall@k shares, MRR,
    nDCG@10, times. A setup the race stopped has the questions it searched and, under ``stopped``, why
    and its found@10 over those (``race_words``); no number over every question, since it has none."""
    header = SETUPS_HEADER
    rows = []
    for setup in sorted(report["setups"], key=lambda s: (s.get("rank") is None, s.get("rank") or 0)):
        summary = setup.get("summary") or {}
        found, recall = summary.get("found") or {}, summary.get("recall") or {}
        stopped = setup.get("stopped") if isinstance(setup.get("stopped"), Mapping) else None
        searched = len(stopped.get("questions") or []) if stopped else summary.get("questions")
        rows.append([setup.get("rank"), setup["key"], setup.get("method_label"), searched,
                     *[found.get(str(k)) for k in CUTOFFS], *[recall.get(str(k)) for k in CUTOFFS],
                     MRR.of(summary), NDCG_10.of(summary), summary.get("median_ms"), summary.get("p95_ms"),
                     summary.get("timed"), setup.get("error"),
                     stopped_sentence(SetupResult.from_json(setup)) if stopped else None])
    return _write_csv(path, header, rows)


def export_questions_csv(report: Mapping[str, Any], path: str | Path) -> Path:
    """One row per (setup, question): the position of the first relevant result, empty when none. A setup
    the race stopped has rows for the questions it searched only (the setups table says so)."""
    rows = [[setup["key"], qid, (setup.get("ranks") or {}).get(qid)]
            for setup in report["setups"] for qid in searched_ids(report, setup)]
    return _write_csv(path, QUESTIONS_HEADER, rows)


def searched_ids(report: Mapping[str, Any], setup: Mapping[str, Any]) -> list[str]:
    """The report's questions ``setup`` was searched on, in the report's order: all of them, or for a
    setup the race stopped (``stopped``) only those it searched."""
    stopped = setup.get("stopped")
    if isinstance(stopped, Mapping):
        searched = set(stopped.get("questions") or ())
        return [qid for qid in report["question_ids"] if qid in searched]
    return list(report["question_ids"])


def _write_csv(path: str | Path, header: list[str], rows: Iterable[list]) -> Path:
    """The table written whole, or nothing there (``files.write_whole``: a lone surrogate, a ``"\\ud800"``
    escape an old report kept, is written as its escape)."""
    out = io.StringIO(newline="")
    writer = csv.writer(out)
    writer.writerow(header)
    writer.writerows([[_cell(v) for v in row] for row in rows])
    write_whole(path, out.getvalue(), what="the table")
    return Path(path)


def _cell(value: Any) -> Any:
    """A CSV cell: empty for None; text a spreadsheet would run (``=HYPERLINK(...)``, ``@SUM``, ``-2+3``)
    gets a leading ``'`` so it is read as text, as OWASP advises; numbers are written as they are."""
    if value is None:
        return ""
    if isinstance(value, str) and value.startswith(_FORMULA_START):
        return "'" + value
    return value


# -- TREC export ----------------------------------------------------------------------------------

def export_trec(report: Mapping[str, Any], run_path: str | Path, qrels_path: str | Path, *,
                by: str | None = None, rank_among: str | None = None,
                setup_paths: Mapping[str, str | Path] | None = None) -> tuple[Path, ...]:
    """Write every setup's results as one TREC run, and the questions' judgements as graded qrels.

    ``by`` and ``rank_among`` default to the report's own (``rules``), so trec_eval, ir_measures, ranx
    or ``score`` give on these files the report's found@k, MRR, nDCG@10 and recall@k exactly (see
    ``trec_docnos``; relevance level = the report's ``min_grade``). Scores are synthetic,
    ``depth - rank + 1``, strictly descending, so every tool's own sort (score, then docno) keeps our
    order. ``setup_paths`` (setup key -> path) also writes each setup's lines to a file of its own: a
    tool that loads one file as one run (ranx, ir_measures) would otherwise merge the setups. Failed
    setups, and questions a setup returned nothing for, write no lines; a setup the race stopped writes
    the questions it searched only. The qrels hold every judged unit of every scored question with its
    grade (0 = judged, not relevant).
    """
    by = by or report.get("by", "doc")
    if by == "evidence":
        raise EvaluationError("a report judged by evidence cannot be written as TREC files: quotes are not "
                              "TREC units; export it at document grain (--by doc)")
    if by not in TREC_GRAINS:
        raise EvaluationError(f"unknown grain {by!r} for TREC files; use one of {', '.join(TREC_GRAINS)} "
                              "(a page named in expected is written as doc#page=N at doc)")
    rank_among = rank_among or (report.get("rules") or {}).get("rank_among") or DEFAULT_RANK_AMONG
    if rank_among not in RANK_AMONG:
        raise EvaluationError(f"unknown reading {rank_among!r}; rank among one of {', '.join(RANK_AMONG)}"
                              f"{did_you_mean(str(rank_among), RANK_AMONG)}")
    depth = int(report["depth"])
    questions = {known_id(q): q for q in report_questions(report)}
    per_setup: dict[str, list[str]] = {}
    for setup in report["setups"]:
        if setup.get("error"):
            continue
        lines = per_setup.setdefault(setup["key"], [])
        for qid in searched_ids(report, setup):
            question = questions.get(qid) or Question(id=qid, question="")
            docnos = trec_docnos(question, (setup.get("results") or {}).get(qid) or [], by, rank_among)
            lines += [f"{_escape(qid)} Q0 {_escape(d)} {rank} {depth - rank + 1} {_escape(setup['key'])}"
                      for rank, d in enumerate(docnos, start=1)]
    qrel_lines = [f"{_escape(qid)} 0 {_escape(unit)} {grade}" for qid, q in questions.items()
                  for unit, grade in q.judgements.items()]
    written = [_write_lines(run_path, [line for lines in per_setup.values() for line in lines], "the TREC run"),
               _write_lines(qrels_path, qrel_lines, "the qrels")]
    for key, path in (setup_paths or {}).items():
        if key in per_setup:
            written.append(_write_lines(path, per_setup[key], f"{key}'s TREC run"))
    return tuple(written)


def report_questions(report: Mapping[str, Any]) -> list[Question]:
    """A report's questions as ``Question``s with no text (``id``, ``expected`` and ``grades``): what its
    judging read, for judging its kept results again."""
    return [Question(id=q["id"], question="", expected=tuple(q.get("expected") or ()),
                     grades=tuple((q.get("grades") or {}).items())) for q in report.get("questions") or []]


def trec_docnos(question: Question, rows: Sequence[Sequence[Any]], by: str, rank_among: str) -> list[str]:
    """A result list's docnos, best first: each result's unit (``judging.result_units``: a document, a
    judged page ``doc#page=N``, or a chunk), read as the report reads a rank.

    Among ``documents``, each unit once, at its first result. Among ``results``, one line per result: a
    unit's first result is the unit, and each later result of it takes its place under a docno no
    question judges (its chunk id, else the chunk id with ``#repeat=N``), so its position counts as
    the report counts it and nothing is found twice.
    """
    units = row_units(question, rows, by)
    if rank_among == "documents":
        return ranked_units(units, rank_among)
    taken = set(units) | set(question.judgements)
    seen: set[str] = set()
    docnos = []
    for unit, row in zip(units, rows, strict=True):
        if unit not in seen:
            seen.add(unit)
            docnos.append(unit)
            continue
        docno, n = str(row[0]), 1
        while docno in taken:
            n += 1
            docno = f"{row[0]}#repeat={n}"
        taken.add(docno)
        docnos.append(docno)
    return docnos


def unique_file_names(keys: Sequence[str]) -> list[str]:
    """A file name part per setup key, for its own run file: the key with any character but letters,
    digits and ``._+-@`` written ``_`` (a key read from a stored report may hold anything, ``../``
    included), at most 120 characters, and ``-2``, ``-3`` ... after a name already given."""
    names: list[str] = []
    for key in keys:
        base = re.sub(r"[^A-Za-z0-9._+@-]", "_", key).lstrip(".")[:120] or "setup"
        name, n = base, 1
        while name in names:
            n += 1
            name = f"{base}-{n}"
        names.append(name)
    return names


def _write_lines(path: str | Path, lines: Sequence[str], what: str) -> Path:
    write_whole(path, "".join(line + "\n" for line in lines), what=what)
    return Path(path)


def _escape(text: str) -> str:
    return _ESCAPE.sub(lambda m: "".join(f"%{b:02X}" for b in m.group().encode("utf-8", "surrogatepass")), str(text))


# -- TREC import and scoring ----------------------------------------------------------------------

def read_trec_run(path: str | Path, *, order: str = "trec_eval", fetcher: Fetcher | None = None) -> Run:
    """Every tag's results per question, from a TREC run file (a path, an ``s3://`` or Blob address, read
    by ``fetcher.fetch(uri)`` when one is given).

    ``order="trec_eval"`` (default): score descending, then docno descending as written in the file,
    trec_eval's own sort, so ties come out as trec_eval ranks them and the rank column is ignored.
    ``order="rank"``: the rank column ascending, then the line order, for runs whose ranks are
    meant to decide (scores then play no part). A docno is taken literally, as trec_eval matches it
    to the qrels: ``a.pdf#page=3`` is found where a question judges that page, never as ``a.pdf``. A bad line, or a
    docno twice for one question and tag (which trec_eval and pytrec_eval refuse too), is an ``EvaluationError`` naming
    the file and the line.
    """
    if order not in ORDERS:
        raise EvaluationError(f"unknown order {order!r} for a TREC run; use one of {', '.join(ORDERS)}"
                              f"{did_you_mean(str(order), ORDERS)}")
    try:
        text = read_bytes(path, fetcher=fetcher).decode("utf-8-sig")
    except FileNotFoundError as err:
        raise EvaluationError(f"{path}: no such run file") from err
    except OSError as err:
        raise EvaluationError(
            f"{path}: cannot read the run file ({err.strerror or err}); give a TREC run file"
        ) from err
    except UnicodeDecodeError as err:
        raise EvaluationError(f"{path}: not UTF-8 text ({err}); a TREC run is a text file") from err
    rows: dict[str, dict[str, list[tuple[float, str, int, int, str]]]] = {}
    seen: dict[tuple[str, str, str], int] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        fields = line.split()
        if not fields:
            continue
        where = f"{path}: line {number}"
        if len(fields) != 6:
            raise EvaluationError(f"{where}: {len(fields)} fields; a TREC run line is "
                                  "`qid Q0 docno rank score tag`")
        raw_docno = fields[2]
        qid, _, docno, rank_text, score_text, tag = (unquote(f) if "%" in f else f for f in fields)
        try:
            rank, score = int(rank_text), float(score_text)
        except ValueError as err:
            raise EvaluationError(f"{where}: rank {shown(rank_text)} must be a whole number and score "
                                  f"{shown(score_text)} a number") from err
        if not math.isfinite(score):
            raise EvaluationError(f"{where}: score {shown(score_text)} is not a finite number")
        if (tag, qid, docno) in seen:
            raise EvaluationError(f"{where}: {docno} is already ranked for {qid} by {tag} "
                                  f"(line {seen[tag, qid, docno]}); keep each docno once per question")
        seen[tag, qid, docno] = number
        rows.setdefault(tag, {}).setdefault(qid, []).append((score, raw_docno, rank, number, docno))
    if order == "trec_eval":
        # both descending: trec_eval compares docnos with strcmp, and for UTF-8 text byte order is
        # code point order, which is how Python compares strings
        arrange = lambda found: sorted(found, key=lambda r: (r[0], r[1]), reverse=True)  # noqa: E731
    else:
        arrange = lambda found: sorted(found, key=lambda r: (r[2], r[3]))  # noqa: E731
    return {tag: {qid: [_hit(r[4], r[0]) for r in arrange(found)] for qid, found in per_question.items()}
            for tag, per_question in rows.items()}


def _nothing_to_score(golden: Any, min_grade: int) -> str:
    """Why no question of ``golden`` can be scored, in the words ``golden check`` and ``evaluate`` use: grades
    all below ``--min-grade``, every judged document graded 0, or no labels at all."""
    from ..golden.scan import unlabelled_problem

    if min_grade > DEFAULT_MIN_GRADE and any(q.relevant(DEFAULT_MIN_GRADE) for q in golden.labelled):
        return (f"no question has a document graded {min_grade} or more, so nothing can be scored at that relevance "
                "level; lower --min-grade")
    problem = unlabelled_problem(golden.questions, golden.format)
    if problem is not None:
        return problem.message
    return 'no question has expected documents yet, so there is nothing to score; fill in "expected" and run again'


def _hit(docno: str, score: float) -> Hit:
    """A docno as a hit, taken literally: the docno is the unit (``a.pdf#page=3`` is found only where a
    question judges exactly that page), as trec_eval matches docnos to qrels."""
    return Hit(id=docno, doc_id=docno, page=None, score=score)


def score_run(golden: Any, run: Mapping[str, Mapping[str, Sequence[Hit]]], by: str = "doc", *,
              min_grade: int = DEFAULT_MIN_GRADE) -> dict[str, dict]:
    """Each tag's summary on the golden file's questions with a unit graded ``min_grade`` or more, judged
    as trec_eval judges a run at that relevance level: each docno is the unit it names.

    A scored question absent from the run counts as nothing found. The summary is
    ``metrics.summarise``'s, except ``mrr``, ``ndcg_10`` and ``recall`` at full precision (the report
    rounds them to 4 places), plus ``per_question``: ``{qid: {first, rr, ndcg_10, recall_10}}``, so any
    comparison can be recomputed. Judging by evidence is refused: a TREC run carries no text to find
    quotes in.
    """
    if by == "evidence":
        raise EvaluationError("a TREC run carries no text, so evidence quotes cannot be judged in it; "
                              "score it by doc or chunk")
    if getattr(golden, "problems", ()):
        log.warning("%s: %d row(s) with errors are left out of the scores; `python3 -m evaluation golden check %s` "
                    "says why", golden.source, len({p.line for p in golden.problems}), golden.source)
    questions = [q for q in golden.labelled if q.relevant(min_grade)]
    if not questions:
        raise GoldenFileError(f"{golden.source}: {_nothing_to_score(golden, min_grade)}")
    rule = Rule(by, "documents", min_grade)  # a TREC run holds each docno once per question: its own reading
    known = {q.id for q in questions}
    scored = {}
    for tag, per_question in run.items():
        strangers = sorted(set(per_question) - known)
        if strangers:
            log.warning("run %s answers %d question(s) that are not labelled in %s (left out): %s",
                        tag, len(strangers), golden.source, ", ".join(strangers[:10]))
        outcomes = [judge(q, per_question.get(q.id, ()), rule) for q in questions]
        scores = score_matrix(*outcome_arrays(outcomes))
        recall = recall_matrix(outcomes)
        summary = summarise(outcomes)
        summary[MRR.summary_path[0]] = float(scores["rr"].mean())
        summary[NDCG_10.summary_path[0]] = float(scores["ndcg_10"].mean())
        summary["recall"] = {str(k): float(shares.mean()) for k, shares in recall.items()}
        summary["per_question"] = {o.question_id: {"first": o.first, "rr": float(rr), "ndcg_10": float(nd),
                                                   "recall_10": float(r10)}
                                   for o, rr, nd, r10 in zip(outcomes, scores["rr"], scores["ndcg_10"],
                                                             recall[10], strict=True)}
        scored[tag] = summary
    return scored
