"""``run_matrix``: ElectriPy's experiment matrix (chunk variants x embedders x methods), metrics at each k.

For each chunk variant in turn the corpus is cut (``variants.cut_corpus``) and indexed once in a
scratch folder (``engine.scratch``, removed after) with every embedder of the matrix; every query is
then asked with each method and embedder, to the depth of the largest k, and judged (``labels``
says at which grain). Each experiment reports hit rate, precision, recall, MRR@k and nDCG@k at
every k (``scoring.at_k``: nDCG@k is the retrieval report's nDCG at depth k, graded where the golden
file grades), and per query on request. The experiments are put in the tiers the paired tests cannot
separate (``experiment_tiers``), and the views say which share the pick's. An experiment that fails (a
model that cannot load, say) is reported with its error and scores nothing; it does not sink the run.

The report holds configurations, ids and scores: no query or document text. Its ``experiments`` and
their metrics are the same on every run of the same inputs; ``seconds`` and ``ms_per_query`` are
the only numbers that move. Kept in a store (``save_to``), the report also gets the run's ``id`` and
``created_at`` and goes under ``chunking/runs/<id>/`` with its page, beside the chunking runs: ``chunking
runs list|show`` list and show it, and the run page's Chunking tab shows the newest.
"""
from __future__ import annotations

import logging
import time

import numpy as np
from pathlib import Path
from typing import Any, Callable

from ..engine.corpus import Corpus, read_corpus
from ..errors import GoldenFileError
from ..golden import Golden, Question, explain_problems, read_golden, run_problems
from ..measures import NDCG_10
from ..scoring.at_k import per_question_at, question_at, summarise_at
from ..scoring.significance import sign_flip_p
from ..scoring.tiers import value_tiers
from ..store.builds import run_stamp, store_to_save_in
from .ci_gate import gate
from .grid import Experiment, expand
from .labels import chunk_label_map, grains, trap_note
from .race import COSTLY_METHODS, BuildRace, batch_of, searcher, stopped_words
from .settings import ALPHA, MatrixSettings
from .variants import cut_corpus

log = logging.getLogger(__name__)

MATRIX_FORMAT = 1
Progress = Callable[[int, int, str], None]  # (done, total, label)


