"""A run as the rows Azure AI Foundry's Document Retrieval evaluator takes, and such rows read back.

One JSON object a line, one line a question (JSONL, UTF-8):

    {"query_id": "q1",
     "retrieval_ground_truth": [{"document_id": "a.md", "query_relevance_label": 3}, ...],
     "retrieved_documents": [{"document_id": "b.md", "relevance_score": 10.0}, ...],
     "rank_among": "results"}

``azure.ai.evaluation.evaluate(data=FILE, evaluators={"retrieval": DocumentRetrievalEvaluator()})`` reads
the two lists by name and passes ``query_id`` and ``rank_among`` through, so its rows join back to the
questions. Ids, numbers and the reading only: no question or document text is written, and none is
kept when rows are read (a row's other fields, such as ``query``, are passed over).

Written (``evaluator_rows``): one row per labelled question, in the order of the labels; each document
once (the evaluator would rank a document listed twice by its last score: ``scoring.azure_retrieval``,
fix 1); scores made from the rank, n for the first of n down to 1, because the evaluator ranks by
score, and these keep the run's order exactly. A question with no labels gets no row: the evaluator
refuses a row without ``retrieval_ground_truth``.

A run's rows (``report_evaluator_rows``) read ranks as the run did (``rank_among``, said in each row),
with the ids of its TREC run (``report.trec.trec_docnos``): among documents, each unit once at its first
result; among results, one id a result, a unit's later results under ids no question judges, so they
take up places as the report counts them. Such an id is labelled 0 when the unit it repeats is
labelled (judged, and not relevant again), so the evaluator neither finds it twice nor counts it a
hole; a later result of an unlabelled unit stays unlabelled, a hole of its own. So the evaluator gives
the report's ``summary.azure``, and ``score --azure-rows`` its found@k, MRR and nDCG@10, in either
reading.

Read (``read_evaluator_rows``): every line checked as the evaluator checks it, and more (ids are text,
labels whole numbers in the label range, one label a document, ``retrieved_documents`` present even
when empty, ``rank_among`` one of the readings and the same on every row that says one); every problem
is named with its line and the fix, and a file with any is refused whole. A row without ``query_id``
is ``q<line>``; rows without ``rank_among`` (a Foundry dataset's) are read as the evaluator reads
them, each document once at its best score: among documents.
"""
from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from difflib import get_close_matches
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

from ..errors import EvaluationError, InputTooLargeError, JsonLineError, LineProblem, at_most, nearest_file
from ..files import OutputKind, write_whole
from ..golden.wording import json_kind, quoted
from ..jsonl import file_wide, parse_line, read_lines
from ..golden import Question
from ..golden.records import known_id, split_grades
from ..scoring.azure_retrieval import AZURE_LABELS, LabelRange
from ..scoring.judging import row_units
from ..settings import DEFAULT_RANK_AMONG, RANK_AMONG
from ..store.sources import Fetcher, read_bytes
from .trec import report_questions, searched_ids, trec_docnos

log = logging.getLogger(__name__)

QUERY_ID = "query_id"
GROUND_TRUTH = "retrieval_ground_truth"
RETRIEVED = "retrieved_documents"
DOCUMENT_ID = "document_id"
LABEL = "query_relevance_label"
SCORE = "relevance_score"
READING = "rank_among"  # how the row's retrieved list reads a rank: "results" or "documents" (scoring.judging)
MAX_ITEMS = 10_000  # the evaluator refuses a list longer than this
ROW_EXAMPLE = (f'{{"{QUERY_ID}": "q1", "{GROUND_TRUTH}": [{{"{DOCUMENT_ID}": "a.md", "{LABEL}": 3}}], '
               f'"{RETRIEVED}": [{{"{DOCUMENT_ID}": "a.md", "{SCORE}": 2.0}}]}}')


@dataclass(frozen=True)
class EvaluatorRow:
    """One question's row: its id, its graded labels ``{document id: grade}``, and its retrieved list
    ``((document id, score), ...)`` as written (repeats kept: the evaluator's numbers depend on them);
    ``line`` is where it was read (None for a row made here); ``rank_among`` the reading the row says
    its list holds (None: it does not say)."""

    query_id: str
    labels: Mapping[str, int]
    retrieved: tuple[tuple[str, float], ...]
    line: int | None = None
    rank_among: str | None = None


