"""What a kept chunking, sweep or matrix run must hold before anything reads it: every field its readers use.

The readers are the run's text (``report.builds.text.compare_text``, ``sweep_text``, ``sweep_markdown``,
``matrix_text``), its HTML (``chunking_section``, ``sweep_section``, ``matrix_section`` in the
run page's Chunking tab and the Evaluate page) and the rows of ``chunking runs list``. They read the
fields below without a default, or with a default only for an absent field (``report.get("techniques",
[])`` still fails on ``null``), so ``ChunkingRuns.get`` checks each kept report here first, as
``RunStore.get`` checks a retrieval report with ``shape``: a damaged run is one sentence naming the
field, passed over by the lists and the tab, never a ``TypeError`` in a page. Unknown fields are
allowed (a later version may add some); fields only some versions write are checked when present.
"""
from __future__ import annotations

from typing import Any

from ..errors import shown
from ..measures import AT_K_KEYS, MRR, NDCG_10
from .checks import (Bad, count, dict_of, field, flag, list_of, number, obj, optional, optional_field, positive,
                     problem, share, text)



def chunking_report_problem(report: Any) -> str | None:
    """The first field of a kept chunking, sweep or matrix report a reader could not use, as a sentence
    naming it; None when every field is usable. The kind itself is the caller's to check."""
    return problem(_kept, report, "the report")


def _kept(report: Any, path: str) -> None:
    obj(report, path)
    field(report, "id", text)
    optional_field(report, "created_at", optional(text))
    optional_field(report, "seconds", number)
    {"chunking": _chunking, "sweep": _sweep, "matrix": _matrix}[field(report, "kind", _kind)](report)


def _kind(value: Any, path: str) -> str:
    if value not in ("chunking", "sweep", "matrix"):
        raise Bad(f"{path} is {shown(value)}, not chunking, sweep or matrix")
    return value


def _vectors(report: dict) -> None:
    vectors = optional_field(report, "vectors", obj)
    if vectors is not None:
        optional_field(vectors, "share_from_cache", share, "vectors")
        for name in ("vectors_cached", "vectors_shared", "vectors_computed"):
            optional_field(vectors, name, count, "vectors")


def _failed(report: dict) -> None:
    for n, failed in enumerate(optional_field(report, "failed", list_of(obj)) or []):
        field(failed, "build", text, f"failed[{n}]")
        field(failed, "error", text, f"failed[{n}]")


# -- compare_chunking's runs ------------------------------------------------------------------------

def _chunking(report: dict) -> None:
    golden = field(report, "golden", obj)
    field(golden, "scored", count, "golden")
    optional_field(golden, "questions", optional(count), "golden")
    field(report, "budget", positive)
    optional_field(report, "scored", text)
    optional_field(report, "scored_note", text)
    for n, technique in enumerate(optional_field(report, "techniques", list_of(obj)) or []):
        where = f"techniques[{n}]"
        for name in ("name", "build"):
            field(technique, name, text, where)
        for name in ("right", "questions", "chunks"):
            field(technique, name, count, where)
        for name in ("best", "tie"):
            optional_field(technique, name, flag, where)
        against = optional_field(technique, "against_best", optional(obj), where)
        if against:
            for name in ("best_only", "this_only"):
                field(against, name, count, f"{where}.against_best")
            field(against, "p_holm", share, f"{where}.against_best")
    pick = optional_field(report, "pick", optional(obj))
    if pick:
        optional_field(pick, "pick", optional(text), "pick")
        optional_field(pick, "why", text, "pick")
        optional_field(pick, "switch", flag, "pick")
    optional_field(report, "ties", optional(list_of(text)))
    for n, skipped in enumerate(optional_field(report, "skipped", optional(list_of(obj))) or []):
        field(skipped, "what", text, f"skipped[{n}]")
        field(skipped, "reason", text, f"skipped[{n}]")
    _failed(report)
    _vectors(report)
    for n, build in enumerate(optional_field(report, "builds", list_of(obj)) or []):
        where = f"builds[{n}]"
        field(build, "key", text, where)
        for name in ("rank", "right", "questions", "chunks"):
            field(build, name, count, where)
        field(build, "seconds", number, where)
    for n, stopped in enumerate(optional_field(report, "stopped", list_of(obj)) or []):  # the race's (builds.race)
        for name in ("build", "words"):
            field(stopped, name, text, f"stopped[{n}]")


