"""The judge measured against the people before its grades count: a slice of the labels the team has,
graded blind, and the judge's bias toward any setup.

The slice (``calibration_slice``): the labelled (question, unit, grade) triples whose text is at hand,
set aside by a seed before any call (the judge is never shown a grade). Every grade of the scale is
represented when the file has it (at least ``MIN_PER_GRADE`` of each, or all there are), the rest drawn
at random, so a binary file's few explicit 0s are not all left out by chance; a file with at most
``size`` labels is taken whole.

Bias toward a setup (``bias``): a judge that favours one setup (a model of its family ranks for it,
or it likes what that setup's ranker likes) grades that setup's results higher than the people did.
For each setup, the judge's signed error (its grade minus the people's) on the calibration labels that
setup put in its top 10 is compared with its error on the other calibration labels of the same grade
(each error less its grade's mean error: a label at the top of the scale can only be graded down and
one at 0 only up, so a setup whose top 10 holds more good labels would otherwise look disfavoured by
any noisy judge): the difference of the two means, with a two-sided permutation p-value (labels
shuffled between the two groups within each grade, seeded), Holm-corrected across the setups. A setup
whose difference is significant is flagged, and so is every number and pick of that setup that uses
judged grades. Only grades with labels both in and out of the setup's top 10 tell anything, so a
binary file of only 1s shows no bias (an over-grading judge cannot be seen on labels already at the
top), and the report then says no test was made.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Sequence

import numpy as np

from ..golden.records import Question
from ..scoring.judging import HOLES_CUTOFF, Rule, ranked_units, row_units
from ..scoring.significance import holm
from .grader import Scale

MIN_PER_GRADE = 5
PERMUTATIONS = 5000


@dataclass(frozen=True)
class Label:
    """One labelled (question, unit) and the people's grade."""

    question_id: str
    unit: str
    grade: int


def calibration_slice(labels: Sequence[Label], size: int, seed: int) -> list[Label]:
    """At most ``size`` labels set aside for calibration (the module docstring), in a seeded order."""
    if len(labels) <= size:
        return list(labels)
    rng = np.random.default_rng(seed)
    by_grade: dict[int, list[Label]] = {}
    for label in labels:
        by_grade.setdefault(label.grade, []).append(label)
    chosen: list[Label] = []
    rest: list[Label] = []
    for grade in sorted(by_grade):
        members = by_grade[grade]
        order = rng.permutation(len(members))
        floor = min(len(members), MIN_PER_GRADE, size // max(1, len(by_grade)))
        chosen += [members[i] for i in order[:floor]]
        rest += [members[i] for i in order[floor:]]
    for i in rng.permutation(len(rest))[: size - len(chosen)]:
        chosen.append(rest[i])
    return chosen


def top_units(report: Mapping[str, Any], setup: Mapping[str, Any],
              questions: Mapping[str, Question]) -> set[tuple[str, str]]:
    """The (question id, unit) pairs ``setup`` put in its top 10, read as the run reads ranks."""
    rule = Rule.of({"by": report.get("by", "doc"), **(report.get("rules") or {})})
    found: set[tuple[str, str]] = set()
    for qid, rows in (setup.get("results") or {}).items():
        question = questions.get(str(qid))
        if question is None:
            continue
        units = ranked_units(row_units(question, rows, rule.by), rule.rank_among)[:HOLES_CUTOFF]
        found.update((str(qid), unit) for unit in units)
    return found


def bias(graded: Sequence[tuple[Label, int]], tops: Mapping[str, set[tuple[str, str]]], scale: Scale, *,
         alpha: float = 0.05, seed: int = 0) -> dict[str, Any]:
    """Per setup, how much higher the judge grades that setup's top 10 than the people did, against the
    other labels of the same grade (the module docstring); ``flagged``: the setups where that is significant."""
    people = np.asarray([label.grade for label, _ in graded], dtype=np.int64)
    errors = np.asarray([judged - label.grade for label, judged in graded], dtype=np.float64)
    centred = errors.copy()
    for grade in np.unique(people):  # each grade's own mean error: a top label can only be graded down
        centred[people == grade] -= errors[people == grade].mean()
    rng = np.random.default_rng(seed)
    rows, p_values = [], []
    for key, top in tops.items():
        inside = np.asarray([(label.question_id, label.unit) in top for label, _ in graded], dtype=bool)
        informative = _informative(people, inside)
        if informative.sum() < 4 or (inside & informative).sum() < 2 or (~inside & informative).sum() < 2:
            rows.append({"setup": key, "labels_in_top": int(inside.sum()), "difference": None, "p": None})
            continue
        values, groups, strata = centred[informative], inside[informative], people[informative]
        observed = values[groups].mean() - values[~groups].mean()
        shuffled = _shuffled_differences(values, groups, strata, rng)
        p = (1 + np.count_nonzero(np.abs(shuffled) >= abs(observed) - 1e-12)) / (PERMUTATIONS + 1)
        rows.append({"setup": key, "labels_in_top": int(inside.sum()), "difference": round(float(observed), 4),
                     "p": round(float(p), 6)})
        p_values.append(p)
    adjusted = iter(holm(p_values))
    flagged = []
    for row in rows:
        if row["p"] is None:
            row["p_holm"] = None
            continue
        adjusted_p = float(next(adjusted) or 0.0)
        row["p_holm"] = round(adjusted_p, 6)
        if adjusted_p <= alpha:
            flagged.append(row["setup"])
    return {"labels": len(graded), "alpha": alpha, "permutations": PERMUTATIONS, "setups": rows, "flagged": flagged,
            "test": "the judge's grade minus the people's, less its mean at that grade, on labels in the setup's top "
                    "10 against the rest: difference of means, two-sided permutation p (shuffled within each grade), "
                    "Holm across setups"}


def _informative(people: np.ndarray, inside: np.ndarray) -> np.ndarray:
    """The labels of grades that have labels both in and out of the top 10: only there can the two differ."""
    keep = np.zeros(len(people), dtype=bool)
    for grade in np.unique(people):
        at = people == grade
        if inside[at].any() and (~inside[at]).any():
            keep |= at
    return keep


def _shuffled_differences(values: np.ndarray, inside: np.ndarray, strata: np.ndarray,
                          rng: np.random.Generator) -> np.ndarray:
    """The difference of means for ``PERMUTATIONS`` relabellings of which labels are inside, each grade's
    labels shuffled among themselves (so every relabelling keeps as many of each grade inside)."""
    groups = np.empty((PERMUTATIONS, len(values)), dtype=bool)
    for grade in np.unique(strata):
        at = np.flatnonzero(strata == grade)
        groups[:, at] = inside[at][np.argsort(rng.random((PERMUTATIONS, len(at))), axis=1)]
    count = inside.sum()
    inside_sum = (groups * values).sum(axis=1)
    return inside_sum / count - (values.sum() - inside_sum) / (len(values) - count)
