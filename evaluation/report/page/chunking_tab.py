"""The Chunking tab: the collection's latest chunking run (how to cut the documents), its latest sweep
(every build asked with each method, ranked) and its latest matrix run (chunk variants x embedders x
methods), beside Retrieval.

All three come from the store's ``chunking/runs/`` (``store.builds.latest_views``) and hold ids and numbers
only, so the tab shows nothing a reader of runs may not read. A collection with none has no tab, and
its page stays exactly the page it was before the tab existed.
"""
from __future__ import annotations

from ..builds.compare_page import chunking_section
from ..builds.matrix_page import matrix_section
from ..builds.sweep_page import sweep_section
from .context import Page


def chunking_run(page: Page) -> str:
    return chunking_section(page.chunking) if page.chunking else ""


def sweep_run(page: Page) -> str:
    return sweep_section(page.sweep) if page.sweep else ""


def matrix_run(page: Page) -> str:
    return matrix_section(page.matrix) if page.matrix else ""


def has_chunking_runs(page: Page) -> bool:
    return bool(chunking_run(page) or sweep_run(page) or matrix_run(page))
