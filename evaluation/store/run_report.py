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

A part no view reads field by field (a result row, a target's description, the judge's calibration) stays
a read-only mapping. Values of the wrong kind (a report anyone with write access may have edited, past
what ``shape.report_problem`` checks) read as absent, never as a ``KeyError`` in a view.
"""
from __future__ import annotations

import copy
import hashlib
import math
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Mapping

from ..errors import printable_texts
from ..settings import DEFAULT_BALANCE, DEFAULT_TIME_POINTS

PICK_NAMES = ("finds_the_most", "best_for_balance", "best_for_time")
_ROWS = ("results",)  # a setup's result rows: ids and scores, kept as they are by ``printable``

# What ``from_json`` reads of an older shape as today's, one line each (counted by bench_structure-style tools).
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


# -- reading values ------------------------------------------------------------------------------

def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _number(value: Any) -> int | float | None:
    """``value`` as kept when it is a finite number (an int stays an int: views print it as it was)."""
    plain = isinstance(value, (int, float)) and not isinstance(value, bool)
    return value if plain and math.isfinite(value) else None


def _flag(value: Any) -> bool | None:
    return value if isinstance(value, bool) else None


def _mapping(value: Any) -> Mapping[str, Any]:
    """A read-only view of ``value`` when it is an object, else an empty one."""
    return MappingProxyType(value) if isinstance(value, dict) else MappingProxyType({})


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _maybe_mapping(value: Any) -> Mapping[str, Any] | None:
    return MappingProxyType(value) if isinstance(value, dict) else None


def _texts(value: Any) -> tuple[str, ...]:
    return tuple(v for v in value if isinstance(v, str)) if isinstance(value, list) else ()


def _objects(value: Any) -> list[dict[str, Any]]:
    return [v for v in value if isinstance(v, dict)] if isinstance(value, list) else []


def _ids(value: Any) -> tuple[str, ...]:
    """Question ids kept as a mapping (id -> documents, older reports) or a list (newer)."""
    if isinstance(value, dict):
        return tuple(str(k) for k in value)
    if isinstance(value, (list, tuple)):
        return tuple(str(v) for v in value)
    return ()


def _pair(value: Any) -> tuple[float, float] | None:
    if isinstance(value, list) and len(value) >= 2:
        low, high = _number(value[0]), _number(value[1])
        if low is not None and high is not None:
            return low, high
    return None


def pick_key(value: Any) -> str | None:
    """A pick is a setup key, or (as some reports kept it) an object naming one under ``key`` or ``setup``."""
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        key = value.get("key") or value.get("setup")
        return key if isinstance(key, str) else None
    return None


# -- a setup's numbers ---------------------------------------------------------------------------

@dataclass(frozen=True)
class Summary:
    """One setup's numbers (``scoring.metrics.summarise``): shares from 0 to 1, counts and shares keyed by
    cut-off ("1", "3", "10", ...). ``values`` is the kept object, for a measure read by its path
    (``measures.Measure.of``)."""

    questions: int | None
    counts: Mapping[str, int]
    found: Mapping[str, float | None]
    recall: Mapping[str, float | None] | None
    mrr: float | None
    ndcg_10: float | None
    median_ms: float | None
    p95_ms: float | None
    timed: int | None
    landed: Mapping[str, Any]
    median_margin: float | None
    judged_10: float | None  # reports before graded labels lack it
    holes_10: float | None
    values: Mapping[str, Any] = field(repr=False, compare=False)

    @classmethod
    def from_json(cls, data: Any) -> Summary | None:
        if not isinstance(data, dict):
            return None
        counts = data.get("counts")
        found = data.get("found")
        recall = data.get("recall")
        return cls(questions=_int(data.get("questions")),
                   counts=MappingProxyType({str(k): v for k, v in counts.items() if _int(v) is not None}
                                           if isinstance(counts, dict) else {}),
                   found=MappingProxyType({str(k): _number(v) for k, v in found.items()}
                                          if isinstance(found, dict) else {}),
                   recall=(MappingProxyType({str(k): _number(v) for k, v in recall.items()})
                           if isinstance(recall, dict) else None),
                   mrr=_number(data.get("mrr")), ndcg_10=_number(data.get("ndcg_10")),
                   median_ms=_number(data.get("median_ms")), p95_ms=_number(data.get("p95_ms")),
                   timed=_int(data.get("timed")), landed=_mapping(data.get("landed")),
                   median_margin=_number(data.get("median_margin")), judged_10=_number(data.get("judged_10")),
                   holes_10=_number(data.get("holes_10")), values=_mapping(data))

    def count(self, k: int | str) -> int | None:
        """How many questions it found in the top ``k`` (None when it keeps no count)."""
        return self.counts.get(str(k))

    def share(self, k: int | str) -> float | None:
        """found@``k``, the share of its questions (None when it keeps none)."""
        return self.found.get(str(k))


# -- against the top, and why the race stopped a setup -----------------------------------------------

@dataclass(frozen=True)
class Compared:
    """One measure of a setup against another (``scoring.comparison``): the difference, its interval, the
    p-values; for found@10 also the questions each found alone and how many questions would tell them apart."""

    difference: float | None
    interval: tuple[float, float] | None
    p_holm: float | None
    p: float | None
    better: int | None = None
    worse: int | None = None
    questions_to_tell: int | None = None

    @classmethod
    def from_json(cls, data: Any) -> Compared | None:
        if not isinstance(data, dict):
            return None
        return cls(difference=_number(data.get("difference")), interval=_pair(data.get("interval")),
                   p_holm=_number(data.get("p_holm")), p=_number(data.get("p")), better=_int(data.get("better")),
                   worse=_int(data.get("worse")), questions_to_tell=_int(data.get("questions_to_tell")))


@dataclass(frozen=True)
class Versus:
    """A setup against the top (``versus_top``): per measure, keyed by ``Measure.versus_key``."""

    top: str | None
    tied: bool
    questions: int | None
    measures: Mapping[str, Compared]
    values: Mapping[str, Any] = field(repr=False, compare=False)

    @classmethod
    def from_json(cls, data: Any) -> Versus | None:
        if not isinstance(data, dict):
            return None
        measures = {name: compared for name, value in data.items()
                    if (compared := Compared.from_json(value)) is not None}
        return cls(top=_text(data.get("top")), tied=bool(data.get("tied")), questions=_int(data.get("questions")),
                   measures=MappingProxyType(measures), values=MappingProxyType(data))

    def of(self, versus_key: str) -> Compared | None:
        return self.measures.get(versus_key)


@dataclass(frozen=True)
class Stopped:
    """Why the race stopped a setup and what it searched (``run.race.stopped_entry``)."""

    questions: tuple[str, ...]
    look: int | None
    drawn: int | None
    of: int | None
    margin: int | None
    family: int | None
    comparator: str | None
    difference: float | None
    points: float | None
    interval: tuple[Any, Any]
    p: float | None
    adjusted_p: float | None
    alpha: float | None
    summary: Summary | None

    @classmethod
    def from_json(cls, data: Any) -> Stopped | None:
        if not isinstance(data, dict):
            return None
        interval = data.get("interval")
        return cls(questions=_texts(data.get("questions")), look=_int(data.get("look")), drawn=_int(data.get("drawn")),
                   of=_int(data.get("of")), margin=_int(data.get("margin")), family=_int(data.get("family")),
                   comparator=_text(data.get("comparator")), difference=_number(data.get("difference")),
                   points=_number(data.get("points")),
                   interval=(interval[0], interval[1]) if isinstance(interval, list) and len(interval) >= 2
                   else (None, None),
                   p=_number(data.get("p")), adjusted_p=_number(data.get("adjusted_p")),
                   alpha=_number(data.get("alpha")),
                   summary=Summary.from_json(data.get("summary")))


# -- one setup -----------------------------------------------------------------------------------

@dataclass(frozen=True)
class SetupResult:
    """One setup in a report (``run.one_setup``), ranked by ``run.assemble``. ``summary`` is None for a setup
    that failed (``error``) or that the race stopped (``stopped``: its numbers are over what it searched)."""

    key: str
    target: str | None
    engine: str | None
    method: str | None
    method_label: str | None
    retrieval: str | None
    models: tuple[str, ...]
    ranker: str | None
    options: Mapping[str, Any]
    rank: int | None
    error: str | None
    summary: Summary | None
    ranks: Mapping[str, int | None] | None  # None: the report kept no per-question ranks
    results: Mapping[str, Any]
    times_ms: tuple[Any, ...]
    versus_top: Versus | None  # reports before the comparisons have none
    compared: bool  # the report compared it with the top (``versus_top`` kept, null for the top itself)
    neighbours: tuple[str, ...]
    requests: int | None
    retries: int | None
    timed_in: str | None
    ranked_in: Mapping[str, str]
    holes: Mapping[str, tuple[str, ...]] | None
    stopped: Stopped | None
    values: Mapping[str, Any] = field(repr=False, compare=False)  # the entry as kept: a key a newer version adds

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> SetupResult:
        ranks = data.get("ranks")
        holes = data.get("holes")
        error = data.get("error")
        return cls(key=str(data["key"]), target=_text(data.get("target")), engine=_text(data.get("engine")),
                   method=_text(data.get("method")), method_label=_text(data.get("method_label")),
                   retrieval=_text(data.get("retrieval")), models=_texts(data.get("models")),
                   ranker=_text(data.get("ranker")), options=_mapping(data.get("options")), rank=_int(data.get("rank")),
                   error=error if isinstance(error, str) and error else None,
                   # upgrade: a summary kept beside an error is no summary (a failed setup never ran)
                   summary=None if error else Summary.from_json(data.get("summary")),
                   ranks=MappingProxyType(dict(ranks)) if isinstance(ranks, dict) else None,
                   results=_mapping(data.get("results")),
                   times_ms=tuple(data.get("times_ms") or ()) if isinstance(data.get("times_ms"), list) else (),
                   versus_top=Versus.from_json(data.get("versus_top")), compared="versus_top" in data,
                   neighbours=_texts(data.get("neighbours")),
                   requests=_int(data.get("requests")), retries=_int(data.get("retries")),
                   timed_in=_text(data.get("timed_in")) or None,
                   ranked_in=MappingProxyType({str(q): str(run) for q, run in data["ranked_in"].items()}
                                              if isinstance(data.get("ranked_in"), dict) else {}),
                   holes=(MappingProxyType({str(q): _texts(ids) for q, ids in holes.items()})
                          if isinstance(holes, dict) else None),
                   stopped=Stopped.from_json(data.get("stopped")), values=MappingProxyType(data))

    @property
    def ran(self) -> bool:
        """It searched every question and has numbers: the setups ranked and picked from."""
        return self.summary is not None


# -- the run's rules and what it was made from ----------------------------------------------------

@dataclass(frozen=True)
class Golden:
    """The golden file the run read: where from, its sha256, how many questions and how many labelled."""

    source: str | None
    sha256: str | None
    questions: int | None
    labelled: int | None
    problems: tuple[Mapping[str, Any], ...]
    values: Mapping[str, Any] = field(repr=False, compare=False)  # as kept: counts a view names when present

    @classmethod
    def from_json(cls, data: Any) -> Golden:
        data = data if isinstance(data, dict) else {}
        return cls(source=_text(data.get("source")), sha256=_text(data.get("sha256")),
                   questions=_int(data.get("questions")), labelled=_int(data.get("labelled")),
                   problems=tuple(MappingProxyType(p) for p in _objects(data.get("problems"))), values=_mapping(data))


@dataclass(frozen=True)
class QuestionRow:
    """A question as a report keeps it: its id, expected ids, grades when graded and the sha256 of its text
    (never the text)."""

    id: str
    expected: tuple[str, ...]
    grades: Mapping[str, Any]
    sha256: str | None

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> QuestionRow:
        digest = _text(data.get("sha256"))
        if digest is None and isinstance(data.get("question"), str):  # upgrade: a report that kept the text
            digest = hashlib.sha256(data["question"].encode("utf-8", "surrogatepass")).hexdigest()
        expected = data.get("expected")
        return cls(id=str(data.get("id")), sha256=digest, grades=_mapping(data.get("grades")),
                   expected=tuple(str(e) for e in expected) if isinstance(expected, list) else ())


@dataclass(frozen=True)
class Rules:
    """How the run ranked and picked. ``rank_among``: None for a report made before ranks were read two ways
    (it read among results); ``floor_ms``: the "equally fast" floor, None before it; ``values``: the kept
    object (a rule a view prints as it is)."""

    balance_points: float | None
    time_points: float | None
    rank_by: tuple[str, ...]
    rank_among: str | None
    min_grade: int
    floor_ms: float | None
    seed: int | None  # the run's seed: every resample and comparison of it is drawn from it
    values: Mapping[str, Any] = field(repr=False, compare=False)

    @classmethod
    def from_json(cls, data: Any) -> Rules:
        data = data if isinstance(data, dict) else {}
        floor = _number(data.get("equally_fast_ms"))
        grade = data.get("min_grade", 1)
        balance, time = data.get("balance_points", DEFAULT_BALANCE), data.get("time_points", DEFAULT_TIME_POINTS)
        return cls(balance_points=_number(balance), time_points=_number(time),  # upgrade: the defaults when absent
                   rank_by=_texts(data.get("rank_by")), rank_among=_text(data.get("rank_among")),
                   min_grade=grade if _int(grade) is not None else 1,  # upgrade: before graded labels, grade 1
                   floor_ms=floor if floor is not None and floor >= 0 else None,  # upgrade: before the floor
                   seed=_int(data.get("seed")), values=_mapping(data))


@dataclass(frozen=True)
class LeftOut:
    what: str
    reason: str


@dataclass(frozen=True)
class TargetFacts:
    """A target as the report describes it: what its index cannot do (``left_out``), its index's state, and
    the description as kept (``values``: engine, counts, ...)."""

    left_out: tuple[LeftOut, ...]
    index_state: str | None  # Azure AI Search's ``state``, else the embedded engine's ``fingerprint``
    values: Mapping[str, Any] = field(repr=False, compare=False)

    @classmethod
    def from_json(cls, data: Any) -> TargetFacts:
        data = data if isinstance(data, dict) else {}
        state = data.get("state") or data.get("fingerprint")
        return cls(left_out=tuple(LeftOut(str(item.get("what", "?")), str(item.get("reason", "no reason given")))
                                  for item in _objects(data.get("left_out"))),
                   index_state=str(state) if state else None, values=_mapping(data))


@dataclass(frozen=True)
class Missing:
    """The expected documents (or chunks) a target does not hold, and the questions that costs."""

    documents: tuple[str, ...]
    questions: tuple[str, ...]
    partly: tuple[str, ...]
    unit: str  # "document", or "chunk" when a run judged by chunk looked expected chunk ids up
    was_held: frozenset[str]
    nearest: Mapping[str, Any]

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Missing:
        return cls(documents=tuple(str(d) for d in data.get("documents") or []),
                   questions=_ids(data.get("questions")), partly=_ids(data.get("partly")),  # upgrade: mapping or list
                   unit="chunk" if data.get("unit") == "chunk" else "document",
                   was_held=frozenset(str(d) for d in data.get("was_held") or []),
                   nearest=_mapping(data.get("nearest")))


# -- how the picks were made ------------------------------------------------------------------------

@dataclass(frozen=True)
class Significance:
    alpha: float | None
    interval: float | None

    @classmethod
    def from_json(cls, data: Any) -> Significance | None:
        if not isinstance(data, dict) or not data:
            return None
        return cls(alpha=_number(data.get("alpha", 0.05)), interval=_number(data.get("interval")))


@dataclass(frozen=True)
class FasterRow:
    """A setup faster than a pick, and what the paired test on found@10 says of the two."""

    key: str
    median_ms: float | None
    tied: bool
    p_holm: float | None
    better: int | None
    worse: int | None
    questions_to_tell: int | None


@dataclass(frozen=True)
class Tie:
    """A pick and the faster setups the paired test cannot tell from it (``scoring.picks``)."""

    pick: str | None
    median_ms: float | None
    tied: bool
    with_: str | None
    faster: tuple[FasterRow, ...]

    @classmethod
    def from_json(cls, data: Any) -> Tie | None:
        if not isinstance(data, dict):
            return None
        rows = tuple(FasterRow(key=row["key"], median_ms=_number(row.get("median_ms")), tied=bool(row.get("tied")),
                               p_holm=_number(row.get("p_holm")), better=_int(row.get("better")),
                               worse=_int(row.get("worse")), questions_to_tell=_int(row.get("questions_to_tell")))
                     for row in _objects(data.get("faster")) if isinstance(row.get("key"), str))
        return cls(pick=_text(data.get("pick")), median_ms=_number(data.get("median_ms")), tied=bool(data.get("tied")),
                   with_=_text(data.get("with")) or None, faster=rows)


@dataclass(frozen=True)
class TimeTest:
    """Per pick, its tier's fastest (``anchor``) and, per other member, why it is tied on time with it."""

    anchor: str | None
    verdicts: Mapping[str, str | None]  # setup key -> "equally fast", "cannot tell", ...

    @classmethod
    def from_json(cls, data: Any) -> TimeTest | None:
        if not isinstance(data, dict):
            return None
        # upgrade: a verdict whose key is not text (a damaged report) names no setup
        verdicts = {v["key"]: _text(v.get("why")) for v in _objects(data.get("tied")) if isinstance(v.get("key"), str)}
        return cls(anchor=_text(data.get("anchor")), verdicts=MappingProxyType(verdicts))