# -- sweep's runs -----------------------------------------------------------------------------------

def _sweep(report: dict) -> None:
    cutoffs = [str(k) for k in field(report, "k", list_of(positive))]
    field(report, "questions", count)
    field(report, "rule", text)
    optional_field(report, "best", optional(text))
    optional_field(report, "by", text)
    golden = optional_field(report, "golden", optional(obj))
    if golden:
        optional_field(golden, "questions", optional(count), "golden")
    for n, row in enumerate(field(report, "rows", list_of(obj))):
        where = f"rows[{n}]"
        for name in ("build", "method"):
            field(row, name, text, where)
        optional_field(row, "key", text, where)
        stopped = optional_field(row, "stopped", obj, where)
        if stopped is not None:  # the race stopped it (builds.race): no rank, and why in words
            field(stopped, "words", text, f"{where}.stopped")
        field(row, "rank", optional(count) if stopped is not None else count, where)
        for name in ("questions", "chunks"):
            field(row, name, count, where)
        for measure in (NDCG_10, MRR):
            field(row, measure.summary_path[0], share, where)
        field(row, "build_seconds", number, where)
        field(row, "median_ms", optional(number), where)
        _at_every(field(row, "counts", dict_of(count), where), cutoffs, f"{where}.counts")
        _at_every(field(row, "recall", dict_of(share), where), cutoffs, f"{where}.recall")
    _failed(report)
    _vectors(report)


def _at_every(values: dict, cutoffs: list[str], path: str) -> None:
    missing = [k for k in cutoffs if k not in values]
    if missing:
        raise Bad(f"{path} needs every k the run names ({', '.join(cutoffs)}); {missing[0]} is missing")


# -- run_matrix's runs ------------------------------------------------------------------------------

def _matrix(report: dict) -> None:
    cutoffs = [str(k) for k in field(report, "top_k", list_of(positive))]
    if not cutoffs:
        raise Bad("top_k is an empty list, not the cut-offs the experiments were scored at")
    field(report, "by", text)
    queries = field(report, "queries", obj)
    field(queries, "questions", count, "queries")
    field(queries, "format", text, "queries")
    field(field(report, "labels", obj), "said", text, "labels")
    for n, embedder in enumerate(field(report, "embedders", list_of(obj))):
        for name in ("name", "model"):
            field(embedder, name, text, f"embedders[{n}]")
        field(embedder, "real_model", flag, f"embedders[{n}]")
    optional_field(report, "variants", list_of(obj))
    ids = []
    for n, experiment in enumerate(field(report, "experiments", list_of(obj))):
        where = f"experiments[{n}]"
        ids.append(field(experiment, "id", text, where))
        for name in ("chunking", "method", "judged_by"):
            field(experiment, name, text, where)
        field(experiment, "embedder", optional(text), where)
        optional_field(experiment, "error", optional(text), where)
        stopped = optional_field(experiment, "stopped", obj, where)
        if stopped is not None:  # the race stopped it (builds.race): why in words
            field(stopped, "words", text, f"{where}.stopped")
        metrics = field(experiment, "metrics", optional(obj), where)
        if metrics is not None:
            _at_every(metrics, cutoffs, f"{where}.metrics")
            for k in cutoffs:
                at_k = field(metrics, k, obj, f"{where}.metrics")
                for name in AT_K_KEYS:
                    field(at_k, name, share, f"{where}.metrics.{k}")
    gate = field(report, "gate", obj)
    field(gate, "thresholds", list_of(obj), "gate")
    field(gate, "passed", flag, "gate")
    for n, missed in enumerate(field(gate, "missed", list_of(obj), "gate")):
        where = f"gate.missed[{n}]"
        field(missed, "metric", text, where)
        field(missed, "experiment", text, where)
        field(missed, "threshold", number, where)
        field(missed, "value", optional(number), where)
