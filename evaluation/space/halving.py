"""Successive halving over a space of setups, stopped by ``scoring.racing``'s valid test; on plain lists.

**Rounds.** The questions are searched in a seeded order (``racing.seeded_shuffle``). Round 1 searches
every setup on the first ``b`` questions of it, where ``b`` is the fewest after which any setup could be
stopped at all (``racing.earliest_stop``: fewer would be a look that cannot decide); each later round
searches the setups still running on the next batch of questions (``round_batch``: 4, or a twentieth of
the golden file when that is more), the last at every question. Successive halving's own rounds double
the budget; with a test that is valid however often it is looked at, a look per batch stops a setup as
soon as it is shown, and on every collection of bench/ it cost less for the same picks (bench/README.md,
bench_space.py: 0.67-0.91 of the exhaustive run's searches against 0.81-0.98 with doubling rounds, the
sample's 36 questions 1.00 either way). After every round but the last, every running setup's test
(below) is looked at, and a setup stops once it shows the setup finds more than ``margin`` questions
fewer than the best over the whole golden file. The round's leader (the running setup that found the
most over the budget, then the space's order) is reported. Survivors of every round run every question;
the pick is the survivor that finds the most (then the space's order), and a stopped setup is never it.

**What is guaranteed.** Each setup has one test (``racing.against_the_best``): of ``H0: it finds at most
``margin`` questions fewer than the best setup over every question``, by one capital process whose
comparator at each draw is the running setup that led over the *earlier* draws. Take the exhaustive run's
best setup ``B`` (the most found@10 over every question, then the space's order): its ``H0`` is true, and
whichever setup the earlier draws make its comparator, the next draw cannot favour that comparator on
average by more than the null allows, so its capital is a supermartingale and Ville's inequality holds its
chance of ever reaching ``1 / alpha`` to ``alpha``, at every look of every round. So with probability at
least ``1 - alpha`` over the seeded order, ``B`` runs every question and is the pick: the pick is the
exhaustive run's, **whatever the space's size** (no share of ``alpha`` per setup: only the best's test
can be wrong in a way that moves the pick). The same holds for any one setup within ``margin`` of ``B``,
not for all of them at once. The round's leader over the round's own questions is *not* the comparator
of those questions: chosen for its luck on them, it would make a test of a true null look false (the
tests measure that bias).

**Cost.** A stopped setup has run the rounds up to its stop; the report counts setup x question
searches against ``len(setups) x questions`` (``--exhaustive``). A setup is stopped at round 1 at the
earliest, so a space can cost no less than ``b / questions`` of the exhaustive run: at alpha 0.05, ``b`` is
about 9 questions whatever the golden file's or the space's size, so under 20% needs 45 questions or more,
and then only if most setups are far below the best. Setups within a few questions of the best
(a hybrid at k 30 beside the same hybrid at k 60) run every question: no valid test tells them apart sooner.

**Resuming.** Each round is kept (its values and its stops) by whoever runs it (``space.work``); a run
given the rounds already done replays them (the values kept, the decisions made again and checked
against the kept ones) and goes on: the same order, values and rules give the same decisions and pick.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence

from ..errors import UsageError
from ..scoring.racing import AgainstTheBest, Leaders, RaceRule, against_the_best, earliest_stop, seeded_shuffle
from ..scoring.significance import exact_binary_p, holm

ALPHA = 0.05
SMALLEST_BATCH, MOST_ROUNDS = 4, 20  # a round after the first: 4 questions, or 1/20 of the file when more
HALVING_TEST = ("betting test of each setup's found@10 shortfall from the best over the golden file's questions, "
                "sampled without replacement in a seeded order, against whichever running setup led before each "
                "question (Waudby-Smith and Ramdas: aGRAPA bets), anytime-valid over every look")
HALVING_CORRECTION = ("none: one test per setup, of whether it is within the margin of the best over every "
                      "question, against whichever running setup led before each question; the exhaustive best is "
                      "stopped with chance at most alpha, whatever the space's size")
Search = Callable[[list[str], list[int]], Mapping[str, Sequence[float]]]  # (keys, question indices) -> found@10


@dataclass(frozen=True)
class HalvingPlan:
    """What decides a run before any question is searched: the setups' keys in the space's order, the
    questions' seeded order, the budgets of the rounds and the stop rule (one test per setup)."""

    keys: tuple[str, ...]
    population: int
    seed: int
    budgets: tuple[int, ...]
    rule: RaceRule
    exhaustive: bool = False

    @property
    def order(self) -> list[int]:
        return seeded_shuffle(range(self.population), self.seed)

    def to_dict(self) -> dict[str, Any]:
        return {"setups": len(self.keys), "questions": self.population, "seed": self.seed,
                "budgets": list(self.budgets), "exhaustive": self.exhaustive, **self.rule.describe(),
                "test": HALVING_TEST, "correction": HALVING_CORRECTION}


