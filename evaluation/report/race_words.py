"""The race in words, one voice for the terminal, the page and the exports: each stopped setup with the
questions it searched, its numbers over those alone, why it stopped (the comparator, the confidence
sequence of the difference over every question, the margin any pick allows, the adjusted p), and what
the race cost. A stopped setup's numbers are always said to be over the questions it searched, never
shown as if it had searched them all (``run.race``; the test is ``scoring.racing``'s)."""
from __future__ import annotations

from typing import Any

from ..store.run_report import RunReport
from ..store.report_parts import SetupResult, Stopped
from .numbers import percent


def stopped_setups(report: RunReport) -> list[SetupResult]:
    """The report's entries the race stopped, in the order they stopped (look, then key)."""
    found = [s for s in report.setups if s.stopped is not None]
    return sorted(found, key=lambda s: (_stopped(s).look or 0, s.key))


def _stopped(entry: SetupResult) -> Stopped:
    if entry.stopped is None:
        raise ValueError(f"{entry.key} was not stopped by the race")
    return entry.stopped


def searched_words(entry: SetupResult) -> str:
    """``stopped by the race after searching 30 of 200 questions``."""
    stopped = _stopped(entry)
    return f"stopped by the race after searching {len(stopped.questions)} of {stopped.of} questions"


def found_words(entry: SetupResult) -> str:
    """``found@10 9 of those 30 (30%)``: its number over the questions it searched, said so."""
    summary = _stopped(entry).summary
    n = (summary.questions or 0) if summary is not None else 0
    count = summary.count(10) if summary is not None else None
    if summary is None or count is None or not n:
        return "no question scored"
    return f"found@10 {count} of those {n} ({percent(summary.share(10), dash='-')})"


def why_words(entry: SetupResult, *, level: bool = True) -> str:
    """Why it stopped: ``over the first 30 of the race's order local.hybrid.m found 16 more; over all 200
    questions it would find 21 to 186 fewer than local.hybrid.m (each end at 98.3% over every look), more
    than the 16 (8 points) any pick allows: adjusted p 0.035``."""
    stopped = _stopped(entry)
    low, high = stopped.interval
    other, of = stopped.comparator, stopped.of
    family, alpha = stopped.family or 1, stopped.alpha
    held = f" (each end at {_level(1 - alpha / family)} over every look)" if level and alpha is not None else ""
    difference = stopped.difference or 0
    return (f"over the first {stopped.drawn} questions of the race's order {other} found {abs(difference)} "
            f"{'more' if difference >= 0 else 'fewer'}; over all {of} questions it would find {low} to {high} fewer "
            f"than {other}{held}, more than the {stopped.margin} ({stopped.points:g} points) any pick "
            f"allows: adjusted p {_p(stopped.adjusted_p)}")


def _level(share: float) -> str:
    """``0.98333`` as ``98.3%``, ``0.95`` as ``95%``."""
    return f"{share * 100:.1f}".rstrip("0").rstrip(".") + "%"


def _p(value: Any) -> str:
    if not isinstance(value, (int, float)):
        return "-"
    return f"{value:.2f}" if value >= 0.1 else f"{value:.3g}" if value >= 0.001 else f"{value:.0e}"


def stopped_sentence(entry: SetupResult) -> str:
    """What the race did with one stopped setup, in one sentence (the setups table's ``stopped`` cell)."""
    return f"{searched_words(entry)}; {found_words(entry)}; {why_words(entry)}"


def stopped_line(entry: SetupResult) -> str:
    """One stopped setup in one line, its key first (the terminal's; the page splits it)."""
    return f"{entry.key}: {stopped_sentence(entry)}"


def cost_words(report: RunReport) -> str:
    """``the race made 430 of the 600 searches (setup x question) an exhaustive run makes, 72% of its
    estimated seconds; --exhaustive makes them all`` ("" without a race)."""
    race = report.race
    if race is None or race.cost is None or race.cost.searches is None or race.cost.exhaustive_searches is None:
        return ""  # a kept report without the counts: nothing to say rather than "None of None"
    cost = race.cost
    return (f"the race made {cost.searches} of the {cost.exhaustive_searches} searches (setup x "
            f"question) an exhaustive run makes, {percent(cost.share, dash='-')} of its estimated seconds; "
            "--exhaustive makes them all")


def race_rule_words(report: RunReport) -> str:
    """The rule in one sentence, for the page's "how the run was made" and ``--details``."""
    race = report.race
    if race is None:
        return ""
    raced = race.raced
    # shape.report_problem checks a kept report's numbers; a part still absent (a report made by hand) is left
    # out of the sentence rather than printed as None
    about = f" (about {race.threshold_seconds:g} s a question or more)" if race.threshold_seconds is not None else ""
    seed = f" (seed {race.seed})" if race.seed is not None else ""
    margin = f"more than {race.margin} questions" if race.margin is not None else "more questions"
    points = f" ({race.points:g} points, the picks' largest allowance)" if race.points is not None else ""
    test = f", by {race.test}" if race.test else ""
    alpha = f", family-wise alpha {race.alpha:g}" if race.alpha is not None else ""
    family = (f" over {race.family} comparison{'s' if race.family != 1 else ''}"
              if race.family is not None and alpha else "")
    correction = f" ({race.correction})" if race.correction and alpha else ""
    return (f"{len(raced)} costly setup{'s' if len(raced) != 1 else ''}{about} raced: searched in batches in a "
            f"seeded order{seed}, each stopped once shown to find {margin}{points} fewer than a setup that searches "
            f"every question{test}{alpha}{family}{correction}")
