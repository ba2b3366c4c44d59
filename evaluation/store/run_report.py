"""A run's report as the views read it: ``RunReport``, frozen and typed, built once from the kept JSON.

``RunReport.from_json`` is the one place a report of an older shape is read as today's: a pick kept as an
object, the questions a target lost kept as a mapping, a question kept with its text instead of its hash,
a report without question rows, a rule a version had not yet written. Every view reads the model, so no
view carries a "reports made before ..." branch of its own; each upgrade is listed in ``UPGRADES`` and
proved by a test of a report of that shape (tests/store/test_run_report.py).

The JSON stays the report at the two edges that need it: the store keeps and returns it (``RunStore.get``,
``RunStore.save``) and the API answers with it. ``to_json`` gives back the very dict the model was built
from (a copy), so what is saved or served is never a re-encoding of what a view read. The model lives
beside the store because the store builds it (``RunStore.report``) and the store sits below the views.

Its parts (a setup and its summary, the rules, the tiers, the tests behind the picks, the judge's block) are
``report_parts``'; a part no view reads field by field (a result row, a target's description, the judge's
calibration) stays a read-only mapping. Values of the wrong kind (a report anyone with write access may have
edited, past what ``shape.report_problem`` checks) read as absent, never as a ``KeyError`` in a view.

The model shares the dicts of the JSON it was built from (a report's result rows are its bulk, and no copy
is made of them): read them, never change them; ``to_json`` is the copy an edge may change.
"""
from __future__ import annotations

import copy
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Mapping

from ..errors import printable_texts
from .json_read import integer, maybe_mapping, objects, plain_dict, text, texts
from .report_parts import (Golden, Judged, LabelNext, Missing, QuestionRow, Race, Refusal, Rules, SetupResult,
                           Significance, TargetFacts, Tie, Tiers, TimePairRow, TimeTest, Unfound)

_ROWS = ("results",)  # a setup's result rows: ids and scores, kept as they are by ``printable``

# What ``from_json`` and its parts (``report_parts``) read of an older shape as today's, one line each.
UPGRADES = (
    "a pick kept as an object naming its setup under key or setup reads as the setup key",
    "a target's lost questions (and partly lost ones) kept as a mapping id -> documents read as the ids",
    "a question row that kept its text and no sha256 reads with the sha256 of its text",
    "a report without question rows reads one row per question id, with no expected ids and no hash",
    "rules without min_grade read from grade 1 (every report before graded labels)",
    "rules without equally_fast_ms, or a negative one, read as no floor (reports before the floor)",
    "a summary kept with an error is no summary: a failed setup never ran",
    "tiers without metric, alpha or rank_level read as found@10, 0.05 and 0.95 (the only ones then)",
    "a detectable difference without power reads at 0.8 power (the only one then)",
    "a time_tests verdict whose key is not text names no setup",
    "rules without balance_points or time_points read the defaults they had (4 and 8 points)",
)


def pick_key(value: Any) -> str | None:
    """A pick is a setup key, or (as some reports kept it) an object naming one under ``key`` or ``setup``."""
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        key = value.get("key") or value.get("setup")
        return key if isinstance(key, str) else None
    return None


# -- the report ------------------------------------------------------------------------------------