@dataclass(frozen=True)
class TimePairRow:
    """Two setups' times compared side by side (``scoring.time_pairs.TimePair`` as kept); ``values``: the row
    as kept, for the rule that reads the whole pair again."""

    faster: str
    slower: str
    ratio: float | None
    low: float | None
    high: float | None
    over_floor: bool | None
    values: Mapping[str, Any] = field(repr=False, compare=False)


@dataclass(frozen=True)
class RankInterval:
    low: int
    high: int
    first_share: float | None


@dataclass(frozen=True)
class Detectable:
    """The smallest found@10 difference the questions detect (``scoring.tiers``)."""

    points: float
    questions: float
    pairs: float | None
    questions_run: float | None
    power: float
    one_pair: tuple[float, float] | None  # (points, questions) for two setups alone


@dataclass(frozen=True)
class Tiers:
    """Setups the paired tests cannot separate: groups of keys, every pair's test, each setup's rank interval."""

    metric: str
    alpha: float
    rank_level: float
    groups: tuple[tuple[str, ...], ...]
    pairs: int
    ranks: Mapping[str, RankInterval]
    detectable: Detectable | None
    picks: Mapping[str, tuple[str, ...]]  # per pick, the setups that share its tier
    questions: float | None

    @classmethod
    def from_json(cls, data: Any) -> Tiers | None:
        if not isinstance(data, dict):
            return None
        ranks = {}
        for key, interval in (data.get("ranks") or {}).items() if isinstance(data.get("ranks"), dict) else ():
            low = _int(interval.get("low")) if isinstance(interval, dict) else None
            if low is not None:
                high = _int(interval.get("high", low))
                ranks[key] = RankInterval(low, low if high is None else high, _number(interval.get("first_share")))
        groups = tuple(_texts(group) for group in data.get("groups") or [] if isinstance(group, list))
        picks = data.get("picks")
        return cls(metric=str(data.get("metric", "found@10")),  # upgrade: tiers were on found@10 alone
                   alpha=_number(data.get("alpha")) or 0.05, rank_level=_number(data.get("rank_level")) or 0.95,
                   groups=groups, pairs=len(data.get("pairs") or []), ranks=MappingProxyType(ranks),
                   detectable=_detectable(data.get("detectable")),
                   picks=MappingProxyType({str(name): _texts(keys) for name, keys in picks.items()}
                                          if isinstance(picks, dict) else {}),
                   questions=_number(data.get("questions")))


