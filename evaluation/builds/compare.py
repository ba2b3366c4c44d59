"""``compare_builds``: every build, each technique at its best, compared question by question.

``compare_chunking``, its keyword form users call, maps onto it from ``compat/vectrixdb/chunking_runs.py``.

"Right" for a question is judged from what was handed over: the build's results searched with
``hybrid`` (BM25 + the bundled bge-small, fused by RRF, no reranker), handed over best first until
``budget`` characters (a parent-child result hands over the section it sits in, once; the last
passage cut to fit). With a chat model (``chat``, or ``answer`` and ``judge`` of your own: both are
needed) the model answers from those characters alone and the judge checks the answer against the
golden reference (a question without one is left out); without, a question is right when an
expected document (or page) is among what was handed over, and the report says it counted so.

Builds rank by questions right, then fewer chunks, then key (``results.ranked``). A technique is its
best build. Each other technique is compared with the best one over the questions only one of the two
got right, with the exact sign test the picks use (``scoring.significance.exact_binary_p``), and the
p-values are Holm-adjusted across the techniques (``holm``); a technique whose adjusted p is over
``alpha`` could be as good as the best and is marked ``tie``. The techniques are also put in tiers
(``tiers``: every pair tested, Holm over all of them, ``scoring.tiers``), and the report says which
techniques share the pick's tier. The pick is ``chunking_choice``'s:
the build in use (``current``) stays unless the best beats it beyond luck.

Nothing is switched, and the report holds counts, keys and ids: never a question's or a passage's
text, nor which question a build missed.
"""
from __future__ import annotations

import hashlib
import math
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Iterable, Sequence

import numpy as np

from ..engine.corpus import Corpus
from ..errors import UsageError
from ..golden import Golden, Question
from ..golden.records import known_id
from ..scoring.judging import judge as judge_hits
from ..scoring.significance import exact_binary_p, holm
from ..scoring.tiers import tier_mates, value_tiers
from ..store.builds import run_stamp, store_to_save_in
from ..store.sources import Fetcher
from ..target import Hit
from .choice import chunking_choice, split
from .cut import Cut, Cutter
from .inputs import collections_of, golden_of, labelled_questions
from .given import BuildsHooks, BuildsKeeping, ChatModels, Judged
from .judged import Answer, Judge
from .plan import NAMES, ChatAtHand, plan_builds
from .race import COSTLY_METHODS, BuildRace, stopped_words
from .results import BuildResult, ranked
from .runner import each_build, progress_of, scratch, setup_for
from .settings import DEFAULT_MODEL, CompareSettings, method_of_search, model_of

METHOD = "hybrid"
REPORT_FORMAT = 1


def handed_over(hits: Sequence[Hit], cut: Cut, budget: int) -> list[tuple[Hit, str]]:
    """The results handed to a model within ``budget`` characters, best first: each result's own text,
    or its parent's (each parent once), the last cut to fit."""
    out: list[tuple[Hit, str]] = []
    used, seen = 0, set()
    for hit in hits:
        if used >= budget:
            break
        handed_id, text = cut.handed_over(hit.id, hit.text)
        if handed_id in seen:
            continue
        seen.add(handed_id)
        piece = text[: budget - used]
        out.append((hit, piece))
        used += len(piece)
    return out


def depth_for(cut: Cut, budget: int) -> int:
    """Results to ask for: enough to fill ``budget`` at the build's size, with room for results whose
    parent was handed over already and for chunks shorter than the size."""
    return max(10, 3 * math.ceil(budget / max(1, cut.size)))


@dataclass(frozen=True)
class BuildsRun:
    """What ``run_builds`` made: each build's result (the ones that ran, in the order of the keys), the vectors
    embedded (``vectors``: counts), the builds that failed with their errors, and the builds the race stopped
    (never ranked or picked), each with the questions it was asked and why."""

    results: list[BuildResult]
    vectors: dict[str, Any]
    failed: list[dict[str, Any]]
    stopped: list[dict[str, Any]]


