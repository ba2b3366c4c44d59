"""A declared space of setups: its axes, read from one file (TOML or JSON) or from flags, expanded in a
stable order, each setup named by a stable key.

    # space.toml: every axis a list; any left out takes its default (DEFAULTS)
    techniques = ["fixed", "sentence"]     # builds.variants.TECHNIQUES: cut with no model
    sizes = [400, 800]                     # characters
    overlaps = [0, 100]                    # characters, each under the size (a pair at or over it is left out)
    models = ["bge-small", "minilm-l6"]    # embedders (engine.model_catalog; "hash" is no real model)
    methods = ["keyword", "dense", "hybrid"]   # and hybrid_reranked: the engine's cross-encoder
    depths = [20, 50]                      # how deep each list a hybrid fuses is searched (10 or more)
    rrf_k = [10, 60]                       # reciprocal rank fusion's k for hybrid

Setups = chunkings (techniques x sizes x overlaps) x models x methods x depths x RRF k, nested in that
order, each axis in the order given (a repeat dropped). An axis a method does not read does not multiply
it: ``keyword`` reads no model, depth or k (one setup per chunking); ``dense`` reads no depth or k (its
first 10 results, all the measure reads, are the same at any depth of 10 or more); ``hybrid`` reads all;
``hybrid_reranked`` is the engine's own (``engine.target``: fusion at k = 60 over 50 candidates, the
cross-encoder over the first 20), so it reads the chunking and the model alone.

A setup's key says what it is and nothing of the machine: ``fixed-400-0.keyword``,
``fixed-400-0.bge-small.dense``, ``fixed-400-0.bge-small.hybrid.d20.k60``,
``fixed-400-0.bge-small.hybrid_reranked``. Builds: one index per chunking x model that a setup reads
(keyword reads the chunking's BM25 alone), shared by every setup on it.
"""
from __future__ import annotations

import json
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

from ..builds.variants import MIN_SIZE, TECHNIQUES, ChunkVariant
from ..errors import UsageError, did_you_mean

METHODS = ("keyword", "dense", "hybrid", "hybrid_reranked")
CUT = 10  # the measure is found@10: a hybrid's lists must be at least this deep
AXES = ("techniques", "sizes", "overlaps", "models", "methods", "depths", "rrf_k")
DEFAULTS: dict[str, tuple[Any, ...]] = {
    "techniques": ("fixed",), "sizes": (500,), "overlaps": (100,), "models": ("bge-small",),
    "methods": ("keyword", "dense", "hybrid"), "depths": (50,), "rrf_k": (60,),
}
MOST_SETUPS = 100_000  # a space past this is a typo in an axis, not a search a machine finishes
_EXAMPLE = 'sizes = [400, 800]'


@dataclass(frozen=True)
class SpaceSetup:
    """One point of the space: a chunking, and for the methods that read them a model, a depth and a k."""

    chunking: ChunkVariant
    method: str
    model: str | None = None
    depth: int | None = None
    rrf_k: int | None = None

    @property
    def key(self) -> str:
        parts = [str(self.chunking)] + ([self.model] if self.model else []) + [self.method]
        if self.depth is not None:
            parts += [f"d{self.depth}", f"k{self.rrf_k}"]
        return ".".join(parts)

    @property
    def build(self) -> tuple[ChunkVariant, str | None]:
        """The index it searches: its chunking and model (None: the chunking's BM25 alone)."""
        return self.chunking, self.model

    def to_dict(self) -> dict[str, Any]:
        return {"key": self.key, "chunking": self.chunking.to_dict(), "method": self.method, "model": self.model,
                "depth": self.depth, "rrf_k": self.rrf_k}


@dataclass(frozen=True)
class Space:
    """The axes (each a tuple, in the order given, repeats dropped) and where they were read from."""

    techniques: tuple[str, ...] = DEFAULTS["techniques"]
    sizes: tuple[int, ...] = DEFAULTS["sizes"]
    overlaps: tuple[int, ...] = DEFAULTS["overlaps"]
    models: tuple[str, ...] = DEFAULTS["models"]
    methods: tuple[str, ...] = DEFAULTS["methods"]
    depths: tuple[int, ...] = DEFAULTS["depths"]
    rrf_k: tuple[int, ...] = DEFAULTS["rrf_k"]
    source: str = "flags"
    lines: Mapping[str, int] = field(default_factory=dict, compare=False)  # axis -> line in the file

    def __post_init__(self) -> None:
        for axis in AXES:
            object.__setattr__(self, axis, tuple(dict.fromkeys(getattr(self, axis))))
            _check_axis(self, axis)

    def where(self, axis: str) -> str:
        line = self.lines.get(axis)
        return f"{self.source}, line {line}, {axis}" if line else f"{self.source}: {axis}"

    def chunkings(self) -> list[ChunkVariant]:
        """Every chunking, techniques x sizes x overlaps; a pair whose overlap is not under its size is left out."""
        return [ChunkVariant(t, s, o) for t in self.techniques for s in self.sizes for o in self.overlaps if o < s]

    def left_out(self) -> int:
        """How many technique x size x overlap combinations are left out (overlap at or over the size)."""
        return len(self.techniques) * len(self.sizes) * len(self.overlaps) - len(self.chunkings())

    def setups(self) -> list[SpaceSetup]:
        """Every setup, in the stable order of the module docstring."""
        found: list[SpaceSetup] = []
        for chunking in self.chunkings():
            if "keyword" in self.methods:
                found.append(SpaceSetup(chunking, "keyword"))
            for model in self.models:
                for method in self.methods:
                    if method in ("dense", "hybrid_reranked"):
                        found.append(SpaceSetup(chunking, method, model))
                    elif method == "hybrid":
                        found += [SpaceSetup(chunking, method, model, depth, k)
                                  for depth in self.depths for k in self.rrf_k]
        return found

    def builds(self) -> list[tuple[ChunkVariant, str | None]]:
        """The indexes the setups search, each once: chunking x model, or a chunking's BM25 alone when
        only keyword reads it."""
        setups = self.setups()
        with_model = {s.build for s in setups if s.model}
        alone = [s.build for s in setups if not s.model and not any(b[0] == s.chunking for b in with_model)]
        return list(dict.fromkeys([s.build for s in setups if s.model] + alone))

    def to_dict(self) -> dict[str, Any]:
        return {axis: list(getattr(self, axis)) for axis in AXES}

    def describe(self) -> str:
        """``120 setups over 8 builds (4 chunkings x 2 models)``: what a run says before it starts."""
        setups, builds = self.setups(), self.builds()
        chunkings = len(self.chunkings())
        note = f"; {self.left_out()} technique x size x overlap left out (overlap not under the size)" \
            if self.left_out() else ""
        return (f"{len(setups)} setups over {len(builds)} builds ({chunkings} chunkings x "
                f"{len(self.models) if any(s.model for s in setups) else 0} models, each index shared by every "
                f"setup on it){note}")