def round_batch(population: int) -> int:
    """How many more questions each round after the first searches: ``SMALLEST_BATCH``, or a
    ``MOST_ROUNDS``-th of the golden file when that is more (about 20 rounds at most, each one kept file)."""
    return max(SMALLEST_BATCH, math.ceil(population / MOST_ROUNDS))


def plan_halving(keys: Sequence[str], population: int, *, seed: int = 0, alpha: float = ALPHA, margin: int = 0,
                 exhaustive: bool = False) -> HalvingPlan:
    """The plan (see the module docstring): the first round at the first look that could stop a setup, then a
    round per ``round_batch`` questions; one round at every question when ``exhaustive`` or when no look
    short of every question could stop anything."""
    if len(set(keys)) != len(keys):
        raise ValueError("a space names each setup once")
    if isinstance(margin, bool) or not isinstance(margin, int) or margin < 0:
        raise ValueError(f"margin is a whole number of questions, 0 or more, not {margin!r}")
    rule = RaceRule(population=population, margin=margin, alpha=alpha, family=1)
    first = None if exhaustive or len(keys) < 2 else earliest_stop(population=population, margin=margin,
                                                                   alpha=alpha, family=rule.family)
    budgets = [] if first is None else list(range(first, population, round_batch(population)))
    budgets.append(population)
    return HalvingPlan(tuple(keys), population, seed, tuple(budgets), rule, exhaustive)


@dataclass(frozen=True)
class Stop:
    """Why a setup stopped: after ``round`` (``questions`` of the order searched), by its test against the best."""

    round: int
    questions: int
    test: AgainstTheBest

    def to_dict(self) -> dict[str, Any]:
        """``interval``: the shortfall from the best over every question, in questions, that the test has
        not rejected: at least its lower end; no upper end is claimed (None). ``adjusted_p`` is ``p``: one
        test per setup needs no adjustment (module docstring)."""
        t = self.test
        p = float(f"{t.p:.6g}")
        return {"round": self.round, "questions": self.questions, "leader": t.comparator,
                "difference": t.difference, "interval": [t.low, None], "p": p, "adjusted_p": p}


