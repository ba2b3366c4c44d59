"""Tools for a team that has golden questions, beyond ranking setups.

- ``stale_evidence``: evidence quotes no chunk of their expected documents holds any more;
- ``suggest_expected``: expected documents proposed from reference answers, as draft rows;
- ``answer_cutoff``: the relevance below which the top result is more likely a near miss than the answer;
- ``answer_report``: written answers scored by a judge (``ChatJudge``: any OpenAI-compatible service);
- ``ChatModel``: any other prompt to such a service, on the judge's wire (the chunking techniques' model).

The names load on first use, so importing the package loads no HTTP client.
"""
from __future__ import annotations

from ..lazy import lazy_attributes

_PUBLIC = {
    "stale_evidence": ".stale", "StaleEvidence": ".stale",
    # the keyword form users call lives in the compatibility layer; the core is suggest.propose_expected
    "suggest_expected": "..compat.vectrixdb", "propose_expected": ".suggest", "Suggestions": ".suggest",
    "answer_cutoff": ".cutoff", "Cutoff": ".cutoff",
    "answer_report": ".scored", "AnswerReport": ".scored", "METRICS": ".scored", "ANSWER_METRICS": ".scored",
    "ChatJudge": ".judge", "JudgeSettings": ".judge", "ChatModel": ".chat",
}
__all__ = sorted(_PUBLIC)
__getattr__ = lazy_attributes(__name__, _PUBLIC)
