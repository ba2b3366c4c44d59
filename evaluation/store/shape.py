"""What a stored report must hold before anything reads it: every field a reader of a report uses.

A report comes back from a folder or a container anyone with write access may have edited, so
``RunStore.get`` checks it here first: the run list, ``runs show`` and the exports then read fields
that are there and of the right kind, and a bad report is one sentence naming the field, never a
``KeyError`` three modules away. Unknown fields are allowed (a later version may add some).
"""
from __future__ import annotations

import json
from typing import Any, Optional, TypedDict

from ..errors import shown
from ..measures import CUTOFFS as _CUTOFFS, FOUND_10, MRR, NDCG_10
from ..settings import RANK_AMONG
from .checks import (Bad, count, dict_of, either, field, flag, kind, list_of, number, obj, optional, optional_field,
                     positive, problem, share, text)

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
    judged_10: Optional[float]      # share of the top 10 holding a judged unit (reports before grades lack it)
    holes_10: Optional[float]       # mean distinct unjudged units in the top 10 (likewise)
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
    holes: dict[str, list[str]]     # question id -> its unjudged unit ids in the top 10 (when it has any)
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

    questions: list[dict[str, Any]]  # id, expected, grades (when graded), sha256: never a question's text
    timed_question_ids: list[str]
    significance: dict[str, Any]
    ties: dict[str, Any]
    ties_on_time: dict[str, list[str]]  # per pick, the setup keys it was chosen among (pick first)
    time_tests: dict[str, Any]       # per pick, its tier's fastest and how each other member compared
    time_pairs: list[dict[str, Any]]  # every pair of ranked setups: ratio of times, its interval, the tests
    tiers: Optional[dict[str, Any]]  # setups the paired tests cannot separate, rank intervals (scoring.tiers)
    label_next: Optional[dict[str, Any]]  # results to judge that would most help separate the top tier
    cache: dict[str, int]
    unfound: dict[str, Any]          # questions no target holds an expected document of, when more than a share
    picks_withheld: str              # why no pick is named (no setup found anything)
    refused: dict[str, Any]          # a run that never started: why
    judged: dict[str, Any]           # holes graded by a chat model (evaluation.holes): ids, grades, agreement, cost
    picks_from: str                  # "human", or "human+judged" when the picks use the judge's grades


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
    return problem(_report, report, "the report")


# -- the fields -----------------------------------------------------------------------------------

