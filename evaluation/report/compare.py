"""Two runs side by side: which questions got worse or better per setup, and whether it is more than noise.

``compare_reports(baseline, current)`` pairs the runs on the questions they share and each setup with
the same key in both. A question is shared when its id and the sha256 of its text are the same in
both reports (so a question reworded under the same id is a new question). A report that kept the
question's text rather than its hash reads with its hash (``store.run_report``); reports with neither are
matched by id only, and the comparison says so. A shared question whose ``expected`` changed is still compared, and
listed under ``relabelled``: its differences may be the labels', not the setup's.

Per setup: found@10 before and after, the paired difference with its interval and exact p-value,
MRR and nDCG@10 the same way (see ``scoring.comparison``), Holm-corrected across the setups compared,
and each question whose first relevant result moved (``worse``, ``better``). A setup the race stopped
in either run is compared on the shared questions it searched in both (``stopped_in`` says which run),
so a costly setup that got much worse is still caught, on fewer questions. A setup *regressed* when
its found@10 is lower than the baseline's with a Holm-adjusted p-value at or under ``alpha``;
``regressions`` gives one sentence for each, which is what ``--fail-on-regression`` fails on.

Runs whose positions mean different things are refused, never compared: judged at another grain,
reading a rank another way (among results, among documents) or counting relevance from another grade.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

from ..errors import UsageError, printable_texts
from ..measures import FOUND_10, MRR
from ..scoring.comparison import SignificanceSettings, correct_for_many, paired
from ..settings import DEFAULT_RANK_AMONG
from ..store.run_report import RunReport
from ..store.report_parts import SetupResult


@dataclass(frozen=True)
class Reading:
    """What a run's positions mean: the grain they are judged at (``by``), what a rank counts among
    (``rank_among``: results, or documents) and the grade from which a unit is relevant (``min_grade``).
    Two runs are compared only when their readings agree (``differing_readings``)."""

    by: str | None  # None: a kept report that did not say (compared only with another that did not)
    rank_among: str
    min_grade: int

    @classmethod
    def of(cls, report: RunReport) -> Reading:
        """A kept run's reading; one made before ranks were read two ways read among results."""
        return cls(by=report.by, rank_among=report.rules.rank_among or DEFAULT_RANK_AMONG,
                   min_grade=report.rules.min_grade)


def differing_readings(before: Reading, after: Reading) -> list[str]:
    """The fields of ``Reading`` (in its order) in which two runs differ so that their positions cannot be
    compared. At the chunk grain both ways of ranking are one, so ``rank_among`` counts only when either
    run judged documents. The one statement of the rule: ``compare_reports`` refuses such runs, and
    ``evaluate --baseline`` refuses to start a run that would be one."""
    differ = [name for name in ("by", "rank_among", "min_grade") if getattr(before, name) != getattr(after, name)]
    if before.by == after.by == "chunk" and "rank_among" in differ:
        differ.remove("rank_among")
    return differ


def _identities(report: RunReport) -> tuple[dict[str, dict[str, Any]], bool]:
    """Question id -> {sha256, expected}, and whether every question has a text hash."""
    found = {row.id: {"sha256": row.sha256, "expected": list(row.expected)} for row in report.questions}
    return found, all(row.sha256 is not None for row in report.questions)


def shared_questions(baseline: RunReport, current: RunReport) -> dict[str, Any]:
    """The questions two reports share, in the current run's order, and how they were matched."""
    before, before_hashed = _identities(baseline)
    after, after_hashed = _identities(current)
    by_hash = before_hashed and after_hashed
    shared = [q for q in after if q in before and (not by_hash or before[q]["sha256"] == after[q]["sha256"])]
    reworded = [q for q in after if q in before and q not in shared]
    return {
        "matched_by": "id and text hash" if by_hash else "id only",
        "ids": shared,
        "only_in_baseline": len([q for q in before if q not in shared]),
        "only_in_current": len([q for q in after if q not in shared]),
        "reworded": reworded,
        "relabelled": [q for q in shared if sorted(before[q]["expected"]) != sorted(after[q]["expected"])],
    }


