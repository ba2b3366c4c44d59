"""A space of setups, not a list: declared once (``declared``: chunkings x models x methods x depths x RRF k,
from a TOML or JSON file or from flags), its builds shared (``searching``: one index per chunking, one
embedding per chunking x model, one search per list and question cut and fused for every setup that reads
it), searched by successive halving with the racing module's valid stop rule (``halving``), resumable
from a work folder and reported (``run``: ``search_space``).

Above ``builds`` (it cuts with its chunk variants and builds in its scratch folders) and ``scoring``
(the racing test, the sign test of the top tier); only ``cli`` imports it.
"""
from __future__ import annotations

from ..lazy import lazy_attributes

_LAZY = {
    "Space": ".declared", "SpaceSetup": ".declared", "read_space": ".declared", "space_of": ".declared",
    "space_from_flags": ".declared", "plan_halving": ".halving", "run_halving": ".halving",
    "top_tier": ".halving", "search_space": ".run", "SpaceSettings": ".run", "space_report": ".run",
}
__all__ = sorted(_LAZY)
__getattr__ = lazy_attributes(__name__, _LAZY)
