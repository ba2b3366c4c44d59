"""``sweep``: every build asked every golden question with each method, ranked; ``sweep_markdown``.

``evaluate`` judges an index as it was built; how the documents were cut was decided before. A sweep
builds the index again for each build key (``<technique>-<size>-<letter>``, see
``evaluation.chunking``) in a scratch folder removed after, asks every labelled question with each
method, and ranks the rows (one per build and method) by nDCG@10, then MRR, then median search time,
then key. Each row holds recall and found at each k, the chunks the build made, its build seconds
(cutting, indexing and embedding: builds run one after another, so these compare with each other
and with nothing else) and the median of searches timed one at a time, as a caller would search.

Labels name documents (``by="doc"``, the only grain that means the same in two builds); a golden file
of chunk ids is refused with the reason (``inputs.refuse_chunk_labels``). The report holds counts,
scores and keys: no question or passage text.
"""
from __future__ import annotations

import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Iterable, Sequence

from ..engine.corpus import Corpus
from ..errors import UsageError, did_you_mean
from ..golden import Golden, Question
from ..measures import FOUND_10, MRR, NDCG_10, RECALL_10
from ..scoring.judging import judge
from ..scoring.metrics import percentile_ms, summarise
from .cut import DEFAULT_MODEL, Cutter
from .inputs import check_grain, corpus_of, golden_of, refuse_chunk_labels
from .runner import METHODS, Progress, cache_share, each_build, progress_of, scratch, setup_for

DEFAULT_BUILDS = ("markdown-1000-h", "recursive-1000-h", "sentence-1000-h", "fixed-1000-h")
DEFAULT_METHODS = ("dense", "hybrid")
DEFAULT_K = (1, 3, 5, 10)
DEPTH = 20  # results asked for: found and recall at every k a summary holds
TIMED = 20  # questions timed one at a time per row, after one untimed search


def sweep(corpus: Corpus | str | Path, golden: Golden | str | Path | Iterable[Question], *,
          builds: Sequence[str] = DEFAULT_BUILDS, methods: Sequence[str] = DEFAULT_METHODS, by: str = "doc",
          k: Sequence[int] = DEFAULT_K, models: Sequence[str] = (DEFAULT_MODEL,), timed: int = TIMED,
          cache: str | Path | None = None, workdir: str | Path | None = None, cutter: Cutter | None = None,
          threads: int | None = None, progress: Progress | bool | None = None, save_to: Any = None,
          created_at: datetime | None = None, chat: Any = None) -> dict[str, Any]:
    """Build the index every way ``builds`` names, ask each with ``methods``, and rank the rows; with
    ``save_to`` (a store or its address) the sweep is kept under ``chunking/runs/<id>/``.

    ``cache`` is the cross-run vector file (passages and questions); without it the builds of this run
    still share theirs, in a file of the scratch folder. ``cutter`` makes a build's chunks from its key
    (default: ``evaluation.chunking``'s cutters). ``chat`` (a callable from chat messages to text, or a
    ``ChatModel``) lets the default cutters make ``llm`` and ``-c`` builds, as ``compare_chunking`` does:
    its ``c`` notes are kept in ``cache`` (per chat model, request wording, chunk and document), so a
    rerun asks the model for none it wrote before. A ``c`` or ``llm`` build without it fails with the reason.
    """
    check_grain(by)
    methods = _checked_methods(methods)
    cutoffs = _checked_k(k)
    models = tuple(models)
    corpus = corpus_of(corpus)
    read, questions = golden_of(golden)
    refuse_chunk_labels(questions, corpus, str(read.source) if read is not None else "the golden questions")
    keys = list(dict.fromkeys(builds))
    notes = None
    if cutter is None:
        from .cutters import chunking_cutter, check_keys
        from .notes import ChatNotes

        check_keys(keys)
        notes = ChatNotes(cache) if chat is not None else None
        cutter = chunking_cutter(chat=chat, notes=notes)
    store = None
    if save_to is not None:
        from ..store.builds import chunking_store

        store = chunking_store(save_to)
        store.check()
    created_at = created_at or datetime.now(timezone.utc)
    texts = [q.question for q in questions]
    draw, close = progress_of(progress)
    started = time.perf_counter()
    rows: list[dict[str, Any]] = []
    failed: list[dict[str, str]] = []
    query_counts = {"vectors_cached": 0, "vectors_shared": 0, "vectors_computed": 0}
    try:
        with scratch(workdir, cache, threads) as where:
            for made in each_build(keys, corpus, cutter, where, models=models,
                                   cross_encoder="hybrid_reranked" in methods, progress=draw):
                if made.error is not None:
                    failed.append({"build": made.key, "error": made.error})
                    continue
                built, target, tell = made.built, made.target, made.tell
                for method in methods:
                    setup = setup_for(target, method, models)
                    tell(f"asking {len(texts)} questions with {method}", 0, len(texts))
                    found = target.search_batch(setup, texts, DEPTH)
                    outcomes = [judge(q, hits, by) for q, hits in zip(questions, found)]
                    times = _timed(target, setup, texts[:max(0, timed)], tell, method)
                    rows.append(_row(built, method, summarise(outcomes), times, cutoffs))
                    for name, value in target.cache_counts(setup.key).items():
                        if name in query_counts:
                            query_counts[name] += value
            passages = where.vector_counts
    finally:
        close()
        if notes is not None:
            notes.close()
    rows = rank_rows(rows)
    vectors = {name: passages[name] + query_counts[name] for name in passages}
    from ..store.runs import new_run_id

    report = {"format": 1, "kind": "sweep", "id": new_run_id(created_at),
              "created_at": created_at.isoformat().replace("+00:00", "Z"), "by": by, "k": list(cutoffs),
              "methods": list(methods), "models": list(models), "questions": len(questions),
              "golden": _golden_summary(read, questions), "corpus": {"documents": len(corpus), "sha256": corpus.sha256},
              "rows": rows, "best": rows[0]["key"] if rows else None, "failed": failed,
              "vectors": {**vectors, "share_from_cache": cache_share(vectors)},
              "seconds": round(time.perf_counter() - started, 3),
              "rule": f"ranked by {NDCG_10}, then {MRR}, then median search time, then key"}
    if store is not None:
        from ..report.builds.sweep_page import render_sweep_html

        store.save(report, read.raw if read is not None else None, html=render_sweep_html(report))
    return report