def _detectable(data: Any) -> Detectable | None:
    if not isinstance(data, dict):
        return None
    points, questions = _number(data.get("points")), _number(data.get("questions"))
    if points is None or questions is None:
        return None
    one = data.get("one_pair")
    one_pair = None
    if isinstance(one, dict) and _number(one.get("points")) is not None and _number(one.get("questions")) is not None:
        one_pair = (float(one["points"]), float(one["questions"]))
    return Detectable(points=points, questions=questions, pairs=_number(data.get("pairs")),
                      questions_run=_number(data.get("questions_run")),
                      power=_number(data.get("power")) or 0.8,  # upgrade: tiers were sized at 0.8 power alone
                      one_pair=one_pair)


@dataclass(frozen=True)
class LabelNext:
    """Results to judge and questions to label that would most help separate the top tier (``scoring.label_next``)."""

    tied: tuple[str, ...]
    results: tuple[Mapping[str, Any], ...]  # question, result, score, in
    questions: tuple[Mapping[str, Any], ...]  # question, kind, units, score

    @classmethod
    def from_json(cls, data: Any) -> LabelNext | None:
        if not isinstance(data, dict):
            return None
        return cls(tied=tuple(str(k) for k in data.get("tied") or []),
                   results=tuple(MappingProxyType(r) for r in _objects(data.get("results"))),
                   questions=tuple(MappingProxyType(r) for r in _objects(data.get("questions"))))