def compare_reports(baseline: RunReport | Mapping[str, Any], current: RunReport | Mapping[str, Any], *,
                    alpha: float = 0.05, resamples: int = 10_000, seed: int | None = None) -> dict[str, Any]:
    """``current`` against ``baseline``, setup by setup, on their shared questions (see the module docstring);
    each the model, or a report's JSON read into it once (``RunReport.of``).

    ``seed`` defaults to the current run's. Raises ``UsageError`` when the runs judged at different
    grains, read ranks differently or count relevance from different grades (``refuse_other_rules``):
    their positions do not mean the same thing.
    """
    baseline, current = RunReport.of(baseline), RunReport.of(current)
    refuse_other_rules(baseline, current)
    if seed is None:
        seed = current.rules.seed or 0
    settings = SignificanceSettings(alpha=alpha, resamples=resamples, seed=seed)
    questions = shared_questions(baseline, current)
    ids = questions["ids"]
    before = {s.key: s for s in baseline.setups}
    after = {s.key: s for s in current.setups}
    not_compared: dict[str, str] = {}
    results: dict[str, dict[str, Any]] = {}
    compared: dict[str, list[str]] = {}
    for key in [*after, *(k for k in before if k not in after)]:
        reason = _why_not(before.get(key), after.get(key), _searched_in_both(before.get(key), after.get(key), ids))
        if reason:
            not_compared[key] = reason
            continue
        compared[key] = _searched_in_both(before[key], after[key], ids)
        results[key] = paired(before[key].values, after[key].values, compared[key], settings)  # the entries as kept
    correct_for_many(results, settings)
    setups = {}
    for key, result in results.items():
        found = result["found@10"]
        significant = found["p_holm"] <= alpha
        mine = compared[key]
        setups[key] = {
            "baseline": _counts(before[key], mine), "current": _counts(after[key], mine), **result,
            "regressed": significant and found["worse"] > found["better"],
            "improved": significant and found["better"] > found["worse"],
            **_moves(before[key].ranks or {}, after[key].ranks or {}, mine),
            # a setup the race stopped in either run is compared on the shared questions it searched in both
            **({"stopped_in": [name for name, s in (("baseline", before[key]), ("current", after[key]))
                               if s.stopped is not None]}
               if len(mine) < len(ids) else {}),
        }
    return {
        "baseline": _identity(baseline), "current": _identity(current),
        # `compare latest latest`, or one id twice: every difference is 0 by construction, so say so
        "same_run": baseline.id is not None and baseline.id == current.id,
        "questions": {**questions, "shared": len(ids)},
        "significance": settings.describe(),
        "setups": setups,
        "not_compared": not_compared,
    }


def refuse_other_rules(baseline: RunReport, current: RunReport) -> None:
    """``UsageError`` when the runs' positions mean different things (``differing_readings``): judged at
    different grains, reading a rank differently (among results, among documents: a document's later chunks
    take places in one and not the other, so every setup would seem to move) or counting relevance from
    another grade (found@10 counts other documents)."""
    before, after = Reading.of(baseline), Reading.of(current)
    differ = differing_readings(before, after)
    names = f"run {baseline.id} and run {current.id}"
    if "by" in differ:
        raise UsageError(f"run {baseline.id} was judged by {before.by} and run {current.id} "
                         f"by {after.by}; positions at different grains cannot be compared: "
                         "compare runs made with the same --by")
    if "rank_among" in differ:
        raise UsageError(f"{names} read ranks differently (among {before.rank_among}, among {after.rank_among}): "
                         "a document's later chunks take up places in one and not in the other, so every setup "
                         f"would seem to move; run {current.id}'s golden file again with --rank-among "
                         f"{before.rank_among}, then compare")
    if "min_grade" in differ:
        raise UsageError(f"{names} count relevance from different grades ({before.min_grade} and "
                         f"{after.min_grade}), so found@10 counts other documents in each; run {current.id}'s "
                         f"golden file again with --min-grade {before.min_grade}, then compare")


def regressions(comparison: Mapping[str, Any]) -> list[str]:
    """A sentence for each setup whose found@10 is significantly lower than in the baseline."""
    comparison = printable_texts(comparison)  # setup keys and ids from two kept reports
    out = []
    for key, setup in comparison["setups"].items():
        if setup["regressed"]:
            found = setup["found@10"]
            out.append(f"{key}: found@10 {setup['baseline']['found@10']} -> {setup['current']['found@10']} of "
                       f"{setup['questions']} shared questions ({found['worse']} lost, {found['better']} gained; "
                       f"p {found['p_holm']:.2g} after Holm, alpha {comparison['significance']['alpha']:g})")
    return out


def _identity(report: RunReport) -> dict[str, Any]:
    return {"id": report.id, "created_at": report.created_at, "golden_sha256": report.golden.sha256}


def _why_not(before: SetupResult | None, after: SetupResult | None, ids: list[str]) -> str | None:
    if before is None:
        return "only in the current run"
    if after is None:
        return "only in the baseline run"
    failed = [name for name, s in (("baseline", before), ("current", after))
              if s.error or not (s.summary is not None or s.stopped is not None)]
    if failed:
        return f"failed in the {' and '.join(failed)} run"
    unranked = [name for name, s in (("baseline", before), ("current", after)) if s.ranks is None]
    if unranked:  # a report older than per-question ranks, or edited: nothing to pair question by question
        return f"the {' and '.join(unranked)} run kept no per-question ranks"
    if not ids:
        return "no shared question"
    return None


def _searched_in_both(before: SetupResult | None, after: SetupResult | None, ids: list[str]) -> list[str]:
    """The shared questions both entries searched: all of them, but for a setup the race stopped (its
    ``stopped`` names the questions it searched before it stopped)."""
    kept = ids
    for entry in (before, after):
        if entry is not None and entry.stopped is not None:
            searched = set(entry.stopped.questions)
            kept = [q for q in kept if q in searched]
    return kept


