"""A matrix report as files: JSON (``matrix_json``) and CSV (``matrix_csv``: one row per experiment and k,
the columns ElectriPy's users chart), and how each is told from other files (``MATRIX_JSON``,
``MATRIX_CSV``), so ``matrix --report-json/--report-csv`` replace only a report of their own kind.

Text cells are neutralised as ``report.trec`` neutralises them (a cell starting ``=``, ``+``, ``-`` or
``@`` is one a spreadsheet would run as a formula).
"""
from __future__ import annotations

import csv
import io
import json
import re
from typing import Any

from ...files import OutputKind
from ...measures import AT_K_KEYS, at_k

_BEFORE_RACE = ("experiment_id", "technique", "chunk_size", "chunk_overlap", "embedder", "method", "judged_by", "k",
                *AT_K_KEYS, "questions", "chunks", "error")
# "stopped": why the race stopped an experiment, in words, and "questions" the queries it searched; its
# metric cells are empty (its numbers are over those queries: in the JSON report, under stopped)
COLUMNS = (*_BEFORE_RACE, "stopped")
_JSON_START = re.compile(rb'\{\s*"kind": "matrix",')  # how ``matrix_json`` starts every report

MATRIX_JSON = OutputKind("matrix JSON report", own=lambda head: _JSON_START.match(head) is not None,
                         example="matrix.json")
MATRIX_CSV = OutputKind("matrix CSV report",
                        own=lambda head: head.startswith((",".join(COLUMNS) + "\n").encode())
                        or head.startswith((",".join(_BEFORE_RACE) + "\n").encode()),  # a report written before
                        example="matrix.csv")


def matrix_json(report: dict[str, Any]) -> str:
    """The report as the JSON file ``--report-json`` writes (``"kind": "matrix"`` first, indented)."""
    return json.dumps(report, indent=2) + "\n"
_FORMULA = ("=", "+", "-", "@", "\t", "\r")


def _cell(value: Any) -> Any:
    if isinstance(value, str) and value.startswith(_FORMULA):
        return "'" + value
    return "" if value is None else value


def matrix_csv(report: dict[str, Any]) -> str:
    """The CSV text (header first, ``\\n`` line ends), experiments in the report's order, k ascending."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(COLUMNS)
    for x in report["experiments"]:
        chunking = x["config"]["chunking"]
        head = [x["id"], chunking["technique"], chunking.get("size"), chunking.get("overlap"),
                x["embedder"], x["method"],
                x["judged_by"]]
        for k in report["top_k"]:
            stopped = x.get("stopped") or {}
            writer.writerow([_cell(v) for v in (*head, k, *(m.at_k_of(x["metrics"]) for m in at_k(k)),
                                                len(stopped["questions"]) if stopped else x.get("questions"),
                                                x["chunks"], x.get("error"), stopped.get("words"))])
    return out.getvalue()
