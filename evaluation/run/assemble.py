"""Step 3 of a run: ``assemble_report``, the report from the plan and one entry per planned setup.

It ranks the entries, names the picks, the frontier and each setup's neighbours, compares every
setup with the top on the same questions (``versus_top``), says which faster setups the paired test
cannot tell from each pick (``ties``; see ``scoring.comparison``), and keeps the setups each pick was
chosen among because their times cannot be told apart (``ties_on_time``, and how each compared with
the tier's fastest: ``time_tests``; see ``scoring.picks``), and every pair's time ratio with its interval
(``time_pairs``; see ``scoring.time_pairs``), and groups the setups into the tiers the paired tests
cannot separate, with each setup's rank interval and the smallest difference the questions detect
(``tiers``; see ``scoring.tiers``). ``refusal_report`` is the report of a
run that never started, made by the same function from an empty plan so it has every key. The
report's shape is ``store.shape.Report``. ``refused_run_report`` makes a refusal from a golden file's
bytes, as the Function App keeps one.
"""
from __future__ import annotations

import copy
import hashlib
from datetime import datetime
from typing import Any, Mapping, Sequence, cast

from ..errors import UsageError
from ..golden import GoldenCheck, Question, check_golden_bytes, question_sha256
from ..measures import FOUND, FOUND_10
from ..scoring.azure_retrieval import setup_azure_summary
from ..scoring.comparison import compare_with_top, pick_ties
from ..report.azure_rows import reading_rows
from ..scoring.picks import TIME_TIE_RULE, choose_picks, frontier, neighbours, rank_setups, time_tests, time_tie_tiers
from ..scoring.label_next import run_proposal
from ..scoring.tiers import setup_tiers
from ..scoring.time_pairs import TIME_TEST, time_pairs
from ..settings import DEFAULT_RANK_AMONG, EvaluationSettings
from ..store.shape import REPORT_FORMAT, Report
from .copying import copied
from .plan import utc
from .planned import Plan
from .race import race_report