def run_builds(corpus: Any, golden: Golden | str | Path | Iterable[Question], keys: Sequence[str], *,
               settings: CompareSettings | None = None, judged: Judged | None = None, cutter: Cutter | None = None,
               hooks: BuildsHooks = BuildsHooks()) -> BuildsRun:
    """Make each build of ``keys`` in turn and score every question on it. ``settings`` (``CompareSettings``:
    the budget, the method and model searched with, where builds are made) as ``compare_builds``';
    ``judged``: a chat model answers and judges (judged mode), else what was handed over is scored.

    ``corpus`` is any form ``inputs.collections_of`` takes. Several collections are each built in a scratch
    folder of their own and asked only the questions whose expected documents they hold; a question none
    of them holds is asked of none and counted not right. A build that fails in one collection fails.

    When the builds are costly to ask (a chat model answers and judges, or the cross-encoder reranks), one
    collection holds them and ``settings.exhaustive`` is off, they race (``builds.race``): a build shown to
    get fewer questions right than one asked every question is stopped, left out of the results (never
    ranked or picked) and put in ``stopped`` with the questions it was asked and why. The build in use
    (``current``) is always asked every question."""
    settings = settings or CompareSettings()
    answer, judge = (judged.answer, judged.judge) if judged is not None else (None, None)
    collections = collections_of(corpus)
    read, questions = labelled_questions(golden, collections.values(), hooks.fetcher)
    if answer is not None:
        questions = [q for q in questions if q.reference]
        if not questions:
            raise UsageError("judged mode checks answers against the golden reference answers, and no labelled "
                             "question has one; add reference to some rows, or leave the chat model out")
    if cutter is None:
        from .cutters import check_keys, chunking_cutter

        check_keys(keys)
        cutter = chunking_cutter(model=settings.model)
    asked, nowhere = questions_by_collection(questions, collections)
    scored = "answered" if answer is not None else "found"
    costly = answer is not None or settings.method in COSTLY_METHODS
    # any build may be compared with any made before it, whichever ran in full: one comparison per pair
    race = BuildRace(len(questions), len(keys) * (len(keys) - 1) // 2, measure=f"questions {scored}",
                     exhaustive=settings.exhaustive or not costly or len(collections) > 1)
    draw, close = progress_of(hooks.progress)
    stopped: list[dict[str, Any]] = []
    parts: dict[str, list[BuildResult]] = {}
    try:
        with scratch(settings) as where:
            for name, one in collections.items():
                mine = asked[name]
                if not mine:
                    continue
                for made in each_build(list(keys), one, cutter, where, models=(settings.model,),
                                       cross_encoder=settings.method == "hybrid_reranked", progress=draw):
                    built, target, tell = made.built, made.target, made.tell
                    setup = setup_for(target, settings.method, (settings.model,))
                    tell(f"asking {len(mine)} questions", 0, len(mine))
                    asking = _Asking(target, setup, built.cut, mine, settings.budget, answer, judge, tell)
                    search = asking.search
                    if not race.on:  # no race (several collections among them): each asks its own questions
                        stop = None
                        search(list(range(len(mine))))
                    elif built.cut.key == settings.current:  # the pick's own test needs every question of it
                        stop = None
                        race.ran(built.cut.key, search(list(range(len(mine)))))
                    else:
                        values, stop = race.race(built.cut.key, search)
                        if stop is None:  # asked every question: a comparator for the builds made after it
                            race.ran(built.cut.key, [values[i] for i in range(len(mine))])
                    where.count_queries(target, setup)
                    answered = {known_id(q): asking.outcomes[known_id(q)] for q in mine
                                if known_id(q) in asking.outcomes}
                    result = BuildResult(key=built.cut.key, technique=built.cut.technique, size=built.cut.size,
                                         letter=built.cut.letter, chunks=len(built.cut.chunks), seconds=built.seconds,
                                         outcomes=answered, handed_chars=asking.handed, scored=scored)
                    if stop is not None:  # never ranked or picked: said apart
                        stopped.append({"build": result.key, "technique": result.technique, "chunks": result.chunks,
                                        "right": result.right, "questions": list(result.outcomes), **stop,
                                        "words": stopped_words(stop, len(result.outcomes))})
                        continue
                    parts.setdefault(built.cut.key, []).append(result)
            vectors, failed = where.vectors(), where.failed
    finally:
        close()
    broken = {entry["build"] for entry in failed}
    results = [_joined(parts[key], nowhere) for key in dict.fromkeys(keys) if key in parts and key not in broken]
    return BuildsRun(results, vectors, failed, stopped)


