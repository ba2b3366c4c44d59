"""What to label next: when the top tier (``scoring.tiers``) holds more than one setup, the questions and
the (question, result) pairs whose labels would most help the paired tests separate them.

A label moves a pair's exact test only through a question one setup finds in its top 10 and the
other misses (a *discordant* question, ``significance.exact_binary_p``). So each candidate is scored
by how likely its label makes a tied pair discordant, weighted by how far one more discordant
question moves that pair's test:

- **How likely a unit is relevant.** A logistic regression read off the run's own labelled
  questions (``fit_relevance``): each unit in a tied setup's list of a labelled question is one
  example, judged relevant or not, described by where each tied setup puts it (in its list at all,
  in its top 10, one over its position), with an L2 penalty of ``RIDGE`` on every weight but the
  intercept, fitted by Newton's method (numpy; a few thousand examples). Only the tied setups' lists:
  a question to label is then searched by the tied setups alone, never by a slow setup out of the
  running. A question's units are taken as relevant independently at their fitted rates.
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
- **The pairs**: the top setup of the tier against each other one (whether the top is ahead of
  each is what the tiers must decide; a pair of two setups behind it decides nothing about the top),
  each weighted by how far one more discordant question moves its sign statistic ``z = (a_only -
  b_only) / sqrt(a_only + b_only)`` on the labelled questions, averaged over the two ways it can go:
  a pair with few discordant questions moves a lot, one with hundreds hardly.

The score is symmetric in the tied setups: nothing in it depends on which of a pair is ahead, so
choosing the questions by it cannot tilt the test toward the leader (a choice that favoured questions
the leader is likely to win would make a separation it then finds worthless). Stopping as soon as
the tiers separate is still peeking at the test: label the list a template proposes, then run once.

Which rule: ``bench/bench_label_next.py`` compares this order with random order on the bench
collections (bench/README.md). The first design fused the tied lists by reciprocal rank and read
the share relevant at each fused position, over every tied pair: it needed about as many labels as
random order where the top two separate (short-no-headings, three setups: median 190 against 195
to first separate them, 8 seeds), because it spent labels on pairs behind the top and its rates
told discordant questions from the rest poorly (AUC 0.63 for the top pair). Pairs with the top
alone and the fitted relevance model brought that to 117.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping, Sequence

import numpy as np

from ..golden import Question
from .judging import Rule, ranked_units, row_units

CUTOFF = 10  # found@10: the measure the tiers test
RIDGE = 1.0  # the relevance model's L2 penalty: a few dozen labelled questions must not give it extremes
NEWTON_STEPS = 25  # Newton's method converges in well under this on every bench collection
SHOWN_UNITS = 5  # units named per proposed question
LIMIT = 20  # proposals a report keeps of each kind (``golden next`` writes as many as asked)


class _Lists:
    """A question's lists, read once: each setup's top 10, and each unit's features for a set of setups
    (a proposal is made again after every few labels in ``bench_label_next``, over the same lists)."""

    units: Mapping[str, Sequence[str]]
    _read: dict[Any, Any]

    def top(self, setup: str) -> frozenset[str]:
        """The units of ``setup``'s top 10 (``CUTOFF``)."""
        if setup not in self._read:
            self._read[setup] = frozenset((self.units.get(setup) or ())[:CUTOFF])
        return self._read[setup]

    def features(self, setups: Sequence[str]) -> tuple[list[str], np.ndarray]:
        """Every unit in ``setups``' lists (first appearance order) and its features (``unit_features``)."""
        key = tuple(setups)
        if key not in self._read:
            self._read[key] = unit_features(self.units, key)
        return self._read[key]


@dataclass(frozen=True)
class Candidate(_Lists):
    """A question whose label is wanted: its id, where it came from (``question`` an unlabelled one,
    ``draft``, ``template``), and each setup's units in rank order (positions as the run counts them).
    ``known``: the units already known relevant (a template row names its document and waits for its
    question): they count as relevant for sure and every other unit as not."""

    id: str
    kind: str
    units: Mapping[str, Sequence[str]]
    known: Mapping[str, int] | None = None
    _read: dict[Any, Any] = field(default_factory=dict, compare=False, repr=False)


@dataclass(frozen=True)
class Labelled(_Lists):
    """A labelled question: each setup's units in rank order, and its judgements (unit -> grade)."""

    id: str
    units: Mapping[str, Sequence[str]]
    judgements: Mapping[str, int]
    _read: dict[Any, Any] = field(default_factory=dict, compare=False, repr=False)


def unit_features(units: Mapping[str, Sequence[str]], setups: Sequence[str]) -> tuple[list[str], np.ndarray]:
    """Every unit of ``setups``' lists and, per setup in order, three numbers: 1 when the unit is in its
    list, 1 when in its top 10, and one over its first position (0 when absent)."""
    listed = list(dict.fromkeys(u for s in setups for u in (units.get(s) or ())))
    where = {u: n for n, u in enumerate(listed)}
    out = np.zeros((len(listed), 3 * len(setups)))
    for column, setup in enumerate(setups):
        seen: set[str] = set()
        for position, unit in enumerate(units.get(setup) or (), start=1):
            if unit in seen:
                continue
            seen.add(unit)
            row = where[unit]
            out[row, 3 * column] = 1.0
            out[row, 3 * column + 1] = float(position <= CUTOFF)
            out[row, 3 * column + 2] = 1.0 / position
    return listed, out


@dataclass(frozen=True)
class RelevanceModel:
    """How likely a unit is relevant from where the ``setups`` put it: a logistic regression's weights
    (intercept first), or a constant ``rate`` when the labels gave nothing to fit."""

    setups: tuple[str, ...]
    weights: np.ndarray | None = None
    rate: float = 0.0

    def rates(self, question: _Lists) -> dict[str, float]:
        listed, features = question.features(self.setups)
        if self.weights is None:
            return dict.fromkeys(listed, self.rate)
        logits = np.clip(self.weights[0] + features @ self.weights[1:], -30, 30)
        return dict(zip(listed, (1.0 / (1.0 + np.exp(-logits))).tolist(), strict=True))


