"""What every section reads, worked out once per page: the report, its setups split into ran, failed and
stopped by the race,
the picks by setup key, the collection's name, the history points, the question texts allowed, and the
collection's latest chunking and matrix runs (ids and numbers only) for the Chunking tab.

A section is a function ``Page -> str`` (its HTML, or "" to leave itself out), so a section added by a
later tab (see ``tabs``) reads the same facts without a second pass over the report.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from ...store.run_report import RunReport
from ...store.report_parts import SetupResult
from ..trend import trend_point

# Each pick's report key, its card's title, and the words its badge and the chart's ring use.
PICKS = (("finds_the_most", "Finds the most", "finds the most"),
         ("best_for_balance", "Best for balance", "best for balance"),
         ("best_for_time", "Best for time", "best for time"))


@dataclass(frozen=True)
class Page:
    """One report as the sections read it. ``ran`` is in rank order (unranked last, then by key)."""

    report: RunReport
    setups: list[SetupResult]
    ran: list[SetupResult]
    failed: list[SetupResult]
    picks: dict[str, list[str]]
    collection: str
    points: list[dict[str, Any]]
    questions: Mapping[str, str] | None
    chunking: dict[str, Any] | None = None  # the collection's latest chunking run (kind "chunking"), for its tab
    matrix: dict[str, Any] | None = None  # its latest matrix run (kind "matrix"), shown in the same tab
    sweep: dict[str, Any] | None = None  # its latest sweep (kind "sweep"), shown in the same tab
    stopped: list[SetupResult] | None = None  # setups the race stopped (``stopped``): never ranked, said so

    @property
    def refused(self) -> bool:
        """The run never started (``report.refused``): the page says why, and nothing else."""
        return self.report.refused is not None


def page_of(report: RunReport, *, history: Sequence[dict[str, Any]] | None = None,
            questions: Mapping[str, str] | None = None, chunking: dict[str, Any] | None = None,
            matrix: dict[str, Any] | None = None, sweep: dict[str, Any] | None = None) -> Page:
    """The facts of ``report`` every section reads (``history``, ``questions``, ``chunking``, ``matrix`` and
    ``sweep`` as ``render_html`` takes them)."""
    setups = list(report.setups)
    ran = sorted((s for s in setups if s.summary is not None), key=lambda s: (s.rank is None, s.rank or 0, s.key))
    stopped = [s for s in setups if s.summary is None and s.stopped is not None]
    failed = [s for s in setups if s.summary is None and s.stopped is None]
    return Page(report=report, setups=setups, ran=ran, failed=failed, picks=picks_by_key(report),
                collection=collection_name(report), points=list(history) if history else [trend_point(report)],
                questions=questions, chunking=chunking, matrix=matrix, sweep=sweep, stopped=stopped)


def collection_name(report: RunReport) -> str:
    names = report.collections
    return ", ".join(names) if names else "this collection"


def picks_by_key(report: RunReport) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for name, _label, words in PICKS:
        key = report.picks.get(name)
        if key:
            found.setdefault(key, []).append(words)
    return found
