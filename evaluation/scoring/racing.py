"""Racing: stop searching a setup once a paired sequential test, valid however often it is looked at,
shows it cannot be any pick. The statistics and the stop rule, on plain lists: ``run.race`` runs a
race on a plan (the command line, ``evaluate``, the Function App), and any other caller (a space of
setups searched by successive halving, a chunking comparison) can call ``race_look`` on its own values.

**What is inferred.** The questions of a golden file are a fixed, finite population of ``N``; the run
that searches every setup on every question (``--exhaustive``) reports each setup's found@10 over
all ``N``, and the picks are made from those counts. A race searches the questions in a seeded random
order (a uniformly random permutation: ``run.race.race_order``), so the first ``t`` questions are a
simple random sample drawn *without replacement* from the ``N``. For a pair of setups ``(B, S)`` the
per-question differences ``z_i = found_B(q_i) - found_S(q_i)`` lie in ``{-1, 0, 1}`` and their sum over
all ``N`` is ``D``, the number of questions by which ``B`` finds more than ``S`` in the exhaustive run.
The race tests ``H0: D <= M`` where ``M`` is the largest allowance of the picks in whole questions
(``picks.allowed_shortfall(max(balance, time_points), N)``: 8 points of 80 questions is 6). Rejecting
it says ``D >= M + 1``: in the exhaustive run ``S`` would find more than the allowance fewer than
``B``, so fewer than the most by more than either pick's points allow: it would be none of the three
picks (``finds_the_most`` needs the most; ``best_for_balance`` and ``best_for_time`` pick among the
setups within their points of the most, and whichever is fastest there, which is why the *largest*
allowance decides: a setup exactly at 8 points below can still be the fastest of that group, a tie
of speed inside the group being broken by found@10, so only ``> M`` questions rule it out). With the
family-wise error held at ``alpha`` over every look and every raced setup, the chance that the race
stops a setup that would have been a pick is at most ``alpha``, and then the race names the same three
picks as the exhaustive run (a stopped setup sits outside every pick's group, so its absence moves
no other pick either).

**The test: betting, without replacement** (Waudby-Smith and Ramdas, "Estimating means of bounded
random variables by betting", JRSS-B 86(1), 2024, section 5 for the capital process and aGRAPA; and
"Confidence sequences for sampling without replacement", NeurIPS 2020, for the conditional mean of
the next draw). Under the null value ``D = d`` the mean of the values not yet drawn, after ``t - 1``
draws summing to ``s``, is ``m_t(d) = (d - s) / (N - t + 1)``; the capital
``K_t(d) = prod_{i <= t} (1 + lambda_i(d) (z_i - m_i(d)))`` with ``lambda_i(d) >= 0`` fixed before
``z_i`` is seen and every factor >= 0 is then a non-negative martingale under ``D = d`` and a
supermartingale under any ``D <= d`` (the next draw's mean is smaller, and a bet on "larger" loses in
expectation). Ville's inequality gives ``P(some t has K_t >= 1 / a) <= a``: the test may be looked at
after every question, so looking after every batch is paid for, and ``1 / max_{s <= t} K_s`` is an
anytime-valid p-value. Each raced setup is tested against one comparator (below), and Bonferroni over
the ``family`` of such pairs, fixed when the race is planned, holds the family-wise error at ``alpha``
over all looks and all setups: a pair stops its setup when ``max K >= family / alpha``; its adjusted
p is ``min(1, family / max K)``.

The bet ``lambda_i`` is aGRAPA's (the approximate growth-rate-optimal bet for the current null), made
from the earlier draws only: ``(mu - m) / (v + (mu - m)^2)`` clipped to ``[0, c / (1 + m)]`` with
``c = 1/2``, where ``mu`` and ``v`` are the earlier draws' mean and variance shrunk towards 0 and 1/4
(``_bet``), and ``m = m_i(M)``, the conditional mean at the stop rule's own null; the same
``lambda_i`` serves every ``d``, clipped again to ``c / (1 + m_i(d))``, so ``K_t(d)`` falls as ``d``
rises and the values of ``d`` not rejected are one interval: the confidence sequence whose lower end
exceeds ``M`` exactly when the stop rule fires (``count_bounds``). Only ``+ - * /`` and comparisons:
no logarithm, so the same draws give the same decision on every machine (a resumed race, the Function
App beside the command line).

Why this and not the alternatives. A fixed-sample interval checked after every batch is not valid:
simulated here (``tests/scoring/test_racing.py``), a one-sided normal interval at 5% checked every
5 questions wrongly stopped a setup at the null's edge in 11-29% of runs of 80-1,000 questions;
this test in 1.7-3.5%. Against the empirical-Bernstein and predictable-plug-in bets of the same paper,
and a mixture of fixed bets, aGRAPA stopped a setup 20 points worse soonest (median 59 of 80, 118 of
400 and 136 of 1,000 questions, against 59-64, 133-140 and 163-166; alpha 0.05 over 3 setups, 30% of
the questions differing; ``bench/bench_racing.py`` has the cost on real collections). A
group-sequential design with alpha spending (O'Brien-Fleming, Lan-DeMets) would need the looks and a
normal approximation fixed in advance; the betting test needs neither, is exact for bounded values,
and uses the finite population: at ``t = N`` the interval is the exhaustive run's difference itself.

**Which comparisons.** A setup is "below the best" if it is below any setup that runs every question;
the comparator of every raced setup is the one *fully-run* setup (not raced: cheap ones run every
question) with the most found@10 over all ``N`` (then key). That choice reads the fully-run setups'
totals, which are the same whatever the question order, so it is fixed before any raced value is
drawn: the family is one pair per raced setup. Were the comparator the race's current leader, it
would depend on the draws and every pair would need its share of ``alpha``. When no setup runs every
question (every setup costly, e.g. a remote service's alone), every raced setup is tested against
every other, each pair on the questions both searched: ``R (R - 1)`` pairs.
"""
from __future__ import annotations

