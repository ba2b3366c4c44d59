"""``compare_chunking``: every build, each technique at its best, compared question by question.

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
``alpha`` could be as good as the best and is marked ``tie``. The pick is ``chunking_choice``'s:
the build in use (``current``) stays unless the best beats it beyond luck.

Nothing is switched, and the report holds counts, keys and ids: never a question's or a passage's
text, nor which question a build missed.
"""
from __future__ import annotations

import math
import time
from datetime import datetime
from pathlib import Path
from typing import Any, Iterable, Sequence

from ..engine.corpus import Corpus
from ..errors import UsageError
from ..golden import Golden, Question
from ..scoring.judging import judge as judge_hits
from ..scoring.significance import exact_binary_p, holm
from ..store.builds import run_stamp, store_to_save_in
from ..target import Hit
from .choice import chunking_choice, split
from .cut import Cut, Cutter
from .inputs import corpus_of, golden_of, labelled_questions
from .judged import Answer, Judge, answer_with, judge_with
from .plan import NAMES, plan_builds
from .results import BuildResult, ranked
from .runner import Progress, each_build, progress_of, scratch, setup_for
from .settings import ALPHA, DEFAULT_MODEL, CompareSettings

METHOD = "hybrid"
REPORT_FORMAT = 1
SEARCH = f"hybrid: BM25 + {DEFAULT_MODEL}, fused by RRF (k = 60), no reranker"


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


def run_builds(corpus: Corpus | str | Path, golden: Golden | str | Path | Iterable[Question], keys: Sequence[str], *,
               settings: CompareSettings | None = None, answer: Answer | None = None, judge: Judge | None = None,
               cutter: Cutter | None = None, progress: Progress | bool | None = None,
               **keywords: Any) -> tuple[list[BuildResult], dict, list[dict]]:
    """Make each build of ``keys`` in turn and score every question on it; (results, vector counts, the
    builds that failed with their errors). ``settings`` (``CompareSettings``: the budget and where builds
    are made, any of its fields a keyword instead) as ``compare_chunking``'s."""
    settings = CompareSettings.of(settings, **keywords)
    if (answer is None) != (judge is None):
        raise UsageError("judged mode needs both answer and judge (or chat, which makes both); give both or neither")
    corpus = corpus_of(corpus)
    read, questions = labelled_questions(golden, corpus)
    if answer is not None:
        questions = [q for q in questions if q.reference]
        if not questions:
            raise UsageError("judged mode checks answers against the golden reference answers, and no labelled "
                             "question has one; add reference to some rows, or leave the chat model out")
    if cutter is None:
        from .cutters import check_keys, chunking_cutter

        check_keys(keys)
        cutter = chunking_cutter()
    draw, close = progress_of(progress)
    texts = [q.question for q in questions]
    results: list[BuildResult] = []
    try:
        with scratch(settings) as where:
            for made in each_build(list(keys), corpus, cutter, where, progress=draw):
                built, target, tell = made.built, made.target, made.tell
                setup = setup_for(target, METHOD, (DEFAULT_MODEL,))
                tell(f"asking {len(texts)} questions", 0, len(texts))
                found = target.search_batch(setup, texts, depth_for(built.cut, settings.budget))
                where.count_queries(target, setup)
                outcomes: dict[str, bool] = {}
                handed_chars = 0
                for number, (question, hits) in enumerate(zip(questions, found, strict=True), start=1):
                    handed = handed_over(hits, built.cut, settings.budget)
                    handed_chars += sum(len(text) for _, text in handed)
                    if answer is None:
                        outcomes[question.id] = judge_hits(question, [h for h, _ in handed], "doc").first is not None
                    else:
                        tell("answering and judging", number - 1, len(questions))
                        written = answer(question, [text for _, text in handed])
                        outcomes[question.id] = bool(judge(question, written))
                results.append(BuildResult(key=built.cut.key, technique=built.cut.technique, size=built.cut.size,
                                           letter=built.cut.letter, chunks=len(built.cut.chunks),
                                           seconds=built.seconds, outcomes=outcomes, handed_chars=handed_chars))
            vectors, failed = where.vectors(), where.failed
    finally:
        close()
    return results, vectors, failed


def chunking_report(results: Sequence[BuildResult], *, scored: str, budget: int, skipped: Sequence[dict] = (),
                    current: str | None = None, alpha: float = ALPHA) -> dict[str, Any]:
    """Every build, each technique at its best with its comparison against the best, and the pick (counts only)."""
    order = ranked(results)
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
            techniques.append({**_technique(r, s, p, q, best=False), "tie": q > alpha})
        ties = [t["technique"] for t in techniques[1:] if t["tie"]]
    else:
        ties = []
    return {"scored": scored, "budget": budget, "search": SEARCH, "alpha": alpha,
            "builds": builds, "techniques": techniques, "ties": ties,
            "pick": chunking_choice(results, current, alpha=alpha), "skipped": list(skipped),
            "rule": ("builds rank by questions right, then fewer chunks; each other technique's best build is compared "
                     "with the best technique's over the questions only one of the two got right (exact sign test, "
                     f"Holm-adjusted across techniques); adjusted p over {alpha:g}: tied")}


