"""A race on a plan (``scoring.racing`` holds the test and argues it): which setups race, the order
their questions are searched in, the looks, what each look decided, and the report's entry of a
setup the race stopped. The race is the plan's ``PlannedRace`` (typed; JSON only where the plan is kept),
so the command line (``evaluate``) and the Function
App (a round of shards per look) run the same race and decide the same: a decision depends only on
the plan and the results, never on when or where a look was taken.

**Which setups race.** Those whose question costs at least ``RACE_SECONDS`` (``shards.estimated_seconds``:
a cross-encoder over 30 candidates about 3.5 s, a request to Azure AI Search 0.3 s; BM25 about 1 ms,
a query embedding about 6 ms, ColBERT's re-scoring about 60 ms). The rest run every question, as an
exhaustive run would: on the shipped sample's eleven setups the eight cheap ones are under 1% of an
exhaustive run's seconds, so racing them could save under 1% while each one raced would add a
comparison to the family (``alpha`` split further, every stop later); and run in full they are the
comparators, whose totals are known before any raced question is drawn (``racing.race_pairs``).
A race is planned only when a stop is possible before the last look (``racing.earliest_stop``: with
every difference in the stopped setup's disfavour, 12 questions at the sample's 36 and 8 points;
a golden file of a handful of questions never races), and never with ``exhaustive``.

**The order.** The plan's timed sample first, in its seeded order (a raced setup reranked by a model
times the first six of it one by one, so those are its first draws), then every other question
in an order shuffled by the run's seed: together a uniformly random permutation of the questions,
which is what makes the first ``t`` a sample without replacement. A look is taken after each batch
of ``batch`` questions of that order (at least ``MIN_BATCH``, at most ``MOST_LOOKS`` looks: in the
Function App each batch is a round of shards); a raced setup searches, in batch ``j``, the questions
of positions ``looks[j - 1]`` to ``looks[j]`` it has not searched yet (its timed pass searched its
sample: ``shards.look_questions``). Every setup still running has then searched the order's first
``looks[j]`` questions, and that prefix is all a look reads.
"""
from __future__ import annotations

from typing import Any, Iterable, Mapping, Sequence

from ..errors import UsageError
from ..scoring.comparison import TIE_METRIC, question_values
from ..scoring.picks import allowed_shortfall
from ..scoring.racing import (Comparison, earliest_stop, family_size, race_look, race_looks, race_pairs,
                              seeded_shuffle)
from .copying import copied
from .judged import batch_ids
from .planned import Plan, PlannedRace
from .shards import estimated_seconds

RACE_SECONDS = 0.1  # a setup whose question costs this much or more (estimated) races; the rest run every question


def plan_race(plan: Plan) -> PlannedRace | None:
    """The plan's ``race`` (see the module docstring; ``PlannedRace`` names its fields), or None when the
    run searches every setup on every question: ``exhaustive``, no costly setup, or no look before the last
    could stop one."""
    settings = plan.settings
    if settings.exhaustive or not plan.questions:
        return None
    seconds = {s.key: round(estimated_seconds(s), 6) for s in plan.setups}
    raced = [key for key, cost in seconds.items() if cost >= RACE_SECONDS]
    fully_run = [key for key in seconds if key not in raced]
    if not raced or (not fully_run and len(raced) < 2):  # nothing costly, or nothing to compare it with
        return None
    population = len(plan.questions)
    points = max(settings.balance, settings.time_points)
    margin = allowed_shortfall(points, population)
    family = family_size(len(raced), len(fully_run))
    looks = race_looks(population)
    earliest = earliest_stop(population=population, margin=margin, alpha=settings.alpha, family=family)
    if earliest is None or not any(earliest <= look < population for look in looks):
        return None
    return PlannedRace(order=tuple(race_order(plan)), looks=tuple(looks), raced=tuple(raced),
                       fully_run=tuple(fully_run), points=points, margin=margin, alpha=settings.alpha, family=family,
                       seconds=seconds, threshold_seconds=RACE_SECONDS, seed=settings.seed, earliest=earliest)


def race_order(plan: Plan) -> list[str]:
    """The plan's timed sample in its order, then the other questions shuffled by the run's seed."""
    sample = list(plan.timed_question_ids)
    taken = set(sample)
    return sample + seeded_shuffle([qid for qid in plan.question_ids if qid not in taken], plan.settings.seed)


def planned_race(plan: Plan) -> PlannedRace:
    """The plan's race; a ``UsageError`` for a plan that races nothing (a step of a race given another plan)."""
    if plan.race is None:
        raise UsageError(f"the plan of run {plan.run_id} races no setup (plan_race found none worth racing)")
    return plan.race


def raced_through(plan: Plan, setup_key: str, look: int) -> list[str]:
    """The questions of ``setup_key``'s batch it has searched once the batches up to look ``look`` ran."""
    race = planned_race(plan)
    wanted = set(race.order[:race.looks[look - 1]]) if look else set()
    return [qid for qid in batch_ids(plan, setup_key) if qid in wanted]


class RaceState:
    """What a race decided up to a look: the setups still running, and per stopped setup the look it
    stopped at and the comparison that stopped it (``scoring.racing.Comparison``)."""

    def __init__(self, race: PlannedRace, looked: int, running: list[str],
                 stopped: dict[str, tuple[int, Comparison]]) -> None:
        self.race, self.looked, self.running, self.stopped = race, looked, running, stopped

    def to_dict(self) -> dict[str, Any]:
        return {"looked": self.looked, "running": list(self.running),
                "stopped": {key: {"look": look, **comparison.to_dict()} for key, (look, comparison) in
                            self.stopped.items()}}