import math
import random
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Mapping, Sequence, TypeVar

LOW, HIGH = -1.0, 1.0  # a found@10 difference: -1, 0 or 1
BET_CAP = 0.5  # c: at most this share of the largest safe bet (the paper's 1/2: a draw at the worst end loses half)
PRIOR_MEAN, PRIOR_VARIANCE = 0.0, 0.25  # what the bet's mean and variance are shrunk towards before any draw
RACE_TEST = ("betting confidence sequence for the paired found@10 difference over the golden file's questions, "
             "sampled without replacement in a seeded order (Waudby-Smith and Ramdas: aGRAPA bets), "
             "anytime-valid over every look")
RACE_CORRECTION = "Bonferroni over the raced setups' comparisons, fixed when the race is planned"
MIN_BATCH = 5  # questions of the order between two looks, at least
MOST_LOOKS = 20  # looks at most: in the Function App each is a round of shards and a decision
T = TypeVar("T")


def seeded_shuffle(items: Sequence[T], seed: int) -> list[T]:
    """``items`` in the race's order for ``seed``: shuffled by a generator seeded with a string (the same
    order on every machine and Python), whatever else the run is (its id, its date)."""
    shuffled = list(items)
    random.Random(f"race order {seed}").shuffle(shuffled)
    return shuffled


def race_looks(population: int) -> list[int]:
    """How many questions of the order have been drawn at each look: every ``batch`` of them (at least
    ``MIN_BATCH``, at most ``MOST_LOOKS`` looks), the last at all of them."""
    if population <= 0:
        return []
    batch = max(MIN_BATCH, math.ceil(population / MOST_LOOKS))
    return [min(population, n * batch) for n in range(1, math.ceil(population / batch) + 1)]


def _bet(mean: float, variance: float, null_mean: float) -> float:
    """aGRAPA's bet on "the next draw is above ``null_mean``", clipped to ``[0, BET_CAP / (1 + null_mean)]``
    (0 when the null mean is at or over the top: no draw can beat it)."""
    if null_mean >= HIGH:
        return 0.0
    gap = mean - null_mean
    if gap <= 0:
        return 0.0
    return min(gap / (variance + gap * gap), _cap(null_mean))