def run_matrix(corpus: Corpus | str | Path, queries: Golden | str | Path, *, settings: MatrixSettings | None = None,
               progress: Progress | None = None, save_to: Any = None, chunker: Any = None, embedder: Any = None,
               **keywords: Any) -> dict[str, Any]:
    """Run every experiment and return the report (see the module docstring).

    ``queries`` is a queries file (ElectriPy's) or a golden file. How the matrix is made is ``settings``
    (``MatrixSettings``: cut-offs, chunk variants, embedders, methods, the grain, per-query rows, the
    ``fail_under`` thresholds, where builds are made); any of its fields may be given as a keyword instead
    (``top_k=(3, 5, 10)``, ``embedders=("hash",)``). ``fail_under`` pairs a measure at a cut-off of
    ``top_k`` with the least value every experiment must reach (``ci_gate.gate``). ``save_to`` (a store or
    its address, checked before any work) keeps the run there under ``chunking/runs/<id>/``.

    ``chunker`` and ``embedder`` are ElectriPy's ports (``ports``): a chunker of one's own (``chunk(text) ->
    [piece, ...]``) is the matrix's chunk variant, ``own:<name>``, and an embedder of one's own (``embed(texts)
    -> vectors``) its embedder, in place of ``variants`` and ``embedders``.
    """
    if chunker is not None:
        from .ports import own_variant

        keywords["variants"] = (own_variant(chunker),)
    if embedder is not None:
        from .ports import own_embedder

        keywords["embedders"] = (own_embedder(embedder),)
    settings = MatrixSettings.of(settings, **keywords)
    store = store_to_save_in(save_to)
    corpus = corpus if isinstance(corpus, Corpus) else read_corpus(corpus)
    golden = queries if isinstance(queries, Golden) else read_golden(queries)
    problems = run_problems(golden)
    if problems:
        raise GoldenFileError(explain_problems(golden.source, problems))
    questions = list(golden.labelled)
    variants = list(settings.variants)
    as_documents, mapped = chunk_label_map(questions, corpus)
    by_variant, labels_variant = grains(variants, settings.by, mapped, settings.labels_from)
    models = {name: _model_identity(name) for name in settings.embedders}
    experiments = expand(variants, settings.embedders, settings.methods, settings.top_k, by_variant, models)
    started = time.perf_counter()
    ndcg: dict[str, list[float]] = {}  # experiment id -> each question's nDCG at the largest k, for the tiers
    # the cross-encoder's experiments race, unless a gate needs every experiment on every query
    race = BuildRace(len(questions), sum(x.method in COSTLY_METHODS for x in experiments),
                     measure=f"nDCG@{max(settings.top_k)}", exhaustive=settings.exhaustive or bool(settings.fail_under))
    results = _run(experiments, corpus, questions, as_documents, settings, progress, race, ndcg)
    report = {
        "kind": "matrix", "format": MATRIX_FORMAT,
        "top_k": list(settings.top_k), "methods": list(settings.methods), "by": settings.by,
        "variants": [v.to_dict() for v in variants],
        "embedders": [_embedder_entry(name) for name in settings.embedders],
        "corpus": {"source": str(corpus.source), "sha256": corpus.sha256, "documents": len(corpus)},
        "queries": {"source": golden.source, "sha256": golden.sha256, "format": golden.format,
                    "questions": len(questions)},
        "labels": trap_note(mapped, settings.by, labels_variant, corpus, questions),
        "experiments": results,
        "tiers": experiment_tiers(results, ndcg, max(settings.top_k), ALPHA),
        "seconds": round(time.perf_counter() - started, 3),
        **({"race": race.describe()} if race.on else {}),
    }
    report["gate"] = gate(report, list(settings.fail_under))
    if store is not None:
        from ..report.builds.matrix_page import render_matrix_html

        report = {**run_stamp(), **report}
        store.save(report, html=render_matrix_html(report))
    return report


def _run(experiments: list[Experiment], corpus: Corpus, questions: list[Question], as_documents: list[Question],
         settings: MatrixSettings, progress: Progress | None, race: BuildRace,
         ndcg: dict[str, list[float]]) -> list[dict[str, Any]]:
    from .runner import scratch, setup_for
    from ..engine.scratch import build_scratch_index
    from ..engine.target import EmbeddedTarget

    variants, ks = settings.variants, settings.top_k
    texts = [q.question for q in questions]
    depth = max(ks)
    done: dict[Experiment, dict[str, Any]] = {}
    needs_models = [e for e in settings.embedders if any(x.embedder == e for x in experiments)]
    reranked = any(x.method == "hybrid_reranked" for x in experiments)
    with scratch(settings) as where:
        for number, variant in enumerate(variants, start=1):
            mine = [x for x in experiments if x.variant == variant]
            label = f"[{number}/{len(variants)}] {variant}"
            try:
                chunks = cut_corpus(variant, corpus)
                index = build_scratch_index(chunks, where.workdir / f"variant-{number}", models=needs_models,
                                            text_vectors=where.text_vectors, name=str(variant))
                target = EmbeddedTarget(index, name="local", cache=where.query_cache, cross_encoder=reranked,
                                        threads=settings.threads)
            except (KeyboardInterrupt, MemoryError):
                raise
            except Exception as err:  # noqa: BLE001 - this variant's experiments fail; the others run
                log.warning("chunk variant %s failed: %s", variant, err)
                for x in mine:
                    done[x] = _entry(x, None, error=f"{type(err).__name__}: {err}")
                continue
            mine.sort(key=lambda x: x.method in COSTLY_METHODS)  # cheap first: a raced experiment's comparators
            for step, x in enumerate(mine):
                if progress is not None:
                    progress(step, len(mine), f"{label}: {x.method} {x.embedder or ''}".rstrip())
                judged: dict[int, Any] = {}
                try:
                    setup = setup_for(target, x.method, (x.embedder,) if x.embedder else ())
                    asked_with = questions if x.by == "chunk" else as_documents
                    search = searcher(batch_of(target, setup, depth), asked_with, x.by, judged, ndcg_at=max(ks))
                    began = time.perf_counter()
                    if x.method in COSTLY_METHODS:
                        _, stop = race.race(x.id, search)
                    else:
                        race.ran(x.id, search(list(range(len(texts)))))
                        stop = None
                    ms = (time.perf_counter() - began) * 1000 / max(1, len(judged))
                except (KeyboardInterrupt, MemoryError):
                    raise
                except Exception as err:  # noqa: BLE001 - this experiment fails; the others run
                    log.warning("experiment %s failed: %s", x.id[:12], err)
                    done[x] = _entry(x, None, error=f"{type(err).__name__}: {err}", chunks=len(chunks))
                    continue
                outcomes = [judged[i] for i in sorted(judged)]
                done[x] = _entry(x, outcomes, chunks=len(chunks), ms=ms, ks=ks, per_query=settings.per_query)
                if stop is not None:  # no metrics as if over every query: they are kept under stopped, said so
                    done[x]["stopped"] = {**stop, "questions": [o.question_id for o in outcomes],
                                          "metrics": done[x]["metrics"],
                                          "words": stopped_words(stop, len(outcomes))}
                    done[x]["metrics"] = None
                else:  # a stopped experiment asked only some queries: it has no place in the tiers
                    ndcg[x.id] = [question_at(o, max(ks))["ndcg"] for o in outcomes]
    return [done[x] for x in experiments]


