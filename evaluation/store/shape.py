"""What a stored report must hold before anything reads it: every field a reader of a report uses.

A report comes back from a folder or a container anyone with write access may have edited, so
``RunStore.get`` checks it here first: the run list, ``runs show`` and the exports then read fields
that are there and of the right kind, and a bad report is one sentence naming the field, never a
``KeyError`` three modules away. Unknown fields are allowed (a later version may add some).
"""
from __future__ import annotations

import json
import math
from typing import Any, Callable, Optional, TypedDict

from ..measures import CUTOFFS as _CUTOFFS, MRR, NDCG_10

REPORT_FORMAT = 1  # the report format this version writes and reads
CUTOFFS = tuple(str(k) for k in _CUTOFFS)  # the found@k cut-offs every summary holds, as its keys


# -- the report's shape, named once: what the steps write, the store checks and the views read --------
# ``total=False`` parts are keys reports from some versions lack (readers must skip what is absent).

class Summary(TypedDict):
    """One setup's numbers (``scoring.metrics.summarise``); shares from 0 to 1, keys by cut-off."""

    questions: int
    timed: int
    counts: dict[str, int]          # found@k as question counts, keyed "1", "3", ... (CUTOFFS)
    found: dict[str, float]         # found@k as shares
    recall: dict[str, float]
    mrr: float
    ndcg_10: float
    landed: dict[str, int]          # where the first relevant result landed (scoring.metrics.LANDED)
    median_ms: Optional[float]
    p95_ms: Optional[float]
    median_margin: Optional[float]


class _EntryBase(TypedDict):
    key: str                        # <target>.<method>.<models>
    target: str
    engine: str
    method: str
    ranks: dict[str, Optional[int]]  # question id -> position of the first relevant result
    results: dict[str, list]        # question id -> [chunk id, doc id, page, score, ...] rows
    times_ms: list[float]
    error: Optional[str]            # set: the setup failed, has no summary and is never picked
    summary: Optional[Summary]
    rank: Optional[int]
    neighbours: list


class Entry(_EntryBase, total=False):
    """One setup in a report (``run.one_setup``), ranked by ``run.assemble``."""

    method_label: str
    retrieval: str
    models: list[str]
    ndcg_10: dict[str, float]       # question id -> its nDCG@10, for paired comparisons
    versus_top: Optional[dict[str, Any]]
    requests: int
    retries: int
    cache: dict[str, int]
    time_state: str                 # sha256 of what decided the times (run.retime)
    timed_in: str                   # the run whose live times these are, when reused
    rank_state: str                 # sha256 of what decided the results (run.reuse)
    ranked_in: dict[str, str]       # question id -> the run that searched it, for reused results
    time_pass: str                  # the side-by-side timed pass it was timed in (scoring.time_pairs)


class _ReportBase(TypedDict):
    format: int                     # REPORT_FORMAT
    id: str
    created_at: Optional[str]
    golden: dict[str, Any]          # source, sha256, questions, labelled, ...
    collections: list[str]
    depth: int
    by: str
    question_ids: list[str]
    rules: dict[str, Any]
    targets: dict[str, Any]
    missing: dict[str, Any]
    picks: dict[str, Optional[str]]  # finds_the_most, best_for_balance, best_for_time -> setup key
    frontier: list[str]
    setups: list[Entry]


class Report(_ReportBase, total=False):
    """A run's report as ``run.assemble.assemble_report`` makes it and ``RunStore`` keeps it."""

    questions: list[dict[str, Any]]  # id, expected, sha256: never a question's text
    timed_question_ids: list[str]
    significance: dict[str, Any]
    ties: dict[str, Any]
    ties_on_time: dict[str, list[str]]  # per pick, the setup keys it was chosen among (pick first)
    time_tests: dict[str, Any]       # per pick, its tier's fastest and how each other member compared
    time_pairs: list[dict[str, Any]]  # every pair of ranked setups: ratio of times, its interval, the tests
    cache: dict[str, int]
    refused: dict[str, Any]          # a run that never started: why


class _Bad(Exception):
    pass


def loads_report(raw: bytes) -> Any:
    """The JSON in ``raw``, strictly: UTF-8, and no ``NaN`` or ``Infinity``; ``ValueError`` otherwise."""
    def refuse(name: str) -> Any:
        raise ValueError(f"it holds {name}, which is not a JSON number")

    try:
        return json.loads(raw.decode("utf-8"), parse_constant=refuse)
    except UnicodeDecodeError as err:
        raise ValueError(f"not UTF-8 text (byte {err.start + 1})") from None
    except json.JSONDecodeError as err:
        raise ValueError(f"not valid JSON ({err.msg} at line {err.lineno} column {err.colno})") from None
    except RecursionError:
        raise ValueError("nested too deeply to read") from None


def report_problem(report: Any) -> str | None:
    """The first field of ``report`` a reader could not use, as ``"<path> is <what>, not <wanted>"``;
    None when every field is usable."""
    try:
        _report(report)
    except _Bad as bad:
        return str(bad)
    return None


# -- the fields -----------------------------------------------------------------------------------

