"""Which setups the questions can tell apart: tiers, an interval of each setup's rank, and the smallest
difference the run's number of questions can detect.

**Tiers.** Every pair of ranked setups is compared on found@10 (the picks' measure) with the exact
paired sign test the report already uses (``significance.exact_binary_p``: only the questions one
setup finds and the other misses count), and Holm's step-down correction (``significance.holm``) is
applied over *all* ``k (k - 1) / 2`` pairs at once: a pair is *separated* when its Holm-adjusted
p-value is at or under the run's ``alpha``. Holm (1979, Scand. J. Statist. 6:65-70) controls the
family-wise error in the strong sense, whatever the dependence between the tests: the chance that
*any* separation the tiers rest on is false is at most ``alpha``, however many setups truly differ.
Tiers are the layers of "separated and finds more": tier 1 holds every setup no other setup is
separated above; a setup is in tier ``t + 1`` when the highest tier of a setup separated above it is
``t``. So no two setups of one tier are separated (the tests cannot tell them apart), and every setup
below tier 1 is separated below at least one setup of the tier just above it: no split without a
test that made it. Since a pair with the same found@10 has as many questions on each side, its p is 1
and it is never separated; a separated pair's better side is the one that finds more, which ranks
higher, so a setup is placed after everything above it. A tier is not a band of ranks, though: a
setup that differs from the others on many questions both ways may stay in tier 1 while one that
finds more, but loses consistently to a near twin, sits in tier 2 (seen on a bench collection:
dense.bge-small, 250 of 361, behind its two-model twin (270) on 23 questions to 3, in tier 2 under
keyword.bm25's 246 in tier 1).

Why not the randomized Tukey HSD over questions (Carterette 2012, ACM TOIS 30(1); Sakai's
recommendation for IR), nor the report's own ``versus_top`` family: Tukey's HSD compares every pair's
difference with one null distribution, that of the range of the setups' means when each question's
values are shuffled among all the setups. That null is right only when every setup is exchangeable
with every other on every question; it is not when two setups find complementary questions at the
same rate (a keyword and a dense setup, often) beside setups that agree with each other, and then
it separates setups that do not differ. Measured with ``bench/bench_tier_error.py`` (bench/README.md;
2,000 simulated runs a world, 60 questions, alpha 0.05, every pair a true null): with eight setups,
two of the same found@10 finding mostly each other's misses beside six alike, the randomized Tukey
HSD separated some pair in 11.0% of runs (95% interval 9.7-12.4%), this rule in 0.2%; with six
independent setups 3.5% and 2.1%, six nearly alike 2.6% and 0.1%. Each exact sign test is valid for its own pair
whatever the other setups do, so Holm over them holds. ``versus_top`` (each setup against the top,
Holm over ``k - 1``) answers another question, "is this setup behind the top?", with a smaller
family; the tiers answer "which setups can the run tell apart?" and so correct for every pair they
might split on: a setup can be significantly behind the top there and share tier 1 here, and the
views say which test speaks.

What this costs: at 36 questions and 8 setups (28 pairs) the first Holm step asks p <= 0.05 / 28,
which the exact test reaches only when 11 or more questions go one way and none the other. The
``detectable`` difference below says so in points, so a tie is never read as "as good".

**Rank intervals.** The questions are resampled with replacement (``resamples`` times, generator
``numpy.random.default_rng([seed, 2])``: the bootstrap of ``comparison`` is ``[seed, 0]``, its sign
flips ``[seed, 1]``); in each resample every setup is ranked by found@10, then found@1 (what the
ranking reads before time, which a resample of questions cannot change). A setup's best rank in a
resample is one more than the setups strictly ahead of it, its worst the number of setups at or ahead
of it (so two setups equal in every question share ranks 1-2). The interval is the ``(1 - level) / 2``
quantile of the best ranks to the ``(1 + level) / 2`` quantile of the worst, at the run's interval
level; ``first_share`` is the share of resamples in which it ranks first (a first place shared by
``j`` setups counts ``1 / j`` to each), so the shares add up to 1. Each interval holds on its own (it
is not simultaneous; the tiers are the corrected answer).

**Detectable difference.** The normal-approximation minimum detectable effect of a paired test, as
in Sakai's topic set size design (Sakai 2016, Information Retrieval Journal 19:256-283): the variance
of a found@10 difference between two setups is estimated once from every setup and question by the
residual variance of a two-way layout (setups x questions; ``V_E = SS_E / ((k - 1)(n - 1))``, a
pair's difference varying as ``2 V_E``), and ``MDE = (z_{1 - a/2} + z_{power}) * sqrt(2 V_E / n)``,
said in points (x 100) and in questions (x n). ``a`` is ``alpha / pairs``, the level Holm asks of
the first pair it separates and of any pair when the others are not separated: the difference the
tiers are sure to see at ``power``. ``one_pair`` is the same at ``alpha`` (two setups alone, the
most a run of this size can tell). None with fewer than two setups or two questions, or when the
setups agree on every question (no spread to plan from).
"""
from __future__ import annotations

