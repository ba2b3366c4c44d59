"""Which setup an answer tool searches with: the one named, or a sensible default for the job."""
from __future__ import annotations

from typing import Sequence

from ..errors import UsageError, did_you_mean
from ..target import Setup, Target


def choose_setup(target: Target, setup: Setup | str | None, prefer: Sequence[str]) -> Setup:
    """``setup`` itself, the target's setup with that key, or else the first method of ``prefer`` the target
    offers (with the most models, then by key). A key the target does not offer is a ``UsageError``
    naming the closest."""
    offered = target.setups()
    if isinstance(setup, Setup):
        return setup
    if isinstance(setup, str):
        for candidate in offered:
            if candidate.key == setup:
                return candidate
        keys = [s.key for s in offered]
        raise UsageError(f'"{setup}" is not a setup of {target.name}.{did_you_mean(setup, keys)} '
                         f"Setups: {', '.join(keys)}")
    if not offered:
        raise UsageError(f"{target.name} offers no setup to search with")
    for method in prefer:
        candidates = [s for s in offered if s.method == method]
        if candidates:
            return min(candidates, key=lambda s: (-len(s.models), s.key))
    return offered[0]
