"""The experiments of a matrix, expanded in a stable order, each named by the sha256 of its configuration.

experiments = chunk variants x embedders x methods, in that nesting and in the order each was given
(a repeat is dropped): the first variant's experiments come first, and within it the first
embedder's. ``keyword`` reads no embedder, so it is one experiment per variant (embedder None), in
the place its first embedder would give it.

An experiment's id is the hex sha256 of its canonical configuration: the JSON of ``config`` with
sorted keys and no spaces, UTF-8. It holds what decides the numbers (the chunking, the embedder by
name and by what identifies its model, the method, the cut-offs, the grain) and nothing of the
machine, the clock or the paths, so the same configuration has the same id on any machine.
"""
from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any, Sequence

from .variants import ChunkVariant

ID_FORMAT = 1  # part of every id: bump when what an id covers changes


@dataclass(frozen=True)
class Experiment:
    variant: ChunkVariant
    embedder: str | None  # None for keyword
    method: str
    top_k: tuple[int, ...]
    by: str
    model: str | None = None  # sha256 (or label) that identifies the embedder's model

    @property
    def config(self) -> dict[str, Any]:
        return {"format": ID_FORMAT, "chunking": self.variant.to_dict(), "embedder": self.embedder,
                "model": self.model, "method": self.method, "top_k": list(self.top_k), "by": self.by}

    @property
    def id(self) -> str:
        canonical = json.dumps(self.config, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def expand(
    variants: Sequence[ChunkVariant],
    embedders: Sequence[str],
    methods: Sequence[str],
    top_k: Sequence[int],
    by_variant: dict[ChunkVariant, str],
    models: dict[str, str | None],
) -> list[Experiment]:
    """Every experiment in the stable order of the module docstring; ``by_variant`` is each variant's grain."""
    out: list[Experiment] = []
    for variant in dict.fromkeys(variants):
        for embedder in dict.fromkeys(embedders):
            for method in dict.fromkeys(methods):
                uses = None if method == "keyword" else embedder
                experiment = Experiment(variant, uses, method, tuple(top_k), by_variant[variant],
                                        models.get(uses) if uses else None)
                if experiment not in out:
                    out.append(experiment)
    return out