def _check_axis(space: Space, axis: str) -> None:
    values = getattr(space, axis)
    where = space.where(axis)
    if not values:
        raise UsageError(f"{where}: is empty; give at least one value, or leave {axis} out for "
                         f"{list(DEFAULTS[axis])}")
    whole = {"sizes": MIN_SIZE, "overlaps": 0, "depths": CUT, "rrf_k": 1}
    if axis in whole:
        least = whole[axis]
        for value in values:
            if isinstance(value, bool) or not isinstance(value, int) or value < least:
                why = {"depths": f" (the measure reads the first {CUT} results)", "sizes": " characters"}.get(axis, "")
                raise UsageError(f"{where}: {value!r} is not a whole number of {least} or more{why}; write "
                                 f"{axis} = [{max(least, 1) * 2 if axis != 'sizes' else 500}]")
        return
    choices = {"techniques": TECHNIQUES, "methods": METHODS}.get(axis)
    for value in values:
        if not isinstance(value, str) or not value:
            raise UsageError(f'{where}: {value!r} is not a name; write {axis} = ["{(choices or ("bge-small",))[0]}"]')
        if choices is not None and value not in choices:
            raise UsageError(f'{where}: "{value}" is not one of {", ".join(choices)}.'
                             f"{did_you_mean(value, choices)}")
    if axis == "models":
        from ..engine.model_catalog import model_info

        for value in values:
            try:
                model_info(value)
            except Exception as err:  # noqa: BLE001 - the catalog's sentence, with the file's line in front
                raise UsageError(f"{where}: {err}") from None


def read_space(path: str | Path) -> Space:
    """The space a TOML (``.toml``) or JSON file declares (see the module docstring); a ``UsageError``
    naming the file, the line and the fix for anything else."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise UsageError(f"{path}: no such space file; write one such as: {_EXAMPLE}") from None
    except (OSError, UnicodeDecodeError) as err:
        raise UsageError(f"{path}: cannot read the space file ({err}); save it as UTF-8 TOML or JSON") from None
    if path.suffix.lower() == ".json":
        try:
            data = json.loads(text)
        except json.JSONDecodeError as err:
            raise UsageError(f"{path}, line {err.lineno}: not JSON ({err.msg}); write an object such as "
                             '{"sizes": [400, 800]}') from None
    else:
        try:
            data = tomllib.loads(text)
        except tomllib.TOMLDecodeError as err:
            raise UsageError(f"{path}: not TOML ({err}); write one axis a line, such as {_EXAMPLE}") from None
    if not isinstance(data, dict):
        raise UsageError(f'{path}: holds no table of axes; write one such as {{"sizes": [400, 800]}}')
    return space_of(data, source=str(path), lines=_lines(text, data))


def space_of(data: Mapping[str, Any], *, source: str = "the space", lines: Mapping[str, int] | None = None) -> Space:
    """The space a table of axes declares (a file's, or a caller's dict): each axis a list, or one value."""
    lines = dict(lines or {})
    axes: dict[str, tuple[Any, ...]] = {}
    for name, value in data.items():
        if name not in AXES:
            line = f", line {lines[name]}" if name in lines else ""
            raise UsageError(f'{source}{line}: "{name}" is not an axis of a space.{did_you_mean(str(name), AXES)} '
                             f"Axes are: {', '.join(AXES)}.")
        axes[name] = tuple(value) if isinstance(value, list) else (value,)
    space = Space(**axes, source=source, lines=lines)
    count = len(space.setups())
    if count == 0:
        raise UsageError(f"{source}: declares no setup (every overlap is at or over every size); give an overlap "
                         "under a size")
    if count > MOST_SETUPS:
        raise UsageError(f"{source}: declares {count:,} setups, over {MOST_SETUPS:,}; shorten an axis")
    return space


def space_from_flags(**axes: Sequence[Any] | None) -> Space:
    """The space the command line's flags declare (an axis None or left out takes its default)."""
    return space_of({name: list(values) for name, values in axes.items() if values is not None}, source="the flags")


def _lines(text: str, data: Iterable[str]) -> dict[str, int]:
    """The line each top-level key is written on (the first that starts with it), for the errors."""
    found = {}
    for name in data:
        pattern = re.compile(rf'^\s*"?{re.escape(str(name))}"?\s*[=:]')
        for number, line in enumerate(text.splitlines(), start=1):
            if pattern.match(line):
                found[str(name)] = number
                break
    return found
