"""The run's plan as a typed record: ``Plan`` (``plan_run`` makes it), its setups (``PlannedSetup``), its
questions (``golden.Question``), its settings (``EvaluationSettings``), the judging rule they give and its race
(``PlannedRace``).

Every step takes the ``Plan``; its JSON (``to_json`` / ``from_json``) is read and written only where a plan
leaves the process: a Durable run's working files (``work_files``) and a local run's kept steps
(``work_folder``). The JSON's shape is the one plans have always been kept in, key for key, so a plan
written before this record existed reads back and writes out the same bytes (``tests/run/test_planned.py``).
A damaged plan is refused when it is read, with a sentence naming what is wrong, never a ``KeyError`` in
a later step.
"""
from __future__ import annotations

import copy
from dataclasses import asdict, dataclass, field, replace
from functools import cached_property
from typing import Any, Iterable, Mapping

from ..errors import UsageError, did_you_mean, shown
from ..golden import Question, question_sha256
from ..scoring.judging import Rule
from ..scoring.racing import RaceRule
from ..settings import EvaluationSettings
from ..target import Setup

PLAN_FORMAT = 1
_READ_BACK = "give what plan_run made (or its JSON read back whole)"


@dataclass(frozen=True)
class PlannedSetup:
    """One setup as the plan names it (``Setup.to_dict``'s fields): a step given its key finds it again on
    the target it opens (``searching.find_setup``), and the report's entry starts from ``to_json``."""

    key: str
    target: str
    engine: str
    method: str
    method_label: str
    retrieval: str
    models: tuple[str, ...] = ()
    ranker: str | None = None
    options: Mapping[str, Any] = field(default_factory=dict)

    @classmethod
    def of(cls, setup: Setup) -> PlannedSetup:
        return cls.from_json(setup.to_dict())

    @classmethod
    def from_json(cls, data: Any) -> PlannedSetup:
        """From ``Setup.to_dict``'s shape; a ``UsageError`` naming the field that is not what it should be."""
        if not isinstance(data, Mapping):
            raise UsageError(f"not a plan of a run (a setup is {shown(data)}, not an object); {_READ_BACK}")
        key = data.get("key")
        for name in ("key", "target", "engine", "method", "method_label", "retrieval"):
            if not isinstance(data.get(name), str):
                raise UsageError(f'not a plan of a run (setup {shown(key)}: its "{name}" is {shown(data.get(name))}, '
                                 f"not text); {_READ_BACK}")
        options, models, ranker = data.get("options"), data.get("models"), data.get("ranker")
        if not isinstance(options, Mapping) or not isinstance(models, list) \
                or not all(isinstance(m, str) for m in models):
            raise UsageError(f"setup {shown(key)}: its options must be an object and its models a list "
                             f"(Setup.to_dict), not {shown(options)} and {shown(models)}")
        if ranker is not None and not isinstance(ranker, str):
            raise UsageError(f'not a plan of a run (setup {shown(key)}: its "ranker" is {shown(ranker)}); {_READ_BACK}')
        return cls(key=data["key"], target=data["target"], engine=data["engine"], method=data["method"],
                   method_label=data["method_label"], retrieval=data["retrieval"], models=tuple(models),
                   ranker=ranker, options=copy.deepcopy(dict(options)))

    def to_json(self) -> dict[str, Any]:
        """``Setup.to_dict``'s shape, a new dict each time (a report's entry is made from it and changed)."""
        return {"key": self.key, "target": self.target, "engine": self.engine, "method": self.method,
                "method_label": self.method_label, "retrieval": self.retrieval, "models": list(self.models),
                "ranker": self.ranker, "options": copy.deepcopy(dict(self.options))}