def replay(plan: Plan, ranks: Mapping[str, Mapping[str, Any]], *, through: int,
           failed: Iterable[str] = ()) -> RaceState:
    """The race's decisions at looks 1 to ``through``, from ``ranks`` (per setup, question id -> the
    position of its first relevant result, None when none: an entry's ``ranks``, timed pass and batches
    together). Every fully-run setup must hold every question; a raced one the order's prefix up to each
    look while it runs. ``failed``: setups whose search failed, in no comparison. Deterministic: the
    same ranks give the same decisions, however often and wherever replayed."""
    race = planned_race(plan)
    rule = race.rule
    order, looks = race.order, race.looks
    broken = set(failed)
    question_count = len(order)
    found = {key: _found(ranks[key], order) for key in ranks if key not in broken}
    full = {key: sum(values) for key, values in found.items()
            if key in race.fully_run and len(values) == question_count}
    raced = [key for key in race.raced if key not in broken]
    comparators = race_pairs(raced, full)
    running = [key for key in raced if key in found]
    stopped: dict[str, tuple[int, Comparison]] = {}
    for look, drawn in enumerate(looks[:through], start=1):
        if drawn >= question_count:
            break  # every question drawn: nothing left to save
        values = {key: found[key][:drawn] for key in full}
        for key in raced:
            if key in stopped:
                values[key] = found[key][:looks[stopped[key][0] - 1]]
            elif key in running:
                if len(found[key]) < drawn:
                    raise ValueError(f"setup {key} has no results for the questions before look {look} "
                                     f"({len(found[key])} of the order's first {drawn})")
                values[key] = found[key][:drawn]
        for key, comparison in race_look(values, running, comparators, rule).items():
            if comparison.stops:
                stopped[key] = (look, comparison)
        running = [key for key in running if key not in stopped]
    return RaceState(race, min(through, len(looks)), running, stopped)


def _found(ranks: Mapping[str, Any], order: Sequence[str]) -> list[float]:
    """found@10 per question of ``order`` as far as ``ranks`` holds it without a gap."""
    held = []
    for qid in order:
        if qid not in ranks:
            break
        held.append(qid)
    found = question_values({"ranks": ranks}, held)[TIE_METRIC] if held else None
    return [] if found is None else [float(v) for v in found]


def stopped_entry(plan: Plan, entry: dict[str, Any], look: int, comparison: Comparison) -> dict[str, Any]:
    """The report entry of a setup the race stopped at ``look``: ``entry`` as ``with_times`` made it over
    the questions it searched (its timed pass and its batches), with no ``summary`` (a stopped setup is
    never ranked, picked or shown as if it had run every question) and ``stopped`` saying what it ran
    and why it stopped: the look, the order's questions drawn by then, the ids it searched, the
    comparator, the difference so far and its confidence sequence over the whole golden file (in
    questions), the margin, the p-values, and its ``summary`` over the questions it searched."""
    race = planned_race(plan)
    done = copied(entry)
    summary = done.get("summary")
    order_position = {qid: n for n, qid in enumerate(race.order)}
    searched = sorted(done.get("ranks") or {}, key=lambda qid: order_position.get(qid, len(order_position)))
    done["summary"] = None
    done["rank"] = None
    done["versus_top"] = None
    done["stopped"] = {"look": look, "drawn": comparison.questions, "of": len(race.order),
                       "questions": searched, "comparator": comparison.comparator,
                       "difference": comparison.difference, "interval": [comparison.low, comparison.high],
                       "margin": race.margin, "points": race.points, "p": comparison.to_dict()["p"],
                       "adjusted_p": comparison.to_dict()["adjusted_p"], "alpha": race.alpha,
                       "family": race.family, "summary": summary}
    return done


def race_report(plan: Plan, entries: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The report's ``race``: the rule, the order and looks, which setups raced, which stopped (in the
    order they stopped) and what the race cost against searching every setup on every question, in
    searches weighted by each setup's estimated seconds a question. ``{}`` without a race."""
    race = plan.race
    if race is None:
        return {}
    total = len(race.order)
    searched = {}
    for entry in entries:
        stopped = entry.get("stopped")
        searched[entry["key"]] = len(stopped["questions"]) if stopped else total
    stopped_keys = sorted((e["key"] for e in entries if e.get("stopped")),
                          key=lambda key: (next(e["stopped"]["look"] for e in entries if e["key"] == key), key))
    weights = race.seconds
    spent = sum(weights.get(key, 0.0) * n for key, n in searched.items())
    every = sum(weights.get(key, 0.0) * total for key in searched)
    return {"race": {**race.rule.describe(), "points": race.points, "seed": race.seed,
                     "threshold_seconds": race.threshold_seconds, "order": list(race.order),
                     "looks": list(race.looks), "raced": list(race.raced), "fully_run": list(race.fully_run),
                     "stopped": stopped_keys, "searched": searched,
                     "cost": {"searches": sum(searched.values()), "exhaustive_searches": total * len(searched),
                              "seconds": round(spent, 3), "exhaustive_seconds": round(every, 3),
                              "share": round(spent / every, 4) if every else 1.0}}}
