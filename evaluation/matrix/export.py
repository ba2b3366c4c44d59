"""A matrix report as CSV: one row per experiment and k, the columns ElectriPy's users chart.

Text cells are neutralised as ``report.trec`` neutralises them (a cell starting ``=``, ``+``, ``-`` or
``@`` is one a spreadsheet would run as a formula).
"""
from __future__ import annotations

import csv
import io
from typing import Any

from ..scoring.at_k import AT_K

COLUMNS = ("experiment_id", "technique", "chunk_size", "chunk_overlap", "embedder", "method", "judged_by", "k",
           *AT_K, "questions", "chunks", "error")
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
        head = [x["id"], chunking["technique"], chunking["size"], chunking["overlap"], x["embedder"], x["method"],
                x["judged_by"]]
        for k in report["top_k"]:
            values = x["metrics"][str(k)] if x["metrics"] is not None else {}
            writer.writerow([_cell(v) for v in (*head, k, *(values.get(m) for m in AT_K), x.get("questions"),
                                                x["chunks"], x.get("error"))])
    return out.getvalue()