# -- writing ----------------------------------------------------------------------------------------

def evaluator_rows(results: Mapping[str, Sequence[str]], labels: Mapping[str, Mapping[str, int]], *,
                   rank_among: str | None = None) -> list[dict]:
    """The evaluator's rows for one setup: ``results`` is each question's ranked document ids, best
    first (repeats allowed: a document's later chunks, kept at their first place); ``labels`` each
    question's grades; ``rank_among`` the reading the ids hold, said in each row when given. See the
    module docstring for the rules; questions the labels do not name are left out (logged)."""
    strangers = [qid for qid in results if qid not in labels]
    if strangers:
        log.warning("%d question(s) with results but no labels get no row: %s", len(strangers),
                    ", ".join(strangers[:10]))
    rows = []
    for qid, graded in labels.items():
        if not graded:
            continue
        ranked = list(dict.fromkeys(results.get(qid, ())))
        rows.append({
            QUERY_ID: qid,
            GROUND_TRUTH: [{DOCUMENT_ID: doc_id, LABEL: grade} for doc_id, grade in graded.items()],
            RETRIEVED: [{DOCUMENT_ID: doc_id, SCORE: float(len(ranked) - rank)} for rank, doc_id in enumerate(ranked)],
            **({READING: rank_among} if rank_among else {}),
        })
    return rows


def reading_rows(question: Question, rows: Sequence[Sequence[Any]], by: str,
                 rank_among: str) -> tuple[dict[str, int], list[str]]:
    """One question's labels and ranked ids as its evaluator row holds them in the reading ``rank_among``:
    the ids of the TREC run (``report.trec.trec_docnos``), and the question's grades with each id that
    stands for a labelled unit's later result labelled 0 (the module docstring says why)."""
    ids = trec_docnos(question, rows, by, rank_among)
    judged = question.judgements
    labels = dict(judged)
    if rank_among == "results":  # one id a result: an id that is not its result's unit stands for a repeat
        units = row_units(question, rows, by)
        labels.update((docno, 0) for docno, unit in zip(ids, units, strict=True) if docno != unit and unit in judged)
    return labels, ids


def report_evaluator_rows(report: Mapping[str, Any], setup_key: str, *, by: str | None = None,
                          rank_among: str | None = None) -> list[dict]:
    """``evaluator_rows`` for one setup of a report: each question's units (``reading_rows``) at the
    report's grain (or ``by``: doc or chunk), read as the report reads a rank (or ``rank_among``), with its
    graded labels; the rows the report's ``summary["azure"]`` was computed from when both are the report's."""
    by = by or report.get("by", "doc")
    if by == "evidence":
        raise EvaluationError("a run judged by evidence has no Azure evaluator rows: quotes are not documents the "
                              "evaluator ranks; write them at document grain (--by doc)")
    if by not in ("doc", "chunk"):
        raise EvaluationError(f"unknown grain {by!r} for evaluator rows; use doc or chunk")
    rank_among = rank_among or report_reading(report)
    if rank_among not in RANK_AMONG:
        raise EvaluationError(f"unknown reading {rank_among!r}; rank among one of {', '.join(RANK_AMONG)}")
    entry = next((s for s in report["setups"] if s["key"] == setup_key), None)
    if entry is None or entry.get("error"):
        raise EvaluationError(f"setup {setup_key!r} has no results in run {report.get('id')}")
    searched = set(searched_ids(report, entry))  # a setup the race stopped: the questions it searched only
    results: dict[str, list[str]] = {}
    labels: dict[str, dict[str, int]] = {}
    for question in report_questions(report):
        qid = known_id(question)
        if qid not in searched:
            continue
        labels[qid], results[qid] = reading_rows(question, (entry.get("results") or {}).get(qid) or [], by, rank_among)
    return evaluator_rows(results, labels, rank_among=rank_among)


def report_reading(report: Mapping[str, Any]) -> str:
    """How a report reads a rank (``rules.rank_among``; a report from before readings: among results)."""
    return (report.get("rules") or {}).get("rank_among") or DEFAULT_RANK_AMONG


# An evaluator rows file this tool wrote starts with a row's query id (``report.azure_rows``' own order).
AZURE_ROWS = OutputKind("Azure evaluator rows file", own=lambda head: head.startswith(b'{"query_id": '),
                        example="run.azure.jsonl")