class _Asking:
    """One build asked some of its questions at a time (``search(indices)``, what ``BuildRace.race`` calls):
    each question right or not as ``run_builds`` scores it, kept in ``outcomes``, the characters handed over
    added up in ``handed``; the values given back are 1 for right, 0 for not."""

    def __init__(self, target: Any, setup: Any, cut: Cut, questions: Sequence[Question], budget: int,
                 answer: Answer | None, judge: Judge | None, tell: Any) -> None:
        self.target, self.setup, self.cut, self.questions, self.budget = target, setup, cut, questions, budget
        self.answer, self.judge, self.tell = answer, judge, tell
        self.outcomes: dict[str, bool] = {}
        self.handed = 0

    def search(self, indices: list[int]) -> list[float]:
        found = self.target.search_batch(self.setup, [self.questions[i].question for i in indices],
                                         depth_for(self.cut, self.budget))
        for i, hits in zip(indices, found, strict=True):
            question, given = self.questions[i], handed_over(hits, self.cut, self.budget)
            self.handed += sum(len(text) for _, text in given)
            if self.answer is None or self.judge is None:
                self.outcomes[known_id(question)] = judge_hits(question, [h for h, _ in given], "doc").first is not None
            else:
                self.tell("answering and judging", len(self.outcomes), len(self.questions))
                written = self.answer(question, [text for _, text in given])
                self.outcomes[known_id(question)] = bool(self.judge(question, written))
        return [1.0 if self.outcomes[known_id(self.questions[i])] else 0.0 for i in indices]


def questions_by_collection(questions: Sequence[Question],
                            collections: dict[str, Corpus]) -> tuple[dict[str, list[Question]], list[Question]]:
    """Each collection's questions (one collection: every question), and those no collection holds a
    document of: a question goes to the first collection holding one of its expected documents."""
    if len(collections) == 1:
        return {name: list(questions) for name in collections}, []
    asked: dict[str, list[Question]] = {name: [] for name in collections}
    nowhere: list[Question] = []
    for question in questions:
        wanted = {item.doc_id for item in question.expected_items}
        home = next((name for name, one in collections.items() if wanted & one.ids), None)
        (asked[home] if home is not None else nowhere).append(question)
    return asked, nowhere


def _joined(parts: list[BuildResult], nowhere: Sequence[Question]) -> BuildResult:
    """One build's results over every collection, as one: chunks, seconds and characters added up, the
    questions no collection holds counted not right."""
    first = parts[0]
    outcomes = {q: v for part in parts for q, v in part.outcomes.items()}
    outcomes.update({known_id(q): False for q in nowhere})
    return replace(first, chunks=sum(p.chunks for p in parts), seconds=round(sum(p.seconds for p in parts), 3),
                   outcomes=outcomes, handed_chars=sum(p.handed_chars for p in parts))


def builds_report(results: Sequence[BuildResult], golden: Any = None, *, settings: CompareSettings | None = None,
                  skipped: Sequence[dict] = (), scored: str | None = None, keeping: BuildsKeeping = BuildsKeeping(),
                  fetcher: Fetcher | None = None) -> dict[str, Any]:
    """Every build, each technique at its best with its comparison against the best, and the pick (counts only).

    ``results`` are the builds as made (``run_chunking_build`` or ``run_builds``), with their outcomes;
    ``scored`` is theirs unless given. ``settings`` gives the budget, the level, the build in use and how
    the builds were searched (method and model). With ``golden`` (what ``compare_builds`` takes) the
    report is a whole run, as the Chunking tab reads it: stamped (``keeping.created_at``, else now), with the
    golden data's sha256 and question count. ``skipped``: what the plan left out, with its reasons."""
    settings = settings or CompareSettings()
    budget, alpha, current, method, model = (settings.budget, settings.alpha, settings.current, settings.method,
                                             settings.model)
    order = ranked(results)
    scored = scored or (order[0].scored if order else "found")
    builds = [{"rank": rank, "key": r.key, "technique": r.technique, "size": r.size, "letter": r.letter,
               "chunks": r.chunks, "seconds": r.seconds, "right": r.right, "questions": r.questions,
               "handed_chars": r.handed_chars} for rank, r in enumerate(order, start=1)]
    best_of: dict[str, BuildResult] = {}
    for r in order:
        best_of.setdefault(r.technique, r)
    leaders = list(best_of.values())
    techniques = []
    if leaders:
        top = leaders[0]
        splits = [split(top, r) for r in leaders[1:]]
        p_values = [exact_binary_p(*s) for s in splits]
        adjusted = holm(p_values)
        techniques.append(_technique(top, None, None, None, best=True))
        for r, s, p, q in zip(leaders[1:], splits, p_values, adjusted, strict=True):
            assert q is not None, "holm leaves None only where a p-value was None, and every one here is a test's"
            techniques.append({**_technique(r, s, p, q, best=False), "tie": q > alpha})
        ties = [t["technique"] for t in techniques[1:] if t["tie"]]
    else:
        ties = []
    pick = chunking_choice(results, current, alpha=alpha)
    tiers = technique_tiers(leaders, alpha)
    if tiers is not None:  # the pick's technique and the others the paired tests cannot separate it from
        picked = next((r.technique for r in order if r.key == pick.get("pick")), None)
        tiers["pick"] = {"technique": picked, "with": tier_mates(tiers, picked)}
    report = {"scored": scored, "budget": budget, "search": search_words(method, model), "alpha": alpha,
              "builds": builds, "techniques": techniques, "ties": ties, "tiers": tiers,
              "pick": pick, "skipped": list(skipped or ()),
              "rule": ("builds rank by questions right, then fewer chunks; each other technique's best build is "
                       "compared "
                       "with the best technique's over the questions only one of the two got right (exact sign test, "
                       f"Holm-adjusted across techniques); adjusted p over {alpha:g}: tied")}
    if golden is None:
        return report
    read, questions = golden_of(golden, fetcher)
    return {"format": REPORT_FORMAT, "kind": "chunking", **run_stamp(keeping.created_at),
            "golden": {"sha256": read.sha256, "questions": len(questions),
                       "scored": order[0].questions if order else 0}, **report}


