"""Azure AI Foundry's Document Retrieval metrics for one question: exactly as its evaluator computes them,
and corrected where its code is wrong or surprising.

Input: a question's graded labels, ``{document id: grade}`` (whole numbers within a ``LabelRange``, the
evaluator's ``ground_truth_label_min``/``max``, 0-4 by default), and its retrieved list,
``[(document id, score), ...]`` in the order the engine returned it. Output: seven numbers, the
measures ``measures.AZURE_EXACT`` (``azure_exact``) or ``measures.azure_corrected(k)``
(``azure_corrected``), kept under the evaluator's property names (``measures.azure_key``).

EXACT (``azure_exact``): ``DocumentRetrievalEvaluator._do_eval`` of azure-ai-evaluation 1.18.10, read line
by line and reproduced to 1e-9 (tests/scoring/test_azure_retrieval_metrics.py runs the evaluator as the oracle):

- Ranking: the retrieved documents sorted by score, highest first; Python's sort is stable, so equal
  scores keep the list's order. The list's own order plays no other part. A document listed twice
  is kept once, at its first place in the list but with its LAST score (a dict built from the list).
- Grades: each ranked document's label, 0 when it has none (whatever the label range).
- ``holes``: distinct retrieved documents without a label, over the whole list. ``holes_ratio``:
  holes / items in the list, repeats counted.
- No retrieved documents: every number 0. No ranked document with a non-zero grade: every number 0
  but the holes (fidelity too, where its formula would give NaN).
- ``ndcg@3``: sum over ranks r <= 3 of (2**grade - 1) / log2(r + 1), over the same sum for the labels
  sorted highest first (the ideal: every labelled document, retrieved or not).
- ``xdcg@3``: sum over r <= 3 of 25 * grade * 0.6**(r - 1), over 1 + 0.6 + 0.36 (the denominator
  counts three ranks even when fewer came back).
- ``fidelity``: over ALL ranked documents, sum of weight(grade) over the same sum for every label,
  counting only grades above the minimum; weight(g) = 2**(g + 1) - 1 (see below); NaN when no
  label is above the minimum.
- ``top1_relevance``: the first ranked grade; ``top3_max_relevance``: the highest of the first three.
- Pass/fail (``verdicts``, ``AZURE_THRESHOLDS``): a number passes when >= its threshold (NaN fails);
  holes and holes_ratio pass when <= 0.

CORRECTED (``azure_corrected``, at any cut-off k >= 1). Each fix below was checked against the code
and its own output (the tests hold the cases):

1. Ranking is the list's order; each document counts once, at its first (best) place. The exact form
   ranks a document listed twice (two chunks of one document) by its last score, so a document at
   rank 1 whose second chunk came 5th is ranked as the 5th: ``[(a, 9), (b, 5), (a, 1)]`` ranks b first.
2. Fidelity pairs each grade's count with that grade's weight. The exact form sorts the counts by
   the grade written as TEXT ("1" < "10" < "11" < "12" < "2"...) and pairs them with weights in
   numeric order: from a maximum of 10 up the weights go to the wrong grades. With labels 0-12,
   {a: 10, b: 2}: retrieving only a gives fidelity 0.1 and only b gives 0.9 (by its own weights,
   2047 for grade 10 and 7 for grade 2, they are 2047/2054 and 7/2054).
3. Fidelity at depth k. The exact form counts every retrieved document, so a setup that returns
   1,000 documents has fidelity 1.0 at any ranking; fidelity@k is the share of the labelled weight
   found in the top k (a graded recall@k).
4. Holes at depth k, and holes_ratio over distinct documents: the exact form counts distinct holes
   over every list item, so repeats dilute the ratio (one hole among [z, z, a] reads 1/3, not 1/2).
5. Grades are measured from the label range's minimum: gain 2**(g - min) - 1, fidelity weight
   2**(g - min + 1) - 1 above the minimum, an unlabelled document at the minimum. The exact form gives
   an unlabelled document 0 whatever the range (below the minimum of a 1-5 range; mid-scale in -2..2),
   counts the minimum as relevant in nDCG but not in fidelity, and divides by zero (ZeroDivisionError)
   when every label is at most 0 and a negative one is retrieved. With nothing retrieved, the first
   and highest grades read the minimum too.
6. xdcg on a 0-100 scale for any range: 100 * (g - min) / (max - min) in place of 25 * g, which reaches
   100 only when the maximum is 4 (300 with labels 0-12, against a threshold of 50).
7. Thresholds on the right scale: the exact form checks top1_relevance and top3_max_relevance, which
   are grades (0-4 by default), against 50.0, so they can never pass; corrected, they pass at the
   middle of the label range or above (2 of 0-4).
8. A question whose labels are all at the minimum has nothing to find: nDCG and fidelity read 0 (as
   trec_eval's nDCG reads 0 there), where the exact form gives 0 or NaN depending on what came back.

Kept, though surprising: fidelity's weight 2**(g + 1) - 1 is not nDCG's gain 2**g - 1 (a grade-1
document weighs 3, a grade-4 one 31). Left out of both: the evaluator's ``total_retrieved_documents``
and ``total_ground_truth_documents`` (counts, which "pass" only from 50 up). Also seen in its code,
and refused here or by ``report.azure_rows`` before it matters: a label ``true`` passes its integer
check and then fails (KeyError 'True'); a threshold of None fails every question (TypeError); a
document id 7 and "7" are two documents; a row without ``retrieved_documents`` scores as an empty list.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping, Sequence

from ..errors import WrongArgumentError, WrongValueError
from ..measures import AZURE_EXACT, AZURE_K, Measure, azure_key
from ..measures import azure_corrected as corrected_measures

XDCG_DISCOUNT = 0.6  # the evaluator's xdcg_discount_factor
_XDCG_SCALE = 25  # the evaluator's 25 * grade: 100 for grade 4
# The evaluator's default thresholds, by property name (DocumentRetrievalEvaluator.__init__).
AZURE_THRESHOLDS: Mapping[str, float] = {"ndcg@3": 0.5, "xdcg@3": 50.0, "fidelity": 0.5, "top1_relevance": 50.0,
                                         "top3_max_relevance": 50.0, "holes": 0, "holes_ratio": 0}
_LOWER_IS_BETTER = ("holes", "holes_ratio")


@dataclass(frozen=True)
class LabelRange:
    """The grades a golden file uses, ``low`` (not relevant) to ``high``: the evaluator's
    ``ground_truth_label_min`` and ``ground_truth_label_max`` (0 and 4 by default)."""

    low: int = 0
    high: int = 4

    def __post_init__(self) -> None:
        for name, value in (("minimum", self.low), ("maximum", self.high)):
            if isinstance(value, bool) or not isinstance(value, int):
                raise WrongArgumentError(f"a label range's {name} is a whole number, not {value!r}")
        if self.low >= self.high or self.high < 1:
            # the evaluator takes a maximum below 1 but then fails (a KeyError) on any unlabelled document
            raise WrongValueError(f"a label range runs from its minimum up to a maximum of 1 or more; {self.low}-"
                                  f"{self.high} is not one (Azure's default is 0-4)")

    def __str__(self) -> str:
        return f"{self.low}-{self.high}"

    def check(self, labels: Mapping[str, int]) -> None:
        """``WrongValueError`` naming the first document whose label is no whole number in this range, or
        when there are no labels at all (the evaluator refuses a question without any)."""
        if not labels:
            raise WrongValueError("a question needs at least one labelled document to be scored (Azure's evaluator "
                                  "refuses an empty retrieval_ground_truth); label one, or leave the question out")
        for doc_id, grade in labels.items():
            if isinstance(grade, bool) or not isinstance(grade, int):
                raise WrongArgumentError(f"document {doc_id!r}: its label must be a whole number, not {grade!r}")
            if not self.low <= grade <= self.high:
                raise WrongValueError(f"document {doc_id!r}: label {grade} is outside the label range {self}; "
                                      f"widen the range to hold it, or correct the label")


AZURE_LABELS = LabelRange()


@dataclass(frozen=True)
class RetrievalScores:
    """One question's seven numbers, in the order of their ``measures``: nDCG, xDCG, fidelity, the
    first result's grade, the highest grade in the top k, holes and the holes' share."""

    measures: tuple[Measure, ...]
    values: tuple[float, ...]
    label_range: LabelRange = field(default_factory=LabelRange)

    def by_measure(self) -> dict[Measure, float]:
        return dict(zip(self.measures, self.values, strict=True))

    def properties(self) -> dict[str, float]:
        """The numbers under their keys (``measures.azure_key``): the evaluator's property names for
        the exact form (``ndcg@3``, ``fidelity``, ...), the same with ``@k`` for the corrected."""
        return {azure_key(m): v for m, v in zip(self.measures, self.values, strict=True)}


def azure_exact(labels: Mapping[str, int], retrieved: Sequence[tuple[str, float]],
                label_range: LabelRange = AZURE_LABELS) -> RetrievalScores:
    """The evaluator's seven numbers for one question, exactly (module docstring, EXACT); ``labels`` must
    hold at least one document, each within ``label_range`` (``WrongValueError`` otherwise, as the evaluator refuses).

    Where the evaluator itself fails with ZeroDivisionError (only possible with negative labels: see
    fix 5) ``ndcg@3`` is NaN and the rest are what its code computes before the failure.
    """
    label_range.check(labels)
    if not retrieved:
        return RetrievalScores(AZURE_EXACT, (0.0, 0.0, 0.0, 0, 0, 0, 0.0), label_range)
    last_score = {doc_id: score for doc_id, score in retrieved}  # first place, last score: the evaluator's dict
    ranked = [doc_id for doc_id, _ in sorted(last_score.items(), key=lambda item: item[1], reverse=True)]
    grades = [labels.get(doc_id, 0) for doc_id in ranked]
    holes = len(set(ranked) - set(labels))
    holes_ratio = holes / len(retrieved)
    if not any(grades):
        return RetrievalScores(AZURE_EXACT, (0.0, 0.0, 0.0, 0, 0, holes, holes_ratio), label_range)
    ideal = sorted(labels.values(), reverse=True)
    idcg = _dcg(ideal[:AZURE_K])
    ndcg = _dcg(grades[:AZURE_K]) / idcg if idcg else math.nan
    return RetrievalScores(AZURE_EXACT, (
        ndcg,
        _xdcg([_XDCG_SCALE * g for g in grades[:AZURE_K]], AZURE_K),
        _ratio(_weighted_as_text(grades, label_range), _weighted_as_text(ideal, label_range)),
        grades[0],
        max(grades[:AZURE_K]),
        holes,
        holes_ratio,
    ), label_range)


def azure_corrected(labels: Mapping[str, int], retrieved: Sequence[tuple[str, float]], k: int,
                    label_range: LabelRange = AZURE_LABELS) -> RetrievalScores:
    """The seven numbers at cut-off ``k`` with the evaluator's mistakes fixed (module docstring,
    CORRECTED): the list's order, each document once, grades from the range's minimum."""
    measures = corrected_measures(k)
    label_range.check(labels)
    low, high = label_range.low, label_range.high
    ranked = list(dict.fromkeys(doc_id for doc_id, _ in retrieved))  # each document at its first place
    top = ranked[:k]
    gains = [labels[doc_id] - low if doc_id in labels else 0 for doc_id in top]
    ideal = sorted((grade - low for grade in labels.values()), reverse=True)
    idcg = _dcg(ideal[:k])
    holes = sum(doc_id not in labels for doc_id in top)
    return RetrievalScores(measures, (
        _dcg(gains) / idcg if idcg else 0.0,
        _xdcg([100 * g / (high - low) for g in gains], k),
        _ratio(sum(map(_weight, gains)), sum(map(_weight, ideal))) if any(ideal) else 0.0,
        labels.get(ranked[0], low) if ranked else low,
        max(gains) + low if gains else low,
        holes,
        holes / len(top) if top else 0.0,
    ), label_range)


def corrected_thresholds(k: int, label_range: LabelRange = AZURE_LABELS) -> dict[Measure, float]:
    """The evaluator's default thresholds on the corrected scales: the same for nDCG (0.5), xDCG (50 of
    100), fidelity (0.5) and holes (0); for the two grades, the middle of the label range."""
    middle = label_range.low + (label_range.high - label_range.low) / 2
    return dict(zip(corrected_measures(k), (0.5, 50.0, 0.5, middle, middle, 0, 0), strict=True))


def verdicts(scores: RetrievalScores, thresholds: Mapping[Measure, float] | None = None) -> dict[Measure, bool]:
    """Whether each number passes, as the evaluator's ``<name>_passed``: at or above its threshold, or
    for holes and holes_ratio at or below it; NaN never passes. ``thresholds`` default to the
    evaluator's (``AZURE_THRESHOLDS``) for the exact form and ``corrected_thresholds`` for the corrected."""
    if thresholds is None:
        exact = scores.measures == AZURE_EXACT
        thresholds = ({m: AZURE_THRESHOLDS[azure_key(m)] for m in AZURE_EXACT} if exact
                      else corrected_thresholds(scores.measures[0].cutoff or 1, scores.label_range))
    out = {}
    for measure, value in scores.by_measure().items():
        limit = thresholds[measure]
        lower_is_better = azure_key(measure).partition("@")[0] in _LOWER_IS_BETTER
        out[measure] = value <= limit if lower_is_better else value >= limit
    return out


