"""How two setups compare on time, in words every view shares (the text and the page): "2.1x faster than B
(1.9x to 2.3x)", "as fast as B (equally fast: both under 5 ms)", "the paired test cannot tell them apart".

Read from the report's ``time_pairs`` (every pair's ratio and interval, ``scoring.time_pairs``),
``time_tests`` (per pick, how each setup of its tier compared with the tier's fastest) and ``rules``
(``equally_fast_ms``). Reports from before side-by-side timing have none of these: the words fall
back to the medians and to "their medians' 99% intervals overlap", which is what decided then.
The report's model (``store.run_report``) reads a field missing or of the wrong kind (a report is read back
from a store anyone may edit) as absent: each helper then says less, never raises.
"""
from __future__ import annotations

import math
from typing import Any, Mapping

from ..store.run_report import RunReport
from .numbers import number


def times_text(value: float) -> str:
    """A multiplier as every sentence writes it: whole from 10 (``12``, ``1,234``), one decimal below (``2.1``)."""
    return f"{value:,.0f}" if value >= 10 else f"{value:.1f}"


# Where a ratio of two medians falls when the two setups were not timed side by side (no interval to
# give): a band of these edges, so the words do not move with every run's load as the bare ratio does.
BANDS = (1.05, 1.5, 2, 3, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000)


def band(ratio: float) -> tuple[float, float | None]:
    """The band ``ratio`` (1.05 or more) falls in: its edges, the upper None past the last."""
    low = max(edge for edge in BANDS if edge <= ratio)
    upper = [edge for edge in BANDS if edge > ratio]
    return low, (upper[0] if upper else None)


def equal_words(floor: float, a_ms: Any, b_ms: Any) -> str:
    """Why two setups count as equally fast: "both under 5 ms", else "5 ms or less apart"."""
    both = [number(a_ms), number(b_ms)]
    if all(m is not None and m < floor for m in both):
        return f"both under {floor:g} ms"
    return f"{floor:g} ms or less apart"


def pace(report: RunReport, a: str, b: str, a_ms: Any, b_ms: Any) -> str | None:
    """How ``a`` compares with ``b`` in time, naming ``b``: every sentence that compares two setups' speed
    says it with these words, so two cards or a card and the terminal cannot disagree.

    - "as fast as B (equally fast: both under 5 ms)" / "(equally fast: 5 ms or less apart)": under the
      report's floor (``rules.equally_fast_ms``), where no difference ever decided a pick: the pair's
      estimate when they were timed side by side (``time_pairs.over_floor``), else their medians;
    - "2.1x faster than B (1.9x to 2.3x)" / "3x slower than B (...)": the pair's ratio and its 95%
      interval when they were timed side by side;
    - "between 2x and 3x faster than B": the band of their medians' ratio when they were not (``BANDS``);
    - "about as fast as B": under 1.05x; None when neither a pair nor both medians say.
    """
    row = report.pair_between(a, b)
    floor = report.rules.floor_ms
    a_med, b_med = number(a_ms), number(b_ms)
    if floor is not None:
        if row is not None and row.over_floor is not None:
            equal = not row.over_floor
        else:
            equal = a_med is not None and b_med is not None and abs(a_med - b_med) <= floor
        if equal:
            return f"as fast as {b} (equally fast: {equal_words(floor, a_ms, b_ms)})"
    ratio = row.ratio if row is not None else None
    if row is not None and ratio is not None:
        if ratio < 1.05:
            return f"about as fast as {b}"
        low, high = row.low, row.high
        spread = f" ({times_text(low)}x to {times_text(high)}x)" if low is not None and high is not None else ""
        return f"{times_text(ratio)}x {'faster' if row.faster == a else 'slower'} than {b}{spread}"
    if not a_med or not b_med or a_med < 0 or b_med < 0:
        return None
    ratio = max(a_med, b_med) / min(a_med, b_med)
    if not math.isfinite(ratio):
        return None
    if ratio < 1.05:
        return f"about as fast as {b}"
    low_edge, high_edge = band(ratio)
    word = "faster" if a_med < b_med else "slower"
    if high_edge is None:
        return f"over {low_edge:,g}x {word} than {b}"
    return f"between {low_edge:g}x and {high_edge:g}x {word} than {b}"


def tie_words(report: RunReport, pick: str, key: str, other: str, medians: Mapping[str, Any]) -> str:
    """Why ``other`` is tied on time with ``key``, the setup chosen for ``pick`` (``time_tests``): "equally
    fast (both under 5 ms)", "equally fast (5 ms or less apart)", "the paired test cannot tell them
    apart", or "their medians' 99% intervals overlap" (the fallback, and every report before the floor)."""
    test = report.time_tests.get(pick)
    anchor = test.anchor if test is not None else None
    verdicts = test.verdicts if test is not None else {}
    why = verdicts.get(key if other == anchor else other)  # verdicts are against the tier's fastest
    floor = report.rules.floor_ms
    if why == "equally fast" and floor is not None:
        return f"equally fast: {equal_words(floor, medians.get(key), medians.get(other))}"
    if why == "cannot tell":
        return "the paired test cannot tell them apart"
    return "their medians' 99% intervals overlap"