def _counts(entry: SetupResult, ids: list[str]) -> dict[str, Any]:
    places = [place for q in ids if (place := (entry.ranks or {}).get(q))]
    return {FOUND_10.versus_key: sum(1 for place in places if place <= 10),
            MRR.versus_key: round(sum(1 / place for place in places) / len(ids), 4) if ids else 0.0}


def _moves(before: Mapping[str, int | None], after: Mapping[str, int | None], ids: list[str]) -> dict[str, list]:
    """Questions whose first relevant result moved down or was lost (``worse``), or moved up (``better``)."""
    worse: list[dict[str, Any]] = []
    better: list[dict[str, Any]] = []
    for q in ids:
        old, new = before.get(q), after.get(q)
        if old == new:
            continue
        lost = new is None or (old is not None and new > old)
        (worse if lost else better).append({"id": q, "before": old, "after": new})
    return {"worse": worse, "better": better}


def render_comparison(comparison: Mapping[str, Any]) -> str:
    """The comparison for a person: what was shared, a row per setup, the questions that moved; every text
    from the two kept reports printable (``errors.printable_texts``)."""
    comparison = printable_texts(comparison)
    base, cur, questions = comparison["baseline"], comparison["current"], comparison["questions"]
    significance = comparison["significance"]
    if comparison.get("same_run"):
        return (f"Run {cur['id']} is compared with itself, so nothing can differ; name two runs (`runs list` "
                "shows them; `latest` is the newest), e.g. compare <older id> latest")
    out = [f"Run {cur['id']} against baseline {base['id']}: {questions['shared']} shared question(s), matched by "
           f"{questions['matched_by']}; {questions['only_in_baseline']} only in the baseline, "
           f"{questions['only_in_current']} only in this run."]
    if questions["matched_by"] == "id only":
        out.append("  (a report here keeps no question text or hash: questions with the same id are taken as the same)")
    if base["golden_sha256"] != cur["golden_sha256"]:
        out.append(
            f"  The golden files differ ({str(base['golden_sha256'])[:12]} -> {str(cur['golden_sha256'])[:12]})."
        )
    if questions["reworded"]:
        out.append(f"  Reworded under the same id, so not shared: {', '.join(questions['reworded'])}")
    if questions["relabelled"]:
        out.append(f"  Expected documents changed for: {', '.join(questions['relabelled'])} "
                   "(their differences may be the labels')")
    if not questions["shared"]:
        out.append("No question is shared, so nothing can be compared: the runs were made on different golden files.")
    if comparison["setups"]:
        header = ["setup", str(FOUND_10), "diff", "p", str(MRR), f"{MRR} diff [interval]", "worse", "better"]
        rows = []
        for key, s in comparison["setups"].items():
            found, mrr = s[FOUND_10.versus_key], s[MRR.versus_key]
            mark = " regressed" if s["regressed"] else " improved" if s["improved"] else ""
            rows.append([key, f"{s['baseline'][FOUND_10.versus_key]} -> {s['current'][FOUND_10.versus_key]}",
                         f"{found['better'] - found['worse']:+d}", f"{found['p_holm']:.2g}{mark}",
                         f"{s['baseline'][MRR.versus_key]:.3f} -> {s['current'][MRR.versus_key]:.3f}",
                         f"{mrr['difference']:+.3f} [{mrr['interval'][0]:+.3f}, {mrr['interval'][1]:+.3f}]",
                         str(len(s["worse"])), str(len(s["better"]))])
        widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
        out.append("")
        out += ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in [header, *rows]]
        out.append(f"(p: paired exact test on found@10, Holm-corrected across setups; alpha {significance['alpha']:g}; "
                   f"MRR intervals {significance['interval'] * 100:g}% paired bootstrap)")
        for key, s in comparison["setups"].items():
            if s.get("stopped_in"):  # its row counts fewer questions than the others': said, never silent
                out.append(f"  {key}: stopped by the race in the {' and '.join(s['stopped_in'])} run, so compared on "
                           f"the {s['questions']} shared questions it searched in both")
        for key, s in comparison["setups"].items():
            for word in ("worse", "better"):
                if s[word]:
                    moved = ", ".join(
                        f"{m['id']} ({_position(m['before'])} -> {_position(m['after'])})" for m in s[word]
                    )
                    out.append(f"  {key} {word}: {moved}")
    for key, reason in comparison["not_compared"].items():
        out.append(f"  {key}: not compared ({reason})")
    found = regressions(comparison)
    out.append("")
    out.append("Regressions (found@10 significantly lower): " + ("none" if not found else ""))
    out += [f"  {sentence}" for sentence in found]
    return "\n".join(out)


def _position(rank: int | None) -> str:
    return "not found" if rank is None else str(rank)
