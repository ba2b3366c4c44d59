"""Whether the times an earlier run kept for a setup can be believed: the check before any are reused.

A report comes back from a store anyone with write access may edit, and ``RunStore.get`` checks only
that its times are finite numbers. Times taken from it are printed, decide the picks and are kept
again as "timed in run <id>" for the next run to take, so ``retime.reusable_times`` (and the app's
shard sizes, ``shards.measured_times``) first ask ``times_problem``: every time a measurement (0 or
more, and at most ``LONGEST_SEARCH_MS``), and the summary's ``timed``, ``median_ms`` and ``p95_ms``
exactly what ``scoring.metrics.timing_summary`` makes of those times (a summary edited apart from its
times, or times apart from their summary, is not what the run measured).
"""
from __future__ import annotations

import math
from typing import Any, Mapping

from ..errors import shown
from ..scoring.metrics import timing_summary

# A search that took an hour did not finish as a search: a time over this is no measurement. The
# slowest setups measured (a reranked search on Flex Consumption: 13-19 s, platform notes) are far below.
LONGEST_SEARCH_MS = 3_600_000.0
_ROUNDING_MS = 0.001  # the summary's times are rounded to the microsecond (``percentile_ms``)


def times_problem(entry: Mapping[str, Any]) -> str | None:
    """Why the times ``entry`` (a report's setup) kept cannot be believed, as a sentence naming the
    field; None when every time is a measurement and its summary agrees with them."""
    times = entry.get("times_ms")
    if not isinstance(times, list) or not times:
        return "it kept no times"
    for n, value in enumerate(times):
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            return f"times_ms[{n}] is {shown(value)}, not a number of milliseconds"
        if not 0 <= value <= LONGEST_SEARCH_MS:
            return f"times_ms[{n}] is {value:g} ms, not a search time (0 to {LONGEST_SEARCH_MS:g} ms)"
    summary = entry.get("summary")
    if not isinstance(summary, Mapping):
        return "it has no summary of its times"
    made = timing_summary(times)
    if summary.get("timed") != made["timed"]:
        return f"summary.timed is {shown(summary.get('timed'))}, but times_ms holds {made['timed']} times"
    for name in ("median_ms", "p95_ms"):
        kept = summary.get(name)
        if (isinstance(kept, bool) or not isinstance(kept, (int, float))
                or not abs(kept - made[name]) <= _ROUNDING_MS):
            return f"summary.{name} is {shown(kept)}, but the times it summarises give {made[name]!r}"
    return None