@dataclass(frozen=True)
class PlannedRace:
    """The plan's race (``race.plan_race`` argues each choice): ``order``, every question id in the order the
    raced setups search them; ``looks``, how many of that order are drawn at each look; ``raced``, the costly
    setups' keys, and ``fully_run``, the others', which search every question; ``points``, the picks' largest
    allowance and ``margin`` the same in whole questions; ``alpha`` and ``family``, the family-wise error and
    the comparisons it is split over; ``seconds``, each setup's estimated seconds a question, against
    ``threshold_seconds``; ``seed``, the run's; ``earliest``, the fewest questions a stop can be made on.

    Its JSON (``to_json``) is the ``race`` object plans have always been kept with, key for key and each
    number as it was written (a whole ``points`` stays whole), so a kept plan writes out the same bytes."""

    order: tuple[str, ...]
    looks: tuple[int, ...]
    raced: tuple[str, ...]
    fully_run: tuple[str, ...]
    points: float
    margin: int
    alpha: float
    family: int
    seconds: Mapping[str, float]
    threshold_seconds: float
    seed: int
    earliest: int

    @property
    def rule(self) -> RaceRule:
        """How the race decides: the questions it draws from, the margin, alpha and the family."""
        return RaceRule(population=len(self.order), margin=self.margin, alpha=self.alpha, family=self.family)

    def to_json(self) -> dict[str, Any]:
        return {"order": list(self.order), "looks": list(self.looks), "raced": list(self.raced),
                "fully_run": list(self.fully_run), "points": self.points, "margin": self.margin, "alpha": self.alpha,
                "family": self.family, "seconds": dict(self.seconds), "threshold_seconds": self.threshold_seconds,
                "seed": self.seed, "earliest": self.earliest}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> PlannedRace:
        """From ``to_json``'s shape; a ``UsageError`` naming the field that is missing or of the wrong kind."""
        def refuse(name: str, kind: str) -> UsageError:
            return UsageError(f'not a plan of a run (its race\'s "{name}" is {shown(data.get(name))}, not {kind}); '
                              f"{_READ_BACK}")

        for name in ("order", "raced", "fully_run"):
            if not _listed(data.get(name), lambda item: isinstance(item, str)):
                raise refuse(name, "a list of ids")
        if not _listed(data.get("looks"), _whole):
            raise refuse("looks", "a list of question counts")
        for name in ("margin", "family", "seed", "earliest"):
            if not _whole(data.get(name)):
                raise refuse(name, "a whole number")
        for name in ("points", "alpha", "threshold_seconds"):
            if not _number(data.get(name)):
                raise refuse(name, "a number")
        seconds = data.get("seconds")
        if not isinstance(seconds, Mapping) or not all(isinstance(k, str) and _number(v) for k, v in seconds.items()):
            raise refuse("seconds", "an object of setup key -> seconds")
        return cls(order=tuple(data["order"]), looks=tuple(data["looks"]), raced=tuple(data["raced"]),
                   fully_run=tuple(data["fully_run"]), points=data["points"], margin=data["margin"],
                   alpha=data["alpha"], family=data["family"], seconds=dict(seconds),
                   threshold_seconds=data["threshold_seconds"], seed=data["seed"], earliest=data["earliest"])