def _cap(null_mean: float) -> float:
    """The largest bet allowed at ``null_mean``: ``BET_CAP`` of the bet at which a draw at the least
    value would lose everything (none when the null puts every value left at the least: no draw loses)."""
    room = null_mean - LOW
    return BET_CAP / room if room > 0 else float("inf")


def _totals_before(values: Sequence[float]) -> list[float]:
    """Per draw, the total of the draws before it: what the null's mean of the next draw is made from when
    one pair is bet on throughout (``against_the_best`` gives each draw its own comparator's)."""
    before, total = [], 0.0
    for value in values:
        before.append(total)
        total += value
    return before


def _bets(values: Sequence[float], before: Sequence[float], population: int, threshold: float) -> list[float]:
    """The bets made before each draw at the null total ``threshold`` (``lambda_i`` of the module
    docstring), from the earlier draws only: the mean is the bet-on pair's over the earlier draws
    (``before``, shrunk towards ``PRIOR_MEAN`` by one pseudo-draw), the variance the earlier bet-on values'."""
    bets = []
    total = 0.0
    variance = PRIOR_VARIANCE
    for t, (value, pair_total) in enumerate(zip(values, before, strict=True), start=1):
        left = population - t + 1
        pair_mean = (pair_total + PRIOR_MEAN) / t  # the earlier draws and one pseudo-draw at PRIOR_MEAN
        bets.append(_bet(pair_mean, variance, (threshold - pair_total) / left) if left > 0 else 0.0)
        total += value
        mean = total / (t + 1)  # the bet-on values' mean, shrunk the same way, for their variance
        variance = (variance * t + (value - mean) * (value - mean)) / (t + 1)
    return bets


def _peak(values: Sequence[float], before: Sequence[float], population: int, null_total: float,
          bets: Sequence[float]) -> float:
    """The most capital ``K_s(null_total)`` reached over the draws (``before``: the bet-on pair's total over
    the draws before each); inf once the draws make the null impossible (the pair's values left would
    have to average under their least)."""
    capital, peak = 1.0, 1.0
    for t, (value, pair_total, bet) in enumerate(zip(values, before, bets, strict=True), start=1):
        null_mean = (null_total - pair_total) / (population - t + 1)
        if null_mean < LOW:
            return float("inf")
        capital *= 1.0 + min(bet, _cap(null_mean)) * (value - null_mean)
        if capital > peak:
            peak = capital
    left = population - len(values)
    total = before[-1] + values[-1] if values else 0.0
    if (left == 0 and total > null_total) or (left > 0 and (null_total - total) / left < LOW):
        return float("inf")  # what is left cannot bring the total down to the null's: it is false
    return peak


def _checked(values: Sequence[float], population: int) -> list[float]:
    drawn = [float(v) for v in values]
    if len(drawn) > population:
        raise ValueError(f"{len(drawn)} draws from a population of {population}: a race draws each question once")
    if any(not LOW <= v <= HIGH for v in drawn):
        raise ValueError("a paired difference lies outside [-1, 1]")
    return drawn


def peak_capital(values: Sequence[float], *, population: int, threshold: float) -> float:
    """The most capital the test of ``H0: total <= threshold`` reached over ``values`` (the differences
    drawn so far, in draw order, each in [-1, 1]; the population's total over ``population`` values).
    ``1 / peak_capital`` is the anytime-valid p-value (capped at 1)."""
    drawn = _checked(values, population)
    before = _totals_before(drawn)
    return _peak(drawn, before, population, threshold, _bets(drawn, before, population, threshold))


def anytime_p(values: Sequence[float], *, population: int, threshold: float) -> float:
    """The anytime-valid p-value of ``H0: total <= threshold`` after ``values``: 1 / the peak capital, at most 1."""
    peak = peak_capital(values, population=population, threshold=threshold)
    return 1.0 if peak <= 1.0 else 1.0 / peak


