"""The race of a builds run (``sweep``, ``run_matrix``, ``compare_chunking``): its costly rows searched in
batches of a seeded question order, each stopped once shown to fall below the best row that searched
every question, on the measure the run names its best by. The test is ``scoring.racing``'s (an
anytime-valid betting test on paired per-question values, bounded, drawn without replacement), as
``evaluate``'s race runs it; only the margin differs: a builds run names one best row (no allowance, as
``best_for_balance`` has), so a row is stopped once shown to score less than the best over every
question, ``margin`` 0, and is then never the best.

Costly: a row searched with a cross-encoder (``hybrid_reranked``: seconds a question on 2 cores), or
answered and judged by a chat model (``compare_chunking`` with one). The others cost milliseconds and
search every question; the row among them that scores the most so far is the comparator. Builds are
made one after another, so which rows ran in full before a raced row depends on the order of the builds
and the methods alone, never on the question order: the comparator is fixed before the raced row's first
question is drawn, and the family is the number of raced rows, counted when the run is planned. A run
with nothing costly, or too few questions for any look to stop a row before the last, races nothing.
"""
from __future__ import annotations

from typing import Any, Callable, Mapping, Sequence

from ..golden import Question
from ..scoring.at_k import question_at
from ..scoring.judging import judge
from ..scoring.racing import RaceRule, compare, earliest_stop, race_looks, seeded_shuffle

COSTLY_METHODS = ("hybrid_reranked",)  # a cross-encoder scores every candidate of every question
ALPHA = 0.05


class BuildRace:
    """One run's race over ``questions`` questions and ``raced`` costly rows (see the module docstring)."""

    def __init__(self, questions: int, raced: int, *, measure: str, alpha: float = ALPHA, seed: int = 0,
                 exhaustive: bool = False) -> None:
        self.questions, self.measure = questions, measure
        self.order = seeded_shuffle(range(questions), seed)
        self.looks = race_looks(questions)
        self.rule = RaceRule(population=questions, margin=0, alpha=alpha, family=max(1, raced))
        earliest = earliest_stop(population=questions, margin=0, alpha=alpha, family=max(1, raced))
        self.on = (not exhaustive and raced > 0 and earliest is not None
                   and any(earliest <= look < questions for look in self.looks))
        self.fully: dict[str, list[float]] = {}

    def ran(self, key: str, values: Sequence[float]) -> None:
        """A row that searched every question, with its measure per question (in question order)."""
        self.fully[key] = [float(v) for v in values]

    def best(self) -> str | None:
        """The fully-run row with the most of the measure over every question (then key)."""
        return min(self.fully, key=lambda key: (-sum(self.fully[key]), key)) if self.fully else None

    def race(self, key: str, search: Callable[[list[int]], list[float]]) -> tuple[dict[int, float], dict | None]:
        """Search row ``key`` batch by batch in the race's order (``search(question indices) -> values``) until
        it stops or has searched every question: ({question index: value}, the stop or None). Without a race,
        or with no fully-run row yet to compare with, every question in one search."""
        best = self.best()
        if not self.on or best is None:
            everything = list(range(self.questions))
            return dict(zip(everything, search(everything), strict=True)), None
        theirs = [self.fully[best][i] for i in self.order]
        found: dict[int, float] = {}
        start = 0
        for look, drawn in enumerate(self.looks, start=1):
            batch = self.order[start:drawn]
            start = drawn
            found.update(zip(batch, search(batch), strict=True))
            if drawn >= self.questions:
                break
            mine = [found[i] for i in self.order[:drawn]]
            decided = compare(key, best, mine, theirs[:drawn], self.rule)
            if decided.stops:
                return found, {"look": look, "drawn": drawn, "of": self.questions, "comparator": best,
                               "measure": self.measure,
                               "difference": round(sum(theirs[:drawn]) - sum(mine), 6),
                               "interval": [decided.low, decided.high], "margin": 0,
                               "p": decided.to_dict()["p"], "adjusted_p": decided.to_dict()["adjusted_p"],
                               "alpha": self.rule.alpha, "family": self.rule.family}
        return found, None

    def describe(self) -> dict[str, Any]:
        """What the run's report keeps of the race: its rule, its order's seed and its looks."""
        return {**self.rule.describe(), "measure": self.measure, "looks": list(self.looks),
                "costly": list(COSTLY_METHODS)}


def stopped_words(stop: Mapping[str, Any], searched: int) -> str:
    """``stopped by the race after searching 30 of 200 questions: over them <comparator> scored 4.2 more
    nDCG@10 (summed), its interval over every question 3 to 120 (each end at 98.3% over every look);
    adjusted p 0.03``: what the builds views say of a stopped row."""
    level = f"{(1 - stop['alpha'] / stop['family']) * 100:.1f}".rstrip("0").rstrip(".") + "%"
    return (f"stopped by the race after searching {searched} of {stop['of']} questions: over them "
            f"{stop['comparator']} scored {stop['difference']:g} more {stop['measure']} (summed), more over every "
            f"question by {stop['interval'][0]} to {stop['interval'][1]} (each end at {level} over every look); "
            f"adjusted p {stop['adjusted_p']:.3g}; never the best")


def batch_of(target: Any, setup: Any, depth: int) -> Callable[[list[str]], list[Any]]:
    """``target``'s batch search with ``setup`` to ``depth``, as ``searcher`` takes it."""
    return lambda asked: target.search_batch(setup, asked, depth)


def searcher(search_batch: Callable[[list[str]], list[Any]], questions: Sequence[Question], by: str,
             judged: dict[int, Any], *, ndcg_at: int) -> Callable[[list[int]], list[float]]:
    """What ``BuildRace.race`` searches with: the questions of the given indices searched in one batch
    (``search_batch(texts)``), each judged at ``by`` into ``judged`` (index -> outcome), their nDCG at
    ``ndcg_at`` given back (the measure sweeps and matrices name their best by)."""
    def search(indices: list[int]) -> list[float]:
        found = search_batch([questions[i].question for i in indices])
        outcomes = [judge(questions[i], hits, by) for i, hits in zip(indices, found, strict=True)]
        judged.update(zip(indices, outcomes, strict=True))
        return [question_at(outcome, ndcg_at)["ndcg"] for outcome in outcomes]
    return search