@dataclass(frozen=True)
class Plan:
    """Everything a run needs before its first search (``plan.plan_run``), and all the later steps read.

    ``golden``: the golden file as the report describes it (source, sha256, counts). ``questions``: the
    labelled questions in plan order, each with its text, expected ids, grades and quotes (only what a
    search and its judging need). ``timed_question_ids``: the seeded timed sample, in timing order.
    ``targets``: each target's ``describe()``. ``missing``, ``unfound``: what ``plan.find_missing`` and
    ``plan.found_nowhere`` found. ``race``: ``race.plan_race``'s ``PlannedRace``, None when the run races
    nothing (or the race is not planned yet)."""

    run_id: str
    created_at: str
    settings: EvaluationSettings
    golden: Mapping[str, Any]
    questions: tuple[Question, ...]
    timed_question_ids: tuple[str, ...]
    setups: tuple[PlannedSetup, ...]
    targets: Mapping[str, Mapping[str, Any]]
    missing: Mapping[str, Mapping[str, Any]]
    unfound: Mapping[str, Any] | None = None
    race: PlannedRace | None = None
    format: int = PLAN_FORMAT

    @property
    def rule(self) -> Rule:
        """How this run judges a result: its grain, its reading of a rank, the grade that is relevant."""
        return Rule(self.settings.by, self.settings.rank_among, self.settings.min_grade)

    @property
    def setup_keys(self) -> list[str]:
        return [s.key for s in self.setups]

    @property
    def question_ids(self) -> list[str]:
        return [q.id for q in self.questions if q.id is not None]

    @property
    def raced_keys(self) -> frozenset[str]:
        """The setups the race races; none without a race."""
        return frozenset(self.race.raced) if self.race is not None else frozenset()

    @cached_property
    def _setups_by_key(self) -> dict[str, PlannedSetup]:
        return {s.key: s for s in self.setups}

    @cached_property
    def _questions_by_id(self) -> dict[str, Question]:
        return {q.id: q for q in self.questions if q.id is not None}

    def setup(self, key: str) -> PlannedSetup:
        """The planned setup ``key``; a ``UsageError`` naming the closest key otherwise."""
        found = self._setups_by_key.get(key)
        if found is None:
            raise UsageError(f'"{key}" is not a setup of this plan.{did_you_mean(str(key), self.setup_keys)}')
        return found

    def question(self, question_id: str) -> Question:
        """The planned question ``question_id``; a ``UsageError`` when the plan has none of that id."""
        found = self._questions_by_id.get(question_id)
        if found is None:
            raise UsageError(f"{shown(question_id)} is not a question of this plan (run {self.run_id})")
        return found

    def questions_for(self, only: Iterable[str] | None = None) -> list[Question]:
        """The questions in plan order; ``only``: just those ids (a shard searches its own questions, not
        the whole golden file's). Ids the plan does not hold are left out."""
        if only is None:
            return list(self.questions)
        wanted = set(only)
        return [q for q in self.questions if q.id in wanted]

    def with_race(self, race: PlannedRace | None) -> Plan:
        return replace(self, race=race)

    def with_start(self, run_id: str, created_at: str) -> Plan:
        """The same plan under another id and date (a resumed run keeps its first ones)."""
        return replace(self, run_id=run_id, created_at=created_at)

    def to_json(self) -> dict[str, Any]:
        """The plan as plain JSON data, in the shape and key order plans are kept in (``from_json`` reads it)."""
        return {"format": self.format, "run_id": self.run_id, "created_at": self.created_at,
                "settings": asdict(self.settings), "golden": copy.deepcopy(dict(self.golden)),
                "questions": [question_row(q) for q in self.questions],
                "timed_question_ids": list(self.timed_question_ids),
                "setups": [s.to_json() for s in self.setups],
                "targets": copy.deepcopy({name: dict(d) for name, d in self.targets.items()}),
                "missing": copy.deepcopy({name: dict(m) for name, m in self.missing.items()}),
                **({"unfound": copy.deepcopy(dict(self.unfound))} if self.unfound else {}),
                "race": self.race.to_json() if self.race is not None else None}

    @classmethod
    def from_json(cls, data: Any) -> Plan:
        """A plan from its JSON (``to_json``, or a plan kept before this record existed); a ``UsageError``
        saying what is missing or of the wrong kind. A plan made before a setting existed gets its default."""
        if not isinstance(data, Mapping):
            raise UsageError(f"not a plan of a run (it is {shown(data)}); {_READ_BACK}")
        problem = None
        if not _listed(data.get("setups"), lambda s: isinstance(s, Mapping) and isinstance(s.get("key"), str)):
            problem = '"setups" is not a list of setups, each with its "key"'
        elif not _listed(data.get("questions"), _question_shaped):
            problem = '"questions" is not a list of questions, each with its "id", "question" and "expected"'
        elif not _listed(data.get("timed_question_ids"), lambda qid: isinstance(qid, str)):
            problem = '"timed_question_ids" is not a list of question ids'
        elif set(data["timed_question_ids"]) - {row["id"] for row in data["questions"]}:
            odd = sorted(set(data["timed_question_ids"]) - {row["id"] for row in data["questions"]})
            problem = f'"timed_question_ids" names questions the plan does not hold ({", ".join(odd[:5])})'
        elif not isinstance(data.get("settings"), Mapping):
            problem = '"settings" is missing, and every step reads them'
        else:
            for name in ("run_id", "created_at"):
                if not isinstance(data.get(name), str):
                    problem = f'"{name}" is {shown(data.get(name))}, not text'
            for name in ("golden", "targets", "missing"):
                if not isinstance(data.get(name), Mapping):
                    problem = f'"{name}" is {shown(data.get(name))}, not an object'
            for name in ("unfound", "race"):
                if data.get(name) is not None and not isinstance(data[name], Mapping):
                    problem = f'"{name}" is {shown(data[name])}, not an object'
        if problem is not None:
            raise UsageError(f"not a plan of a run ({problem}); {_READ_BACK}")
        return cls(run_id=data["run_id"], created_at=data["created_at"],
                   settings=EvaluationSettings.from_json(data["settings"]), golden=copy.deepcopy(dict(data["golden"])),
                   questions=tuple(question_of_row(row) for row in data["questions"]),
                   timed_question_ids=tuple(data["timed_question_ids"]),
                   setups=tuple(PlannedSetup.from_json(s) for s in data["setups"]),
                   targets=copy.deepcopy(dict(data["targets"])), missing=copy.deepcopy(dict(data["missing"])),
                   unfound=copy.deepcopy(dict(data["unfound"])) if data.get("unfound") else None,
                   race=PlannedRace.from_json(data["race"]) if data.get("race") is not None else None,
                   format=int(data.get("format", PLAN_FORMAT)))


def planned_question(question: Question) -> Question:
    """``question`` as the plan carries it: its id, text, expected ids, quotes and grades; its line, hint,
    reference and draft mark stay in the golden file."""
    return Question(id=question.id, question=question.question, expected=question.expected,
                    evidence=question.evidence, grades=question.grades)


def question_row(question: Question) -> dict[str, Any]:
    """A question as the plan's JSON keeps it: with its text and quotes. The report keeps only ``id``,
    ``expected`` and ``sha256`` (see ``assemble_report``)."""
    row: dict[str, Any] = {"id": question.id, "question": question.question, "expected": list(question.expected),
                           "evidence": list(question.evidence), "sha256": question_sha256(question.question)}
    if question.grades:  # graded labels: the ids graded other than 1 (0 = judged, not relevant)
        row["grades"] = {key: grade for key, grade in question.grades}
    return row


def question_of_row(row: Mapping[str, Any]) -> Question:
    """A plan's question row (``question_row``) as the ``Question`` it was made from."""
    return Question(id=row["id"], question=row["question"], expected=tuple(row["expected"]),
                    evidence=tuple(row.get("evidence") or ()), grades=tuple((row.get("grades") or {}).items()))


def _question_shaped(row: Any) -> bool:
    return (isinstance(row, Mapping) and isinstance(row.get("id"), str) and isinstance(row.get("question"), str)
            and isinstance(row.get("expected"), list))


def _listed(value: Any, each: Any) -> bool:
    return isinstance(value, list) and all(each(item) for item in value)


def _whole(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)