def _report(report: Any, path: str) -> None:
    obj(report, path)
    field(report, "id", text)
    field(report, "created_at", optional(text))
    golden = field(report, "golden", obj)
    for name in ("source", "sha256"):
        field(golden, name, text, "golden")
    for name in ("questions", "labelled"):
        field(golden, name, count, "golden")
    field(report, "collections", list_of(text))
    field(report, "depth", count)
    field(report, "by", text)
    field(report, "question_ids", list_of(text))
    for n, question in enumerate(field(report, "questions", list_of(obj))):
        field(question, "id", text, f"questions[{n}]")
        field(question, "expected", list_of(text), f"questions[{n}]")
        optional_field(question, "grades", dict_of(count), f"questions[{n}]")
    optional_field(report, "timed_question_ids", list_of(text))
    rules = field(report, "rules", obj)
    for name in ("balance_points", "time_points"):
        field(rules, name, number, "rules")
    optional_field(rules, "rank_by", list_of(text), "rules")
    for name in ("seed", "timed", "time_floor", "min_grade"):
        optional_field(rules, name, count, "rules")
    among = optional_field(rules, "rank_among", text, "rules")
    if among is not None and among not in RANK_AMONG:  # every view reads a rank this way: one it cannot is no report
        raise Bad(f"rules.rank_among is {shown(among)}, not {' or '.join(RANK_AMONG)}")
    for name, described in field(report, "targets", dict_of(obj)).items():
        optional_field(described, "left_out", list_of(_left_out), f"targets.{name}")
    for target, gone in field(report, "missing", dict_of(obj)).items():
        optional_field(gone, "documents", list_of(text), f"missing.{target}")
        optional_field(gone, "questions", either(list_of(text), obj), f"missing.{target}")
    optional_field(report, "frontier", list_of(text))
    setups = field(report, "setups", list_of(obj))
    summarised = set()
    for n, setup in enumerate(setups):
        where = f"setups[{n}]"
        key = field(setup, "key", text, where)
        field(setup, "method_label", text, where)
        for name in ("target", "engine", "method"):
            optional_field(setup, name, text, where)
        field(setup, "rank", optional(count), where)
        field(setup, "error", optional(text), where)
        summary = field(setup, "summary", optional(_summary), where)
        if summary is not None:
            summarised.add(key)
        ranks = optional_field(setup, "ranks", dict_of(optional(positive)), where)
        if summary is not None and ranks is not None:
            _summary_of_ranks(summary, ranks, where)
        optional_field(setup, "results", dict_of(list_of(_result_row)), where)
        optional_field(setup, "times_ms", list_of(_milliseconds), where)
        optional_field(setup, NDCG_10.versus_key, dict_of(number), where)  # per question, for comparisons
        for name in ("models", "neighbours"):
            optional_field(setup, name, list_of(text), where)
        optional_field(setup, "versus_top", optional(_versus), where)
        for name in ("requests", "retries"):
            optional_field(setup, name, count, where)
        optional_field(setup, "cache", dict_of(count), where)
        for name in ("timed_in", "time_state", "rank_state"):
            optional_field(setup, name, text, where)
        optional_field(setup, "ranked_in", dict_of(text), where)
        optional_field(setup, "holes", dict_of(list_of(text)), where)
        optional_field(setup, "stopped", _stopped, where)
    keys = [setup["key"] for setup in setups]
    if len(set(keys)) != len(keys):
        raise Bad("setups name the same key twice")
    for name, key in field(report, "picks", dict_of(optional(text))).items():
        if key is not None and key not in summarised:
            raise Bad(f"picks.{name} is {shown(key)}, which is no setup with a summary")
    significance = optional_field(report, "significance", optional(obj))
    if significance:  # what every comparison in the report was made with
        for name in ("alpha", "interval"):
            field(significance, name, share, "significance")
    if optional_field(report, "ties", optional(dict_of(optional(_tie)))) and not significance:
        raise Bad("ties is kept without the significance it was tested with")
    optional_field(report, "ties_on_time", optional(dict_of(optional(list_of(text)))))
    optional_field(report, "tiers", optional(_tiers))
    for n, row in enumerate(optional_field(report, "time_pairs", optional(list_of(obj))) or []):
        for name in ("faster", "slower"):  # every pace sentence finds its pair by these two keys
            field(row, name, text, f"time_pairs[{n}]")
    for pick, test in (optional_field(report, "time_tests", optional(dict_of(optional(obj)))) or {}).items():
        if test:  # per pick: its tier's fastest and a verdict per other member (report.time_words)
            optional_field(test, "anchor", optional(text), f"time_tests.{pick}")
            optional_field(test, "tied", list_of(obj), f"time_tests.{pick}")
    label_next = optional_field(report, "label_next", optional(obj))
    if label_next:  # ids and scores (scoring.label_next): what the page lists
        field(label_next, "tied", list_of(text), "label_next")
        for kind in ("questions", "results"):
            for n, row in enumerate(field(label_next, kind, list_of(obj), "label_next")):
                field(row, "question", text, f"label_next.{kind}[{n}]")
                field(row, "score", number, f"label_next.{kind}[{n}]")
    optional_field(report, "cache", optional(dict_of(count)))
    judged = optional_field(report, "judged", optional(obj))
    if judged:  # the judge's grades: ids and whole grades only, never text
        field(judged, "counted", flag, "judged")
        optional_field(judged, "grades", dict_of(dict_of(count)), "judged")
        optional_field(judged, "setups", dict_of(obj), "judged")
    picks_from = optional_field(report, "picks_from", text)
    if picks_from not in (None, "human", "human+judged"):
        raise Bad(f"picks_from is {shown(picks_from)}, not human or human+judged")
    if picks_from == "human+judged" and not (judged and judged.get("counted")):
        raise Bad("picks_from says human+judged, but the report holds no judged grades that count")
    race = optional_field(report, "race", obj)
    if race:  # what the views say of the race (report.race_words)
        for name in ("raced", "stopped"):
            field(race, name, list_of(text), "race")
        for name in ("margin", "family"):
            field(race, name, count, "race")
        for name in ("alpha", "points", "threshold_seconds"):
            field(race, name, number, "race")
        cost = field(race, "cost", obj, "race")
        for name in ("searches", "exhaustive_searches"):
            field(cost, name, count, "race.cost")
        field(cost, "share", number, "race.cost")
    refused = optional_field(report, "refused", optional(obj))
    if refused:
        field(refused, "reason", text, "refused")
        for n, error in enumerate(field(refused, "errors", list_of(obj), "refused")):
            field(error, "message", text, f"refused.errors[{n}]")
            optional_field(error, "line", optional(count), f"refused.errors[{n}]")


