"""The parts of a run's report as the views read them (``run_report.RunReport`` holds them): one setup's numbers
and result, how it compared with the top, why the race stopped it, the run's rules and golden file, the picks'
tests and tiers, the judge's block. Each is built from its kept JSON by ``from_json``, a value of the wrong kind
read as absent (``json_read``)."""
from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Mapping

from ..settings import DEFAULT_BALANCE, DEFAULT_TIME_POINTS
from .json_read import (flag, ids, integer, mapping, number, objects, pair, plain_dict, text, texts)


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
        return cls(questions=integer(data.get("questions")),
                   counts=MappingProxyType({str(k): v for k, v in counts.items() if integer(v) is not None}
                                           if isinstance(counts, dict) else {}),
                   found=MappingProxyType({str(k): number(v) for k, v in found.items()}
                                          if isinstance(found, dict) else {}),
                   recall=(MappingProxyType({str(k): number(v) for k, v in recall.items()})
                           if isinstance(recall, dict) else None),
                   mrr=number(data.get("mrr")), ndcg_10=number(data.get("ndcg_10")),
                   median_ms=number(data.get("median_ms")), p95_ms=number(data.get("p95_ms")),
                   timed=integer(data.get("timed")), landed=mapping(data.get("landed")),
                   median_margin=number(data.get("median_margin")), judged_10=number(data.get("judged_10")),
                   holes_10=number(data.get("holes_10")), values=mapping(data))

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
        return cls(difference=number(data.get("difference")), interval=pair(data.get("interval")),
                   p_holm=number(data.get("p_holm")), p=number(data.get("p")), better=integer(data.get("better")),
                   worse=integer(data.get("worse")), questions_to_tell=integer(data.get("questions_to_tell")))


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
        return cls(top=text(data.get("top")), tied=bool(data.get("tied")), questions=integer(data.get("questions")),
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
        return cls(questions=texts(data.get("questions")), look=integer(data.get("look")),
                   drawn=integer(data.get("drawn")), of=integer(data.get("of")), margin=integer(data.get("margin")),
                   family=integer(data.get("family")),
                   comparator=text(data.get("comparator")), difference=number(data.get("difference")),
                   points=number(data.get("points")),
                   interval=(interval[0], interval[1]) if isinstance(interval, list) and len(interval) >= 2
                   else (None, None),
                   p=number(data.get("p")), adjusted_p=number(data.get("adjusted_p")),
                   alpha=number(data.get("alpha")),
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
        return cls(key=str(data["key"]), target=text(data.get("target")), engine=text(data.get("engine")),
                   method=text(data.get("method")), method_label=text(data.get("method_label")),
                   retrieval=text(data.get("retrieval")), models=texts(data.get("models")),
                   ranker=text(data.get("ranker")), options=mapping(data.get("options")),
                   rank=integer(data.get("rank")),
                   error=error if isinstance(error, str) and error else None,
                   # upgrade: a summary kept beside an error is no summary (a failed setup never ran)
                   summary=None if error else Summary.from_json(data.get("summary")),
                   ranks=MappingProxyType(dict(ranks)) if isinstance(ranks, dict) else None,
                   results=mapping(data.get("results")),
                   times_ms=tuple(data.get("times_ms") or ()) if isinstance(data.get("times_ms"), list) else (),
                   versus_top=Versus.from_json(data.get("versus_top")), compared="versus_top" in data,
                   neighbours=texts(data.get("neighbours")),
                   requests=integer(data.get("requests")), retries=integer(data.get("retries")),
                   timed_in=text(data.get("timed_in")) or None,
                   ranked_in=MappingProxyType({str(q): str(run) for q, run in data["ranked_in"].items()}
                                              if isinstance(data.get("ranked_in"), dict) else {}),
                   holes=(MappingProxyType({str(q): texts(ids) for q, ids in holes.items()})
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
        return cls(source=text(data.get("source")), sha256=text(data.get("sha256")),
                   questions=integer(data.get("questions")), labelled=integer(data.get("labelled")),
                   problems=tuple(MappingProxyType(p) for p in objects(data.get("problems"))), values=mapping(data))


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
        digest = text(data.get("sha256"))
        if digest is None and isinstance(data.get("question"), str):  # upgrade: a report that kept the text
            digest = hashlib.sha256(data["question"].encode("utf-8", "surrogatepass")).hexdigest()
        expected = data.get("expected")
        return cls(id=str(data.get("id")), sha256=digest, grades=mapping(data.get("grades")),
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
        floor = number(data.get("equally_fast_ms"))
        grade = data.get("min_grade", 1)
        balance, time = data.get("balance_points", DEFAULT_BALANCE), data.get("time_points", DEFAULT_TIME_POINTS)
        return cls(balance_points=number(balance), time_points=number(time),  # upgrade: the defaults when absent
                   rank_by=texts(data.get("rank_by")), rank_among=text(data.get("rank_among")),
                   min_grade=grade if integer(grade) is not None else 1,  # upgrade: before graded labels, grade 1
                   floor_ms=floor if floor is not None and floor >= 0 else None,  # upgrade: before the floor
                   seed=integer(data.get("seed")), values=mapping(data))


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
                                  for item in objects(data.get("left_out"))),
                   index_state=str(state) if state else None, values=mapping(data))


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
                   questions=ids(data.get("questions")), partly=ids(data.get("partly")),  # upgrade: mapping or list
                   unit="chunk" if data.get("unit") == "chunk" else "document",
                   was_held=frozenset(str(d) for d in data.get("was_held") or []),
                   nearest=mapping(data.get("nearest")))


# -- how the picks were made ------------------------------------------------------------------------

@dataclass(frozen=True)
class Significance:
    alpha: float | None
    interval: float | None

    @classmethod
    def from_json(cls, data: Any) -> Significance | None:
        if not isinstance(data, dict) or not data:
            return None
        return cls(alpha=number(data.get("alpha", 0.05)), interval=number(data.get("interval")))


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
        rows = tuple(FasterRow(key=row["key"], median_ms=number(row.get("median_ms")), tied=bool(row.get("tied")),
                               p_holm=number(row.get("p_holm")), better=integer(row.get("better")),
                               worse=integer(row.get("worse")), questions_to_tell=integer(row.get("questions_to_tell")))
                     for row in objects(data.get("faster")) if isinstance(row.get("key"), str))
        return cls(pick=text(data.get("pick")), median_ms=number(data.get("median_ms")), tied=bool(data.get("tied")),
                   with_=text(data.get("with")) or None, faster=rows)


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
        verdicts = {v["key"]: text(v.get("why")) for v in objects(data.get("tied")) if isinstance(v.get("key"), str)}
        return cls(anchor=text(data.get("anchor")), verdicts=MappingProxyType(verdicts))


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

    @classmethod
    def from_json(cls, row: dict[str, Any]) -> TimePairRow:
        return cls(faster=row["faster"], slower=row["slower"], ratio=number(row.get("ratio")),
                   low=number(row.get("low")), high=number(row.get("high")),
                   over_floor=flag(row.get("over_floor")), values=MappingProxyType(row))


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
            low = integer(interval.get("low")) if isinstance(interval, dict) else None
            if low is not None:
                high = integer(interval.get("high", low))
                ranks[key] = RankInterval(low, low if high is None else high, number(interval.get("first_share")))
        listed = data.get("groups")
        groups = tuple(texts(group) for group in (listed if isinstance(listed, list) else [])
                       if isinstance(group, list))
        picks = data.get("picks")
        return cls(metric=str(data.get("metric", "found@10")),  # upgrade: tiers were on found@10 alone
                   alpha=number(data.get("alpha")) or 0.05, rank_level=number(data.get("rank_level")) or 0.95,
                   groups=groups, pairs=len(data["pairs"]) if isinstance(data.get("pairs"), list) else 0,
                   ranks=MappingProxyType(ranks),
                   detectable=_detectable(data.get("detectable")),
                   picks=MappingProxyType({str(name): texts(keys) for name, keys in picks.items()}
                                          if isinstance(picks, dict) else {}),
                   questions=number(data.get("questions")))


def _detectable(data: Any) -> Detectable | None:
    if not isinstance(data, dict):
        return None
    points, questions = number(data.get("points")), number(data.get("questions"))
    if points is None or questions is None:
        return None
    one = data.get("one_pair")
    one_pair = None
    if isinstance(one, dict) and number(one.get("points")) is not None and number(one.get("questions")) is not None:
        one_pair = (float(one["points"]), float(one["questions"]))
    return Detectable(points=points, questions=questions, pairs=number(data.get("pairs")),
                      questions_run=number(data.get("questions_run")),
                      power=number(data.get("power")) or 0.8,  # upgrade: tiers were sized at 0.8 power alone
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
                   results=tuple(MappingProxyType(r) for r in objects(data.get("results"))),
                   questions=tuple(MappingProxyType(r) for r in objects(data.get("questions"))))


@dataclass(frozen=True)
class Unfound:
    """Questions no target holds an expected document of, when more than a share of them: the loud sentence."""

    sentence: str
    ids: tuple[str, ...]


@dataclass(frozen=True)
class RaceCost:
    """What the race spent: setup x question searches, against the exhaustive run's, and its share of the
    exhaustive run's estimated seconds. None where a kept report holds no such number."""

    searches: int | None
    exhaustive_searches: int | None
    share: float | None

    @classmethod
    def from_json(cls, data: Any) -> RaceCost | None:
        if not isinstance(data, dict):
            return None
        return cls(searches=integer(data.get("searches")), exhaustive_searches=integer(data.get("exhaustive_searches")),
                   share=number(data.get("share")))


@dataclass(frozen=True)
class Race:
    """What the race did (``run.race``): the setups raced and stopped, its rule (``scoring.racing``: the margin
    in questions, the points it stands for, the family-wise alpha over ``family`` comparisons, the test and
    its correction, the seed of the question order, the seconds a question from which a setup is raced) and
    what it cost. ``shape.report_problem`` checks the numbers of a kept report; None where one is absent."""

    raced: tuple[str, ...]
    stopped: tuple[str, ...]
    margin: int | None
    family: int | None
    alpha: float | None
    points: float | None
    threshold_seconds: float | None
    seed: int | None
    test: str | None
    correction: str | None
    cost: RaceCost | None

    @classmethod
    def from_json(cls, data: Any) -> Race | None:
        if not isinstance(data, dict):
            return None
        return cls(raced=texts(data.get("raced")), stopped=texts(data.get("stopped")),
                   margin=integer(data.get("margin")), family=integer(data.get("family")),
                   alpha=number(data.get("alpha")), points=number(data.get("points")),
                   threshold_seconds=number(data.get("threshold_seconds")), seed=integer(data.get("seed")),
                   test=text(data.get("test")), correction=text(data.get("correction")),
                   cost=RaceCost.from_json(data.get("cost")))


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
    grades: Mapping[str, Mapping[str, Any]]  # question id -> unit id -> the judge's grade

    @classmethod
    def from_json(cls, data: Any) -> Judged | None:
        if not isinstance(data, dict):
            return None
        setups = plain_dict(data.get("setups"))
        calibration = mapping(data.get("calibration"))
        bias = plain_dict(calibration.get("bias"))
        human = plain_dict(data.get("human_picks"))
        return cls(counted=bool(data.get("counted")), refused=data.get("refused"),
                   why_not_counted=data.get("why_not_counted"), stopped_by_cap=bool(data.get("stopped_by_cap")),
                   judge=mapping(data.get("judge")), scale=mapping(data.get("scale")), calibration=calibration,
                   ranking=mapping(data.get("ranking")), cost=mapping(data.get("cost")),
                   holes=mapping(data.get("holes")),
                   conflicts=tuple(MappingProxyType(c) for c in objects(data.get("conflicts"))),
                   setups=MappingProxyType({key: JudgedSetup(Summary.from_json(entry.get("summary")),
                                                             entry.get("holes_judged", 0), bool(entry.get("biased")))
                                            for key, entry in setups.items() if isinstance(entry, dict)}),
                   human_picks=mapping(human.get("picks")), judged_picks=mapping(data.get("judged_picks")),
                   flagged=tuple(bias.get("flagged") or ()),
                   grades=MappingProxyType({str(q): mapping(units)
                                            for q, units in plain_dict(data.get("grades")).items()
                                            if isinstance(units, dict)}))