def rank_rows(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``rows`` best first, each given its ``rank``: nDCG@10, then MRR (higher first), then median search
    time (faster first; a row never timed last), then key."""
    def order(row: dict[str, Any]) -> tuple:
        median = row["median_ms"] if row["median_ms"] is not None else float("inf")
        return (-NDCG_10.of(row), -MRR.of(row), median, row["key"])

    ranked = sorted(rows, key=order)
    for rank, row in enumerate(ranked, start=1):
        row["rank"] = rank
    return ranked


def _timed(target, setup, texts: list[str], tell, method: str) -> list[float]:
    if not texts:
        return []
    target.search(setup, texts[0], DEPTH)  # warm-up: loads the model, fills nothing
    times = []
    for number, text in enumerate(texts, start=1):
        tell(f"timing {method} searches one by one", number - 1, len(texts))
        began = time.perf_counter()
        target.search(setup, text, DEPTH)
        times.append((time.perf_counter() - began) * 1000)
    return times


def _row(built, method: str, summary: dict[str, Any], times: list[float], cutoffs: tuple[int, ...]) -> dict[str, Any]:
    cut = built.cut
    return {"key": f"{cut.key}.{method}", "build": cut.key, "technique": cut.technique, "size": cut.size,
            "letter": cut.letter, "method": method, "questions": summary["questions"],
            "counts": {str(c): FOUND_10.at(c).count_of(summary) for c in cutoffs},
            "found": {str(c): FOUND_10.at(c).of(summary) for c in cutoffs},
            "recall": {str(c): RECALL_10.at(c).of(summary) for c in cutoffs},
            MRR.summary_path[0]: MRR.of(summary), NDCG_10.summary_path[0]: NDCG_10.of(summary),
            "chunks": len(cut.chunks), "build_seconds": built.seconds,
            "timed": len(times), "median_ms": percentile_ms(times, 50)}


def _golden_summary(read: Golden | None, questions: Sequence[Question]) -> dict[str, Any]:
    return {"sha256": read.sha256 if read is not None else None, "questions": len(questions)}


def _checked_methods(methods: Sequence[str]) -> tuple[str, ...]:
    methods = tuple(dict.fromkeys(methods))
    for method in methods:
        if method not in METHODS:
            raise UsageError(f'"{method}" is not a method a sweep can search with; the methods are '
                             f'{", ".join(METHODS)}.{did_you_mean(method, METHODS)}')
    if not methods:
        raise UsageError(f"a sweep needs at least one method: {', '.join(METHODS)}")
    return methods


def _checked_k(k: Sequence[int]) -> tuple[int, ...]:
    from ..measures import CUTOFFS

    cutoffs = tuple(sorted(set(k)))
    wrong = [c for c in cutoffs if c not in CUTOFFS]
    if wrong or not cutoffs:
        raise UsageError(f"k={list(k)}: each k must be one of {', '.join(map(str, CUTOFFS))}")
    return cutoffs