def fit_relevance(labelled: Sequence[Labelled], setups: Sequence[str], min_grade: int = 1) -> RelevanceModel:
    """The relevance model of ``setups``' lists, fitted on ``labelled`` (see the module docstring)."""
    rows, judged = [], []
    for question in labelled:
        listed, features = question.features(setups)
        rows.append(features)
        judged += [float(question.judgements.get(u, 0) >= min_grade) for u in listed]
    y = np.array(judged)
    if not len(y) or y.min() == y.max():  # nothing, or one kind only: no slope to fit
        return RelevanceModel(tuple(setups), None, float(y.mean()) if len(y) else 0.0)
    x = np.column_stack([np.ones(len(y)), np.vstack(rows)])
    penalty = np.full(x.shape[1], RIDGE)
    penalty[0] = 0.0  # the intercept is not pulled toward 0
    weights = np.zeros(x.shape[1])
    weights[0] = math.log(y.mean() / (1 - y.mean()))
    for _ in range(NEWTON_STEPS):
        p = 1.0 / (1.0 + np.exp(-np.clip(x @ weights, -30, 30)))
        gradient = x.T @ (p - y) + penalty * weights
        hessian = (x * (p * (1 - p))[:, None]).T @ x + np.diag(penalty)
        step = np.linalg.solve(hessian, gradient)
        weights -= step * min(1.0, 5.0 / max(1e-12, float(np.abs(step).max())))  # damped: no overshoot
        if float(np.abs(step).max()) < 1e-8:
            break
    return RelevanceModel(tuple(setups), weights)


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


RULE = ("a question scores P(one setup of a pair alone finds it in its top 10), over the pairs of the top tied "
        "setup with each other one; a result, the chance it is relevant times the pairs it would make or unmake "
        "discordant; a unit's chance from a logistic regression on where the tied setups put the labelled "
        "questions' units; each pair weighted by how far one more discordant question moves its sign statistic")


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
    """The pairs of the top tied setup (``tied[0]``) with each other one, each weighted by its discordant
    questions among ``labelled``."""
    out = {}
    for a, b in ((tied[0], other) for other in tied[1:]):
        a_only = b_only = 0
        for question in labelled:
            fa, fb = finds(question, a, min_grade), finds(question, b, min_grade)
            a_only += fa and not fb
            b_only += fb and not fa
        out[(a, b)] = pair_weight(a_only, b_only)
    return out


def _missing_all(units: Iterable[str], rate: Mapping[str, float]) -> float:
    return math.prod(1.0 - rate[u] for u in units)


def question_score(candidate: Candidate, model: RelevanceModel,
                   pair_weights: Mapping[tuple[str, str], float]) -> tuple[float, list[str]]:
    """``candidate``'s score, and the units the tied setups disagree on, likeliest relevant first."""
    rate = model.rates(candidate)
    if candidate.known is not None:
        rate = {u: float(candidate.known.get(u, 0) >= 1) for u in rate}
    score = 0.0
    disputed: set[str] = set()
    for (a, b), weight in pair_weights.items():
        top_a, top_b = candidate.top(a), candidate.top(b)
        a_alone = _missing_all(top_b, rate) * (1.0 - _missing_all(top_a - top_b, rate))
        b_alone = _missing_all(top_a, rate) * (1.0 - _missing_all(top_b - top_a, rate))
        score += weight * (a_alone + b_alone)
        disputed |= top_a ^ top_b
    return score, sorted(disputed, key=lambda u: (-rate[u], u))[:SHOWN_UNITS]


def result_scores(question: Labelled, model: RelevanceModel, pair_weights: Mapping[tuple[str, str], float],
                  min_grade: int = 1) -> list[dict[str, Any]]:
    """Each unjudged unit in a tied setup's top 10 of a labelled question, with its score (see the module)."""
    tied = list(dict.fromkeys(s for pair in pair_weights for s in pair))
    rate = model.rates(question)
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
        rows.append({"question": question.id, "result": unit, "score": rate[unit] * moved,
                     "in": [s for s in tied if unit in tops[s]], "found_by": [s for s in tied if found[s]]})
    return rows


def propose(tied: Sequence[str], labelled: Sequence[Labelled], candidates: Sequence[Candidate] = (), *,
            min_grade: int = 1, results: bool = True) -> Proposal | None:
    """The ranked proposal for the ``tied`` setups (the top tier, two or more), from the ``labelled``
    questions (calibration, pair weights, results to judge unless ``results`` is False) and the
    ``candidates`` (questions to label); ``tied`` in rank order, the top first. None when fewer than
    two are tied."""
    if len(tied) < 2:
        return None
    model = fit_relevance(labelled, tied, min_grade)
    pair_weights = weights(tied, labelled, min_grade)
    proposal = Proposal(list(tied), list(pair_weights))
    for candidate in candidates:
        score, units = question_score(candidate, model, pair_weights)
        if score > 0:
            proposal.questions.append({"question": candidate.id, "kind": candidate.kind, "score": score,
                                       "units": units})
    for question in labelled if results else ():
        proposal.results += result_scores(question, model, pair_weights, min_grade)
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
    if not groups or rule.by == "evidence":  # a tier of one: ``propose`` says None
        return None
    tied = groups[0]
    proposal = propose(tied, labelled_of([e for e in ranked if e["key"] in tied], questions, rule), candidates,
                       min_grade=rule.min_grade)
    return proposal.to_dict(limit) if proposal else None