@dataclass(frozen=True)
class Unfound:
    """Questions no target holds an expected document of, when more than a share of them: the loud sentence."""

    sentence: str
    ids: tuple[str, ...]


@dataclass(frozen=True)
class RaceCost:
    searches: Any
    exhaustive_searches: Any
    share: Any


@dataclass(frozen=True)
class Race:
    """What the race did (``run.race``): the setups raced and stopped, its rule and what it cost."""

    raced: tuple[str, ...]
    stopped: tuple[str, ...]
    margin: Any
    family: Any
    alpha: Any
    points: Any
    threshold_seconds: Any
    seed: Any
    test: Any
    correction: Any
    cost: RaceCost | None

    @classmethod
    def from_json(cls, data: Any) -> Race | None:
        if not isinstance(data, dict):
            return None
        cost = data.get("cost")
        return cls(raced=tuple(data.get("raced") or ()), stopped=_texts(data.get("stopped")),
                   margin=data.get("margin"), family=data.get("family"), alpha=data.get("alpha"),
                   points=data.get("points"), threshold_seconds=data.get("threshold_seconds"), seed=data.get("seed"),
                   test=data.get("test"), correction=data.get("correction"),
                   cost=RaceCost(cost.get("searches"), cost.get("exhaustive_searches"), cost.get("share"))
                   if isinstance(cost, dict) else None)


