"""``chunking_choice``: keep the build in use unless the best beats it beyond luck.

Every switch of chunker re-cuts and re-embeds every document, so the bar is the paired test the picks
already use: over the questions only one of the two builds got right, the exact two-sided sign test
(``scoring.significance.exact_binary_p``, the exact McNemar test). The build in use stays when it was
built in this run too and that split could be luck (p > ``alpha``); otherwise the run's best is picked.
"""
from __future__ import annotations

from typing import Any, Sequence

from ..errors import WrongValueError
from ..scoring.significance import exact_binary_p
from .results import BuildResult, ranked
from .settings import ALPHA


def split(a: BuildResult, b: BuildResult) -> tuple[int, int]:
    """(questions only ``a`` got right, questions only ``b`` got right), over the questions both asked."""
    shared = a.outcomes.keys() & b.outcomes.keys()
    only_a = sum(1 for q in shared if a.outcomes[q] and not b.outcomes[q])
    only_b = sum(1 for q in shared if b.outcomes[q] and not a.outcomes[q])
    return only_a, only_b


def best_words(order: Sequence[BuildResult]) -> str:
    """Why the first of ``order`` (``ranked``) is the best, by what decided: "X got the most right (14 of 14)"
    when no other build got as many; else that it got as many as the others and what put it first (fewer
    chunks, or its key when the chunks are as many too)."""
    best = order[0]
    level = [r for r in order[1:] if r.right == best.right]
    if not level:
        return f"{best.key} got the most right ({best.right} of {best.questions})"
    if len(level) == len(order) - 1:
        every = "as every build did" if len(level) > 1 else "as the other build did"
    else:
        every = f"as {len(level)} other build{'s' if len(level) > 1 else ''} did"
    fewer = [r for r in level if r.chunks > best.chunks]
    same = [r for r in level if r.chunks == best.chunks]
    said = f"{best.key} got {best.right} of {best.questions} right, {every}"
    if fewer:
        next_fewest = min(r.chunks for r in fewer)
        said += f"; it makes the fewest chunks of them ({best.chunks} against {next_fewest} or more)"
    if same:
        said += (f"; {', '.join(r.key for r in same)} make{'s' if len(same) == 1 else ''} as many chunks "
                 f"({best.chunks}) and come{'s' if len(same) == 1 else ''} after it by key")
    return said


def chunking_choice(results: Sequence[BuildResult], current: str | None = None, *,
                    alpha: float = ALPHA) -> dict[str, Any]:
    """``{"pick", "switch", "why", "best", "p", "best_only", "current_only"}`` for the builds of one run.

    ``results`` are the builds as made, with their outcomes (``run_chunking_build``, ``run_builds``); a
    report's ``builds`` hold counts only, and are refused with a ``WrongValueError`` saying so."""
    results = list(results)
    odd = next((r for r in results if not isinstance(r, BuildResult)), None)
    if odd is not None:
        raise WrongValueError(f"chunking_choice compares builds question by question, so it takes the builds as made "
                              f"(run_chunking_build's BuildResult, with outcomes), not {type(odd).__name__}: a report "
                              "keeps counts only")
    order = ranked(results)
    if not order:
        return {"pick": current, "switch": False, "best": None, "p": None, "best_only": None, "current_only": None,
                "why": "no build was made, so there is nothing to choose from"}
    best = order[0]
    answer: dict[str, Any] = {"best": best.key, "p": None, "best_only": None, "current_only": None}
    if current is None:
        return {**answer, "pick": best.key, "switch": False,
                "why": f"{best_words(order)}; no build in use was named"}
    by_key = {r.key: r for r in results}
    if current not in by_key:
        return {**answer, "pick": best.key, "switch": True,
                "why": f"{current}, the build in use, was not built in this run, so it cannot be compared; "
                       f"{best_words(order)}"}
    if current == best.key:
        return {**answer, "pick": current, "switch": False, "p": 1.0, "best_only": 0, "current_only": 0,
                "why": f"{current} is the build in use, and {best_words(order)}"}
    best_only, current_only = split(best, by_key[current])
    p = exact_binary_p(best_only, current_only)
    answer.update(p=round(p, 6), best_only=best_only, current_only=current_only)
    if p > alpha:
        return {**answer, "pick": current, "switch": False,
                "why": f"{best.key} got {best_only} questions right that {current} missed and missed {current_only} it "
                       f"got, a split luck gives with p = {p:.3g} (over {alpha:g}); keep {current}: a switch re-cuts "
                       "and re-embeds every document"}
    return {**answer, "pick": best.key, "switch": True,
            "why": f"{best.key} got {best_only} questions right that {current} missed and missed {current_only} it "
                   f"got; "
                   f"luck gives a split like that with p = {p:.3g} (at most {alpha:g}), so switch"}
