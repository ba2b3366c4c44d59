"""Judged grades a person accepts: a new golden file, for review, holding the judge's grades beside the
people's labels. The golden file the run read is never written; nothing the judge said becomes a label
until a person has read this file, checked its rows and removed their ``"draft": true``.

``accepted_questions`` takes the golden file the run judged (the same bytes: its sha256 is the report's)
and the run's report, and gives every question again: a question with judged grades gains them in its
``expected`` (as graded labels, 0 for a result the judge found not relevant; a person's label always
wins), is marked a draft, and says in its hint which ids the judge graded, by which model, at what
agreement, in which run. A question without judged grades is given unchanged.
"""
from __future__ import annotations

from dataclasses import replace
from typing import Any, Mapping, Sequence

from ..errors import UsageError
from ..golden import Golden, Question
from ..store.report_parts import Judged
from ..store.run_report import RunReport


def accepted_questions(golden: Golden, report: RunReport | Mapping[str, Any]) -> list[Question]:
    """The golden file's questions with the run's judged grades added as drafts (the module docstring); ``report``
    the model, or a report's JSON read into it once."""
    report = RunReport.of(report)
    block = report.judged
    if block is None:
        raise UsageError(f"run {report.id} judged no holes: evaluate with --judge-holes first")
    if not block.counted:
        raise UsageError(f"run {report.id}: the judge's grades did not count ({block.why_not_counted}), "
                         "so there is nothing to accept")
    sha = report.golden.sha256
    if sha and golden.sha256 != sha:
        raise UsageError(f"{golden.source} is not the golden file run {report.id} judged (its sha256 is "
                         f"{golden.sha256[:12]}, the run's {sha[:12]}): give that very file, so each grade "
                         "lands on the question it was given for")
    grades = block.grades
    words = _words(block, report)
    out = []
    for question in golden.questions:
        judged = grades.get(str(question.id)) or {}
        added = {unit: int(grade) for unit, grade in judged.items() if unit not in question.judgements}
        out.append(_with_grades(question, added, words) if added else question)
    return out


def _with_grades(question: Question, added: Mapping[str, int], words: str) -> Question:
    labels = {**question.judgements, **added}
    ids = ", ".join(f"{unit} ({grade})" for unit, grade in sorted(added.items(), key=lambda item: (-item[1], item[0])))
    hint = f"{ids} graded by {words}; check each, then remove \"draft\""
    return replace(question, expected=tuple(k for k, g in labels.items() if g >= 1),
                   grades=tuple((k, g) for k, g in labels.items() if g != 1), draft=True,
                   hint=f"{question.hint}. {hint}" if question.hint else hint)


def _words(block: Judged, report: RunReport) -> str:
    calibration = block.calibration
    kappa = calibration.get("weighted_kappa") or calibration.get("kappa") or {}
    agreement = f", kappa {kappa['value']:.2f} on {kappa['pairs']} labels" if kappa.get("value") is not None else ""
    return f"the judge {block.judge.get('model')} in run {report.id}{agreement}"


def accepted_count(before: Sequence[Question], after: Sequence[Question]) -> tuple[int, int]:
    """(questions that gained grades, grades added)."""
    changed = [(a, b) for a, b in zip(before, after, strict=True) if a is not b]
    return len(changed), sum(len(b.judgements) - len(a.judgements) for a, b in changed)
