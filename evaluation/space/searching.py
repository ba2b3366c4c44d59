"""A space's searches, each paid once: one index per chunking (holding every model the chunking's setups
read: one embedding per chunking x model), and per question one list per index and model, cut and fused
for every setup that reads it.

Per chunking and question: the keyword list (BM25) searched once, as deep as the deepest hybrid on the
chunking reads (``keyword`` reads its first 10); per model the dense list searched once the same way;
each ``hybrid`` setup fuses the first ``depth`` of each by reciprocal rank fusion at its ``k``
(``engine.fusion.rrf`` over the index's chunk positions, so equal sums are ordered by position as the
engine orders them: at depth 50 and k = 60 it is the engine's own hybrid, ``tests/space`` checks it).
A list cut to a smaller depth is the first part of the deeper one (exact top-k, ties in index order),
so no setup's depth needs a search of its own. ``hybrid_reranked`` is the engine's setup, searched by it
(the cross-encoder's pairs scored once per target). Each setup is judged by found@10 at the document
grain (``scoring.judging``). Builds are cut and indexed in the run's scratch folder (``builds.runner``),
their vectors kept in the run's cache file, so a resumed run embeds nothing again.
"""
from __future__ import annotations

import logging
from collections import defaultdict
from typing import Any, Callable, Sequence

from ..builds.runner import Scratch, setup_for
from ..builds.variants import ChunkVariant, cut_corpus
from ..engine.corpus import Corpus
from ..engine.fusion import rrf
from ..golden import Question
from ..scoring.judging import judge
from ..target import Hit
from .declared import CUT, SpaceSetup

log = logging.getLogger(__name__)
Progress = Callable[[int, int, str], None]  # (done, total, what is being done, in words)


class SpaceSearcher:
    """Searches a space's setups on given questions (``__call__``: what ``halving.run_halving`` calls).
    ``searches`` counts the engine's searches (one list, one question), ``builds`` the indexes made."""

    def __init__(self, setups: Sequence[SpaceSetup], corpus: Corpus, questions: Sequence[Question], where: Scratch,
                 *, threads: int | None = None, progress: Progress | None = None) -> None:
        self.by_key = {s.key: s for s in setups}
        self.corpus, self.questions, self.where = corpus, list(questions), where
        self.threads, self.progress = threads, progress
        self.models: dict[ChunkVariant, list[str]] = defaultdict(list)
        for s in setups:
            if s.model and s.model not in self.models[s.chunking]:
                self.models[s.chunking].append(s.model)
            self.models.setdefault(s.chunking, [])
        self.targets: dict[ChunkVariant, Any] = {}
        self.positions: dict[ChunkVariant, dict[str, int]] = {}
        self.searches = 0

    def _target(self, chunking: ChunkVariant) -> Any:
        """The chunking's index and target, built the first time a setup on it is searched."""
        if chunking not in self.targets:
            from ..engine.scratch import build_scratch_index
            from ..engine.target import EmbeddedTarget

            models = self.models[chunking]
            number = len(self.targets) + 1
            label = (f"building index {number} of {len(self.models)}: the documents cut {chunking}, its chunks "
                     f"given to {', '.join(models) or 'BM25 alone (keyword only)'}")
            self._tell(number - 1, len(self.models), label)
            index = build_scratch_index(cut_corpus(chunking, self.corpus), self.where.workdir / f"space-{number}",
                                        models=models, text_vectors=self.where.text_vectors, name=str(chunking))
            reranked = any(s.method == "hybrid_reranked" and s.chunking == chunking for s in self.by_key.values())
            self.targets[chunking] = EmbeddedTarget(index, name="local", cache=self.where.query_cache,
                                                    cross_encoder=reranked, threads=self.threads)
            self.positions[chunking] = {chunk.id: n for n, chunk in enumerate(index.chunks)}
        return self.targets[chunking]

    def _tell(self, done: int, total: int, label: str) -> None:
        if self.progress is not None:
            self.progress(done, total, label)

    def __call__(self, keys: list[str], indices: list[int]) -> dict[str, list[float]]:
        """found@10 (1 or 0) of each setup of ``keys`` on the questions of ``indices``, in that order."""
        setups = [self.by_key[key] for key in keys]
        asked = [self.questions[i] for i in indices]
        texts = [q.question for q in asked]
        found: dict[str, list[float]] = {}
        chunkings = list(dict.fromkeys(s.chunking for s in setups))
        for number, chunking in enumerate(chunkings, start=1):
            mine = [s for s in setups if s.chunking == chunking]
            target = self._target(chunking)
            self._tell(number - 1, len(chunkings), f"searching {len(texts)} questions with the {len(mine)} setups "
                                                   f"still running on {chunking} ({number} of {len(chunkings)})")
            lists = self._lists(target, mine, texts)
            position = self.positions[chunking]
            for s in mine:
                found[s.key] = [self._found(question, ranked)
                                for question, ranked in zip(asked, self._ranked(s, lists, position), strict=True)]
        self._tell(len(chunkings), len(chunkings), f"searched {len(texts)} questions")
        return found

    def _lists(self, target: Any, mine: list[SpaceSetup], texts: list[str]) -> dict[str, list[list[Hit]]]:
        """Each list the setups of one chunking read, searched once as deep as the deepest reader needs:
        ``keyword``, ``dense.<model>``, ``reranked.<model>``."""
        wanted: dict[str, int] = {}
        for s in mine:
            depth = s.depth or CUT
            if s.method in ("keyword", "hybrid"):
                wanted["keyword"] = max(wanted.get("keyword", 0), depth)
            if s.method in ("dense", "hybrid"):
                wanted[f"dense.{s.model}"] = max(wanted.get(f"dense.{s.model}", 0), depth)
            if s.method == "hybrid_reranked":
                wanted[f"reranked.{s.model}"] = CUT
        lists = {}
        for name, depth in wanted.items():
            method, _, model = name.partition(".")
            engine_method = {"reranked": "hybrid_reranked"}.get(method, method)
            setup = setup_for(target, engine_method, (model,) if model else ())
            lists[name] = target.search_batch(setup, texts, depth)
            self.searches += len(texts)
        return lists

    @staticmethod
    def _ranked(s: SpaceSetup, lists: dict[str, list[list[Hit]]], position: dict[str, int]) -> list[list[Hit]]:
        """The setup's first 10 results for each question, from the lists searched."""
        if s.method == "keyword":
            return [hits[:CUT] for hits in lists["keyword"]]
        if s.method == "dense":
            return [hits[:CUT] for hits in lists[f"dense.{s.model}"]]
        if s.method == "hybrid_reranked":
            return [hits[:CUT] for hits in lists[f"reranked.{s.model}"]]
        assert s.depth is not None and s.rrf_k is not None, "a hybrid setup reads a depth and a k"
        fused = []
        for keyword, dense in zip(lists["keyword"], lists[f"dense.{s.model}"], strict=True):
            by_position = {position[h.id]: h for h in (*keyword[:s.depth], *dense[:s.depth])}
            order = rrf([[position[h.id] for h in keyword[:s.depth]], [position[h.id] for h in dense[:s.depth]]],
                        k=s.rrf_k)
            fused.append([by_position[n] for n, _ in order[:CUT]])
        return fused

    @staticmethod
    def _found(question: Question, hits: list[Hit]) -> float:
        first = judge(question, hits, "doc").first
        return 1.0 if first is not None and first <= CUT else 0.0
