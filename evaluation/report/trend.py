"""A report's history: the runs a store holds on the same golden file, each setup's found@10 run by run.

``trend_point`` keeps what the history needs from one report (its id, time, each setup's found@10
share, and each target's index state); ``collect_trend`` walks a store's runs back from a report and
returns the points of the runs made on the same golden file (same sha256), oldest first, the report
itself last. ``index_changes`` says between which two runs a target's index changed.

An index's state is the target's ``state`` (Azure AI Search: definition + document count + size) or
its ``fingerprint`` (the embedded engine: corpus bytes, chunking, models); a target that gives
neither is never marked as changed.
"""
from __future__ import annotations

from typing import Any, Sequence

from ..store.run_report import RunReport
from ..store.runs import RunStore

DEFAULT_RUNS = 12   # runs shown at most, the report's own included
DEFAULT_SCAN = 60   # older runs read at most while looking for them (other golden files are skipped)


def trend_point(report: RunReport) -> dict[str, Any]:
    """What the history keeps of ``report``; found@10 is a share (0..1), None for a setup that failed."""
    return {
        "id": report.id,
        "created_at": report.created_at,
        "golden_sha256": report.golden.sha256,
        "index_state": {name: facts.index_state for name, facts in report.targets.items()},
        "found_10": {s.key: s.summary.share(10) if s.summary is not None else None for s in report.setups},
    }


def collect_trend(store: RunStore, report: RunReport, *, runs: int = DEFAULT_RUNS,
                  scan: int = DEFAULT_SCAN) -> list[dict[str, Any]]:
    """The points of the runs in ``store`` older than ``report`` on the same golden file, oldest first,
    then ``report``'s own point: at most ``runs`` in all, reading at most ``scan`` older reports.

    A report that cannot be read is skipped (a history is never the reason a page fails).
    """
    from ..errors import StoreError

    mine = trend_point(report)
    older: list[dict[str, Any]] = []
    try:
        ids = store.ids()
    except StoreError:  # a folder store not made yet: the first run saved there creates it
        ids = []
    candidates = [run_id for run_id in ids if run_id < str(report.id)][:scan]
    for run_id in candidates:
        if len(older) >= runs - 1:
            break
        try:
            point = trend_point(store.report(run_id))
        except StoreError:
            continue
        if point["golden_sha256"] == mine["golden_sha256"]:
            older.append(point)
    return [*reversed(older), mine]


def index_changes(points: Sequence[dict[str, Any]]) -> list[list[str]]:
    """For each point, the targets whose index state differs from the point before (none for the first)."""
    changes: list[list[str]] = []
    for before, after in zip([None, *points[:-1]], points, strict=True):
        if before is None:
            changes.append([])
            continue
        was, now = before.get("index_state") or {}, after.get("index_state") or {}
        changes.append(sorted(name for name in set(was) & set(now)
                              if was[name] and now[name] and was[name] != now[name]))
    return changes