def _summary(value: Any, path: str) -> dict:
    """A setup's numbers, each within what it can be: a share from 0 to 1 (found@k, recall@k, MRR, nDCG@10,
    judged@10), a count of at most the questions scored, a time of 0 ms or more. A report whose MRR reads 7.5
    was not written by a run, and every view would print it as measured."""
    obj(value, path)
    optional_field(value, "recall", dict_of(optional(share)), path)
    optional_field(value, "landed", dict_of(count), path)
    optional_field(value, "timed", count, path)
    optional_field(value, "median_margin", optional(number), path)
    found = field(value, "found", dict_of(optional(share)), path)
    counts = field(value, "counts", dict_of(count), path)
    for cutoff in CUTOFFS:
        if cutoff not in found or cutoff not in counts:
            raise Bad(f"{path}.found and {path}.counts need every cut-off ({', '.join(CUTOFFS)}); {cutoff} is missing")
    questions = field(value, "questions", count, path)
    for cutoff, found_count in counts.items():
        if found_count > questions:
            raise Bad(f"{path}.counts.{cutoff} is {found_count}, more than the {questions} questions scored")
    for name in (MRR.summary_path[0], NDCG_10.summary_path[0]):
        field(value, name, share, path)
    for name in ("median_ms", "p95_ms"):
        field(value, name, optional(_milliseconds), path)
    optional_field(value, "judged_10", optional(share), path)
    optional_field(value, "holes_10", optional(number), path)
    return value


def _summary_of_ranks(summary: dict, ranks: dict, where: str) -> None:
    """The summary a run computed from its ranks (each question's first place, None: not found) says what they
    say: found@k counts, their shares and MRR (to the 4 places a report keeps). A report edited after the run
    wrote it (an unsaved run's file before ``runs import``, a shared store) is refused, not shown as measured."""
    questions = summary["questions"]
    places = [place for place in ranks.values() if place is not None]
    for cutoff, found_count in summary["counts"].items():
        within = sum(1 for place in places if place <= int(cutoff)) if cutoff.isdigit() else found_count
        if found_count != within:
            raise Bad(f"{where}.summary.counts.{cutoff} is {found_count}, but its ranks put {within} questions in the "
                      f"top {cutoff}: the report was changed after the run wrote it")
        share_found = summary["found"].get(cutoff)
        if questions and share_found is not None and abs(share_found - found_count / questions) > _KEPT_PLACES:
            raise Bad(f"{where}.summary.found.{cutoff} is {share_found}, but {found_count} of {questions} questions is "
                      f"{found_count / questions:.4f}: the report was changed after the run wrote it")
    mrr = sum(1 / place for place in places) / questions if questions else 0.0
    kept = summary[MRR.summary_path[0]]
    if abs(kept - mrr) > _KEPT_PLACES:
        raise Bad(f"{where}.summary.{MRR.summary_path[0]} is {kept}, but its ranks give {mrr:.4f}: the report was "
                  "changed after the run wrote it")


_KEPT_PLACES = 1e-4  # a report keeps shares to 4 places: a difference larger than rounding is not rounding


def _milliseconds(value: Any, path: str) -> float:
    """A search time: 0 ms or more."""
    if number(value, path) < 0:
        raise Bad(f"{path} is {shown(value)}, not a time (0 ms or more)")
    return value


def _stopped(value: Any, path: str) -> dict:
    """Why the race stopped a setup and what it searched (``run.race.stopped_entry``), as the views read it."""
    obj(value, path)
    field(value, "questions", list_of(text), path)
    for name in ("look", "drawn", "of", "margin", "family"):
        field(value, name, count, path)
    field(value, "comparator", text, path)
    for name in ("difference", "points"):
        field(value, name, number, path)
    field(value, "interval", _interval, path)
    for name in ("p", "adjusted_p", "alpha"):
        field(value, name, share, path)
    field(value, "summary", optional(_summary), path)
    return value


def _result_row(value: Any, path: str) -> list:
    """``[chunk id, document id, page or null, score]``."""
    if not isinstance(value, list) or len(value) != 4:
        raise Bad(f"{path} is {kind(value)}, not a result [chunk id, document id, page, score]")
    text(value[0], f"{path}[0]")
    text(value[1], f"{path}[1]")
    optional(count)(value[2], f"{path}[2]")
    number(value[3], f"{path}[3]")
    return value