import math
from statistics import NormalDist
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from ..measures import FOUND_10
from ..settings import SignificanceSettings
from .significance import _binary_p_float, exact_binary_p, holm

DETECT_POWER = 0.8  # the power the detectable difference is planned at (Cohen's usual 80%)
TIER_TEST = "exact sign-flip (McNemar) test per pair on found@10, paired by question"
TIER_CORRECTION = "Holm over every pair of ranked setups"
_RANK_STREAM = 2  # default_rng([seed, 2]): comparison's bootstrap is 0, its sign flips 1
_BLOCK_VALUES = 4_000_000  # resampled question indices held at once


def found_matrix(ranked: Sequence[Mapping[str, Any]], question_ids: Sequence[str], cutoff: int = 10) -> np.ndarray:
    """(questions x setups) 1.0 where the setup found the question within ``cutoff``, in ``ranked`` order."""
    columns: list[np.ndarray] = []
    for entry in ranked:
        ranks = entry.get("ranks") or {}
        first = np.array([ranks.get(q) or 0 for q in question_ids], dtype=np.float64)
        columns.append(((first > 0) & (first <= cutoff)).astype(np.float64))
    if not columns:
        return np.zeros((len(question_ids), 0))
    return np.column_stack(columns) if question_ids else np.zeros((0, len(columns)))


def pair_tests(keys: Sequence[str], found: np.ndarray, alpha: float,
               p_value: Callable[[np.ndarray], float] | None = None) -> list[dict[str, Any]]:
    """Every pair ``(keys[i], keys[j])``, ``i < j`` (``keys`` in rank order), on per-question values
    (found@10 by default): the questions each is ahead on alone, the p-value (the exact test, or
    ``p_value(differences)`` for values other than 0 and 1), Holm's over all the pairs, and whether
    they are separated."""
    rows = []
    for i in range(len(keys)):
        for j in range(i + 1, len(keys)):
            d = found[:, i] - found[:, j]
            a_only, b_only = int(np.count_nonzero(d > 0)), int(np.count_nonzero(d < 0))
            row: dict[str, Any] = {"a": keys[i], "b": keys[j], "a_only": a_only, "b_only": b_only,
                                   "p": _binary_p(a_only, b_only) if p_value is None else p_value(d)}
            if p_value is not None:  # which way a real-valued pair goes: the sign of its mean difference
                row["difference"] = round(float(d.mean()), 6) if d.size else 0.0
            rows.append(row)
    for row, adjusted in zip(rows, holm([row["p"] for row in rows]), strict=True):
        row["p_holm"] = adjusted
        row["separated"] = adjusted is not None and adjusted <= alpha
    return rows


EXACT_UP_TO = 400  # discordant questions up to which the p-value is summed in integers