def assemble_report(plan: Plan | Mapping[str, Any], entries: Sequence[dict[str, Any]], *,
                    owned: bool = False) -> Report:
    """The report from the plan and one entry per planned setup (any order; the inputs are not changed).
    ``plan``: the ``Plan``, or its JSON (``Plan.to_json``, read back at the edge).

    A planned setup with no entry is an error: the caller turns a step that never finished into
    ``failed_entry`` so the report says why. ``owned``: the entries are the caller's to give away
    (``join_app_run``'s, made for this report), so the report takes them as they are instead of copies.
    """
    if not isinstance(plan, Plan):
        plan = Plan.from_json(plan)
    planned = plan.setup_keys
    given = [e["key"] for e in entries]
    if sorted(given) != sorted(planned):
        extra, absent = sorted(set(given) - set(planned)), sorted(set(planned) - set(given))
        twice = sorted({k for k in given if given.count(k) > 1})
        raise UsageError(f"the entries do not match the plan: not planned {extra}, missing {absent}, "
                         f"given twice {twice}")
    evaluation = plan.settings  # plans made before a setting got its default when read (Plan.from_json)
    on_time = {"equally_fast_ms": evaluation.equally_fast_ms, "alpha": evaluation.alpha}
    results = list(entries) if owned else [copied(e) for e in entries]
    ranked = rank_setups(results, **on_time)
    for result in results:
        result["neighbours"] = neighbours(result, results)
        result["versus_top"] = None
    questions = plan.questions
    question_ids = plan.question_ids
    significance = evaluation.significance
    points = {"balance": evaluation.balance, "time_points": evaluation.time_points}
    picks = choose_picks(ranked, **points, **on_time)
    withheld = picks_withheld(ranked)
    if withheld:  # a run in which no setup finds anything is not an answer: nothing is named
        picks = {name: None for name in picks}
    compare_with_top(ranked, question_ids, significance)
    tiers = setup_tiers(ranked, question_ids, significance, picks)
    add_azure_numbers(ranked, questions, evaluation.by, evaluation.rank_among)
    report: dict[str, Any] = {  # plain JSON data, in the order a report is read; Report names its shape
        "format": REPORT_FORMAT,
        "id": plan.run_id,
        "created_at": plan.created_at,
        "golden": copy.deepcopy(dict(plan.golden)),
        "collections": sorted({d["collection"] for d in plan.targets.values()}),
        "depth": evaluation.depth,
        "by": evaluation.by,
        "question_ids": question_ids,
        # ids, expected ids and a hash, never a question's or a reference's text: who may read runs
        # need not be who may read the golden file (kept apart, as golden_dataset/<sha256>.jsonl), and
        # the hash lets two runs on different golden files find the questions they share
        "questions": [_question_entry(q) for q in questions],
        "timed_question_ids": list(plan.timed_question_ids),
        "rules": {"balance_points": evaluation.balance, "time_points": evaluation.time_points,
                  "rank_by": [str(FOUND_10), str(FOUND[0]), "time tier", "key"], "time_ties": TIME_TIE_RULE,
                  "timed": evaluation.timed,
                  # how a rank is read and which grade is relevant
                  "rank_among": evaluation.rank_among, "min_grade": evaluation.min_grade,
                  "seed": evaluation.seed,
                  "time_margin": evaluation.time_margin, "time_floor": evaluation.time_floor,
                  "time_budget": evaluation.time_budget,
                  # differences in median time at most this far apart never decide a pick; the paired test
                  "equally_fast_ms": evaluation.equally_fast_ms, "time_test": TIME_TEST},
        "targets": copy.deepcopy({name: dict(d) for name, d in plan.targets.items()}),
        "missing": copy.deepcopy({name: dict(m) for name, m in plan.missing.items()}),
        # questions no target holds an expected document of, when more than the run's share of them
        **({"unfound": copy.deepcopy(dict(plan.unfound))} if plan.unfound else {}),
        **({"picks_withheld": withheld} if withheld else {}),
        "picks": picks,
        "significance": significance.describe(),
        "ties": pick_ties(picks, ranked, question_ids, significance),
        # the setups the paired tests cannot tell apart (Holm over every pair), each setup's rank
        # interval and the smallest difference these questions detect (scoring.tiers)
        "tiers": tiers,
        # when the top tier holds two or more: the results to judge that would most help separate them
        # (ids and scores only; ``golden next`` adds questions to label and writes the template)
        "label_next": run_proposal(ranked, list(questions), tiers, plan.rule),
        # per pick, the setups it was chosen among because their times cannot be told apart
        "ties_on_time": {} if withheld else time_tie_tiers(ranked, **points, **on_time),
        # per pick, the tier's fastest setup and how each other member compared with it
        "time_tests": {} if withheld else time_tests(ranked, **points, **on_time),
        # every pair of ranked setups: how many times slower the slower is, with its 95% interval
        "time_pairs": time_pairs(ranked, evaluation.equally_fast_ms),
        "frontier": frontier(ranked),
        "setups": sorted(results, key=lambda s: (s["rank"] is None, s["rank"] or 0, s["key"])),
        **_cache_total(results),
        # the costly setups' race: its rule, which stopped (each entry's ``stopped`` says why) and the cost
        **race_report(plan, results),
    }
    return cast(Report, report)


def add_azure_numbers(entries: Sequence[dict[str, Any]], questions: Sequence[Question], by: str,
                      rank_among: str = DEFAULT_RANK_AMONG) -> None:
    """Each ranked entry's ``summary["azure"]``: Azure AI Foundry's Document Retrieval numbers over its
    questions (``scoring.azure_retrieval.setup_azure_summary``), exactly and corrected, on each question's
    units read as the run reads a rank (``report.azure_rows.reading_rows``: the rows ``runs export
    --format azure`` writes for the evaluator), with that reading (``rank_among``). Not at the evidence
    grain: quotes are not documents the evaluator ranks."""
    if by == "evidence":
        return
    for entry in entries:
        results = entry.get("results") or {}
        pairs = [reading_rows(q, results.get(q.id) or [], by, rank_among) for q in questions]
        entry["summary"]["azure"] = {**setup_azure_summary(pairs), "rank_among": rank_among}


