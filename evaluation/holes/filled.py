"""A run's numbers again with its holes filled by the judge's grades: kept beside the human-only
numbers, never over them.

Each question is judged twice on the results the run kept (``scoring.judging.judge_rows``, the run's
own rule: grain, reading of a rank, relevant grade): once on the people's labels alone, once on the
people's labels with the judge's grades of the units nobody labelled (a person's label always wins;
the judge only fills what has none). From the second come each setup's summary (``summarise``, the same
numbers a report gives, named with ``+judged`` wherever shown), the setups' ranking, the Kendall tau
between the two rankings with its bootstrap interval over questions, and the picks the judged numbers
would name (``judged_choice``), with their ties, by the very rules the report's own picks follow.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Sequence

import numpy as np

from ..golden import Question
from ..scoring.comparison import pick_ties
from ..scoring.judging import Rule, judge_rows
from ..scoring.metrics import Outcome, outcome_arrays, score_matrix, summarise
from ..scoring.picks import choose_picks, rank_setups, time_tests, time_tie_tiers
from ..settings import SignificanceSettings
from .agreement import kendall_tau_b, tau_interval

TIME_FIELDS = ("timed", "median_ms", "p95_ms", "median_margin")
RANK_CUTOFF, FIRST = 10, 1  # the report ranks by found@10, then found@1 (scoring.picks)


def human_judgements(question: Mapping[str, Any]) -> dict[str, int]:
    """A report question's labels (``expected`` graded 1 unless ``grades`` says more; ``grades``' 0s)."""
    grades = question.get("grades") or {}
    judged = {str(e): int(grades.get(e, 1)) for e in question.get("expected") or ()}
    judged.update((str(k), 0) for k, g in grades.items() if g == 0 and k not in judged)
    return judged


def labelled_question(question: Mapping[str, Any], judged: Mapping[str, int] | None = None) -> Question:
    """The report question as a ``Question`` (no text: none is needed to judge kept results), its labels
    the people's and, given ``judged``, the judge's grades of the units the people did not label."""
    labels = human_judgements(question)
    for unit, grade in (judged or {}).items():
        labels.setdefault(unit, int(grade))  # a person's label always wins
    return Question(question="", id=str(question["id"]), expected=tuple(k for k, g in labels.items() if g >= 1),
                    grades=tuple((k, g) for k, g in labels.items() if g != 1))


@dataclass(frozen=True)
class Filled:
    """Per setup (ranked entries only), per question: the outcome on human labels and on human + judged."""

    keys: tuple[str, ...]
    question_ids: tuple[str, ...]
    human: Mapping[str, tuple[Outcome, ...]]
    with_judged: Mapping[str, tuple[Outcome, ...]]


def fill(report: Mapping[str, Any], grades: Mapping[str, Mapping[str, int]]) -> Filled:
    """Every ranked setup's outcomes on both label sets (the module docstring)."""
    rule = Rule.of({"by": report.get("by", "doc"), **(report.get("rules") or {})})
    questions = [q for q in report.get("questions") or () if q.get("expected")]
    human_q = [labelled_question(q) for q in questions]
    judged_q = [labelled_question(q, grades.get(str(q["id"]))) for q in questions]
    ranked = [s for s in report["setups"] if s.get("summary") is not None and not s.get("error")]
    human, with_judged = {}, {}
    for setup in ranked:
        rows = setup.get("results") or {}
        human[setup["key"]] = tuple(judge_rows(q, rows.get(q.id) or [], rule) for q in human_q)
        with_judged[setup["key"]] = tuple(judge_rows(q, rows.get(q.id) or [], rule) for q in judged_q)
    return Filled(tuple(s["key"] for s in ranked), tuple(str(q.id) for q in human_q), human, with_judged)


def judged_summaries(report: Mapping[str, Any], filled: Filled) -> dict[str, dict[str, Any]]:
    """Each ranked setup's summary on human + judged labels, its time fields the run's own."""
    by_key = {s["key"]: s for s in report["setups"]}
    out = {}
    for key in filled.keys:
        summary = summarise(filled.with_judged[key])
        for name in TIME_FIELDS:
            summary[name] = by_key[key]["summary"].get(name)
        out[key] = summary
    return out


def found_matrix(outcomes_by_setup: Mapping[str, Sequence[Outcome]], keys: Sequence[str], cutoff: int) -> np.ndarray:
    """(questions, setups) booleans: the setup found a relevant result of the question at <= ``cutoff``."""
    columns = []
    for key in keys:
        first = np.asarray([o.first or 0 for o in outcomes_by_setup[key]], dtype=np.int64)
        columns.append((first > 0) & (first <= cutoff))
    return np.stack(columns, axis=1) if columns else np.zeros((0, 0), dtype=bool)