def _technique(r: BuildResult, s: tuple[int, int] | None, p: float | None, q: float | None, *, best: bool) -> dict:
    entry = {"technique": r.technique, "name": NAMES.get(r.technique, r.technique), "build": r.key,
             "right": r.right, "questions": r.questions, "chunks": r.chunks, "best": best, "tie": False}
    if s is not None:
        entry["against_best"] = {"best_only": s[0], "this_only": s[1], "p": round(p, 6), "p_holm": round(q, 6)}
    return entry


def compare_chunking(corpus: Corpus | str | Path, golden: Golden | str | Path | Iterable[Question], *,
                     settings: CompareSettings | None = None, chat: Any = None, answer: Answer | None = None,
                     judge: Judge | None = None, cutter: Cutter | None = None, save_to: Any = None,
                     progress: Progress | bool | None = None, created_at: datetime | None = None,
                     **keywords: Any) -> dict[str, Any]:
    """Compare the chunking techniques on the golden questions; the run's report (saved with ``save_to``).

    How the run is made is ``settings`` (``CompareSettings``: the techniques, sizes and headings planned,
    the budget, the build in use, late chunking, the level, where builds are made); any of its fields may
    be given as a keyword instead (``techniques=("markdown",)``, ``budget=4000``), over ``settings``.

    ``chat`` (a callable from chat messages to text, or a ``ChatModel``) answers and judges, and cuts
    ``llm`` and writes ``c`` notes where the cutters take it (a ``ChatModel``'s notes are kept in the
    cache file with the vectors, so a rerun asks for none again); ``answer`` and ``judge`` replace the
    first two. The build in use (``current``) stays the pick unless beaten beyond luck. ``cutter`` makes
    a build's chunks from its key (default: ``evaluation.chunking``'s cutters).
    """
    settings = CompareSettings.of(settings, **keywords)
    started = time.perf_counter()
    stamp = run_stamp(created_at)
    corpus = corpus_of(corpus)
    read, questions = golden_of(golden)
    if chat is not None:
        answer = answer or answer_with(chat)
        judge = judge or judge_with(chat)
    late_reason = None
    if settings.late is not False:
        from .cutters import late_problem

        late_reason = late_problem()
    if settings.late is True and late_reason is not None:
        raise UsageError(f"late=True: {late_reason}")
    plan = plan_builds(settings.techniques, sizes=settings.sizes, child_sizes=settings.child_sizes,
                       headings=settings.headings, chat=chat is not None, late=settings.late, late_reason=late_reason)
    if not plan.keys:
        reasons = "; ".join(s["reason"] for s in plan.skipped)
        raise UsageError(f"no build to make: {reasons}")
    store = store_to_save_in(save_to)
    notes = sentences = None
    if cutter is None:
        from ..engine.scratch import TextVectors
        from .cutters import check_keys, chunking_cutter
        from .notes import ChatNotes

        check_keys(plan.keys)
        notes = ChatNotes(settings.cache) if chat is not None else None
        sentences = (TextVectors(cache=settings.cache, threads=settings.threads) if settings.cache is not None
                     else None)
        cutter = chunking_cutter(chat=chat, notes=notes, sentences=sentences)
    try:
        results, vectors, failed = run_builds(corpus, read if read is not None else questions, plan.keys,
                                              settings=settings, answer=answer, judge=judge, cutter=cutter,
                                              progress=progress)
    finally:
        for kept in (notes, sentences):
            if kept is not None:
                kept.close()
    scored = "answered" if answer is not None else "found"
    report = chunking_report(results, scored=scored, budget=settings.budget, skipped=plan.skipped,
                             current=settings.current, alpha=settings.alpha)
    budget = settings.budget
    report = {"format": REPORT_FORMAT, "kind": "chunking", **stamp,
              "golden": {"sha256": read.sha256 if read is not None else None, "questions": len(questions),
                         "scored": results[0].questions if results else 0},
              "corpus": {"documents": len(corpus), "sha256": corpus.sha256},
              "scored_note": (f"right = the chat model's answer from the first {budget} characters handed over, judged "
                              "against the reference answer" if scored == "answered" else
                              f"right = an expected document among the first {budget} characters handed over; no chat "
                              "model was given, so answers were not written or judged"),
              **report, "failed": failed, "vectors": vectors, "seconds": round(time.perf_counter() - started, 3)}
    if store is not None:
        from ..report.builds.compare_page import render_chunking_html

        store.save(report, read.raw if read is not None else None, html=render_chunking_html(report))
    return report
