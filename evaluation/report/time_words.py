"""How two setups compare on time, in words every view shares (the text and the page): "2.1x faster
(1.9-2.3)", "equally fast (both under 5 ms)", "the paired test cannot tell them apart".

Read from the report's ``time_pairs`` (every pair's ratio and interval, ``scoring.time_pairs``),
``time_tests`` (per pick, how each setup of its tier compared with the tier's fastest) and ``rules``
(``equally_fast_ms``). Reports from before side-by-side timing have none of these: the words fall
back to the medians and to "their medians' 99% intervals overlap", which is what decided then.
Any field may be missing or of the wrong kind (a report is read back from a store anyone may edit):
each helper then says less, never raises.
"""
from __future__ import annotations

import math
from typing import Any, Mapping

from .numbers import number


def floor_ms(report: Mapping[str, Any]) -> float | None:
    """The report's floor: differences under it never decided a pick (None in reports before it)."""
    rules = report.get("rules")
    value = number(rules.get("equally_fast_ms")) if isinstance(rules, Mapping) else None
    return value if value is not None and value >= 0 else None


def pair_between(report: Mapping[str, Any], a: str, b: str) -> Mapping[str, Any] | None:
    """The ``time_pairs`` row of ``a`` and ``b`` (either order), or None."""
    for row in report.get("time_pairs") or []:
        if isinstance(row, Mapping) and {row.get("faster"), row.get("slower")} == {a, b}:
            return row
    return None


def _times(value: float) -> str:
    return f"{value:,.0f}" if value >= 10 else f"{value:.1f}"


def faster_words(report: Mapping[str, Any], fast: str, slow: str, fast_ms: Any, slow_ms: Any) -> str | None:
    """How much faster ``fast`` is than ``slow``: "2.1× faster (1.9–2.3)" from their pair when they were
    timed side by side (the ratio and its 95% interval), else "2.1× faster" from the medians; "about as
    fast" under 1.05x; None when neither says."""
    row = pair_between(report, fast, slow)
    ratio, low, high = ((number(row.get("ratio")), number(row.get("low")), number(row.get("high")))
                        if row is not None else (None, None, None))
    if ratio is not None and row is not None and row.get("faster") == fast:
        if ratio < 1.05:
            return "about as fast"
        spread = f" ({_times(low)}–{_times(high)})" if low is not None and high is not None else ""
        return f"{_times(ratio)}× faster{spread}"
    t_fast, t_slow = number(fast_ms), number(slow_ms)
    if not t_fast or not t_slow or not math.isfinite(t_slow / t_fast):
        return None
    ratio = t_slow / t_fast
    return f"{_times(ratio)}× faster" if ratio >= 1.05 else "about as fast"


def tie_words(report: Mapping[str, Any], pick: str, key: str, other: str, medians: Mapping[str, Any]) -> str:
    """Why ``other`` is tied on time with ``key``, the setup chosen for ``pick`` (``time_tests``): "equally
    fast (both under 5 ms)", "equally fast (5 ms or less apart)", "the paired test cannot tell them
    apart", or "their medians' 99% intervals overlap" (the fallback, and every report before the floor)."""
    tests = report.get("time_tests")
    test = tests.get(pick) if isinstance(tests, Mapping) else None
    anchor = test.get("anchor") if isinstance(test, Mapping) else None
    verdicts = {v["key"]: v for v in (test.get("tied") or [] if isinstance(test, Mapping) else [])
                if isinstance(v, Mapping) and isinstance(v.get("key"), str)}  # a damaged key names no setup
    verdict = verdicts.get(key if other == anchor else other)  # verdicts are against the tier's fastest
    why = verdict.get("why") if isinstance(verdict, Mapping) else None
    floor = floor_ms(report)
    if why == "equally fast" and floor is not None:
        both = [number(medians.get(k)) for k in (key, other)]
        if all(m is not None and m < floor for m in both):
            return f"equally fast (both under {floor:g} ms)"
        return f"equally fast ({floor:g} ms or less apart)"
    if why == "cannot tell":
        return "the paired test cannot tell them apart"
    return "their medians' 99% intervals overlap"


def in_tier_rule(report: Mapping[str, Any], pick: str) -> str:
    """How the pick was chosen among the setups tied on time with it, in the words of its report's rule."""
    floor = floor_ms(report)
    if floor is None:  # reports before the floor: found@1 decided inside a tier
        return "found@10, then found@1, then key"
    if pick == "finds_the_most":
        return "key"
    return f"found@10, then the faster (shown faster by more than {floor:g} ms), then found@1, then key"