def _report(report: Any) -> None:
    _dict(report, "the report")
    _field(report, "id", _str)
    _field(report, "created_at", _optional(_str))
    golden = _field(report, "golden", _dict)
    for name in ("source", "sha256"):
        _field(golden, name, _str, "golden")
    for name in ("questions", "labelled"):
        _field(golden, name, _count, "golden")
    _field(report, "collections", _list_of(_str))
    _field(report, "depth", _count)
    _field(report, "by", _str)
    _field(report, "question_ids", _list_of(_str))
    for n, question in enumerate(_field(report, "questions", _list_of(_dict))):
        _field(question, "id", _str, f"questions[{n}]")
        _field(question, "expected", _list_of(_str), f"questions[{n}]")
    _optional_field(report, "timed_question_ids", _list_of(_str))
    rules = _field(report, "rules", _dict)
    for name in ("balance_points", "time_points"):
        _field(rules, name, _number, "rules")
    _field(report, "targets", _dict_of(_dict))
    for target, gone in _field(report, "missing", _dict_of(_dict)).items():
        _optional_field(gone, "documents", _list_of(_str), f"missing.{target}")
        _optional_field(gone, "questions", _either(_list_of(_str), _dict), f"missing.{target}")
    _optional_field(report, "frontier", _list_of(_str))
    setups = _field(report, "setups", _list_of(_dict))
    summarised = set()
    for n, setup in enumerate(setups):
        where = f"setups[{n}]"
        key = _field(setup, "key", _str, where)
        _field(setup, "method_label", _str, where)
        _field(setup, "rank", _optional(_count), where)
        _field(setup, "error", _optional(_str), where)
        if _field(setup, "summary", _optional(_summary), where) is not None:
            summarised.add(key)
        _optional_field(setup, "ranks", _dict_of(_optional(_count)), where)
        _optional_field(setup, "results", _dict_of(_list_of(_result_row)), where)
        _optional_field(setup, "times_ms", _list_of(_number), where)
    keys = [setup["key"] for setup in setups]
    if len(set(keys)) != len(keys):
        raise _Bad("setups name the same key twice")
    for name, key in _field(report, "picks", _dict_of(_optional(_str))).items():
        if key is not None and key not in summarised:
            raise _Bad(f"picks.{name} is {key!r}, which is no setup with a summary")


def _summary(value: Any, path: str) -> dict:
    _dict(value, path)
    found = _field(value, "found", _dict_of(_optional(_number)), path)
    counts = _field(value, "counts", _dict_of(_count), path)
    for cutoff in CUTOFFS:
        if cutoff not in found or cutoff not in counts:
            raise _Bad(f"{path}.found and {path}.counts need every cut-off ({', '.join(CUTOFFS)}); {cutoff} is missing")
    _field(value, "questions", _count, path)
    for name in (MRR.summary_path[0], NDCG_10.summary_path[0]):
        _field(value, name, _number, path)
    for name in ("median_ms", "p95_ms"):
        _field(value, name, _optional(_number), path)
    return value


def _result_row(value: Any, path: str) -> list:
    """``[chunk id, document id, page or null, score]``."""
    if not isinstance(value, list) or len(value) != 4:
        raise _Bad(f"{path} is {_kind(value)}, not a result [chunk id, document id, page, score]")
    _str(value[0], f"{path}[0]")
    _str(value[1], f"{path}[1]")
    _optional(_count)(value[2], f"{path}[2]")
    _number(value[3], f"{path}[3]")
    return value


# -- kinds ----------------------------------------------------------------------------------------

Check = Callable[[Any, str], Any]


def _field(container: dict, name: str, check: Check, where: str = "") -> Any:
    path = f"{where}.{name}" if where else name
    if name not in container:
        raise _Bad(f"{path} is missing")
    return check(container[name], path)


def _optional_field(container: dict, name: str, check: Check, where: str = "") -> Any:
    return _field(container, name, check, where) if name in container else None


def _kind(value: Any) -> str:
    if isinstance(value, bool):
        return "true or false"
    if value is None:
        return "null"
    return {int: "a number", float: "a number", str: "a string", list: "a list", dict: "an object"}.get(
        type(value), type(value).__name__)


def _str(value: Any, path: str) -> str:
    if not isinstance(value, str):
        raise _Bad(f"{path} is {_kind(value)}, not a string")
    return value


def _count(value: Any, path: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise _Bad(f"{path} is {value!r:.40}, not a whole number of 0 or more")
    return value


def _number(value: Any, path: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise _Bad(f"{path} is {_kind(value)}, not a finite number")
    return value


def _dict(value: Any, path: str) -> dict:
    if not isinstance(value, dict):
        raise _Bad(f"{path} is {_kind(value)}, not an object")
    return value


def _optional(check: Check) -> Check:
    return lambda value, path: None if value is None else check(value, path)


def _either(first: Check, second: Check) -> Check:
    def check(value: Any, path: str) -> Any:
        try:
            return first(value, path)
        except _Bad:
            return second(value, path)
    return check


def _list_of(check: Check) -> Check:
    def each(value: Any, path: str) -> list:
        if not isinstance(value, list):
            raise _Bad(f"{path} is {_kind(value)}, not a list")
        for n, item in enumerate(value):
            check(item, f"{path}[{n}]")
        return value
    return each


def _dict_of(check: Check) -> Check:
    def each(value: Any, path: str) -> dict:
        _dict(value, path)
        for key, item in value.items():
            check(item, f"{path}.{key}")
        return value
    return each
