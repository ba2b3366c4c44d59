"""``copied``: a deep copy of a report's plain data (dicts, lists, numbers, strings, None).

Why not pickle, as before: a pickle round trip writes every string out and reads a new one back, and
a report's per-question maps are mostly strings (each result row's chunk and document ids). Strings,
numbers, booleans and None cannot change, so a copy may share them, as ``copy.deepcopy`` does: only
the dicts and lists (and tuples holding them) are made anew, and a row of scalars is one C-level
``list(...)``. Measured in CPU seconds on one entry of 5,000 questions x 20 result rows (this
machine, the least of 3): ``copy.deepcopy`` 0.62 s, a pickle round trip 0.34 s (what this was
before, issue 28), this 0.25 s. (A marshal round trip, 0.19 s, turns anything with a buffer, a numpy
array or number, into bytes without a word.) What is not plain data (a numpy number, a set, an
object) goes through ``copy.deepcopy``. Unlike ``deepcopy``, a list or dict that appears twice in
``value`` is copied twice: plain JSON data never shares one.
"""
from __future__ import annotations

import copy
from typing import Any, TypeVar

T = TypeVar("T")

_ATOMS = frozenset({str, int, float, bool, type(None)})  # exact types: values nothing can change


def copied(value: T) -> T:
    """``value`` copied all the way down (equal to ``copy.deepcopy(value)``)."""
    return _copied(value)


def _copied(value: Any) -> Any:  # data of any shape: a copy has the type of what it copies
    kind = type(value)
    if kind in _ATOMS:
        return value
    if kind is dict:
        return {key: item if type(item) in _ATOMS else _copied(item) for key, item in value.items()}
    if kind is list:
        return _list(value)
    if kind is tuple:
        return tuple(item if type(item) in _ATOMS else _copied(item) for item in value)
    return copy.deepcopy(value)


def _list(items: list[Any]) -> list[Any]:
    out = list(items)  # a row of scalars ends here
    for n, item in enumerate(out):
        if type(item) not in _ATOMS:
            out[n] = _copied(item)
    return out
