"""A target that cannot be reached does not sink a run: its setups are reported failed with the reason,
the other targets' setups run, and the report says so at the top (issue 23).

Before, an Azure AI Search service that did not answer beside the embedded engine refused the whole run
after 15 s, though every embedded setup could have run. ``reachable_or_reported`` asks each target for
what a plan needs first (its setups and its description, which read the index definition); a target
that fails with a sentence (``EvaluationError``) or the network (``OSError``) is replaced by an
``UnreachableTarget`` carrying that sentence, as long as another target answered: a run with no target
at all is still refused, with the first reason. The failing setup is the rule a failing setup always
had: reported with its error, never picked.
"""
from __future__ import annotations

import logging
from typing import Any, Callable, Iterable, Sequence

from .errors import EvaluationError
from .target import Hit, Setup, Target

log = logging.getLogger(__name__)


class UnreachableTarget:
    """Stands in for a target that did not answer: one ``keyword`` setup (the one every index offers;
    the others need the index definition it could not read), whose every search fails with ``reason``."""

    def __init__(self, name: str, engine: str, reason: str, collection: str | None = None) -> None:
        self.name, self.engine, self.reason = name, engine, reason
        self.collection = collection or name

    def describe(self) -> dict[str, Any]:
        return {"name": self.name, "engine": self.engine, "collection": self.collection, "unreachable": self.reason}

    def setups(self) -> list[Setup]:
        return [Setup(self.name, self.engine, "keyword")]

    def search(self, setup: Setup, question: str, depth: int) -> list[Hit]:
        raise ConnectionError(f"target {self.name} could not be reached: {self.reason}")

    def search_batch(self, setup: Setup, questions: Sequence[str], depth: int) -> list[list[Hit]]:
        raise ConnectionError(f"target {self.name} could not be reached: {self.reason}")

    def holds(self, doc_ids: Iterable[str]) -> set[str]:
        return set(doc_ids)  # nothing is known missing from a target that never answered


def reachable_or_reported(targets: Sequence[Target], warn: Callable[[str], None] | None = None) -> list[Any]:
    """``targets`` with each one that fails before its first search replaced by an ``UnreachableTarget``
    (and a warning naming it), unless none answers: then the first failure is raised as it was."""
    warn = warn or log.warning
    checked: list[Target | UnreachableTarget] = []
    failures: list[Exception] = []
    for target in targets:
        try:
            target.setups()
            target.describe()
        except (EvaluationError, OSError) as err:
            failures.append(err)
            collection = getattr(getattr(target, "options", None), "index", None)
            checked.append(UnreachableTarget(target.name, str(getattr(target, "engine", "?")), str(err), collection))
            continue
        checked.append(target)
    if failures and len(failures) == len(checked):
        raise failures[0]
    for target in checked:
        if isinstance(target, UnreachableTarget):
            warn(f"target {target.name} could not be reached, so its setups are reported failed and the run goes on "
                 f"with the others: {target.reason}")
    return checked