def picks_withheld(ranked: Sequence[dict[str, Any]]) -> str | None:
    """Why no pick is named, when the best setup found no question's expected document in its top 20
    (every setup then ties at nothing, and a pick would be a guess); None otherwise."""
    if ranked and all(entry["summary"]["counts"][str(FOUND[-1].cutoff)] == 0 for entry in ranked):
        return (f"no setup found an expected document of any question in its top {FOUND[-1].cutoff}, so none is "
                "named; check that the golden file's ids are the index's (`golden check --corpus`)")
    return None


def _question_entry(question: Question) -> dict[str, Any]:
    """A plan's question as the report keeps it: its id, expected ids, grades other than 1 (when graded)
    and the sha256 of its text."""
    entry: dict[str, Any] = {"id": question.id, "expected": list(question.expected),
                             "sha256": question_sha256(question.question)}
    if question.grades:
        entry["grades"] = dict(question.grades)
    return entry


def _cache_total(entries: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """``{"cache": every setup's counts added up}`` (see ``EmbeddedTarget.cache_counts``): how much of
    the run's batch work came from earlier runs; nothing when no target counted."""
    counted = [e["cache"] for e in entries if isinstance(e.get("cache"), dict)]
    if not counted:
        return {}
    names = list(dict.fromkeys(name for counts in counted for name in counts))
    return {"cache": {name: sum(counts.get(name, 0) for counts in counted) for name in names}}


# -- a run that cannot start --------------------------------------------------------------------------

def refusal_report(reason: str, *, source: str, sha256: str, run_id: str, created_at: datetime | str,
                   check: GoldenCheck | None = None, settings: EvaluationSettings | None = None,
                   **keywords: Any) -> Report:
    """The report of a run that could not start: no setup ran, nothing is picked, and ``refused``
    says why (``reason``, a sentence) with every error of the golden file by line when ``check`` has
    some. Warnings are left out (they may quote document text); errors name fields, ids and expected
    documents only. Made by ``assemble_report`` from an empty plan, so it has every key a report has.
    ``settings`` (or any of its fields as keywords, as for ``plan_run``) is recorded as the run's would be.
    """
    settings = EvaluationSettings.of(settings, **keywords)
    errors = [{"line": p.line, "message": p.message} for p in (check.errors if check else ())]
    counts = ({"format": check.format, "questions": check.rows, "labelled": check.ready,
               "unfilled": check.unfilled, "drafts": check.drafts} if check else {})
    plan = Plan(run_id=run_id, created_at=utc(created_at).isoformat().replace("+00:00", "Z"), settings=settings,
                golden={"source": source, "sha256": sha256, **counts, "problems": errors}, questions=(),
                timed_question_ids=(), setups=(), targets={}, missing={})
    report = assemble_report(plan, [])
    report["refused"] = {"reason": reason, "errors": errors}
    return report


def golden_errors_reason(check: GoldenCheck) -> str:
    """Why a run with this golden file is refused, in a sentence."""
    return (f"the golden file has {len(check.errors)} error(s); fix them (`python3 -m evaluation golden check`) and "
            f"save it again")


def refused_run_report(raw: bytes, *, source: str, run_id: str, created_at: datetime | str,
                       reason: str | None = None, settings: EvaluationSettings | None = None,
                       **keywords: Any) -> Report:
    """``refusal_report`` for the golden file's bytes ``raw`` (``source`` names them; the report keeps
    their sha256): refused for ``reason`` (a sentence: why the run's plan could not start), or, without
    one, for the file's errors (``golden_errors_reason``). The file's check is kept, its counts and every
    error by line (none for a file that checks clean): a report without the counts would not read back
    from a store (``shape.report_problem`` needs ``golden.questions`` and ``labelled``), so a run refused
    for its configuration would be missing from ``runs list`` and never the newest."""
    check = check_golden_bytes(raw, source)
    return refusal_report(reason or golden_errors_reason(check), source=source, sha256=hashlib.sha256(raw).hexdigest(),
                          run_id=run_id, created_at=created_at, check=check, settings=settings, **keywords)