def write_evaluator_rows(rows: Iterable[Mapping[str, Any]], path: str | Path) -> Path:
    """Write ``rows`` to ``path`` as JSONL (UTF-8, one row a line), whole or not at all; the path."""
    write_whole(path, "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows), what="the evaluator rows")
    return Path(path)


# -- reading ----------------------------------------------------------------------------------------

def read_evaluator_rows(source: str | Path, *, label_range: LabelRange = AZURE_LABELS,
                        fetcher: Fetcher | None = None, max_bytes: int | None = None) -> tuple[EvaluatorRow, ...]:
    """Every row of the evaluator's JSONL file at ``source`` (a path, an ``s3://`` or Blob address, read
    by ``fetcher`` when given), labels checked against ``label_range`` (the evaluator's
    ``ground_truth_label_min``/``max``). An ``EvaluationError`` names the file, each bad line and the
    fix; nothing is returned from a file with any."""
    try:
        raw = read_bytes(source, fetcher=fetcher, max_bytes=max_bytes)
    except InputTooLargeError as err:
        raise EvaluationError(f"{source}: over the limit of {err.limit:,} bytes; split the file") from None
    except FileNotFoundError as err:
        raise EvaluationError(f"{source}: no such file.{nearest_file(source)}") from err
    except OSError as err:
        raise EvaluationError(f"{source}: cannot read the file ({err.strerror or err}); give a JSONL file of the "
                              "evaluator's rows") from err
    return rows_from_bytes(raw, source, label_range=label_range)


def rows_from_bytes(raw: bytes, source: str | Path, *,
                    label_range: LabelRange = AZURE_LABELS) -> tuple[EvaluatorRow, ...]:
    """``read_evaluator_rows`` for bytes already read; ``source`` names them in messages."""
    rows: list[EvaluatorRow] = []
    problems: list[LineProblem] = []
    first_line: dict[str, int] = {}
    reading: tuple[str, int] | None = None  # the first row's that says one, and its line
    count = 0
    for line in read_lines(raw):
        count += 1
        if line.text is None:
            problems.append(LineProblem(line.number, str(line.problem)))
            continue
        try:
            value = parse_line(line.text)
        except JsonLineError as err:
            example = f"; a row looks like {ROW_EXAMPLE}" if err.syntax else ""
            problems.append(LineProblem(line.number, f"{err}{example}"))
            continue
        row, messages = _row(value, line.number, label_range)
        if row is not None and row.query_id in first_line:
            messages.append(f"query_id {quoted(row.query_id)} is already on line {first_line[row.query_id]}; "
                            "give each question one row")
        if row is not None and row.rank_among is not None:
            if reading is None:
                reading = (row.rank_among, line.number)
            elif reading[0] != row.rank_among:
                messages.append(f'{READING} is "{row.rank_among}" here and "{reading[0]}" on line {reading[1]}; '
                                "rows read two ways cannot be scored together: write one setup's rows a file")
        problems += [LineProblem(line.number, message) for message in messages]
        if row is not None and not messages:
            first_line[row.query_id] = line.number
            rows.append(row)
    if problems:
        wide = file_wide(raw, problems, count)
        lines = [f"{source}: {sentence}" for sentence in wide.sentences]
        if wide.kept:
            bad = len({p.line for p in wide.kept})
            lines.append(f"{source}: {bad} line{'s' if bad != 1 else ''} cannot be read as Document Retrieval rows:")
            lines += at_most([f"  {problem}" for problem in wide.kept], indent="  ")
        raise EvaluationError("\n".join(lines))
    if not rows:
        raise EvaluationError(f"{source}: no rows; write one JSON object a line, like {ROW_EXAMPLE}")
    return tuple(rows)


def _row(value: Any, line: int, label_range: LabelRange) -> tuple[EvaluatorRow | None, list[str]]:
    """One line's row, and a sentence for everything wrong with it (the row is None when it has any)."""
    if not isinstance(value, dict):
        return None, [f"{json_kind(value)}, not a row; a row is one JSON object like {ROW_EXAMPLE}"]
    fields = (QUERY_ID, GROUND_TRUTH, RETRIEVED, READING)
    messages = [f'{quoted(key)} is not a field. Did you mean "{close[0]}"?' for key in value
                if key not in fields and (close := get_close_matches(key, fields, n=1, cutoff=0.8))]
    query_id = value.get(QUERY_ID, f"q{line}")
    if not isinstance(query_id, str) or not query_id.strip():
        messages.append(f"{QUERY_ID} must be non-empty text, not {json_kind(query_id)}; write it in quotes, "
                        'as "q1"')
    labels = _labels(value, label_range, messages)
    retrieved = _retrieved(value, messages)
    reading = value.get(READING)
    if reading is not None and reading not in RANK_AMONG:
        messages.append(f"{READING} must be one of {', '.join(map(quoted, RANK_AMONG))} (how the list reads a rank), "
                        f"not {json.dumps(reading) if isinstance(reading, str) else json_kind(reading)}")
    if messages:
        return None, messages
    return EvaluatorRow(query_id=query_id, labels=labels, retrieved=retrieved, line=line, rank_among=reading), messages


def _items(value: dict, field: str, messages: list[str], *, empty_ok: bool) -> list | None:
    """The list under ``field``, or None after saying why it is not one."""
    if field not in value:
        typo = [key for key in value if key != field and get_close_matches(key, [field], n=1, cutoff=0.8)]
        if not typo:  # else the typo's own sentence says it
            messages.append(f'needs "{field}"{", a list that may be empty ([])" if empty_ok else ""}; '
                            f"a row looks like {ROW_EXAMPLE}")
        return None
    items = value[field]
    if not isinstance(items, list) or (not items and not empty_ok):
        what = "a list" if empty_ok else "a non-empty list (the evaluator refuses a question without labels)"
        messages.append(f"{field} must be {what}, not {json_kind(items) if items != [] else 'an empty list'}")
        return None
    if len(items) > MAX_ITEMS:
        messages.append(f"{field} holds {len(items):,} items; the evaluator takes at most {MAX_ITEMS:,}, so cut "
                        "the list")
        return None
    return items


def _labels(value: dict, label_range: LabelRange, messages: list[str]) -> dict[str, int]:
    items = _items(value, GROUND_TRUTH, messages, empty_ok=False)
    labels: dict[str, int] = {}
    first_item: dict[str, int] = {}
    wrong: list[str] = []
    for number, item in enumerate(items or (), start=1):
        where = f"{GROUND_TRUTH} item {number}"
        doc_id = _document_id(item, where, LABEL, wrong)
        if doc_id is None:
            continue
        grade = item.get(LABEL)
        if LABEL not in item:
            wrong.append(f"{where} ({quoted(doc_id)}) needs \"{LABEL}\", its grade")
        elif isinstance(grade, bool) or not isinstance(grade, (int, float)) or grade != int(grade):
            wrong.append(f"{where} ({quoted(doc_id)}): {LABEL} must be a whole number, not "
                         f"{json.dumps(grade) if isinstance(grade, (int, float)) else json_kind(grade)}")
        elif isinstance(grade, float):
            wrong.append(f"{where} ({quoted(doc_id)}): {LABEL} must be written as a whole number, {int(grade)}, "
                         f"not {grade!r} (the evaluator refuses {grade!r})")
        elif not label_range.low <= grade <= label_range.high:
            side = "above" if grade > label_range.high else "below"
            wrong.append(f"{where} ({quoted(doc_id)}): label {grade} is {side} the label range {label_range}; "
                         "give the range that holds it (the evaluator's ground_truth_label_min/max), or correct "
                         "the label")
        elif doc_id in labels and labels[doc_id] != grade:
            wrong.append(f"{where}: {quoted(doc_id)} is labelled {labels[doc_id]} in item {first_item[doc_id]} and "
                         f"{grade} here; keep one label a document")
        else:
            labels.setdefault(doc_id, grade)
            first_item.setdefault(doc_id, number)
    messages += _first_of(wrong)
    return labels


def _retrieved(value: dict, messages: list[str]) -> tuple[tuple[str, float], ...]:
    items = _items(value, RETRIEVED, messages, empty_ok=True)
    retrieved: list[tuple[str, float]] = []
    wrong: list[str] = []
    for number, item in enumerate(items or (), start=1):
        where = f"{RETRIEVED} item {number}"
        doc_id = _document_id(item, where, SCORE, wrong)
        if doc_id is None:
            continue
        score = item.get(SCORE)
        if SCORE not in item:
            wrong.append(f"{where} ({quoted(doc_id)}) needs \"{SCORE}\", the engine's score (higher ranks first)")
            continue
        if isinstance(score, bool) or not isinstance(score, (int, float)):
            wrong.append(f"{where} ({quoted(doc_id)}): {SCORE} must be a number, not {json_kind(score)}")
            continue
        retrieved.append((doc_id, score))
    messages += _first_of(wrong)
    return tuple(retrieved)


def _document_id(item: Any, where: str, other: str, wrong: list[str]) -> str | None:
    """The item's document id, or None after saying what is wrong with the item."""
    if not isinstance(item, dict):
        wrong.append(f"{where} must be an object like {{\"{DOCUMENT_ID}\": \"a.md\", \"{other}\": 3}}, "
                     f"not {json_kind(item)}")
        return None
    doc_id = item.get(DOCUMENT_ID)
    if not isinstance(doc_id, str) or not doc_id.strip():
        shown = json.dumps(doc_id) if isinstance(doc_id, (int, float)) else json_kind(doc_id)
        wrong.append(f"{where}: {DOCUMENT_ID} must be non-empty text, not {shown}; write the id in quotes, as the "
                     "corpus names it (the evaluator matches 7 and \"7\" as different documents)")
        return None
    return doc_id


def _first_of(wrong: list[str]) -> list[str]:
    """The first problem of a list, with how many more items have one: a long list is one sentence."""
    if len(wrong) <= 1:
        return wrong
    return [f"{wrong[0]} (and {len(wrong) - 1:,} more item(s) of the list with a problem)"]


def score_evaluator_rows(rows: Sequence[EvaluatorRow], *, min_grade: int = 1, k: int = 3) -> dict[str, Any]:
    """The rows scored both ways: our summary (``metrics.summarise``: found@k, recall@k, MRR, nDCG@10, at
    relevance level ``min_grade``) on each row's documents ranked as the evaluator ranks them (by score,
    highest first, equal scores in the list's order, each document at its first place), and
    ``azure``: the evaluator's numbers exactly and corrected at ``k`` (``setup_azure_summary``'s shape;
    the exact form on the rows as written, the corrected on the same ranking). A row without a label
    graded ``min_grade`` or more is not in our summary (nothing to find), as in a run. ``rank_among``: the
    reading the rows say they hold (``read_evaluator_rows`` holds every row to one), None when none says
    one: their ids are then read as the evaluator reads them, each document once, among documents. The
    ranking is the same either way; a run's rows among results carry one id a result already."""
    from ..scoring.azure_retrieval import azure_corrected, azure_exact, label_range_of, mean_scores
    from ..scoring.judging import Rule, judge
    from ..scoring.metrics import summarise
    from ..target import Hit
    from ..measures import azure_key

    label_range = label_range_of(grade for row in rows for grade in row.labels.values())
    rule = Rule("doc", "documents", min_grade)
    outcomes, exact, corrected = [], [], []
    for row in rows:
        order = sorted(range(len(row.retrieved)),
                       key=lambda i: -row.retrieved[i][1])  # stable: ties keep the list's order
        ranked = list(dict.fromkeys(row.retrieved[i][0] for i in order))
        expected, grades = split_grades(row.labels)
        question = Question(id=row.query_id, question="", expected=expected, grades=grades)
        if question.relevant(min_grade):
            outcomes.append(judge(question, [Hit(id=d, doc_id=d, page=None, score=0.0) for d in ranked], rule))
        exact.append(azure_exact(row.labels, row.retrieved, label_range))
        corrected.append(azure_corrected(row.labels, [(d, 0.0) for d in ranked], k, label_range))

    def rounded(means: Mapping[Any, float | None]) -> dict[str, float | None]:
        return {azure_key(m): None if v is None else round(v, 4) for m, v in means.items()}

    said = next((row.rank_among for row in rows if row.rank_among is not None), None)
    return {"rows": len(rows), "rank_among": said, **summarise(outcomes),
            "azure": {"exact": rounded(mean_scores(exact)), "corrected": rounded(mean_scores(corrected)),
                      "label_range": str(label_range), "rank_among": said}}