def count_bounds(values: Sequence[float], *, population: int, tuned_at: float, level: float) -> tuple[int, int]:
    """The confidence sequence for the population's total (a whole number from ``-population`` to
    ``population``: questions) after ``values``, at ``level`` on each side: ``(low, high)``, the least
    and greatest totals no test at ``1 - level`` has rejected. ``low > tuned_at`` exactly when the stop
    rule at ``tuned_at`` (whose bets the lower side uses) fires at that level; the upper side tests the
    mirrored values with bets tuned at ``-tuned_at``."""
    drawn = _checked(values, population)
    bar = 1.0 / (1.0 - level)
    low = _least_kept(drawn, population, tuned_at, bar)
    high = -_least_kept([-v for v in drawn], population, -tuned_at, bar)
    return low, high


def _least_kept(drawn: list[float], population: int, tuned_at: float, bar: float) -> int:
    """The least whole total whose test's peak capital stays under ``bar``."""
    before = _totals_before(drawn)
    bets = _bets(drawn, before, population, tuned_at)
    return _least_under(lambda total: _peak(drawn, before, population, total, bets), population, bar)


def _least_under(peak_at: Callable[[float], float], population: int, bar: float) -> int:
    """The least whole null total from ``-population`` to ``population`` whose peak capital (``peak_at``)
    stays under ``bar``: capital falls as the null total rises, so the kept totals are one run up to
    ``population``, found by halving (``population`` itself when every total is rejected)."""
    low, high = -population - 1, population  # rejected below low + 1 ... kept at high (never rejected)
    if peak_at(float(high)) >= bar:
        return high
    while high - low > 1:
        middle = (low + high) // 2
        if peak_at(float(middle)) >= bar:
            low = middle
        else:
            high = middle
    return high


def earliest_stop(*, population: int, margin: int, alpha: float, family: int) -> int | None:
    """The fewest draws after which a setup could be stopped at all (every difference +1, the most a
    draw can say), or None when no number short of every question could: a race where no look before
    the last can stop anything saves nothing, and is not run."""
    bar = family / alpha
    for t in range(1, population):  # a look at the last question saves nothing
        if peak_capital([HIGH] * t, population=population, threshold=float(margin)) >= bar:
            return t
    return None


@dataclass(frozen=True)
class RaceRule:
    """How a race decides: the ``population`` of questions, the ``margin`` in questions a setup must be
    shown to be behind by (more than), ``alpha`` family-wise over ``family`` comparisons."""

    population: int
    margin: int
    alpha: float
    family: int

    def __post_init__(self) -> None:
        if self.population < 0 or self.family < 1 or not 0 < self.alpha < 1:
            raise ValueError(f"a race needs a population of 0 or more, a family of 1 or more and 0 < alpha < 1, "
                             f"not {self.population}, {self.family}, {self.alpha}")

    @property
    def bar(self) -> float:
        """The capital at which a comparison stops its setup: ``family / alpha``."""
        return self.family / self.alpha

    @property
    def level(self) -> float:
        """Each comparison's confidence level: ``1 - alpha / family``."""
        return 1.0 - self.alpha / self.family

    def describe(self) -> dict[str, Any]:
        return {"questions": self.population, "margin": self.margin, "alpha": self.alpha, "family": self.family,
                "test": RACE_TEST, "correction": RACE_CORRECTION}


@dataclass(frozen=True)
class Comparison:
    """One raced setup against its comparator after a look: over ``questions`` drawn, ``difference``
    (comparator's found@10 minus the setup's, in questions, over those drawn), the confidence sequence of
    the difference over every question of the golden file (``low``, ``high``, questions, each end at the
    rule's ``level``), the p-values of ``H0: difference over every question <= margin`` (anytime-valid,
    and Bonferroni-adjusted over the family) and whether it stops the setup (``adjusted_p <= alpha``)."""

    setup: str
    comparator: str
    questions: int
    difference: int
    low: int
    high: int
    p: float
    adjusted_p: float
    stops: bool

    def to_dict(self) -> dict[str, Any]:
        return {"setup": self.setup, "comparator": self.comparator, "questions": self.questions,
                "difference": self.difference, "interval": [self.low, self.high], "p": _rounded(self.p),
                "adjusted_p": _rounded(self.adjusted_p), "stops": self.stops}


