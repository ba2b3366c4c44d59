"""Is a difference between two setups more than noise? Paired comparisons on the same questions.

Per question, from a report entry:

- found@10: 1 when ``ranks[id]`` (the position of the first relevant result) is 10 or better, else 0;
- reciprocal rank: ``1 / ranks[id]``, 0 when nothing relevant came back (MRR is its mean);
- nDCG@10: ``ndcg_10[id]`` as ``run_setup`` kept it (it needs every relevant position, which the
  ranks alone do not hold; entries made before it was kept have no nDCG comparison).

``paired`` compares one setup with a reference on the questions both ran: the difference of the
means (other minus reference), its bootstrap interval, and a two-sided p-value (exact for found@10,
sign-flip permutation for the others; see ``significance``). ``versus`` compares many setups with
one reference and applies Holm's correction across them, metric by metric. A setup whose found@10
differs from the reference's with a Holm-adjusted p-value over ``alpha`` is *tied* with it within
noise; at ``alpha`` or under, the difference is significant. A tie is no evidence that nothing is
lost: with few questions the test cannot tell a difference of several questions, so each found@10
comparison also says how many questions the same exact test would need to tell a difference of the
size seen (``questions_to_tell``, see ``significance``; None when both found as many), at the level
Holm holds that comparison to (``alpha`` over its Holm factor), so the number is the corrected test's.

Randomness comes from ``numpy.random.default_rng([seed, 0])`` (bootstrap) and ``[seed, 1]`` (sign
flips), made afresh for every pair: a pair's numbers depend on the seed and the two setups only,
never on which other setups ran or in what order.
"""
from __future__ import annotations

from typing import Any, Mapping, Sequence

import numpy as np

from ..measures import FOUND_10, MRR, NDCG_10
from ..settings import SignificanceSettings
from .metrics import median_ms
from .significance import (exact_binary_p, holm, holm_factors, paired_bootstrap, paired_bootstraps,
                           questions_to_tell, sign_flip_p)

COMPARED = (FOUND_10, MRR, NDCG_10)  # the measures two setups are compared on, question by question
METRICS = tuple(m.versus_key for m in COMPARED)  # "found@10", "mrr", "ndcg_10": the report's keys
TIE_METRIC = FOUND_10.versus_key  # the metric the picks are made on


def question_values(entry: Mapping[str, Any], question_ids: Sequence[str]) -> dict[str, np.ndarray | None]:
    """Per-question found@10, reciprocal rank and nDCG@10 of ``entry``, in ``question_ids`` order."""
    ranks = entry.get("ranks") or {}
    first = np.array([ranks.get(q) or 0 for q in question_ids], dtype=np.float64)
    depth = FOUND_10.cutoff
    assert depth is not None, "found@10 is found at a cut-off"
    found = ((first > 0) & (first <= depth)).astype(np.float64)
    rr = np.divide(1.0, first, out=np.zeros_like(first), where=first > 0)
    kept = entry.get(NDCG_10.versus_key)  # the entry's per-question nDCG@10, under the summary's name
    ndcg = None
    if isinstance(kept, Mapping) and all(q in kept for q in question_ids):
        ndcg = np.array([kept[q] for q in question_ids], dtype=np.float64)
    return {FOUND_10.versus_key: found, MRR.versus_key: rr, NDCG_10.versus_key: ndcg}


def paired(reference: Mapping[str, Any], other: Mapping[str, Any], question_ids: Sequence[str],
           settings: SignificanceSettings) -> dict[str, Any]:
    """``other`` against ``reference`` on ``question_ids``: per metric the difference of means (other minus
    reference), its interval and p-value; for found@10 also how many questions each found alone."""
    metrics, differences = _differences(reference, other, question_ids)
    intervals = paired_bootstrap(differences, rng=np.random.default_rng([settings.seed, 0]),
                                 resamples=settings.resamples, level=settings.level)
    return _paired_result(metrics, differences, intervals, settings)


def _differences(reference: Mapping[str, Any], other: Mapping[str, Any],
                 question_ids: Sequence[str]) -> tuple[list[str], np.ndarray]:
    """The metrics both entries have, and the (questions x metrics) differences, other minus reference."""
    mine, theirs = question_values(other, question_ids), question_values(reference, question_ids)
    both = {m: (a, b) for m in METRICS if (a := mine[m]) is not None and (b := theirs[m]) is not None}
    metrics = list(both)
    if not question_ids:
        return metrics, np.zeros((0, len(metrics)))
    return metrics, np.column_stack([a - b for a, b in both.values()])


def _paired_result(metrics: Sequence[str], differences: np.ndarray, intervals: np.ndarray,
                   settings: SignificanceSettings) -> dict[str, Any]:
    """``paired``'s answer from the differences and their bootstrap intervals (one row per metric)."""
    n = differences.shape[0]
    flips = np.random.default_rng([settings.seed, 1])
    out: dict[str, Any] = {"questions": n}
    for column, metric in enumerate(metrics):
        d = differences[:, column]
        result = {"difference": round(float(d.mean()) if n else 0.0, 6),
                  "interval": [round(float(v), 6) for v in intervals[column]]}
        if metric == TIE_METRIC:
            better, worse = int(np.count_nonzero(d > 0)), int(np.count_nonzero(d < 0))
            result.update(better=better, worse=worse, p=exact_binary_p(better, worse))
        else:
            result["p"] = sign_flip_p(d, rng=flips, resamples=settings.resamples)
        out[metric] = result
    for metric in METRICS:
        out.setdefault(metric, None)
    return out