def mean_scores(questions: Iterable[RetrievalScores]) -> dict[Measure, float | None]:
    """Each measure's mean over the questions that have a number for it (NaN left out, as
    azure-ai-evaluation's pandas mean leaves it out); None for a measure no question has a number for.
    Every question must hold the same measures (all exact, or all corrected at one k)."""
    questions = list(questions)
    if not questions:
        return {}
    measures = questions[0].measures
    if any(q.measures != measures for q in questions):
        raise WrongValueError("questions scored with different measures cannot be averaged together; score them all "
                              "exactly, or all corrected at one cut-off")
    out: dict[Measure, float | None] = {}
    for i, measure in enumerate(measures):
        numbers = [q.values[i] for q in questions if not math.isnan(q.values[i])]
        out[measure] = math.fsum(numbers) / len(numbers) if numbers else None
    return out


def _dcg(gains: Sequence[float]) -> float:
    """Exponential gain over log2 discount, ranks from 1: sum of (2**g - 1) / log2(rank + 1)."""
    return sum((2.0 ** g - 1) / math.log2(rank + 1) for rank, g in enumerate(gains, start=1))


def _xdcg(scaled: Sequence[float], k: int) -> float:
    """Scaled grades discounted by 0.6 a rank, over the discounts of all k ranks."""
    numerator = sum(g * XDCG_DISCOUNT ** rank for rank, g in enumerate(scaled))
    return numerator / sum(XDCG_DISCOUNT ** rank for rank in range(k))