@dataclass(frozen=True)
class RunReport:
    """A run's report as every view reads it (module docstring). ``setups`` in the report's order; ``picks``:
    each pick's setup key (None when it names none); ``escaped``: every text in it is printable already
    (``printable``), so a view given it does not escape twice."""

    id: str | None
    created_at: str | None
    golden: Golden
    collections: tuple[str, ...]
    depth: int | None
    by: str | None
    question_ids: tuple[str, ...]
    questions: tuple[QuestionRow, ...]
    questions_kept: bool  # False: the report kept no question rows (they are read from the ids)
    rules: Rules
    targets: Mapping[str, TargetFacts]
    missing: Mapping[str, Missing]
    picks: Mapping[str, str | None]
    pick_notes: Mapping[str, Mapping[str, Any]]  # what a pick kept as an object says besides its key
    picks_withheld: str | None
    picks_from: str | None
    frontier: tuple[str, ...]
    setups: tuple[SetupResult, ...]
    significance: Significance | None
    ties: Mapping[str, Tie]
    ties_on_time: Mapping[str, tuple[str, ...]]
    time_tests: Mapping[str, TimeTest]
    time_pairs: tuple[TimePairRow, ...]
    tiers: Tiers | None
    label_next: LabelNext | None
    cache: Mapping[str, Any] | None
    unfound: Unfound | None
    refused: Refusal | None
    judged: Judged | None
    race: Race | None
    source: Mapping[str, Any] = field(repr=False, compare=False)
    escaped: bool = field(default=False, compare=False)

    @classmethod
    def of(cls, report: RunReport | Mapping[str, Any]) -> RunReport:
        """``report`` itself, or the model of a report's JSON (a library caller's dict: ``evaluate``'s answer)."""
        return report if isinstance(report, RunReport) else cls.from_json(report)

    @classmethod
    def from_json(cls, data: Mapping[str, Any], *, escaped: bool = False) -> RunReport:
        """The model of ``data`` (a report's JSON, checked by ``shape.report_problem`` when it came from a
        store), every older shape read as today's (``UPGRADES``). ``data`` is never changed."""
        setups = tuple(SetupResult.from_json(s) for s in data.get("setups") or []
                       if isinstance(s, dict) and isinstance(s.get("key"), str))
        question_ids = tuple(str(q) for q in data.get("question_ids") or [])
        rows = objects(data.get("questions"))
        if rows:
            questions = tuple(QuestionRow.from_json(row) for row in rows)
        else:  # upgrade: a report without question rows has its ids
            questions = tuple(QuestionRow(id=q, expected=(), grades=MappingProxyType({}), sha256=None)
                              for q in question_ids)
        picks = plain_dict(data.get("picks"))
        ties = plain_dict(data.get("ties"))
        on_time = plain_dict(data.get("ties_on_time"))
        tests = plain_dict(data.get("time_tests"))
        unfound = data.get("unfound")
        refused = data.get("refused")
        missing = plain_dict(data.get("missing"))
        targets = plain_dict(data.get("targets"))
        return cls(
            id=text(data.get("id")), created_at=text(data.get("created_at")),
            golden=Golden.from_json(data.get("golden")),
            collections=tuple(str(c) for c in data.get("collections") or []), depth=integer(data.get("depth")),
            by=text(data.get("by")), question_ids=question_ids, questions=questions, questions_kept=bool(rows),
            rules=Rules.from_json(data.get("rules")),
            targets=MappingProxyType({str(name): TargetFacts.from_json(d) for name, d in targets.items()
                                      if isinstance(d, dict)}),
            missing=MappingProxyType({str(t): Missing.from_json(g) for t, g in missing.items() if isinstance(g, dict)}),
            # upgrade: a pick kept as an object reads as the key it names
            picks=MappingProxyType({str(name): pick_key(value) for name, value in picks.items()}),
            pick_notes=MappingProxyType({str(name): MappingProxyType({k: v for k, v in value.items()
                                                                      if k not in ("key", "setup")})
                                         for name, value in picks.items() if isinstance(value, dict)}),
            picks_withheld=text(data.get("picks_withheld")) or None, picks_from=text(data.get("picks_from")),
            frontier=texts(data.get("frontier")), setups=setups,
            significance=Significance.from_json(data.get("significance")),
            ties=MappingProxyType({name: tie for name, value in ties.items() if (tie := Tie.from_json(value))}),
            ties_on_time=MappingProxyType({name: texts(keys) for name, keys in on_time.items()
                                           if isinstance(keys, list)}),
            time_tests=MappingProxyType({name: test for name, value in tests.items()
                                         if (test := TimeTest.from_json(value))}),
            time_pairs=tuple(TimePairRow.from_json(row) for row in objects(data.get("time_pairs"))
                             if isinstance(row.get("faster"), str) and isinstance(row.get("slower"), str)),
            tiers=Tiers.from_json(data.get("tiers")), label_next=LabelNext.from_json(data.get("label_next")),
            cache=maybe_mapping(data.get("cache")),
            unfound=Unfound(str(unfound["sentence"]), tuple(str(i) for i in unfound.get("ids") or []))
            if isinstance(unfound, dict) and unfound.get("sentence") else None,
            refused=Refusal(text(refused.get("reason")) or None,
                            tuple((integer(e.get("line")), e.get("message")) for e in objects(refused.get("errors"))))
            if isinstance(refused, dict) else None,
            judged=Judged.from_json(data.get("judged")), race=Race.from_json(data.get("race")),
            source=data, escaped=escaped)

    def to_json(self) -> dict[str, Any]:
        """The report's JSON, the very dict it was read from (a copy): what a store keeps and the API answers."""
        return copy.deepcopy(dict(self.source))

    def printable(self) -> RunReport:
        """This report with every text in it as ``errors.printable_texts`` writes it (a kept report's texts are
        whatever someone with write access left there), its result rows as they are; itself when it is already."""
        if self.escaped:
            return self
        return RunReport.from_json(printable_texts(dict(self.source), leave=_ROWS), escaped=True)

    # -- what several views ask ------------------------------------------------------------------
    def setup(self, key: str | None) -> SetupResult | None:
        return next((s for s in self.setups if s.key == key), None) if key is not None else None

    @property
    def ran(self) -> tuple[SetupResult, ...]:
        """The setups that searched every question and have numbers, in the report's order."""
        return tuple(s for s in self.setups if s.summary is not None)

    @property
    def top(self) -> SetupResult | None:
        return next((s for s in self.setups if s.rank == 1), None)

    def pair_between(self, a: str, b: str) -> TimePairRow | None:
        """The ``time_pairs`` row of ``a`` and ``b`` (either order), or None."""
        return next((row for row in self.time_pairs if {row.faster, row.slower} == {a, b}), None)

    @property
    def graded(self) -> bool:
        """Whether the golden file's labels are graded (a question keeps its grades)."""
        return any(q.grades for q in self.questions)