def technique_tiers(leaders: Sequence[BuildResult], alpha: float) -> dict[str, Any] | None:
    """The techniques (each at its best build, best first) in tiers the paired tests cannot separate:
    every pair compared with the exact test on the questions one got right and the other did not, Holm
    over all the pairs (``scoring.tiers``). Counts only, as the rest of the report."""
    if not leaders:
        return None
    ids = sorted({q for r in leaders for q in r.outcomes})
    right = np.array([[float(bool(r.outcomes.get(q))) for r in leaders] for q in ids]).reshape(len(ids), len(leaders))
    return value_tiers([r.technique for r in leaders], right, alpha, metric="right")


def search_words(method: str, model: str = DEFAULT_MODEL) -> str:
    """How the builds were searched, in words, for the report's ``search``."""
    if method == "keyword":
        return "keyword: BM25, no vectors"
    if method == "dense":
        return f"dense: {model} alone"
    ranker = "reranked by the cross-encoder" if method == "hybrid_reranked" else "no reranker"
    return f"hybrid: BM25 + {model}, fused by RRF (k = 60), {ranker}"


def _technique(r: BuildResult, s: tuple[int, int] | None, p: float | None, q: float | None, *, best: bool) -> dict:
    entry = {"technique": r.technique, "name": NAMES.get(r.technique, r.technique), "build": r.key,
             "right": r.right, "questions": r.questions, "chunks": r.chunks, "best": best, "tie": False}
    if s is not None:
        assert p is not None and q is not None, "a comparison with the best comes with its p-values"
        entry["against_best"] = {"best_only": s[0], "this_only": s[1], "p": round(p, 6), "p_holm": round(q, 6)}
    return entry