def experiment_tiers(entries: list[dict[str, Any]], ndcg: dict[str, list[float]], k: int,
                     alpha: float) -> dict[str, Any] | None:
    """The experiments that ran, best first as the view ranks them (nDCG at the largest k, then id), in
    tiers the paired tests cannot separate: a sign-flip test per pair on each question's nDCG@k (exact
    up to 2**m patterns, else 10,000 seeded ones), Holm over all the pairs (``scoring.tiers``). The
    pick (the first) and the experiments of its tier are named."""
    ran = sorted((x for x in entries if x.get("metrics") is not None and x["id"] in ndcg),
                 key=lambda x: (-x["metrics"][str(k)]["ndcg"], x["id"]))
    if not ran:
        return None
    values = np.array([ndcg[x["id"]] for x in ran], dtype=np.float64).T.reshape(-1, len(ran))
    flips = np.random.default_rng([0, 1])
    measure = str(NDCG_10.at(k))
    tiers = value_tiers([x["id"] for x in ran], values, alpha, metric=measure,
                        test=f"sign-flip permutation per pair on each question's {measure} (exact up to 2**m <= "
                             "10,000 patterns, else seeded)",
                        p_value=lambda d: sign_flip_p(d, rng=flips))
    if tiers is not None:
        tiers["pick"] = ran[0]["id"]
    return tiers


def _entry(x: Experiment, outcomes, *, error: str | None = None, chunks: int | None = None, ms: float | None = None,
           ks: tuple[int, ...] = (), per_query: bool = False) -> dict[str, Any]:
    entry: dict[str, Any] = {"id": x.id, "config": x.config, "chunking": str(x.variant), "embedder": x.embedder,
                             "method": x.method, "judged_by": x.by, "chunks": chunks}
    if error is not None:
        entry.update({"error": error, "metrics": None})
        return entry
    entry["questions"] = len(outcomes)
    entry["metrics"] = summarise_at(outcomes, ks)
    entry["ms_per_query"] = round(ms, 3) if ms is not None else None
    if per_query:
        entry["per_query"] = per_question_at(outcomes, ks)
    return entry


def _model_identity(name: str) -> str | None:
    from ..engine.models import model_info

    return model_info(name).sha256


def _embedder_entry(name: str) -> dict[str, Any]:
    from ..engine.models import model_info, model_name

    info = model_info(name)
    return {"name": name, "model": model_name(name), "real_model": name != "hash" and not name.startswith("own:"),
            "source": info.source,
            "sha256": info.sha256, "dimensions": info.dimensions}
