"""A judge of the same model family as a model under test favours what that model ranks high (its own
notion of relevance): such a judge is refused, or, when the person judges anyway, the conflict is
printed on every pick.

Under test are the run's rerankers (the cross-encoder, ColBERT, a named semantic ranker) and its
embedding models (a dense setup ranks by them as a reranker does). A name belongs to a family when it
holds one of the family's marks (``FAMILIES``, lower-cased), so ``bge-reranker-v2-m3`` is of bge's family
and so is the bundled ``bge-small``; ``ms-marco-minilm-l12`` (the bundled cross-encoder) is of MiniLM's,
as is ``cross-encoder/ms-marco-MiniLM-L-6-v2``. A name of no listed family is its own family only when
the judge's name holds it whole.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable, Mapping

FAMILIES: Mapping[str, tuple[str, ...]] = {
    "MiniLM / MS MARCO": ("minilm", "ms-marco", "msmarco", "ms_marco"),
    "BGE": ("bge", "baai"),
    "E5": ("e5-", "/e5", "multilingual-e5"),
    "GTE": ("gte-", "/gte"),
    "ColBERT": ("colbert",),
    "Jina": ("jina",),
    "Cohere": ("cohere", "rerank-english", "rerank-multilingual", "rerank-v3"),
    "mxbai": ("mxbai", "mixedbread"),
    "Nomic": ("nomic",),
    "Qwen": ("qwen",),
    "Voyage": ("voyage",),
}
CROSS_ENCODER = "ms-marco-minilm-l12"  # the embedded engine's, when a report does not name it


@dataclass(frozen=True)
class Conflict:
    """The judge and a model under test are of one family."""

    setup: str
    model: str
    family: str

    def to_json(self) -> dict[str, str]:
        return {"setup": self.setup, "model": self.model, "family": self.family}

    def words(self, judge: str) -> str:
        return f"the judge {judge} is of the {self.family} family, as {self.model} under test in {self.setup}"


def families(name: str) -> set[str]:
    lowered = name.lower()
    return {family for family, marks in FAMILIES.items() if any(mark in lowered for mark in marks)}


def models_under_test(setup: Mapping[str, Any], targets: Mapping[str, Any]) -> list[str]:
    """The models that order ``setup``'s results: its embedding models and its ranker's model."""
    models = [str(m) for m in setup.get("models") or ()]
    ranker = setup.get("ranker") or _ranker_of(setup)
    described = targets.get(str(setup.get("target"))) or {}
    if ranker == "cross-encoder":
        named = (described.get("cross_encoder") or {}) if isinstance(described, dict) else {}
        models.append(str(named.get("name") or named.get("model") or CROSS_ENCODER) if isinstance(named, dict)
                      else CROSS_ENCODER)
    elif ranker == "colbert":
        models.append("colbert")
    elif ranker == "semantic":
        models.append("azure-semantic-ranker")
    return models


def _ranker_of(setup: Mapping[str, Any]) -> str | None:
    """The ranker a report's entry names by its method's ending (``target.RANKERS``), for entries without ``ranker``."""
    method = str(setup.get("method") or "")
    for ending, ranker in (("_reranked", "cross-encoder"), ("_semantic", "semantic"), ("_colbert", "colbert")):
        if method.endswith(ending):
            return ranker
    return None


def conflicts(judge: str, setups: Iterable[Mapping[str, Any]], targets: Mapping[str, Any]) -> list[Conflict]:
    """Every (setup, model) whose family is the judge's (the module docstring)."""
    mine = families(judge)
    found = []
    for setup in setups:
        for model in models_under_test(setup, targets):
            shared = sorted(mine & families(model))
            if shared:
                found.append(Conflict(str(setup.get("key")), model, shared[0]))
            elif not families(model) and len(model) >= 4 and model.lower() in judge.lower():
                found.append(Conflict(str(setup.get("key")), model, model))
    return found