@dataclass(frozen=True)
class Refusal:
    """A run that never started: why, and its golden file's errors by line."""

    reason: str | None
    errors: tuple[tuple[int | None, Any], ...]  # (line, message)


@dataclass(frozen=True)
class JudgedSetup:
    summary: Summary | None
    holes_judged: Any
    biased: bool


@dataclass(frozen=True)
class Judged:
    """Holes graded by a chat model (``evaluation.holes``): the judge, whether its grades count, each setup's
    numbers with them, the picks they would name. The judge's calibration, cost, scale and ranking are
    read by ``report.judged`` alone and stay the kept objects."""

    counted: bool
    refused: Any
    why_not_counted: Any
    stopped_by_cap: bool
    judge: Mapping[str, Any]
    scale: Mapping[str, Any]
    calibration: Mapping[str, Any]
    ranking: Mapping[str, Any]
    cost: Mapping[str, Any]
    holes: Mapping[str, Any]
    conflicts: tuple[Mapping[str, Any], ...]
    setups: Mapping[str, JudgedSetup]
    human_picks: Mapping[str, Any]  # the picks on the people's labels alone
    judged_picks: Mapping[str, Any]  # picks and ranks on human + judged labels
    flagged: tuple[str, ...]  # setups the judge is biased toward or against

    @classmethod
    def from_json(cls, data: Any) -> Judged | None:
        if not isinstance(data, dict):
            return None
        setups = _dict(data.get("setups"))
        calibration = _mapping(data.get("calibration"))
        bias = _dict(calibration.get("bias"))
        human = _dict(data.get("human_picks"))
        return cls(counted=bool(data.get("counted")), refused=data.get("refused"),
                   why_not_counted=data.get("why_not_counted"), stopped_by_cap=bool(data.get("stopped_by_cap")),
                   judge=_mapping(data.get("judge")), scale=_mapping(data.get("scale")), calibration=calibration,
                   ranking=_mapping(data.get("ranking")), cost=_mapping(data.get("cost")),
                   holes=_mapping(data.get("holes")),
                   conflicts=tuple(MappingProxyType(c) for c in _objects(data.get("conflicts"))),
                   setups=MappingProxyType({key: JudgedSetup(Summary.from_json(entry.get("summary")),
                                                             entry.get("holes_judged", 0), bool(entry.get("biased")))
                                            for key, entry in setups.items() if isinstance(entry, dict)}),
                   human_picks=_mapping(human.get("picks")), judged_picks=_mapping(data.get("judged_picks")),
                   flagged=tuple(bias.get("flagged") or ()))


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
        rows = _objects(data.get("questions"))
        if rows:
            questions = tuple(QuestionRow.from_json(row) for row in rows)
        else:  # upgrade: a report without question rows has its ids
            questions = tuple(QuestionRow(id=q, expected=(), grades=MappingProxyType({}), sha256=None)
                              for q in question_ids)
        picks = _dict(data.get("picks"))
        ties = _dict(data.get("ties"))
        on_time = _dict(data.get("ties_on_time"))
        tests = _dict(data.get("time_tests"))
        unfound = data.get("unfound")
        refused = data.get("refused")
        missing = _dict(data.get("missing"))
        targets = _dict(data.get("targets"))
        return cls(
            id=_text(data.get("id")), created_at=_text(data.get("created_at")),
            golden=Golden.from_json(data.get("golden")),
            collections=tuple(str(c) for c in data.get("collections") or []), depth=_int(data.get("depth")),
            by=_text(data.get("by")), question_ids=question_ids, questions=questions, questions_kept=bool(rows),
            rules=Rules.from_json(data.get("rules")),
            targets=MappingProxyType({str(name): TargetFacts.from_json(d) for name, d in targets.items()
                                      if isinstance(d, dict)}),
            missing=MappingProxyType({str(t): Missing.from_json(g) for t, g in missing.items() if isinstance(g, dict)}),
            # upgrade: a pick kept as an object reads as the key it names
            picks=MappingProxyType({str(name): pick_key(value) for name, value in picks.items()}),
            pick_notes=MappingProxyType({str(name): MappingProxyType({k: v for k, v in value.items()
                                                                      if k not in ("key", "setup")})
                                         for name, value in picks.items() if isinstance(value, dict)}),
            picks_withheld=_text(data.get("picks_withheld")) or None, picks_from=_text(data.get("picks_from")),
            frontier=_texts(data.get("frontier")), setups=setups,
            significance=Significance.from_json(data.get("significance")),
            ties=MappingProxyType({name: tie for name, value in ties.items() if (tie := Tie.from_json(value))}),
            ties_on_time=MappingProxyType({name: _texts(keys) for name, keys in on_time.items()
                                           if isinstance(keys, list)}),
            time_tests=MappingProxyType({name: test for name, value in tests.items()
                                         if (test := TimeTest.from_json(value))}),
            time_pairs=tuple(_time_pair(row) for row in _objects(data.get("time_pairs"))
                             if isinstance(row.get("faster"), str) and isinstance(row.get("slower"), str)),
            tiers=Tiers.from_json(data.get("tiers")), label_next=LabelNext.from_json(data.get("label_next")),
            cache=_maybe_mapping(data.get("cache")),
            unfound=Unfound(str(unfound["sentence"]), tuple(str(i) for i in unfound.get("ids") or []))
            if isinstance(unfound, dict) and unfound.get("sentence") else None,
            refused=Refusal(_text(refused.get("reason")) or None,
                            tuple((_int(e.get("line")), e.get("message")) for e in _objects(refused.get("errors"))))
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


def _time_pair(row: dict[str, Any]) -> TimePairRow:
    return TimePairRow(faster=row["faster"], slower=row["slower"], ratio=_number(row.get("ratio")),
                       low=_number(row.get("low")), high=_number(row.get("high")),
                       over_floor=_flag(row.get("over_floor")), values=MappingProxyType(row))
