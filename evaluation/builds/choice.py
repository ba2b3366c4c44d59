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
                "why": f"{best.key} got the most right ({best.right} of {best.questions}); no build in use was named"}
    by_key = {r.key: r for r in results}
    if current not in by_key:
        return {**answer, "pick": best.key, "switch": True,
                "why": f"{current}, the build in use, was not built in this run, so it cannot be compared; "
                       f"{best.key} got the most right ({best.right} of {best.questions})"}
    if current == best.key:
        return {**answer, "pick": current, "switch": False, "p": 1.0, "best_only": 0, "current_only": 0,
                "why": f"{current}, the build in use, got the most right ({best.right} of {best.questions})"}
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