def _binary_p(a_only: int, b_only: int) -> float:
    """``exact_binary_p``, in integers while the questions that differ are few, in floats past
    ``EXACT_UP_TO`` (``significance._binary_p_float``, the same sum in logs): the integer sum took
    0.25 s a pair at 1,600 discordant questions, and every pair of 11 setups is 55 of them."""
    if a_only + b_only <= EXACT_UP_TO:
        return exact_binary_p(a_only, b_only)
    return _binary_p_float(a_only, b_only)


def tier_groups(keys: Sequence[str], pairs: Sequence[Mapping[str, Any]]) -> list[list[str]]:
    """``keys`` (rank order) in tiers, best first: a setup's tier is one more than the highest tier of
    a setup separated above it (one that finds more), else 1 (see the module docstring)."""
    above: dict[str, list[str]] = {key: [] for key in keys}
    for pair in pairs:
        if not pair["separated"]:
            continue
        ahead = pair.get("difference", pair["a_only"] - pair["b_only"])
        better, worse = (pair["a"], pair["b"]) if ahead > 0 else (pair["b"], pair["a"])
        above[worse].append(better)
    tier: dict[str, int] = {}
    for key in keys:  # rank order: whatever is separated above a setup ranks before it
        tier[key] = 1 + max((tier[b] for b in above[key]), default=0)
    groups: list[list[str]] = [[] for _ in range(max(tier.values(), default=0))]
    for key in keys:
        groups[tier[key] - 1].append(key)
    return groups


