"""Rank setups and name the three picks, as the product defines them, so the same inputs give the
same picks however the timings fall.

Time ties: two setups are *tied on time* when the 99% order-statistic intervals of their medians
overlap (``scoring.metrics.median_interval``: distribution-free, from the timed searches the report
keeps). A *time tier* is anchored at the fastest setup of a group (lowest median, then key): every
setup of the group tied on time with the anchor, the anchor included; the rest form the next tiers
the same way (no chaining: a tier never holds two setups further apart than the anchor's interval
reaches).

Why intervals and not a paired or rank test on the timed searches: the noise that moved the picks
lies between timed passes (each setup is timed on its own, one after another, while the machine's
load changes), which a test over the searches of one pass does not see; and such a test calls
9.5 ms against 9.6 ms different once each has 50 quiet searches. An interval says only where the
median lies, and overlap is read off the report's own numbers. Why 99% and not the 95% of the
margin beside each median: simulated (five setups with times drawn from one lognormal, sigma 0.3,
10, 30 or 50 searches each), 95% intervals changed a pick in 0.5% of evaluations (10 of 2,000 at
50 searches), 99% in 1 of 5,000 at 30 and 50 searches and none at 10. The price: a real 3x
difference is told apart in every evaluation from 30 searches (78% at 10, where the 99% interval
is the whole range), 2x in 99.8% at 30, 1.5x in 50% at 30 and 92% at 50; a smaller difference is
called a tie, and the picks then go by what is found. A setup with too few timed searches for a
99% interval (under 8) has its range, min to max; one with no times (a hand-made entry) its
median alone.

Ranking: found@10 (more is better), then found@1, then time tier (faster first), then setup key.
Only setups that ran are ranked; a failed setup has no rank and is never picked.

Picks:
- ``finds_the_most``: the top-ranked setup.
- ``best_for_balance``: among the setups whose found@10 is within ``balance`` percentage points of
  the top, inclusive, counted in whole questions (``floor(balance / 100 * questions)`` questions
  fewer at most: at 4 points over 25 questions that is 1 question, so 92% (23/25) counts when the
  most is 96% (24/25)), the fastest time tier; inside it, the most found@10, then found@1, then key.
- ``best_for_time``: the same within ``time_points``.
All three may be the same setup; all are None when nothing ran. ``ties_on_time`` gives, per pick, the
tier it was chosen from (``time_tie_tiers``).

``frontier``: setups no other setup beats on both found@10 and median time (at least as good on both,
better on one). ``neighbours``: setups one change away: another ranker, one model more or fewer, or
the same search on another engine.
"""
from __future__ import annotations

from fractions import Fraction
from typing import Any, Sequence

from .metrics import median_interval, median_ms as _median

TIE_CONFIDENCE = 0.99

PICKS = ("finds_the_most", "best_for_balance", "best_for_time")
TIME_TIE_RULE = "tied on time when the 99% order-statistic intervals of the medians overlap"


def _ran(setup: dict) -> bool:
    return not setup.get("error") and setup.get("summary") is not None


def _found10(setup: dict) -> int:
    return setup["summary"]["counts"]["10"]


def time_interval(setup: dict) -> tuple[float, float]:
    """Where the setup's true median time lies (see the module docstring): the 99% order-statistic
    interval of its timed searches, their range when too few for one, the median alone without times."""
    times = [float(t) for t in setup.get("times_ms") or []]
    found = median_interval(times, TIE_CONFIDENCE) if times else None
    if found is not None:
        return found
    if times:
        return min(times), max(times)
    return _median(setup), _median(setup)


def tied_on_time(a: dict, b: dict) -> bool:
    """Whether the intervals of ``a``'s and ``b``'s medians overlap (ends included)."""
    (a_low, a_high), (b_low, b_high) = time_interval(a), time_interval(b)
    return a_low <= b_high and b_low <= a_high


def time_tiers(setups: Sequence[dict]) -> list[list[dict]]:
    """``setups`` in time tiers, fastest tier first: each anchored at the fastest setup left (median,
    then key) and holding every setup left that is tied on time with the anchor, anchor first."""
    left = sorted(setups, key=lambda s: (_median(s), s["key"]))
    tiers = []
    while left:
        anchor = left[0]
        tier = [s for s in left if s is anchor or tied_on_time(anchor, s)]
        tiers.append(tier)
        left = [s for s in left if not any(s is t for t in tier)]
    return tiers


def _tier_of(setups: Sequence[dict]) -> dict[str, int]:
    return {s["key"]: n for n, tier in enumerate(time_tiers(setups)) for s in tier}


def rank_key(setup: dict, tier: int = 0) -> tuple:
    summary = setup["summary"]
    return (-summary["counts"]["10"], -summary["counts"]["1"], tier, setup["key"])


def rank_setups(setups: Sequence[dict]) -> list[dict]:
    """The setups that ran, best first; sets each one's ``rank`` (1-based) and ``None`` on failures.
    Time tiers are made among setups with the same found@10 and found@1 (only there does time rank)."""
    ran = [s for s in setups if _ran(s)]
    groups: dict[tuple[int, int], list[dict]] = {}
    for s in ran:
        groups.setdefault((_found10(s), s["summary"]["counts"]["1"]), []).append(s)
    tier = {key: n for group in groups.values() for key, n in _tier_of(group).items()}
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


def choose_picks(ranked: Sequence[dict], *, balance: float = 4, time_points: float = 8) -> dict[str, Any]:
    """The three picks (see the module docstring) from ``rank_setups``' list."""
    return {name: (tier[0] if tier else None) for name, tier in time_tie_tiers(ranked, balance=balance,
                                                                              time_points=time_points).items()}


def time_tie_tiers(ranked: Sequence[dict], *, balance: float = 4, time_points: float = 8) -> dict[str, list[str]]:
    """Per pick, the keys of the tier it was chosen from, the pick first, then the rest in rank order:
    for ``finds_the_most`` the setups with the top's found@10 and found@1 tied on time with it, for the
    others the fastest time tier among the setups within their points. ``[]`` when nothing ran."""
    if not ranked:
        return {name: [] for name in PICKS}
    top = ranked[0]
    questions = top["summary"]["questions"]
    order = {s["key"]: n for n, s in enumerate(ranked)}

    def by_rank(tier: Sequence[dict]) -> list[str]:
        return [s["key"] for s in sorted(tier, key=lambda s: (-_found10(s), -s["summary"]["counts"]["1"], s["key"]))]

    def fastest_within(points: float) -> list[str]:
        floor = _found10(top) - allowed_shortfall(points, questions)
        return by_rank(time_tiers([s for s in ranked if _found10(s) >= floor])[0])

    level = [s for s in ranked if rank_key(s)[:2] == rank_key(top)[:2]]
    most = [s for s in time_tiers(level) if any(t is top for t in s)][0]
    return {"finds_the_most": sorted((s["key"] for s in most), key=order.__getitem__),
            "best_for_balance": fastest_within(balance), "best_for_time": fastest_within(time_points)}


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