def _ratio(found: float, ideal: float) -> float:
    return found / ideal if ideal else math.nan


def _weight(gain: int) -> int:
    """Fidelity's weight for a grade ``gain`` above the minimum: 2**(gain + 1) - 1; nothing at the minimum."""
    return 2 ** (gain + 1) - 1 if gain > 0 else 0


def _weighted_as_text(grades: Sequence[int], label_range: LabelRange) -> float:
    """The evaluator's fidelity sum: counts of each grade above the minimum, in the order of the grades
    written as text, times weights 2**(g + 1) - 1 in numeric order (see fix 2)."""
    above = range(label_range.low + 1, label_range.high + 1)
    counts = {str(g): 0 for g in above}
    for grade in grades:
        if grade in above:
            counts[str(grade)] += 1
    in_text_order = [counts[key] for key in sorted(counts)]
    return sum(count * (2.0 ** (g + 1) - 1) for count, g in zip(in_text_order, above, strict=True))


def label_range_of(grades: Iterable[int]) -> LabelRange:
    """The label range a golden file's grades fit: Azure's default 0-4 when they do, else 0 up to the
    highest grade (a qrels file graded 0-12, say)."""
    grades = list(grades)
    return LabelRange(min(0, *grades) if grades else 0, max(4, *grades) if grades else 4)


