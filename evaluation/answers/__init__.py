"""Tools for a team that has golden questions, beyond ranking setups.

- ``stale_evidence``: evidence quotes no chunk of their expected documents holds any more;
- ``suggest_expected``: expected documents proposed from reference answers, as draft rows;
- ``answer_cutoff``: the relevance below which the top result is more likely a near miss than the answer;
- ``answer_report``: written answers scored by a judge (``ChatJudge``: any OpenAI-compatible service).

The names load on first use, so importing the package loads no HTTP client.
"""
from __future__ import annotations

import importlib
from typing import Any

_PUBLIC = {
    "stale_evidence": ".stale", "StaleEvidence": ".stale",
    "suggest_expected": ".suggest", "Suggestions": ".suggest",
    "answer_cutoff": ".cutoff", "Cutoff": ".cutoff",
    "answer_report": ".scored", "AnswerReport": ".scored", "METRICS": ".scored",
    "ChatJudge": ".judge", "JudgeSettings": ".judge",
}
__all__ = sorted(_PUBLIC)


def __getattr__(name: str) -> Any:
    if name not in _PUBLIC:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(_PUBLIC[name], __name__), name)
    globals()[name] = value
    return value
