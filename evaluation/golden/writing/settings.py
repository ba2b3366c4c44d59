"""How ``write_golden`` drafts, as one object: ``WritingSettings``, with its defaults written here once.

Built from keywords (``write_golden(index, "golden.jsonl", 20, evolve=0)``) or from ``golden write``'s
arguments (``WritingSettings.from_args``), and checked once when built: a setting no run could finish with
is a ``UsageError`` before the first model call. What is not a setting stays a parameter of
``write_golden``: the index searched, the file written, the writer and critic asked, the reply cache and
the progress shown. The Function App never drafts a golden file, so there is no ``from_app``.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, fields, replace
from types import MappingProxyType
from typing import Any, Mapping, Sequence

from ...errors import UsageError, did_you_mean
from .prompts import KINDS

DEFAULT_N = 50
DEFAULT_MIX = {"factual": 2, "howto": 1, "comparison": 1, "multihop": 1}
DEFAULT_EVOLVE = 1
DEFAULT_THRESHOLD = 0.7
# The cosine (by the index's MiniLM) at which a question repeats an earlier one: bench/bench_golden_checks.py
DEFAULT_SIMILARITY = 0.5
DEFAULT_TRIES = 3


@dataclass(frozen=True)
class WritingSettings:
    """What ``write_golden`` drafts and how hard it checks (the steps are ``write``'s docstring).

    ``n``: rows to write. ``mix``: kinds of question and their weights, in turn (a smooth weighted round
    robin); a kind of weight 0 is never asked. ``examples``: questions people really ask, whose style is
    copied; ``scenario`` and ``task``: who asks and why, a sentence each. ``evolve``: rewrites that make
    each question harder. ``threshold``: the critic's score (0-1) a passage and a question must reach.
    ``similarity``: the cosine at which a question repeats an earlier one. ``tries``: drafts asked for
    per passage. ``seed``: which passages, in which order.
    """

    n: int = DEFAULT_N
    mix: Mapping[str, int] | None = None  # None: DEFAULT_MIX; kept read-only, as the rest is
    examples: tuple[str, ...] = ()
    scenario: str = ""
    task: str = ""
    evolve: int = DEFAULT_EVOLVE
    threshold: float = DEFAULT_THRESHOLD
    similarity: float = DEFAULT_SIMILARITY
    tries: int = DEFAULT_TRIES
    seed: int = 0

    def __post_init__(self) -> None:
        """Refuse any setting a run could not finish with, before the first model call."""
        object.__setattr__(self, "mix", MappingProxyType(_checked_mix(DEFAULT_MIX if self.mix is None else self.mix)))
        if isinstance(self.examples, str):  # one string would be read as one question per character
            raise UsageError("examples are questions people ask, given as a list of strings, not one string")
        object.__setattr__(self, "examples", tuple(self.examples))
        if not all(isinstance(example, str) for example in self.examples):
            raise UsageError("examples are questions people ask: give each as a string")
        for name in ("scenario", "task"):
            if not isinstance(getattr(self, name), str):
                raise UsageError(f"the {name} is a sentence, not {getattr(self, name)!r}")
        for name in ("n", "evolve", "tries", "seed"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int):
                raise UsageError(f"{name} must be a whole number, not {value!r}")
        if self.n < 1 or self.tries < 1 or self.evolve < 0:
            raise UsageError(f"ask for at least 1 question and 1 try, and 0 or more rewrites (n={self.n}, "
                             f"tries={self.tries}, evolve={self.evolve})")
        for name in ("threshold", "similarity"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or math.isnan(value):
                raise UsageError(f"{name} must be a number, not {value!r}")
        if not 0 <= self.threshold <= 1:
            raise UsageError(f"the critic's threshold is a score from 0 to 1, not {self.threshold}")
        if not -1 <= self.similarity <= 1:
            raise UsageError(f"similarity is a cosine from -1 to 1, not {self.similarity}")

    @property
    def kinds(self) -> dict[str, int]:
        """The kinds asked for (weight over 0), in the mix's order: the round robin's turns."""
        assert self.mix is not None, "__post_init__ puts DEFAULT_MIX in place of None"
        return {kind: weight for kind, weight in self.mix.items() if weight}

    @classmethod
    def of(cls, settings: WritingSettings | None = None, **keywords: Any) -> WritingSettings:
        """``settings`` (or the defaults) with ``keywords`` put over it: how ``write_golden``'s keywords
        become the one object. A keyword that is no setting is a ``TypeError``, as for any function."""
        unknown = sorted(set(keywords) - NAMES)
        if unknown:
            raise TypeError(f"{unknown[0]!r} is not a setting of write_golden; settings: {', '.join(sorted(NAMES))}."
                            f"{did_you_mean(unknown[0], NAMES)}")
        return replace(settings or cls(), **keywords) if keywords else settings or cls()

    @classmethod
    def from_args(cls, args: Any, *, examples: Sequence[str] = ()) -> WritingSettings:
        """From ``python3 -m evaluation golden write``'s arguments: those given (an option left out is None
        there, so its default is the one written here), and ``examples``, the questions its ``--examples``
        file holds (the command reads the file)."""
        given = {name: getattr(args, name) for name in NAMES - {"examples"} if getattr(args, name, None) is not None}
        return cls(**given, examples=tuple(examples))


NAMES = frozenset(f.name for f in fields(WritingSettings))


def _checked_mix(mix: Mapping[str, int]) -> dict[str, int]:
    if not isinstance(mix, Mapping):
        raise UsageError(f"the mix is kinds of question and their weights, such as {DEFAULT_MIX}, not {mix!r}")
    chosen = dict(mix)
    for kind, weight in chosen.items():
        if kind not in KINDS:
            raise UsageError(f'"{kind}" is not a kind of question.{did_you_mean(str(kind), KINDS)} '
                             f"Kinds: {', '.join(KINDS)}")
        if isinstance(weight, bool) or not isinstance(weight, int) or weight < 0:
            raise UsageError(f'the mix gives "{kind}" {weight!r}; give each kind a whole number of 0 or more')
    if not any(chosen.values()):
        raise UsageError("the mix asks for no question at all; give at least one kind a weight over 0")
    return chosen
