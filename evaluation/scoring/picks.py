"""Rank setups and name the three picks, as the product defines them.

Ranking: found@10 (more is better), then found@1, then median search time (less is better), then
setup key. Only setups that ran are ranked; a failed setup has no rank and is never picked.

Picks:
- ``finds_the_most``: the top-ranked setup.
- ``best_for_balance``: the fastest setup (lowest median time; rank breaks ties) whose found@10 is
  within ``balance`` percentage points of the top, inclusive, counted in whole questions:
  ``floor(balance / 100 * questions)`` questions fewer at most. At 4 points over 25 questions that is
  1 question, so 92% (23/25) counts when the most is 96% (24/25).
- ``best_for_time``: the same within ``time_points``.
All three may be the same setup; all are None when nothing ran.

``frontier``: setups no other setup beats on both found@10 and median time (at least as good on both,
better on one). ``neighbours``: setups one change away: another ranker, one model more or fewer, or
the same search on another engine.
"""
from __future__ import annotations

from fractions import Fraction
from typing import Any, Sequence

from .metrics import median_ms as _median

PICKS = ("finds_the_most", "best_for_balance", "best_for_time")


def _ran(setup: dict) -> bool:
    return not setup.get("error") and setup.get("summary") is not None


def _found10(setup: dict) -> int:
    return setup["summary"]["counts"]["10"]


def rank_key(setup: dict) -> tuple:
    summary = setup["summary"]
    return (-summary["counts"]["10"], -summary["counts"]["1"], _median(setup), setup["key"])


def rank_setups(setups: Sequence[dict]) -> list[dict]:
    """The setups that ran, best first; sets each one's ``rank`` (1-based) and ``None`` on failures."""
    ranked = sorted((s for s in setups if _ran(s)), key=rank_key)
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
    if not ranked:
        return {name: None for name in PICKS}
    top = ranked[0]
    questions = top["summary"]["questions"]

    def fastest_within(points: float) -> str:
        floor = _found10(top) - allowed_shortfall(points, questions)
        eligible = [s for s in ranked if _found10(s) >= floor]
        return min(eligible, key=lambda s: (_median(s), s["rank"]))["key"]

    return {"finds_the_most": top["key"], "best_for_balance": fastest_within(balance),
            "best_for_time": fastest_within(time_points)}


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
