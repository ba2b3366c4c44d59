"""What to label next: when the top tier (``scoring.tiers``) holds more than one setup, the questions and
the (question, result) pairs whose labels would most help the paired tests separate them.

A label moves a pair's exact test only through a question one setup finds in its top 10 and the
other misses (a *discordant* question, ``significance.exact_binary_p``). So each candidate is scored
by how likely its label makes a tied pair discordant, weighted by how far one more discordant
question moves that pair's test:

- **How likely a unit is relevant.** The tied setups' lists for a question are fused (reciprocal
  ranks, ``1 / (FUSION_K + position)`` summed over them: only their lists, so a question to label
  is searched by the tied setups alone, never by a slow setup out of the running) and the share
  of units at each fused position that the labels call relevant is read off the run's own labelled
  questions (``calibrate``: each position's share, pulled toward the overall share by
  ``PRIOR_WEIGHT`` questions' worth, positions past ``DEEPEST`` pooled). A question's units are taken
  as relevant independently at their position's rate.
- **A question to label** (an unlabelled one, or a draft, whose proposed label is not trusted): for a
  tied pair ``(A, B)``, with ``A10`` and ``B10`` their top 10 units, ``P(A alone finds it) =
  P(nothing in B10 relevant) * P(something in A10 - B10 relevant)``, and the same for B; the question
  counts ``P(A alone) + P(B alone)``.
- **A template row** (its document named, its question not yet written), searched by its hint: the
  same sum, with its document relevant for sure and nothing else: the pair counts 1 when one of the
  two finds the document from the hint and the other does not. The question written later will
  not be the hint, so this is a guess at where the setups will disagree.
- **A result to judge** (a unit in a tied setup's top 10 that a labelled question does not judge, the
  run's ``holes``): if it were relevant, a setup holding it in its top 10 that misses the question now
  would find it; the pair counts the change of its discordance (0 or 1), times the unit's rate.
- **The pair's weight**: how far one more discordant question moves the pair's sign statistic
  ``z = (a_only - b_only) / sqrt(a_only + b_only)`` on the labelled questions, averaged over the two
  ways it can go: a pair with few discordant questions moves a lot, one with hundreds hardly.

The score is symmetric in the tied setups: nothing in it depends on which of a pair is ahead, so
choosing the questions by it cannot tilt the test toward the leader (a choice that favoured questions
the leader is likely to win would make a separation it then finds worthless). Stopping as soon as
the tiers separate is still peeking at the test: label the list a template proposes, then run once.

Which rule: ``bench/bench_label_next.py`` compares this order with random order on the bench
collections (bench/README.md).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from itertools import combinations
from typing import Any, Iterable, Mapping, Sequence

from ..golden import Question
from .judging import Rule, ranked_units, row_units

CUTOFF = 10  # found@10: the measure the tiers test
FUSION_K = 60  # reciprocal-rank fusion's usual constant (Cormack et al. 2009), as the engine's hybrid
DEEPEST = 30  # fused positions past this are pooled into one rate
PRIOR_WEIGHT = 2.0  # questions' worth of the overall rate each position's rate starts from
SHOWN_UNITS = 5  # units named per proposed question
LIMIT = 20  # proposals a report keeps of each kind (``golden next`` writes as many as asked)


class _Fused:
    """Each unit's fused position, computed once per set of setups (a proposal is made again after every
    label in ``bench_label_next``, over the same lists)."""

    units: Mapping[str, Sequence[str]]
    _fused: dict[Any, Any]

    def top(self, setup: str) -> frozenset[str]:
        """The units of ``setup``'s top 10 (``CUTOFF``)."""
        if setup not in self._fused:
            self._fused[setup] = frozenset((self.units.get(setup) or ())[:CUTOFF])
        return self._fused[setup]

    def positions(self, setups: Sequence[str]) -> dict[str, int]:
        key = tuple(setups)
        if key not in self._fused:
            self._fused[key] = fused_positions(self.units, key)
        return self._fused[key]


@dataclass(frozen=True)
class Candidate(_Fused):
    """A question whose label is wanted: its id, where it came from (``question`` an unlabelled one,
    ``draft``, ``template``), and each setup's units in rank order (positions as the run counts them).
    ``known``: the units already known relevant (a template row names its document and waits for its
    question): they count as relevant for sure and every other unit as not."""

    id: str
    kind: str
    units: Mapping[str, Sequence[str]]
    known: Mapping[str, int] | None = None
    _fused: dict[Any, Any] = field(default_factory=dict, compare=False, repr=False)