def ranking_scores(found10: np.ndarray, found1: np.ndarray, rows: np.ndarray | None = None) -> list[float]:
    """One number per setup that orders setups as the report ranks them: found@10's count, then found@1's
    (``count10 * (questions + 1) + count1``), over the questions at ``rows`` (all when None)."""
    if rows is not None:
        found10, found1 = found10[rows], found1[rows]
    size = found10.shape[0] + 1
    return [float(a) * size + float(b) for a, b in zip(found10.sum(axis=0), found1.sum(axis=0), strict=True)]


def ranking_tau(filled: Filled, *, resamples: int = 1000, seed: int = 0) -> dict[str, Any]:
    """Kendall's tau-b between the setups' ranking on human labels and on human + judged labels, with a
    percentile bootstrap interval over questions (``agreement.tau_interval``)."""
    keys = filled.keys
    human10, human1 = found_matrix(filled.human, keys, RANK_CUTOFF), found_matrix(filled.human, keys, FIRST)
    judged10, judged1 = (found_matrix(filled.with_judged, keys, RANK_CUTOFF),
                         found_matrix(filled.with_judged, keys, FIRST))
    human, judged = ranking_scores(human10, human1), ranking_scores(judged10, judged1)
    tau = kendall_tau_b(human, judged)
    interval = None
    if len(filled.question_ids) and len(keys) > 1:
        interval = tau_interval(lambda rows: ranking_scores(human10, human1, rows),
                                lambda rows: ranking_scores(judged10, judged1, rows),
                                len(filled.question_ids), resamples=resamples, seed=seed)
    return {"tau": None if tau is None else round(tau, 4),
            "interval": None if interval is None else [round(interval[0], 4), round(interval[1], 4)],
            "resamples": resamples, "setups": len(keys),
            "human_order": _order(keys, human), "judged_order": _order(keys, judged),
            "ranked_by": "found@10, then found@1 (the report's ranking before time)"}


def _order(keys: Sequence[str], scores: Sequence[float]) -> list[str]:
    return [key for _, key in sorted(zip(scores, keys, strict=True), key=lambda pair: (-pair[0], pair[1]))]


def judged_entries(report: Mapping[str, Any], filled: Filled,
                   summaries: Mapping[str, Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Copies of the ranked entries with their numbers on human + judged labels (summary, first ranks
    and nDCG@10 per question), for ``judged_choice``; the report's own entries are not touched."""
    by_key = {s["key"]: s for s in report["setups"]}
    out = []
    for key in filled.keys:
        entry = dict(by_key[key])
        outcomes = filled.with_judged[key]
        ndcg = [float(v) for v in score_matrix(*outcome_arrays(outcomes))["ndcg_10"]] if outcomes else []
        entry["summary"] = dict(summaries[key])
        entry["ranks"] = {o.question_id: o.first for o in outcomes}
        entry["ndcg_10"] = {o.question_id: round(v, 6) for o, v in zip(outcomes, ndcg, strict=True)}
        out.append(entry)
    return out


def judged_choice(report: Mapping[str, Any], entries: list[dict[str, Any]]) -> dict[str, Any]:
    """The picks human + judged numbers name, by the report's own rules (points, the floor of equally
    fast, the significance), with the ties and time tiers that go with them."""
    rules = report.get("rules") or {}
    significance = report.get("significance") or {}
    settings = SignificanceSettings(alpha=significance.get("alpha", 0.05),
                                    resamples=significance.get("resamples", 10_000),
                                    seed=significance.get("seed", rules.get("seed", 0)))
    on_time = {"equally_fast_ms": rules.get("equally_fast_ms", 5.0), "alpha": settings.alpha}
    points = {"balance": rules.get("balance_points", 4), "time_points": rules.get("time_points", 8)}
    ranked = rank_setups(entries, **on_time)
    picks = choose_picks(ranked, **points, **on_time)
    question_ids = list(report.get("question_ids") or ())
    return {"picks": picks, "ranks": {e["key"]: e["rank"] for e in ranked},
            "ties": pick_ties(picks, ranked, question_ids, settings),
            "ties_on_time": time_tie_tiers(ranked, **points, **on_time),
            "time_tests": time_tests(ranked, **points, **on_time)}