def setup_azure_summary(questions: Sequence[tuple[Mapping[str, int], Sequence[str]]],
                        k: int = AZURE_K) -> dict[str, Any]:
    """One setup's Azure numbers over its questions, each given as (graded labels, its ranked document
    ids best first, each once): ``{"exact": {property: mean}, "corrected": {property@k: mean}, "label_range":
    "0-4"}`` (no label range when no question is graded), the
    means as ``mean_scores`` takes them, rounded to 4 places. The exact form reads the ids with scores
    made from the rank (n for the first of n), which is how ``report.azure_rows`` writes them for the
    evaluator, so azure-ai-evaluation gives these numbers on the exported rows."""
    scored = [(labels, ranked) for labels, ranked in questions if labels]
    if not scored:
        return {"exact": {}, "corrected": {}}
    label_range = label_range_of(grade for labels, _ in scored for grade in labels.values())
    exact, corrected = [], []
    for labels, ranked in scored:
        retrieved = [(doc_id, float(len(ranked) - rank)) for rank, doc_id in enumerate(ranked)]
        exact.append(azure_exact(labels, retrieved, label_range))
        corrected.append(azure_corrected(labels, retrieved, k, label_range))

    def rounded(means: Mapping[Measure, float | None]) -> dict[str, float | None]:
        return {azure_key(m): None if v is None else round(v, 4) for m, v in means.items()}

    return {"exact": rounded(mean_scores(exact)), "corrected": rounded(mean_scores(corrected)),
            "label_range": str(label_range)}