@dataclass(frozen=True)
class Labelled(_Fused):
    """A labelled question: each setup's units in rank order, and its judgements (unit -> grade)."""

    id: str
    units: Mapping[str, Sequence[str]]
    judgements: Mapping[str, int]
    _fused: dict[Any, Any] = field(default_factory=dict, compare=False, repr=False)


@dataclass(frozen=True)
class Rates:
    """The share of units judged relevant at each fused position (1-based), the last pooling the rest."""

    by_position: tuple[float, ...]
    overall: float

    def at(self, position: int) -> float:
        return self.by_position[min(position, len(self.by_position)) - 1] if self.by_position else self.overall


@dataclass
class Proposal:
    """The ranked lists: ``questions`` to label and ``results`` to judge, best first, with their scores."""

    tied: list[str]
    pairs: list[tuple[str, str]]
    questions: list[dict[str, Any]] = field(default_factory=list)
    results: list[dict[str, Any]] = field(default_factory=list)

    def to_dict(self, limit: int | None = None) -> dict[str, Any]:
        return {"tied": list(self.tied), "pairs": [list(p) for p in self.pairs], "rule": RULE,
                "questions": self.questions[:limit], "results": self.results[:limit],
                "questions_scored": len(self.questions), "results_scored": len(self.results)}


RULE = ("a question scores P(one tied setup alone finds it in its top 10) summed over the tied pairs, a result "
        "the chance it is relevant (the share relevant at its fused position on the labelled questions) times "
        "the tied pairs it would make or unmake discordant; each pair weighted by how far one more discordant "
        "question moves its sign statistic")


def fused_positions(units: Mapping[str, Sequence[str]], setups: Iterable[str]) -> dict[str, int]:
    """Each unit's 1-based position in the reciprocal-rank fusion of ``setups``' lists (each unit at its
    first position in a list; ties by first appearance in ``setups``' order)."""
    score: dict[str, float] = {}
    for setup in setups:
        seen: set[str] = set()
        for position, unit in enumerate(units.get(setup) or (), start=1):
            if unit not in seen:
                seen.add(unit)
                score[unit] = score.get(unit, 0.0) + 1.0 / (FUSION_K + position)
    ordered = sorted(score, key=lambda u: -score[u])  # stable: first appearance breaks ties
    return {unit: n for n, unit in enumerate(ordered, start=1)}


def calibrate(labelled: Sequence[Labelled], setups: Sequence[str], min_grade: int = 1) -> Rates:
    """The share of units judged relevant at each fused position over ``labelled`` (see the module)."""
    relevant = [0] * DEEPEST
    seen = [0] * DEEPEST
    for question in labelled:
        for unit, position in question.positions(setups).items():
            slot = min(position, DEEPEST) - 1
            seen[slot] += 1
            relevant[slot] += question.judgements.get(unit, 0) >= min_grade
    total = sum(seen)
    overall = sum(relevant) / total if total else 0.0
    return Rates(tuple((r + PRIOR_WEIGHT * overall) / (s + PRIOR_WEIGHT) for r, s in zip(relevant, seen, strict=True)),
                 overall)


def finds(question: Labelled, setup: str, min_grade: int = 1) -> bool:
    return any(question.judgements.get(u, 0) >= min_grade for u in question.top(setup))


def pair_weight(a_only: int, b_only: int) -> float:
    """How far one more discordant question moves ``z = (a - b) / sqrt(a + b)``, averaged over its two ways."""
    m = a_only + b_only
    z = (a_only - b_only) / math.sqrt(m) if m else 0.0
    up = (a_only + 1 - b_only) / math.sqrt(m + 1)
    down = (a_only - b_only - 1) / math.sqrt(m + 1)
    return (abs(up - z) + abs(down - z)) / 2


def weights(tied: Sequence[str], labelled: Sequence[Labelled], min_grade: int = 1) -> dict[tuple[str, str], float]:
    """Each tied pair's weight from its discordant questions among ``labelled``."""
    out = {}
    for a, b in combinations(tied, 2):
        a_only = b_only = 0
        for question in labelled:
            fa, fb = finds(question, a, min_grade), finds(question, b, min_grade)
            a_only += fa and not fb
            b_only += fb and not fa
        out[(a, b)] = pair_weight(a_only, b_only)
    return out


def _missing_all(units: Iterable[str], rate: Mapping[str, float]) -> float:
    return math.prod(1.0 - rate[u] for u in units)


