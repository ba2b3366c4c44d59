"""The words every check of a kept file is written in: a field, its kind, and the sentence when it is wrong.

A kept file (a run's report, a chunking run's, a cache blob's header) comes back from a folder or a
container anyone with write access may have edited. Its reader checks it with these before using it
(``shape`` for retrieval reports, ``builds_shape`` for chunking, sweep and matrix runs), so a bad
file is one sentence naming the field (``Bad``), never a ``TypeError`` three modules away.

A check is ``(value, path) -> value``: it returns what it was given when it is of its kind and raises
``Bad("<path> is <what>, not <wanted>")`` otherwise. Numbers are finite and whole numbers at most
``LARGEST_COUNT``: what a page divides, sums and formats stays a float (a count of 10**400 is a
report no run made, and dividing by it ends in ``OverflowError``).
"""
from __future__ import annotations

import math
import re
from typing import Any, Callable

from ..errors import shown

LARGEST_COUNT = 2 ** 53  # the largest whole number a float holds exactly: no run counts more of anything

Check = Callable[[Any, str], Any]
# A key a path names as it is (a question id, a cut-off, a setup key); any other is quoted by ``shown``,
# so a path stays one short line whatever key a file holds.
_PLAIN_KEY = re.compile(r"[\w.@#:+-]{1,60}")


class Bad(Exception):
    """A field a reader could not use; ``str()`` is the sentence, starting with the field's path.

    Private to the checks: ``problem`` catches it and gives its sentence, which the reader raises as its own
    error, so it is the one exception defined outside ``errors.py`` (whose docstring says the rule)."""


def field(container: dict, name: str, check: Check, where: str = "") -> Any:
    """``container[name]`` checked; ``Bad`` when it is missing or not of its kind."""
    path = f"{where}.{name}" if where else name
    if name not in container:
        raise Bad(f"{path} is missing")
    return check(container[name], path)


def optional_field(container: dict, name: str, check: Check, where: str = "") -> Any:
    """``container[name]`` checked when it is there (null is a value, checked too); None when absent."""
    return field(container, name, check, where) if name in container else None


def kind(value: Any) -> str:
    """What ``value`` is, in the words the sentences use ("a string", "an object", "null")."""
    if isinstance(value, bool):
        return "true or false"
    if value is None:
        return "null"
    return {int: "a number", float: "a number", str: "a string", list: "a list", dict: "an object"}.get(
        type(value), type(value).__name__)


def text(value: Any, path: str) -> str:
    if not isinstance(value, str):
        raise Bad(f"{path} is {kind(value)}, not a string")
    return value


def count(value: Any, path: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise Bad(f"{path} is {shown(value)}, not a whole number of 0 or more")
    if value > LARGEST_COUNT:
        raise Bad(f"{path} is {shown(value)}, larger than any count a run makes")
    return value


def positive(value: Any, path: str) -> int:
    if count(value, path) < 1:
        raise Bad(f"{path} is 0, not a whole number of 1 or more")
    return value


def number(value: Any, path: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise Bad(f"{path} is {kind(value)}, not a finite number")
    if isinstance(value, int) and abs(value) > LARGEST_COUNT:
        raise Bad(f"{path} is {shown(value)}, larger than any number a run measures")
    return value


def share(value: Any, path: str) -> float:
    """A number from 0 to 1 (found@k, a p-value, a cache share)."""
    if not 0 <= number(value, path) <= 1:
        raise Bad(f"{path} is {shown(value)}, not a share from 0 to 1")
    return value


def flag(value: Any, path: str) -> bool:
    if not isinstance(value, bool):
        raise Bad(f"{path} is {kind(value)}, not true or false")
    return value


def obj(value: Any, path: str) -> dict:
    if not isinstance(value, dict):
        raise Bad(f"{path} is {kind(value)}, not an object")
    return value


def optional(check: Check) -> Check:
    """``check``, or null."""
    return lambda value, path: None if value is None else check(value, path)


def either(first: Check, second: Check) -> Check:
    def check(value: Any, path: str) -> Any:
        try:
            return first(value, path)
        except Bad:
            return second(value, path)
    return check


def list_of(check: Check) -> Check:
    def each(value: Any, path: str) -> list:
        if not isinstance(value, list):
            raise Bad(f"{path} is {kind(value)}, not a list")
        for n, item in enumerate(value):
            check(item, f"{path}[{n}]")
        return value
    return each


def dict_of(check: Check) -> Check:
    def each(value: Any, path: str) -> dict:
        obj(value, path)
        for key, item in value.items():
            check(item, f"{path}.{key if _PLAIN_KEY.fullmatch(key) else shown(key)}")
        return value
    return each


def problem(check: Check, value: Any, path: str) -> str | None:
    """The sentence ``check`` gives ``value``; None when it passes."""
    try:
        check(value, path)
    except Bad as bad:
        return str(bad)
    return None