def rank_intervals(keys: Sequence[str], found10: np.ndarray, found1: np.ndarray, *, rng: np.random.Generator,
                   resamples: int, level: float) -> dict[str, dict[str, Any]]:
    """Per key, ``{"low", "high", "first_share"}`` from ``resamples`` bootstrap resamples of the questions
    (see the module docstring). ``found10`` and ``found1``: (questions x setups), ``keys`` order."""
    n, k = found10.shape
    if k == 0:
        return {}
    if n == 0:
        return {key: {"low": 1, "high": k, "first_share": round(1 / k, 6)} for key in keys}
    # found@10 first, then found@1: counts of at most n, so one number per setup orders both
    score = found10 * (n + 1) + found1
    best = np.empty((resamples, k), dtype=np.int64)
    worst = np.empty((resamples, k), dtype=np.int64)
    first = np.zeros(k)
    block = max(1, _BLOCK_VALUES // n)
    done = 0
    while done < resamples:
        size = min(block, resamples - done)
        picks = rng.integers(0, n, size=(size, n))
        weights = np.bincount((picks + n * np.arange(size)[:, None]).ravel(), minlength=size * n).reshape(size, n)
        totals = weights.astype(np.float64) @ score  # (size, k): exact, whole numbers far under 2**53
        ahead = totals[:, None, :] > totals[:, :, None]  # [b, i, j]: j strictly ahead of i
        level_or_ahead = totals[:, None, :] >= totals[:, :, None]
        best[done:done + size] = 1 + ahead.sum(axis=2)
        worst[done:done + size] = level_or_ahead.sum(axis=2)
        on_top = best[done:done + size] == 1
        first += (on_top / on_top.sum(axis=1, keepdims=True)).sum(axis=0)
        done += size
    tail = (1 - level) / 2
    low = np.quantile(best, tail, axis=0, method="lower")
    high = np.quantile(worst, 1 - tail, axis=0, method="higher")
    return {key: {"low": int(low[i]), "high": int(high[i]), "first_share": round(float(first[i] / resamples), 6)}
            for i, key in enumerate(keys)}


def detectable(found: np.ndarray, alpha: float, pairs: int, power: float = DETECT_POWER) -> dict[str, Any] | None:
    """The smallest found@10 difference the run's questions detect at ``power`` (see the module
    docstring): in points and questions, at ``alpha / pairs`` (the tiers) and at ``alpha`` (one pair)."""
    n, k = found.shape
    if k < 2 or n < 2:
        return None
    residual = found - found.mean(axis=0, keepdims=True) - found.mean(axis=1, keepdims=True) + found.mean()
    variance = float((residual ** 2).sum()) / ((n - 1) * (k - 1))
    if variance <= 1e-12:
        return None
    spread = math.sqrt(2 * variance / n)  # the standard error of a pair's difference of found@10 shares
    z = NormalDist().inv_cdf

    def at(level: float) -> dict[str, float]:
        share = (z(1 - level / 2) + z(power)) * spread
        return {"points": round(100 * share, 2), "questions": round(share * n, 2)}

    return {"power": power, "alpha": alpha, "pairs": pairs, "level": alpha / pairs,
            "sd": round(math.sqrt(2 * variance), 6), "questions_run": n, **at(alpha / pairs),
            "one_pair": at(alpha)}


def setup_tiers(ranked: Sequence[Mapping[str, Any]], question_ids: Sequence[str],
                settings: SignificanceSettings, picks: Mapping[str, str | None] | None = None) -> dict[str, Any] | None:
    """The report's ``tiers`` for ``rank_setups``' list (best first): the procedure in words, every
    pair's test, the tiers, each setup's rank interval, the detectable difference, and per pick the
    other setups of its tier. None when nothing ran."""
    if not ranked:
        return None
    keys = [entry["key"] for entry in ranked]
    found10 = found_matrix(ranked, question_ids)
    pairs = pair_tests(keys, found10, settings.alpha)
    groups = tier_groups(keys, pairs)
    found1 = found_matrix(ranked, question_ids, cutoff=1)  # found@1, the ranking's second key
    ranks = rank_intervals(keys, found10, found1, rng=np.random.default_rng([settings.seed, _RANK_STREAM]),
                           resamples=settings.resamples, level=settings.level)
    tier_of = {key: n for n, group in enumerate(groups, start=1) for key in group}
    with_pick = {name: [k for k in groups[tier_of[key] - 1] if k != key] if key in tier_of else []
                 for name, key in (picks or {}).items()}
    return {"metric": FOUND_10.versus_key, "test": TIER_TEST, "correction": TIER_CORRECTION,
            "alpha": settings.alpha, "questions": len(question_ids), "groups": groups, "pairs": pairs,
            "rank_level": round(settings.level, 6), "resamples": settings.resamples, "seed": settings.seed,
            "ranks": ranks, "detectable": detectable(found10, settings.alpha, max(1, len(pairs))),
            "picks": with_pick}


def value_tiers(keys: Sequence[str], values: np.ndarray, alpha: float, *, metric: str, test: str = TIER_TEST,
                p_value: Callable[[np.ndarray], float] | None = None) -> dict[str, Any] | None:
    """Tiers of ``keys`` (rank order) on per-question ``values`` (questions x keys), as a builds run
    keeps them (no rank intervals): the procedure, every pair, the groups, the detectable difference.
    None with nothing to rank."""
    if not keys:
        return None
    pairs = pair_tests(keys, values, alpha, p_value)
    return {"metric": metric, "test": test, "correction": TIER_CORRECTION, "alpha": alpha,
            "questions": int(values.shape[0]), "groups": tier_groups(keys, pairs), "pairs": pairs,
            "detectable": detectable(values, alpha, max(1, len(pairs)))}


def tier_mates(tiers: Mapping[str, Any] | None, key: str | None) -> list[str]:
    """The other keys of ``key``'s tier ([] when alone, or without tiers)."""
    for group in (tiers or {}).get("groups") or []:
        if key in group:
            return [k for k in group if k != key]
    return []


def tier_of(tiers: Mapping[str, Any] | None, key: str) -> int | None:
    """The 1-based tier of ``key`` in a report's ``tiers``; None when it has none (failed, or no tiers)."""
    for n, group in enumerate((tiers or {}).get("groups") or [], start=1):
        if key in group:
            return n
    return None
