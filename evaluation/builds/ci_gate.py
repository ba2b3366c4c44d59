"""The CI gate of a matrix: ``--fail-under hit_rate@5=0.85`` and any number more, each met by every experiment.

A threshold is a measure at a cut-off of ``--top-k`` (``measures.parse_at_k``: ``hit_rate@5`` and
``found@5`` are one measure) and the least value it may take. Every experiment must reach every
threshold: a matrix gates the configurations it lists, so a variant below the line fails the run,
named with its id, its configuration, the value it got and by how much it missed. An experiment that
failed to run misses every threshold. No threshold: the gate passes.
"""
from __future__ import annotations

from typing import Any, Iterable

from ..errors import UsageError
from ..measures import Measure, parse_at_k


def parse_thresholds(values: Iterable[str], cutoffs: tuple[int, ...] | None = None) -> list[tuple[Measure, float]]:
    """``["hit_rate@5=0.85", "found@10=0.9"]`` -> measures and shares; UsageError for anything else."""
    rules = []
    for value in values:
        name, equals, number = value.strip().partition("=")
        if not equals:
            raise UsageError(f'--fail-under "{value}" is not METRIC=VALUE, such as hit_rate@5=0.85')
        measure = parse_at_k(name, cutoffs)
        try:
            share = float(number)
        except ValueError:
            raise UsageError(f'--fail-under "{value}": "{number}" is not a number; write a share from 0 to 1, '
                             "such as 0.85") from None
        if not 0 <= share <= 1:
            raise UsageError(f'--fail-under "{value}": {measure} is a share from 0 to 1, so {share:g} can never be '
                             f"met{f'; write {share / 100:g} for {share:g}%' if 2 <= share <= 100 else ''}")
        rules.append((measure, share))
    return rules


def gate(report: dict[str, Any], rules: list[tuple[Measure, float]]) -> dict[str, Any]:
    """``{"thresholds", "missed", "passed"}``; each missed entry names the experiment and the shortfall."""
    missed = []
    for measure, wanted in rules:
        for x in report["experiments"]:
            got = measure.at_k_of(x["metrics"])
            if got is None or got < wanted:
                missed.append({"metric": str(measure), "threshold": wanted, "experiment": x["id"],
                               "chunking": x["chunking"], "embedder": x["embedder"], "method": x["method"],
                               "value": got, "short_by": None if got is None else round(wanted - got, 4)})
    return {"thresholds": [{"metric": str(m), "threshold": v} for m, v in rules], "missed": missed,
            "passed": not missed}


def missed_sentences(report: dict[str, Any]) -> list[str]:
    """One line per threshold an experiment missed, for the command line."""
    lines = []
    for miss in report["gate"]["missed"]:
        what = f"{miss['chunking']} {miss['method']}{' ' + miss['embedder'] if miss['embedder'] else ''}"
        if miss["value"] is None:
            lines.append(f"{miss['metric']} >= {miss['threshold']:g}: experiment {miss['experiment'][:12]} ({what}) "
                         "did not run")
        else:
            lines.append(f"{miss['metric']} of experiment {miss['experiment'][:12]} ({what}) is {miss['value']:.4g}, "
                         f"under {miss['threshold']:g} by {miss['short_by']:.4g}")
    return lines