@dataclass
class Halving:
    """A run's state: each setup's found@10 in the order's positions so far, the stops, the rounds done."""

    plan: HalvingPlan
    values: dict[str, list[float]] = field(default_factory=dict)
    stops: dict[str, Stop] = field(default_factory=dict)
    rounds: list[dict[str, Any]] = field(default_factory=list)

    def running(self) -> list[str]:
        return [key for key in self.plan.keys if key not in self.stops]

    @property
    def done(self) -> bool:
        return len(self.rounds) == len(self.plan.budgets)

    def next_questions(self) -> list[int]:
        """The question indices the next round searches for every running setup (its positions in the order)."""
        number = len(self.rounds)
        start = self.plan.budgets[number - 1] if number else 0
        return self.plan.order[start:self.plan.budgets[number]]

    def record(self, found: Mapping[str, Sequence[float]]) -> dict[str, Any]:
        """Add the next round's values (``found``: each running setup's, for ``next_questions`` in that
        order), decide its stops, and give the round as it is kept: ``{"round", "budget", "values",
        "leader", "stopped"}``."""
        running = self.running()
        wanted = len(self.next_questions())
        for key in running:
            row = [float(v) for v in found[key]]
            if len(row) != wanted or any(v not in (0.0, 1.0) for v in row):
                raise ValueError(f"{key}: {len(row)} found@10 values (each 0 or 1) for a round of {wanted} questions")
            self.values.setdefault(key, []).extend(row)
        number = len(self.rounds) + 1
        budget = self.plan.budgets[number - 1]
        leader, stopped = self._decide(number, budget, running)
        kept = {"round": number, "budget": budget, "values": {key: [int(v) for v in found[key]] for key in running},
                "leader": leader, "stopped": stopped}
        self.rounds.append(kept)
        return kept

    def _decide(self, number: int, budget: int, running: list[str]) -> tuple[str | None, list[str]]:
        if budget >= self.plan.population or self.plan.exhaustive or len(running) < 2:
            return None, []  # a look at every question saves nothing: the last round only ranks
        totals = {key: sum(self.values[key][:budget]) for key in running}
        leader = min(running, key=lambda key: (-totals[key], self.plan.keys.index(key)))
        leaders = Leaders.of(self.values, self.plan.keys)
        rule = self.plan.rule
        stopped = []
        for key in running:
            test = against_the_best(key, self.values, leaders, population=rule.population, margin=rule.margin,
                                    alpha=rule.alpha, bounds=False)
            if test.stops:
                self.stops[key] = Stop(number, budget, against_the_best(
                    key, self.values, leaders, population=rule.population, margin=rule.margin, alpha=rule.alpha))
                stopped.append(key)
        return leader, stopped

    def pick(self) -> str | None:
        """The survivor that found the most over every question, then the space's order (None before the end)."""
        if not self.done:
            return None
        running = self.running()
        return min(running, key=lambda key: (-sum(self.values[key]), self.plan.keys.index(key))) if running else None


def run_halving(plan: HalvingPlan, search: Search, *, kept: Sequence[Mapping[str, Any]] = (),
                on_round: Callable[[dict[str, Any]], None] | None = None) -> Halving:
    """Every round of ``plan``: the ``kept`` rounds replayed first (their values taken, their decisions
    made again and checked), then the rest searched with ``search(keys, question indices)``; each new
    round given to ``on_round`` as it is to be kept (before the next round starts)."""
    state = Halving(plan)
    for round_kept in kept:
        if state.done:
            raise UsageError("more rounds kept than the plan has; the work folder is another run's: give an empty one")
        values = round_kept.get("values") or {}
        if round_kept.get("budget") != plan.budgets[len(state.rounds)] or set(values) != set(state.running()):
            raise UsageError(f"round {len(state.rounds) + 1} kept is not this plan's (other budgets or setups); "
                             "the work folder is another run's: give an empty one")
        again = state.record({key: values[key] for key in state.running()})
        if again["stopped"] != list(round_kept.get("stopped") or []):
            raise UsageError(f"round {again['round']} kept decided otherwise than its values do now; the work "
                             "folder is another run's: give an empty one")
    while not state.done:
        keys, questions = state.running(), state.next_questions()
        found = search(keys, questions) if keys else {}
        kept_round = state.record(found)
        if on_round is not None:
            on_round(kept_round)
    return state


def top_tier(values: Mapping[str, Sequence[float]], best: str, *, alpha: float = ALPHA) -> dict[str, dict[str, Any]]:
    """The setups the paired test cannot tell from ``best``, with ``best`` itself: an exact sign test on the
    questions where found@10 differs, Holm across every other setup of ``values`` (each over the same
    questions). Per setup of the tier: ``better``/``worse`` (questions it found and ``best`` did not, and
    the reverse) and the Holm-adjusted p (1 for ``best``)."""
    rows: dict[str, dict[str, Any]] = {}
    for key, found in values.items():
        if key == best:
            continue
        better = sum(1 for a, b in zip(found, values[best], strict=True) if a > b)
        worse = sum(1 for a, b in zip(found, values[best], strict=True) if a < b)
        rows[key] = {"better": better, "worse": worse, "p": exact_binary_p(better, worse)}
    adjusted = holm([row["p"] for row in rows.values()])
    tier = {best: {"better": 0, "worse": 0, "p_holm": 1.0}}
    for (key, row), p in zip(rows.items(), adjusted, strict=True):
        if p is not None and p > alpha:
            tier[key] = {"better": row["better"], "worse": row["worse"], "p_holm": float(f"{p:.6g}")}
    return tier