def question_score(candidate: Candidate, setups: Sequence[str], rates: Rates,
                   pair_weights: Mapping[tuple[str, str], float]) -> tuple[float, list[str]]:
    """``candidate``'s score, and the units the tied setups disagree on, likeliest relevant first."""
    if candidate.known is not None:
        rate = {u: float(candidate.known.get(u, 0) >= 1) for u in candidate.positions(setups)}
    else:
        rate = {u: rates.at(p) for u, p in candidate.positions(setups).items()}
    score = 0.0
    disputed: set[str] = set()
    for (a, b), weight in pair_weights.items():
        top_a, top_b = candidate.top(a), candidate.top(b)
        a_alone = _missing_all(top_b, rate) * (1.0 - _missing_all(top_a - top_b, rate))
        b_alone = _missing_all(top_a, rate) * (1.0 - _missing_all(top_b - top_a, rate))
        score += weight * (a_alone + b_alone)
        disputed |= top_a ^ top_b
    return score, sorted(disputed, key=lambda u: (-rate[u], u))[:SHOWN_UNITS]


def result_scores(question: Labelled, setups: Sequence[str], rates: Rates,
                  pair_weights: Mapping[tuple[str, str], float], min_grade: int = 1) -> list[dict[str, Any]]:
    """Each unjudged unit in a tied setup's top 10 of a labelled question, with its score (see the module)."""
    tied = list(dict.fromkeys(s for pair in pair_weights for s in pair))
    positions = question.positions(setups)
    tops = {s: question.top(s) for s in tied}
    found = {s: finds(question, s, min_grade) for s in tied}
    holes = dict.fromkeys(u for s in tied for u in (question.units.get(s) or ())[:CUTOFF]
                          if u not in question.judgements)
    rows = []
    for unit in holes:
        # a pair moves when the unit, relevant, changes whether exactly one of the two finds the question
        moved = sum(weight for (a, b), weight in pair_weights.items()
                    if (found[a] != found[b]) != ((found[a] or unit in tops[a]) != (found[b] or unit in tops[b])))
        if moved <= 0:
            continue
        rows.append({"question": question.id, "result": unit, "score": rates.at(positions[unit]) * moved,
                     "in": [s for s in tied if unit in tops[s]], "found_by": [s for s in tied if found[s]]})
    return rows


def propose(tied: Sequence[str], setups: Sequence[str], labelled: Sequence[Labelled],
            candidates: Sequence[Candidate] = (), *, min_grade: int = 1, results: bool = True) -> Proposal | None:
    """The ranked proposal for the ``tied`` setups (the top tier, two or more), from the ``labelled``
    questions (calibration, pair weights, results to judge unless ``results`` is False) and the
    ``candidates`` (questions to label); ``setups``: every ranked setup, whose lists are fused. None
    when fewer than two are tied."""
    if len(tied) < 2:
        return None
    rates = calibrate(labelled, setups, min_grade)
    pair_weights = weights(tied, labelled, min_grade)
    proposal = Proposal(list(tied), list(pair_weights))
    for candidate in candidates:
        score, units = question_score(candidate, setups, rates, pair_weights)
        if score > 0:
            proposal.questions.append({"question": candidate.id, "kind": candidate.kind, "score": score,
                                       "units": units})
    for question in labelled if results else ():
        proposal.results += result_scores(question, setups, rates, pair_weights, min_grade)
    proposal.questions.sort(key=lambda r: (-r["score"], r["question"]))
    proposal.results.sort(key=lambda r: (-r["score"], r["question"], r["result"]))
    for row in (*proposal.questions, *proposal.results):
        row["score"] = round(row["score"], 6)
    return proposal


def labelled_of(ranked: Sequence[Mapping[str, Any]], questions: Sequence[Question], rule: Rule) -> list[Labelled]:
    """The run's labelled questions as ``propose`` reads them: each ranked setup's units for each, read
    from its kept result rows at the run's grain and reading of a rank."""
    out = []
    for question in questions:
        units = {entry["key"]: ranked_units(row_units(question, (entry.get("results") or {}).get(question.id) or [],
                                                      rule.by), rule.rank_among) for entry in ranked}
        out.append(Labelled(str(question.id), units, question.judgements))
    return out


def run_proposal(ranked: Sequence[Mapping[str, Any]], questions: Sequence[Question], tiers: Mapping[str, Any] | None,
                 rule: Rule, candidates: Sequence[Candidate] = (), limit: int | None = LIMIT) -> dict[str, Any] | None:
    """The report's ``label_next``: ``propose`` for the run's top tier, when it holds two or more setups
    and results can be judged from their rows (not by evidence, which needs the results' text); the
    first ``limit`` of each list. None otherwise."""
    groups = (tiers or {}).get("groups") or []
    if not groups or len(groups[0]) < 2 or rule.by == "evidence":
        return None
    tied = groups[0]
    proposal = propose(tied, tied, labelled_of([e for e in ranked if e["key"] in tied], questions, rule), candidates,
                       min_grade=rule.min_grade)
    return proposal.to_dict(limit) if proposal else None
