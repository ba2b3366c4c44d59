"""What a target counted while one setup's step ran: its requests and retries, and where its batches
got their vectors and pair scores. Written once for every step that searches (``run_setup``,
``rank_setup``, ``time_setups``).

A target that keeps request counts is a ``target.Counted`` (Azure AI Search); one that keeps cache
counts has ``cache_counts`` (the embedded engine). Counts are differences from before the step, so a
target searched by several steps (the timed pass, then the batch) gives each step its own.
"""
from __future__ import annotations

import logging
from typing import Any, Callable, TypeVar

from ..target import COUNTERS, Counted, Target

log = logging.getLogger(__name__)
Result = TypeVar("Result", bound=dict)


def counters(target: Target, setup_key: str) -> dict[str, int] | None:
    """The target's running request counts for the setup, when it keeps any."""
    if not isinstance(target, Counted):
        return None
    given = target.counters(setup_key)
    return {name: int(given.get(name, 0)) for name in COUNTERS}


def cache_counts(target: Target, setup_key: str) -> dict[str, int] | None:
    """Where the target's batches got their query vectors and pair scores for the setup, when it keeps
    such counts (the embedded engine's ``cache_counts``)."""
    counts = getattr(target, "cache_counts", None)
    return None if counts is None else {name: int(n) for name, n in counts(setup_key).items()}


class Tally:
    """The counts of one setup on one target from when ``start`` was called."""

    def __init__(self, target: Target, setup_key: str) -> None:
        self.target, self.key = target, setup_key
        self.requests: dict[str, int] | None = None
        self.cache: dict[str, int] | None = None

    def start(self) -> Tally:
        self.requests, self.cache = counters(self.target, self.key), cache_counts(self.target, self.key)
        return self

    def requests_since(self) -> dict[str, int]:
        """``{"requests": n, "retries": n}`` since ``start``; nothing for a target without counts."""
        after = counters(self.target, self.key)
        if self.requests is None or after is None:
            return {}
        return {name: after[name] - self.requests[name] for name in COUNTERS}

    def cache_since(self) -> dict[str, Any]:
        """``{"cache": counts since start}``; nothing for a target without cache counts."""
        after = cache_counts(self.target, self.key)
        if self.cache is None or after is None:
            return {}
        return {"cache": {name: after[name] - self.cache.get(name, 0) for name in after}}

    def requests_since_failure(self) -> dict[str, int] | None:
        """``requests_since`` after the step failed: None when the counts cannot be read either (the
        step's own error is the one to report)."""
        try:
            return self.requests_since() or None
        except Exception:  # noqa: BLE001
            return None


def counted(target: Target, setup_key: str, work: Callable[[], Result],
            failed: Callable[[str, dict[str, int] | None], Result], *, what: str = "setup") -> Result:
    """``work()``'s result with the counts it caused added (cache, then requests and retries), or,
    when it raises, ``failed(error sentence, the requests counted until then)``: one setup's failure
    is that setup's result and never ends the run."""
    tally = Tally(target, setup_key)
    try:
        tally.start()
        result = work()
        result.update(tally.cache_since())
        result.update(tally.requests_since())
    except Exception as err:  # noqa: BLE001 - any failure of one setup is that setup's result
        log.warning("%s %s failed: %s", what, setup_key, err)
        return failed(f"{type(err).__name__}: {err}", tally.requests_since_failure())
    return result