def _rounded(p: float) -> float:
    return float(f"{p:.6g}")


def compare(setup: str, comparator: str, mine: Sequence[float], theirs: Sequence[float], rule: RaceRule, *,
            bounds: bool = True) -> Comparison:
    """``setup`` (values ``mine``, found@10 per question in race order) against ``comparator``
    (``theirs``), on the questions both have (the shorter prefix), by ``rule``. ``bounds=False`` leaves
    the confidence sequence at the widest (``-population``, ``population``): what deciding needs is the
    capital alone, and the bounds cost a dozen passes over the draws."""
    drawn = min(len(mine), len(theirs))
    differences = [float(theirs[i]) - float(mine[i]) for i in range(drawn)]
    before = _totals_before(differences)
    bets = _bets(differences, before, rule.population, float(rule.margin))
    peak = _peak(differences, before, rule.population, float(rule.margin), bets)
    p = 1.0 if peak <= 1.0 else 1.0 / peak
    low, high = -rule.population, rule.population
    if bounds and drawn:
        low, high = count_bounds(differences, population=rule.population, tuned_at=float(rule.margin),
                                 level=rule.level)
    return Comparison(setup, comparator, drawn, round(sum(differences)), low, high, p, min(1.0, p * rule.family),
                      peak >= rule.bar)


def race_look(values: Mapping[str, Sequence[float]], running: Iterable[str],
              comparators: Mapping[str, Sequence[str]], rule: RaceRule) -> dict[str, Comparison]:
    """One look of a race: each ``running`` setup against each of its ``comparators`` (their keys, from
    ``race_pairs``), on ``values`` (per setup, found@10 per question in race order, as far as it has
    searched). Per running setup the comparison that decides, with its confidence sequence: the first
    that stops it (in comparator order), else the one with the least p (then comparator order); a setup
    without comparators with values is left out."""
    decided: dict[str, Comparison] = {}
    for key in running:
        found = [compare(key, other, values[key], values[other], rule, bounds=False)
                 for other in comparators.get(key, ()) if other in values and other != key]
        if not found:
            continue
        stopping = [c for c in found if c.stops]
        chosen = stopping[0] if stopping else min(found, key=lambda c: c.p)
        decided[key] = compare(key, chosen.comparator, values[key], values[chosen.comparator], rule)
    return decided


def race_pairs(raced: Sequence[str], fully_run_totals: Mapping[str, float]) -> dict[str, list[str]]:
    """Per raced setup, the setups it is compared with (see the module docstring): the fully-run setup
    with the most found@10 (``fully_run_totals``: over every question; then key), or, when none ran
    fully, every other raced setup."""
    if fully_run_totals:
        best = min(fully_run_totals, key=lambda key: (-fully_run_totals[key], key))
        return {key: [best] for key in raced}
    return {key: [other for other in raced if other != key] for key in raced}


def family_size(raced: int, fully_run: int) -> int:
    """How many comparisons a race with ``raced`` raced setups makes (``race_pairs``): one each against
    the best fully-run setup, or each against every other when none runs fully; at least 1."""
    return max(1, raced if fully_run else raced * (raced - 1))


@dataclass(frozen=True)
class AgainstTheBest:
    """One setup's test of ``H0: it finds at most `margin` questions fewer than the best setup over every
    question`` (``against_the_best``), after ``questions`` drawn: the setup that led before its last draw
    (``comparator``) and how many more it found over those draws (``difference``), ``low`` (the least
    shortfall from the best, in questions over every question, that the test has not rejected: the
    one-sided confidence sequence's lower end at ``1 - alpha``), the anytime-valid ``p`` and whether it
    stops the setup (``p <= alpha``, no adjustment: see ``against_the_best``)."""

    setup: str
    comparator: str | None
    questions: int
    difference: int
    low: int
    p: float
    stops: bool


