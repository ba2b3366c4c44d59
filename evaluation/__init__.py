"""Retrieval evaluation: which way of searching should this collection use?

The library owns every rule of the product; the Function App and the command line only call it.
"""
from __future__ import annotations

__version__ = "0.1.0"
