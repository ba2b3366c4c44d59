"""Values read from a kept report's JSON, each as the kind a reader expects or as absent: a report comes back
from a store anyone with write access may have edited, and ``store.run_report`` reads past what
``shape.report_problem`` checks without a ``KeyError`` in a view."""
from __future__ import annotations

import math
from types import MappingProxyType
from typing import Any, Mapping


def text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def integer(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def number(value: Any) -> int | float | None:
    """``value`` as kept when it is a finite number (an int stays an int: views print it as it was)."""
    plain = isinstance(value, (int, float)) and not isinstance(value, bool)
    return value if plain and math.isfinite(value) else None


def flag(value: Any) -> bool | None:
    return value if isinstance(value, bool) else None


def mapping(value: Any) -> Mapping[str, Any]:
    """A read-only view of ``value`` when it is an object, else an empty one."""
    return MappingProxyType(value) if isinstance(value, dict) else MappingProxyType({})


def plain_dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def maybe_mapping(value: Any) -> Mapping[str, Any] | None:
    return MappingProxyType(value) if isinstance(value, dict) else None


def texts(value: Any) -> tuple[str, ...]:
    return tuple(v for v in value if isinstance(v, str)) if isinstance(value, list) else ()


def objects(value: Any) -> list[dict[str, Any]]:
    return [v for v in value if isinstance(v, dict)] if isinstance(value, list) else []


def ids(value: Any) -> tuple[str, ...]:
    """Question ids kept as a mapping (id -> documents, older reports) or a list (newer)."""
    if isinstance(value, dict):
        return tuple(str(k) for k in value)
    if isinstance(value, (list, tuple)):
        return tuple(str(v) for v in value)
    return ()


def pair(value: Any) -> tuple[float, float] | None:
    if isinstance(value, list) and len(value) >= 2:
        low, high = number(value[0]), number(value[1])
        if low is not None and high is not None:
            return low, high
    return None