def versus(reference: Mapping[str, Any], others: Sequence[Mapping[str, Any]], question_ids: Sequence[str],
           settings: SignificanceSettings) -> dict[str, dict[str, Any]]:
    """Each of ``others`` against ``reference`` (``paired``), Holm-corrected across them per metric.

    Each result gains ``p_holm`` per metric and ``tied``: True when found@10's Holm-adjusted p-value is
    over ``alpha`` (the questions are too few to tell the difference from luck; ``p_holm <= alpha`` is
    significant).

    Exactly ``paired`` for each, with the bootstrap's resampled questions drawn once for them all
    (``paired_bootstraps``: each pair's generator is made afresh from the same seed, so every pair
    resamples the same questions; at 5,000 questions drawing them was a third of the bootstrap).
    """
    keys = [o["key"] for o in others if o["key"] != reference["key"]]
    pairs = [_differences(reference, o, question_ids) for o in others if o["key"] != reference["key"]]
    intervals = paired_bootstraps([d for _, d in pairs], rng_of=lambda: np.random.default_rng([settings.seed, 0]),
                                  resamples=settings.resamples, level=settings.level)
    results = {key: _paired_result(metrics, d, found, settings)
               for key, (metrics, d), found in zip(keys, pairs, intervals, strict=True)}
    return correct_for_many(results, settings)


def correct_for_many(results: dict[str, dict[str, Any]], settings: SignificanceSettings) -> dict[str, dict[str, Any]]:
    """Add ``p_holm`` per metric (Holm across ``results``, one family per metric) and ``tied`` to each of
    ``paired``'s results, in place; returns ``results``."""
    for metric in METRICS:
        keys = [k for k, r in results.items() if r[metric] is not None]
        p_values = [results[k][metric]["p"] for k in keys]
        for key, adjusted, factor in zip(keys, holm(p_values), holm_factors(p_values), strict=True):
            assert factor is not None, "every p-value here is a test's: Holm leaves none out"
            results[key][metric]["p_holm"] = adjusted
            if metric == TIE_METRIC:
                results[key][metric]["questions_to_tell"] = _to_tell(results[key][metric], results[key]["questions"],
                                                                     settings.alpha / factor)
    for result in results.values():
        result["tied"] = result[TIE_METRIC]["p_holm"] > settings.alpha
    return results


def compare_with_top(ranked: Sequence[dict[str, Any]], question_ids: Sequence[str],
                     settings: SignificanceSettings) -> None:
    """Set ``versus_top`` on every ranked entry: ``None`` on the top itself, else ``{"top", ...paired,
    "tied"}`` with Holm across every setup compared with the top."""
    if not ranked:
        return
    top = ranked[0]
    compared = versus(top, ranked[1:], question_ids, settings)
    top["versus_top"] = None
    for entry in ranked[1:]:
        entry["versus_top"] = {"top": top["key"], **compared[entry["key"]]}


def pick_ties(picks: Mapping[str, str | None], ranked: Sequence[dict[str, Any]], question_ids: Sequence[str],
              settings: SignificanceSettings) -> dict[str, dict[str, Any] | None]:
    """For each pick, the setups faster than it (lower median time) and whether each is tied with it.

    Every other setup that ran is compared with the pick (found@10, Holm across them all, as
    ``versus``); the faster ones are listed fastest first, each with its ``questions_to_tell``. ``tied``
    says whether the test cannot tell any of them from the pick and ``with`` names the fastest of
    those (None when none is).
    """
    by_key = {entry["key"]: entry for entry in ranked}
    ties: dict[str, dict[str, Any] | None] = {}
    for name, key in picks.items():
        if key is None:
            ties[name] = None
            continue
        pick = by_key[key]
        median = median_ms(pick)
        faster = sorted((e for e in ranked if median_ms(e) < median), key=lambda e: (median_ms(e), e["rank"]))
        compared = _found_versus(pick, ranked, question_ids, settings)
        rows = [{"key": e["key"], "median_ms": e["summary"]["median_ms"], **compared[e["key"]]} for e in faster]
        tied = [row["key"] for row in rows if row["tied"]]
        ties[name] = {"pick": key, "median_ms": pick["summary"]["median_ms"], "tied": bool(tied),
                      "with": tied[0] if tied else None, "faster": rows}
    return ties


def _found_versus(reference: Mapping[str, Any], others: Sequence[Mapping[str, Any]], question_ids: Sequence[str],
                  settings: SignificanceSettings) -> dict[str, dict[str, Any]]:
    """found@10 only (exact, no resampling): what ``pick_ties`` needs, for every other setup."""
    base = question_values(reference, question_ids)[TIE_METRIC]
    rows: dict[str, dict[str, Any]] = {}
    for other in others:
        if other["key"] == reference["key"]:
            continue
        found = question_values(other, question_ids)[TIE_METRIC]
        assert found is not None and base is not None, "found@10 is every entry's (only nDCG may be missing)"
        d = found - base
        better, worse = int(np.count_nonzero(d > 0)), int(np.count_nonzero(d < 0))
        rows[other["key"]] = {"difference": round(float(d.mean()) if len(d) else 0.0, 6), "better": better,
                              "worse": worse, "p": exact_binary_p(better, worse)}
    p_values = [row["p"] for row in rows.values()]
    for key, adjusted, factor in zip(rows, holm(p_values), holm_factors(p_values), strict=True):
        assert adjusted is not None and factor is not None, "every p-value here is a test's: Holm leaves none out"
        rows[key]["p_holm"] = adjusted
        rows[key]["tied"] = adjusted > settings.alpha
        rows[key]["questions_to_tell"] = _to_tell(rows[key], len(question_ids), settings.alpha / factor)
    return rows


def _to_tell(found: Mapping[str, Any], questions: int, alpha: float) -> int | None:
    """``questions_to_tell`` for a found@10 comparison, at the level Holm holds this one to."""
    return questions_to_tell(found["better"], found["worse"], questions, alpha) if questions else None
