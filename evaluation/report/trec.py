"""A report's results as CSV tables and TREC files, and TREC runs scored against a golden file.

TREC files are how other tools (trec_eval, pytrec_eval, ir_measures, ranx) read a run:

    run     qid Q0 docno rank score tag        (tag = the setup key)
    qrels   qid 0 docno 1                      (one line per expected unit)

A docno is the unit judged at the report's grain (``by``):

- ``doc``: the document id. Each document is written once per question, at its first hit (later
  chunks of it are dropped, so positions can move up against the report's, which count chunks). An
  expected page, ``x.pdf#page=4``, stays that docno, and a hit on that page is written as it.
- ``chunk``: the chunk id.
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
import logging
import math
import re
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence
from urllib.parse import unquote

from ..errors import EvaluationError, GoldenFileError, did_you_mean
from ..golden import parse_expected
from ..measures import MRR, NDCG_10
from ..scoring.judging import judge
from ..scoring.metrics import CUTOFFS, outcome_arrays, recall_matrix, score_matrix, summarise
from ..store.sources import Fetcher, read_bytes
from ..target import Hit

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

def export_csv(report: Mapping[str, Any], path: str | Path) -> Path:
    """One row per setup, in rank order (failed setups last): found@k and recall@k shares, MRR, nDCG@10,
    times."""
    header = ["rank", "key", "method_label", "questions", *[f"found@{k}" for k in CUTOFFS],
              *[f"recall@{k}" for k in CUTOFFS], *(m.summary_path[0] for m in (MRR, NDCG_10)), "median_ms", "p95_ms", "timed", "error"]
    rows = []
    for setup in sorted(report["setups"], key=lambda s: (s.get("rank") is None, s.get("rank") or 0)):
        summary = setup.get("summary") or {}
        found, recall = summary.get("found") or {}, summary.get("recall") or {}
        rows.append([setup.get("rank"), setup["key"], setup.get("method_label"), summary.get("questions"),
                     *[found.get(str(k)) for k in CUTOFFS], *[recall.get(str(k)) for k in CUTOFFS],
                     MRR.of(summary), NDCG_10.of(summary), summary.get("median_ms"), summary.get("p95_ms"),
                     summary.get("timed"), setup.get("error")])
    return _write_csv(path, header, rows)


def export_questions_csv(report: Mapping[str, Any], path: str | Path) -> Path:
    """One row per (setup, question): the position of the first relevant result, empty when none."""
    rows = [[setup["key"], qid, (setup.get("ranks") or {}).get(qid)]
            for setup in report["setups"] for qid in report["question_ids"]]
    return _write_csv(path, ["key", "question_id", "first_relevant"], rows)


def _write_csv(path: str | Path, header: list[str], rows: Iterable[list]) -> Path:
    path = Path(path)
    # a lone surrogate (a "\ud800" escape an old report kept) is no character: written as its escape
    with path.open("w", encoding="utf-8", errors="backslashreplace", newline="") as out:
        writer = csv.writer(out)
        writer.writerow(header)
        writer.writerows([[_cell(v) for v in row] for row in rows])
    return path


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
                by: str | None = None) -> tuple[Path, Path]:
    """Write every setup's results as a TREC run and the questions' expected units as qrels.

    ``by`` defaults to the report's grain (see the module docstring). Scores are synthetic,
    ``depth - rank + 1``, strictly descending, so trec_eval's own sort (score, then docno) keeps our
    order exactly. Failed setups, and questions a setup returned nothing for, write no lines.
    """
    by = by or report.get("by", "doc")
    if by == "evidence":
        raise EvaluationError("a report judged by evidence cannot be written as TREC files: quotes are not "
                              "TREC units; export it at document grain (--by doc)")
    if by not in TREC_GRAINS:
        raise EvaluationError(f"unknown grain {by!r} for TREC files; use one of {', '.join(TREC_GRAINS)} "
                              "(a page named in expected is written as doc#page=N at doc)")
    depth = int(report["depth"])
    questions = {q["id"]: q for q in report["questions"]}
    run_lines = []
    for setup in report["setups"]:
        if setup.get("error"):
            continue
        for qid in report["question_ids"]:
            pages = _expected_pages(questions[qid]["expected"]) if qid in questions else set()
            units = _units((setup.get("results") or {}).get(qid) or [], by, pages)
            run_lines += [f"{_escape(qid)} Q0 {_escape(u)} {rank} {depth - rank + 1} {_escape(setup['key'])}"
                          for rank, u in enumerate(units, start=1)]
    qrel_lines = [f"{_escape(q['id'])} 0 {_escape(e)} 1" for q in report["questions"] for e in dict.fromkeys(q["expected"])]
    run_path, qrels_path = Path(run_path), Path(qrels_path)
    run_path.write_text("".join(line + "\n" for line in run_lines), encoding="utf-8")
    qrels_path.write_text("".join(line + "\n" for line in qrel_lines), encoding="utf-8")
    return run_path, qrels_path


def _expected_pages(expected: Sequence[str]) -> set[tuple[str, int]]:
    pages = set()
    for text in expected:
        try:
            item = parse_expected(text)
        except ValueError:  # a stored report edited by hand: the item is a docno as written
            continue
        if item.page is not None:
            pages.add((item.doc_id, item.page))
    return pages


def _units(rows: Sequence[Sequence[Any]], by: str, expected_pages: set[tuple[str, int]]) -> list[str]:
    """The docnos of a result list at grain ``by``, each kept at its first position."""
    units: dict[str, None] = {}
    for chunk_id, doc_id, page, *_scores in rows:  # [id, doc_id, page, score, reranker score?]
        if by == "chunk":
            unit = chunk_id
        elif page is not None and (doc_id, page) in expected_pages:
            unit = f"{doc_id}#page={page}"
        else:
            unit = doc_id
        units.setdefault(unit)
    return list(units)


def _escape(text: str) -> str:
    return _ESCAPE.sub(lambda m: "".join(f"%{b:02X}" for b in m.group().encode("utf-8", "surrogatepass")), str(text))


# -- TREC import and scoring ----------------------------------------------------------------------

def read_trec_run(path: str | Path, *, order: str = "trec_eval", fetcher: Fetcher | None = None) -> Run:
    """Every tag's results per question, from a TREC run file (a path, an ``s3://`` or Blob address, read
    by ``fetcher.fetch(uri)`` when one is given).

    ``order="trec_eval"`` (default): score descending, then docno descending as written in the file,
    trec_eval's own sort, so ties come out as trec_eval ranks them and the rank column is ignored.
    ``order="rank"``: the rank column ascending, then the line order, for runs whose ranks are
    meant to decide (scores then play no part). A docno ``a.pdf#page=3`` is a hit on page 3 of
    ``a.pdf``. A bad line, or a docno twice for one question and tag (which trec_eval and pytrec_eval
    refuse too), is an ``EvaluationError`` naming the file and the line.
    """
    if order not in ORDERS:
        raise EvaluationError(f"unknown order {order!r} for a TREC run; use one of {', '.join(ORDERS)}"
                              f"{did_you_mean(str(order), ORDERS)}")
    try:
        text = read_bytes(path, fetcher=fetcher).decode("utf-8-sig")
    except FileNotFoundError as err:
        raise EvaluationError(f"{path}: no such run file") from err
    except OSError as err:
        raise EvaluationError(f"{path}: cannot read the run file ({err.strerror or err}); give a TREC run file") from err
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
            raise EvaluationError(f"{where}: rank {rank_text!r} must be a whole number and score "
                                  f"{score_text!r} a number") from err
        if not math.isfinite(score):
            raise EvaluationError(f"{where}: score {score_text!r} is not a finite number")
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


def _hit(docno: str, score: float) -> Hit:
    try:
        item = parse_expected(docno)
    except ValueError:  # not a page a golden file could name: the whole docno is the document
        return Hit(id=docno, doc_id=docno, page=None, score=score)
    return Hit(id=docno, doc_id=item.doc_id, page=item.page, score=score)


def score_run(golden: Any, run: Mapping[str, Mapping[str, Sequence[Hit]]], by: str = "doc") -> dict[str, dict]:
    """Each tag's summary on the golden file's labelled questions, judged like a report's setups.

    A labelled question absent from the run counts as nothing found. The summary is
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
    questions = list(golden.labelled)
    if not questions:
        raise GoldenFileError(f"{golden.source}: no question has expected documents yet, so there is "
                              "nothing to score; fill in \"expected\" and run again")
    known = {q.id for q in questions}
    scored = {}
    for tag, per_question in run.items():
        strangers = sorted(set(per_question) - known)
        if strangers:
            log.warning("run %s answers %d question(s) that are not labelled in %s (left out): %s",
                        tag, len(strangers), golden.source, ", ".join(strangers[:10]))
        outcomes = [judge(q, per_question.get(q.id, ()), by) for q in questions]
        scores = score_matrix(*outcome_arrays(outcomes))
        recall = recall_matrix(outcomes)
        summary = summarise(outcomes)
        summary[MRR.summary_path[0]] = float(scores["rr"].mean())
        summary[NDCG_10.summary_path[0]] = float(scores["ndcg_10"].mean())
        summary["recall"] = {str(k): float(shares.mean()) for k, shares in recall.items()}
        summary["per_question"] = {o.question_id: {"first": o.first, "rr": float(rr), "ndcg_10": float(nd),
                                                   "recall_10": float(r10)}
                                   for o, rr, nd, r10 in zip(outcomes, scores["rr"], scores["ndcg_10"], recall[10])}
        scored[tag] = summary
    return scored