@dataclass(frozen=True)
class Leaders:
    """Per draw of a race's order, the two setups that found the most over the *earlier* draws (then
    ``preference`` order), among the setups with a value at that draw (those running there), and each
    setup's total over the draws before each of its own: what ``against_the_best`` compares with, made
    once for every setup of a look."""

    first: tuple[str, ...]
    second: tuple[str | None, ...]
    before: Mapping[str, Sequence[float]]

    @classmethod
    def of(cls, values: Mapping[str, Sequence[float]], preference: Sequence[str]) -> "Leaders":
        rank = {key: i for i, key in enumerate(preference)}
        totals = {key: 0.0 for key in preference}
        before: dict[str, list[float]] = {key: [] for key in preference}
        first: list[str] = []
        second: list[str | None] = []
        for i in range(max((len(values[key]) for key in preference), default=0)):
            present = sorted((key for key in preference if len(values[key]) > i),
                             key=lambda key: (-totals[key], rank[key]))[:2]
            first.append(present[0])
            second.append(present[1] if len(present) > 1 else None)
            for key in preference:
                if len(values[key]) > i:
                    before[key].append(totals[key])
                    totals[key] += float(values[key][i])
        return cls(tuple(first), tuple(second), before)

    def comparator(self, setup: str, draw: int) -> str | None:
        return self.second[draw] if self.first[draw] == setup else self.first[draw]


def _switching_draws(setup: str, values: Mapping[str, Sequence[float]],
                     leaders: Leaders) -> tuple[list[str], list[float], list[float]]:
    """For each draw of ``setup``: its comparator (``Leaders.comparator``), the paired difference at the
    draw (comparator minus setup) and the pair's total over the earlier draws."""
    comparators: list[str] = []
    differences: list[float] = []
    before: list[float] = []
    for i in range(len(values[setup])):
        leader = leaders.comparator(setup, i)
        if leader is None:
            break
        comparators.append(leader)
        before.append(leaders.before[leader][i] - leaders.before[setup][i])
        differences.append(float(values[leader][i]) - float(values[setup][i]))
    return comparators, differences, before


def against_the_best(setup: str, values: Mapping[str, Sequence[float]], leaders: Leaders, *, population: int,
                     margin: int, alpha: float, bounds: bool = True) -> AgainstTheBest:
    """Whether ``setup`` is shown to find more than ``margin`` questions fewer than the best setup over
    every question: one capital process whose comparator, at each draw, is the setup that led over the
    earlier draws (``values``: per setup, found@10 per question in the race's order, as far as it has
    searched; a setup with a value at a draw was running there; ``leaders``: ``Leaders.of(values, ...)``).

    **Why no correction.** Under ``H0`` every other setup ``L`` has ``D(L, setup) <= margin`` over every
    question, so whichever ``L`` is chosen from the earlier draws, the next draw's difference has mean at
    most the null's ``m_t`` for that pair (the draw is uniform over the questions left, whose values are
    fixed) and, with the bet also fixed before the draw, every factor has expectation at most 1: one
    non-negative supermartingale, and Ville's inequality holds its chance of ever reaching ``1 / alpha``
    to ``alpha``, however often it is looked at. The exhaustive run's best setup satisfies ``H0``, so it is
    stopped with chance at most ``alpha`` whatever the space's size. Choosing the comparator *after* seeing a
    draw (the round's leader over the round's own questions) would not be a supermartingale: a leader picked
    for its luck on the draws already counted looks better than it is (``tests/space/test_halving.py``
    measures that bias). Each stopped setup's claim holds at ``alpha``; the setups within the margin of
    the best are not held jointly (several may be, each at most ``alpha``)."""
    comparators, differences, before = _switching_draws(setup, values, leaders)
    bets = _bets(differences, before, population, float(margin))
    peak = _peak(differences, before, population, float(margin), bets)
    p = 1.0 if peak <= 1.0 else 1.0 / peak
    low = -population
    if bounds and differences:
        low = _least_under(lambda total: _peak(differences, before, population, total, bets), population,
                           1.0 / alpha)
    comparator = comparators[-1] if comparators else None
    drawn = len(differences)
    difference = round(sum(float(values[comparator][i]) - float(values[setup][i]) for i in range(drawn))) \
        if comparator else 0
    return AgainstTheBest(setup, comparator, len(differences), difference, low, p, peak >= 1.0 / alpha)