def _left_out(value: Any, path: str) -> dict:
    """What a target's index cannot do: ``{"what", "reason"}``."""
    obj(value, path)
    field(value, "what", text, path)
    field(value, "reason", text, path)
    return value


def _interval(value: Any, path: str) -> list:
    if not isinstance(value, list) or len(value) != 2:
        raise Bad(f"{path} is {kind(value)}, not an interval [low, high]")
    for n, end in enumerate(value):
        number(end, f"{path}[{n}]")
    return value


def _versus(value: Any, path: str) -> dict:
    """A setup against the top (``scoring.comparison``): per metric the difference, its interval and
    p-values; for found@10 also the questions each found alone."""
    obj(value, path)
    field(value, "top", text, path)
    field(value, "tied", flag, path)
    optional_field(value, "questions", optional(count), path)
    found = field(value, FOUND_10.versus_key, obj, path)
    for name in ("better", "worse"):
        field(found, name, count, f"{path}.{FOUND_10.versus_key}")
    optional_field(found, "questions_to_tell", optional(count), f"{path}.{FOUND_10.versus_key}")
    for measure in (FOUND_10, MRR, NDCG_10):
        compared = (found if measure is FOUND_10 else
                    optional_field(value, measure.versus_key, optional(obj), path))
        if compared is not None:
            where = f"{path}.{measure.versus_key}"
            field(compared, "difference", number, where)
            field(compared, "interval", _interval, where)
            field(compared, "p_holm", share, where)
            optional_field(compared, "p", share, where)
    return value


def _tiers(value: Any, path: str) -> dict:
    """The setups the paired tests cannot separate (``scoring.tiers``): groups of keys, every pair's test,
    each setup's rank interval."""
    obj(value, path)
    field(value, "alpha", share, path)
    groups = field(value, "groups", list_of(list_of(text)), path)
    for n, pair in enumerate(field(value, "pairs", list_of(obj), path)):
        where = f"{path}.pairs[{n}]"
        for name in ("a", "b"):
            field(pair, name, text, where)
        for name in ("a_only", "b_only"):
            field(pair, name, count, where)
        field(pair, "p_holm", share, where)
        field(pair, "separated", flag, where)
    ranks = field(value, "ranks", dict_of(obj), path)
    for key, interval in ranks.items():
        for name in ("low", "high"):
            field(interval, name, count, f"{path}.ranks.{key}")
        field(interval, "first_share", share, f"{path}.ranks.{key}")
    grouped = [key for group in groups for key in group]
    if len(set(grouped)) != len(grouped):
        raise Bad(f"{path}.groups names a setup twice")
    found = optional_field(value, "detectable", optional(obj), path)
    if found:  # what report.tier_words says of the smallest difference the questions detect
        for name in ("points", "questions"):
            field(found, name, number, f"{path}.detectable")
        for name in ("pairs", "questions_run"):
            optional_field(found, name, count, f"{path}.detectable")
        optional_field(found, "power", share, f"{path}.detectable")
        one = optional_field(found, "one_pair", obj, f"{path}.detectable")
        for name in ("points", "questions"):
            if one is not None:
                field(one, name, number, f"{path}.detectable.one_pair")
    optional_field(value, "picks", dict_of(list_of(text)), path)
    return value


def _tie(value: Any, path: str) -> dict:
    """A pick and the faster setups the paired test cannot tell from it (``scoring.picks``)."""
    obj(value, path)
    field(value, "pick", text, path)
    field(value, "median_ms", optional(number), path)
    tied = field(value, "tied", flag, path)
    with_ = optional_field(value, "with", optional(text), path)
    keys = []
    for n, row in enumerate(field(value, "faster", list_of(obj), path)):
        where = f"{path}.faster[{n}]"
        keys.append(field(row, "key", text, where))
        field(row, "median_ms", optional(number), where)
        field(row, "tied", flag, where)
        field(row, "p_holm", share, where)
        for name in ("better", "worse"):
            field(row, name, count, where)
        optional_field(row, "questions_to_tell", optional(count), where)
        optional_field(row, "difference", optional(number), where)
        optional_field(row, "p", share, where)
    if tied and with_ not in keys:
        raise Bad(f"{path}.with is {shown(with_)}, which is none of the faster setups it says the pick is tied with")
    return value