def compare_builds(documents: Any, golden: Golden | str | Path | Iterable[Question], *,
                   settings: CompareSettings | None = None, models: ChatModels = ChatModels(),
                   cutter: Cutter | None = None, keeping: BuildsKeeping = BuildsKeeping(),
                   hooks: BuildsHooks = BuildsHooks()) -> dict[str, Any]:
    """Compare the chunking techniques on the golden questions; the run's report (saved to ``keeping.save_to``).

    ``documents`` is a corpus (a JSONL file or a folder), ``{doc_id: text or path}``, ``{collection:
    {doc_id: ...}}`` (each collection built apart and asked only its questions) or a list of paths;
    ``golden`` a path, an ``s3://`` or Blob address (read with ``hooks.fetcher``), a ``Golden`` or questions.

    How the run is made is ``settings`` (``CompareSettings``: the techniques, sizes and headings planned,
    the budget, the build in use, late chunking, the level, the method and model, where builds are made).
    ``models`` (``ChatModels``) answers and judges, cuts ``llm`` and writes ``c`` notes where the cutters
    take it (a ``ChatModel``'s notes are kept in the cache file with the vectors, so a rerun asks for none
    again). The build in use (``current``) stays the pick unless beaten beyond luck. ``cutter`` makes a
    build's chunks from its key (default: ``evaluation.chunking``'s cutters).
    """
    settings = settings or CompareSettings()
    started = time.perf_counter()
    stamp = run_stamp(keeping.created_at)
    collections = collections_of(documents)
    read, questions = golden_of(golden, hooks.fetcher)
    judged = models.judged()
    chat, cut_model, note_model = models.chat, models.cutting, models.noting
    late_reason = None
    if settings.late is not False:
        from .cutters import late_problem

        late_reason = late_problem(settings.model)
    if settings.late is True and late_reason is not None:
        raise UsageError(f"late=True: {late_reason}")
    plan = plan_builds(settings.techniques, sizes=settings.sizes, child_sizes=settings.child_sizes,
                       headings=settings.headings, late=settings.late, late_reason=late_reason,
                       chat=ChatAtHand(cut=cut_model is not None, notes=note_model is not None))
    if not plan.keys:
        reasons = "; ".join(s["reason"] for s in plan.skipped)
        raise UsageError(f"no build to make: {reasons}")
    plan.check_current(settings.current)
    store = store_to_save_in(keeping.save_to)
    notes = sentences = None
    if cutter is None:
        from ..engine.scratch import TextVectors
        from .cutters import check_keys, chunking_cutter
        from .notes import ChatNotes

        check_keys(plan.keys)
        notes = ChatNotes(settings.cache) if note_model is not None else None
        sentences = (TextVectors(cache=settings.cache, threads=settings.threads) if settings.cache is not None
                     else None)
        cutter = chunking_cutter(chat=chat, notes=notes, sentences=sentences, model=settings.model,
                                 cut_with=models.cut_with, context_with=models.context_with)
    try:
        made = run_builds(collections, read, plan.keys, settings=settings, judged=judged, cutter=cutter,
                          hooks=BuildsHooks(progress=hooks.progress))
    finally:
        for kept in (notes, sentences):
            if kept is not None:
                kept.close()
    results, stopped = made.results, made.stopped
    scored = "answered" if judged is not None else "found"
    report = builds_report(results, scored=scored, settings=settings, skipped=plan.skipped)
    budget = settings.budget
    report = {"format": REPORT_FORMAT, "kind": "chunking", **stamp,
              "golden": {"sha256": read.sha256, "questions": len(questions),
                         "scored": results[0].questions if results else 0},
              "corpus": {"documents": sum(len(c) for c in collections.values()),
                         "sha256": _corpus_sha256(collections),
                         **({"collections": {name: len(c) for name, c in collections.items()}}
                            if len(collections) > 1 else {})},
              "scored_note": (f"right = the chat model's answer from the first {budget} characters handed over, judged "
                              "against the reference answer" if scored == "answered" else
                              f"right = an expected document among the first {budget} characters handed over; no chat "
                              "model was given, so answers were not written or judged"),
              **report, "failed": made.failed, "vectors": made.vectors,
              "seconds": round(time.perf_counter() - started, 3),
              # builds the race stopped (builds.race): never ranked or picked, each with what it was asked and why
              **({"stopped": stopped} if stopped else {})}
    if store is not None:
        from ..report.builds.compare_page import render_chunking_html

        store.save(report, read.raw or None, html=render_chunking_html(report))
    return report


def vectrixdb_keywords(search: Any, open_with: Any, workers: int | None) -> dict[str, Any]:
    """VectrixDB's ``search``, ``open_with`` and ``workers`` as the settings' fields (method, model, threads)."""
    given: dict[str, Any] = {}
    if search is not None:
        given["method"] = method_of_search(search)
    model = model_of(open_with)
    if model is not None:
        given["model"] = model
    if workers is not None:
        given["threads"] = workers
    return given


def _corpus_sha256(collections: dict[str, Corpus]) -> str:
    """One collection's own sha256; several: the sha256 of their names and sha256s, in order."""
    if len(collections) == 1:
        return next(iter(collections.values())).sha256
    joined = "".join(f"{name}\0{c.sha256}\n" for name, c in collections.items())
    return hashlib.sha256(joined.encode("utf-8", "surrogateescape")).hexdigest()
