"""Evaluate every setup of every target on a golden file: the product's main job (``run_evaluation``).

``run_evaluation`` takes the run's settings (``EvaluationSettings``) and four small frozen objects, each one
idea: which setups run (``SetupSelection``), where the run is kept (``RunKeeping``), its date and id
(``RunStamp``) and the caller's callbacks (``RunHooks``). ``evaluation.evaluate``, the keyword form users
call (``evaluate(target, golden, save_to="runs", timed=20)``), lives in ``compat/vectrixdb/evaluating.py``
and maps its keywords onto these.

One run is the three steps of ``run``: plan (golden file, setups, timed sample, missing documents),
time every setup side by side (an untimed warm-up each, then the sample searched one at a time as a
caller would, nothing cached, question by question on every setup in a rotating order: the times
and those questions' ranks; ``run.side_by_side``), then each setup's other questions in a batch,
assemble the report.
A setup whose search fails is reported with its error, never picked, and the others go on.

``save_report`` keeps a report in a store with its golden file and its page (``report.html``, rendered
here because the store sits below the report package and keeps bytes only).

A run is never lost to its store: the store is checked (``RunStore.check``) before the first search,
and when saving still fails at the end the report is written to a local file and
``RunNotSavedError`` carries it and that file's path; ``save_unsaved`` (``runs import``) keeps that
file in the store later.
"""
from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterable, Mapping, Sequence, cast

from .settings import (DEFAULT_TIME_BUDGET, DEFAULT_TIME_FLOOR, DEFAULT_TIME_MARGIN,  # noqa: F401  (their old address)
                       DEFAULT_TIMED, EvaluationSettings)

if TYPE_CHECKING:
    from .golden import Golden, Question
    from .run import Clock, Plan, Progress
    from .store import Fetcher, RunStore
    from .store.shape import Report
    from .target import Target

log = logging.getLogger(__name__)

# ``import evaluation`` loads this module (through ``evaluation.evaluate``, the keyword form), so it loads
# the steps, numpy among them, only when a run starts; the settings module it reads is light (no numpy).


@dataclass(frozen=True)
class SetupSelection:
    """Which setups run: ``only`` (patterns a setup key must match, None: every one) and ``skip`` (patterns
    left out), as ``run.plan_run`` reads them."""

    only: Iterable[str] | None = None
    skip: Iterable[str] = ()


@dataclass(frozen=True)
class RunKeeping:
    """Where a run is kept, and what it takes back from there.

    ``store``: a ``RunStore``, a store address, or a files object (``report_store`` takes each); None keeps
    nothing. ``fallback_dirs``: where the report is written when saving fails (default: the current
    folder). ``reuse_times``: setups the store's newest run timed on the same index take those times
    (``run.retime``). ``work_dir``: each finished step kept there, so a stopped run resumes."""

    store: Any = None
    fallback_dirs: Sequence[str | Path] | None = None
    reuse_times: bool = False
    work_dir: str | Path | None = None


@dataclass(frozen=True)
class RunStamp:
    """The run's date and id; None: now, and an id made from it (``run.plan_run``)."""

    created_at: datetime | None = None
    run_id: str | None = None


@dataclass(frozen=True)
class RunHooks:
    """The caller's own objects a run calls: ``progress`` (``(done, total, label)``, or True for the command
    line's bar), ``warn`` (a sentence), ``clock`` (seconds, for timing searches) and ``fetcher``
    (``fetch(uri) -> bytes``, for a golden file at an ``s3://`` or Blob address)."""

    progress: Progress | bool | None = None
    warn: Callable[[str], None] | None = None
    clock: Clock = time.perf_counter
    fetcher: Fetcher | None = None


def run_evaluation(targets: Target | Sequence[Target] | Mapping[str, Target],
                   golden: Golden | str | Path | Sequence[Question], *,
                   settings: EvaluationSettings | None = None, selection: SetupSelection = SetupSelection(),
                   keeping: RunKeeping = RunKeeping(), stamp: RunStamp = RunStamp(), hooks: RunHooks = RunHooks(),
                   holes: Any = None) -> Report:
    """Run every selected setup on the golden file's labelled questions; return the report.

    ``targets``: a ``Target``, a list of them, or a mapping from a name people read to one
    (``{"VectrixDB": target}``: each searched under its name). ``golden``: a ``Golden``, a path, an
    ``s3://`` or Blob address (read with ``hooks.fetcher``), or a list of ``Question``s (see
    ``golden.golden_of``: no file is kept for those). Anything else is a ``WrongArgumentError``.
    How the run is made is ``settings`` (None: the defaults); which setups run, ``selection``; where it is
    kept, ``keeping``.

    ``hooks.progress`` True draws the command line's bar on stderr (a first line says how many setups and
    questions will run; every setup's stage is labelled).

    ``keeping.store`` is checked before the first search and the report is saved there at the end. When
    that save fails, the report is written as ``unsaved-run-<id>.json`` in the first of
    ``keeping.fallback_dirs`` (default: the current folder) that takes it, and ``RunNotSavedError`` is
    raised with the report and that path. With ``keeping.reuse_times``, a setup whose times the store's
    newest run measured live on the same index state, software and timed sample, at most
    ``run.DEFAULT_MAX_AGE_DAYS`` ago, takes those times and is not timed again (``run.retime``); its entry
    says ``timed_in``. With ``keeping.work_dir`` (a local folder), each finished step is kept there as it
    ends (``run.work_folder``), so a run stopped midway and started again with the same inputs resumes
    there, decides the same, and keeps its first id and date; the folder is removed once the report is made.

    ``holes``: a ``holes.HoleJudge``: once the report is assembled, and before it is saved, its unjudged
    results are graded by that judge after it is calibrated on the golden file's own labels; the report
    keeps the grades and the numbers they give under ``judged``, apart from the people's (``holes.judging``).

    The costly setups race (``run.race``; ``scoring.racing`` argues the test): they search the questions
    batch by batch in a seeded order, and one shown, with the family-wise error held at ``alpha`` over
    every look, to find more than the picks' largest allowance fewer than a setup that searches every
    question is stopped there: never picked, kept in the report with the questions it searched, its
    interval and its adjusted p (``stopped``; the report's ``race`` lists them and the cost).
    ``settings.exhaustive`` searches every setup on every question.
    """
    from .golden import golden_of
    from .run import (DEFAULT_MAX_AGE_DAYS, PlanContext, assemble_report, plan_run, reusable_times, setup_steps,
                      time_setups)
    from .run.local_race import rank_planned
    from .run.race import plan_race
    from .run.searching import Counter
    from .run.work_folder import TIMES, WorkFolder
    from .store import report_store
    from .target import as_targets

    warn, progress = hooks.warn, hooks.progress
    targets = as_targets(targets)
    store = None
    if keeping.store is not None:
        store = report_store(keeping.store)  # a store, an address, or a files object around the user's own client
        store.check()
    golden = golden_of(golden, hooks.fetcher)
    if len(targets) > 1:  # one that does not answer is reported failed; the others run
        from .unreachable import reachable_or_reported

        targets = reachable_or_reported(targets, warn)
    newest = newest_report(store, warn=warn if keeping.reuse_times else None) if store is not None else None
    plan = plan_run(targets, golden, only=selection.only, skip=selection.skip,
                    settings=settings or EvaluationSettings(),
                    context=PlanContext(run_id=stamp.run_id, created_at=stamp.created_at, warn=warn,
                                        held_before=held_in_report(newest)))
    plan = plan.with_race(plan_race(plan))
    kept, resumed = None, False
    if keeping.work_dir is not None:
        started = WorkFolder.start(keeping.work_dir, plan)
        kept, plan, resumed = started.folder, started.plan, started.resumed
    reused = (reusable_times(plan, newest, max_age_days=DEFAULT_MAX_AGE_DAYS, warn=warn) if keeping.reuse_times
              else {})
    bar = None
    if progress is True:
        from .progress import ProgressBar

        progress = bar = ProgressBar()
    say = getattr(progress, "say", None)
    if callable(say):
        say(plan_line(plan))
        if resumed and kept is not None:
            say(f"resuming run {plan.run_id} where it stopped (its finished steps are kept in {kept.root})")
    by_name = {t.name: t for t in targets}
    keys = plan.setup_keys
    per_setup = setup_steps(plan)
    total = per_setup * len(keys)
    done = dict.fromkeys(keys, 0)
    from .progress import RunWork
    from .run.judged import timed_ids
    from .run.shards import estimated_seconds

    # the time left is the run's: every setup's steps weighed by what one costs it (a cross-encoder's
    # question, hundreds of BM25 queries), so the fast setups ending early do not promise a fast finish
    work = RunWork({s.key: estimated_seconds(s) for s in plan.setups}, dict.fromkeys(keys, per_setup),
                   batch_weights=batch_weights(plan, cached_shares(plan, by_name)),
                   timed_steps={key: 1 + len(timed_ids(plan, key)) for key in keys},  # the warm-up, then the sample
                   kinds={s.key: f"{s.engine}:{s.ranker or len(s.models)}" for s in plan.setups})
    estimate = getattr(progress, "estimate", None)  # the bar's: the time left
    if callable(estimate):
        estimate(work.left, "searches")

    def step_of(n: int, key: str) -> Progress:
        def step(count: int, _total: int, label: str) -> None:
            done[key] = count  # the bar is every setup's steps added up: they are timed side by side
            stage = label.split(": ", 1)[-1]
            timed = stage.startswith(("warming up", "timing searches side by side"))
            work.advance(key, count, timed=timed)
            if timed:  # every setup at once: one bar
                label = f"[{len(keys)} setup{'s' if len(keys) != 1 else ''}] {stage.split(' (')[0]}"
            else:
                label = f"[{n + 1}/{len(keys)}] {label}"
            if progress:
                progress(sum(done.values()), total, label)
        return step

    counters = {key: Counter(per_setup, key, step_of(n, key)) for n, key in enumerate(keys)}
    try:
        times = kept.get(TIMES) if kept is not None else None
        if times is None:
            times = time_setups(by_name, plan, keys, clock=hooks.clock, reused=reused, counters=counters)
            if kept is not None:
                kept.put(TIMES, times)
        else:  # kept by the run this one resumes: the same times, so the same picks
            for key in keys:
                counters[key].advance(1 + len(timed_ids(plan, key)))
        entries = rank_planned(by_name, plan, times, counters=counters, work=kept)
    except BaseException:
        if bar is not None:
            bar.close()
        raise
    if bar is not None:
        bar.close()
    report = assemble_report(plan, entries)
    if holes is not None:  # before saving: a run is kept once, with its judged block (a judge that fails
        report = holes(report, golden, targets)  # leaves the work folder, so the run resumes where it was)
    try:
        if store is not None:
            # questions given in memory: no file to keep. A Report is this dict at run time (mypy keeps the two apart)
            _save(store, cast("dict[str, Any]", report), golden.raw or None, keeping.fallback_dirs)
    finally:
        if kept is not None:  # the report is made (and kept, or kept in a file by _save): nothing to resume
            kept.discard()
    return report


# Reranked setups of one target score each (question, passage) pair once between them (the engine's
# shared pair scores): on the sample, the second and third reranked setups' batches took 20% and 10% of
# the first's time (20 s and 10 s after 100 s, 2026-12-03), so each after the first weighs this share.
SHARED_PAIRS_SHARE = 0.2


def batch_weights(plan: Plan, cached: Mapping[str, float] | None = None) -> dict[str, float]:
    """What one question of its batch is expected to cost each setup, in seconds (``run.shards.estimated_seconds``),
    a reranked setup after its target's first weighing the pairs it is likely to add (``SHARED_PAIRS_SHARE``:
    a timed search scores its own pairs, a batch shares them). ``cached``: per setup, the share of its
    questions whose vectors or pair scores the cache file holds (``cached_shares``): those weigh a keyword
    search, so a second run's time left is not the first's."""
    from .run.shards import KEYWORD_SECONDS, VECTOR_SECONDS, estimated_seconds

    weights, seen = {}, set()
    for setup in plan.setups:
        seconds = estimated_seconds(setup)
        if setup.ranker == "cross-encoder" and setup.engine == "embedded":
            if setup.target in seen:
                base = KEYWORD_SECONDS + VECTOR_SECONDS * len(setup.models)
                seconds = base + (seconds - base) * SHARED_PAIRS_SHARE
            seen.add(setup.target)
        share = min(max((cached or {}).get(setup.key, 0.0), 0.0), 1.0)
        weights[setup.key] = seconds * (1 - share) + min(seconds, KEYWORD_SECONDS) * share
    return weights


def cached_shares(plan: Plan, targets: Mapping[str, Any]) -> dict[str, float]:
    """Per setup, the share of the plan's questions its target's cache already holds the batch work of
    (a target's ``cached_share``; 0 for a target without one)."""
    texts = [q.question for q in plan.questions]
    shares = {}
    for setup in plan.setups:
        ask = getattr(targets.get(setup.target), "cached_share", None)
        shares[setup.key] = float(ask(setup.ranker, setup.models, texts)) if ask else 0.0
    return shares


def plan_line(plan: Plan) -> str:
    """What a run will do, in one line a first-time reader can parse, before its first search."""
    setups, questions = len(plan.setups), len(plan.questions)
    timed = len(plan.timed_question_ids)
    line = (f"running {setups} setup{'s' if setups != 1 else ''} on {questions} "
            f"question{'s' if questions != 1 else ''}: "
            f"each searches up to {timed} of them one at a time, side by side with the others, to time them, "
            "and the rest in one batch")
    race = plan.race
    if race is not None:
        raced = len(race.raced)
        line += (f"; the {raced} costly one{'s' if raced != 1 else ''} race{'' if raced != 1 else 's'} in batches, "
                 f"each stopped once shown to find more than {race.points:g} points fewer than a setup that "
                 "searches every question (--exhaustive: no race)")
    return line


def held_in_latest_run(store: Any) -> dict[str, set[str]]:
    """Per target name, the expected ids the store's newest run found there (expected, and not under its
    ``missing``): what a target "no longer holds" when this run misses them. Empty for an empty store or
    one whose newest report cannot be read (the run goes on; absent ids then read "does not hold")."""
    return held_in_report(newest_report(store))


def newest_report(store: Any, warn: Callable[[str], None] | None = None) -> dict[str, Any] | None:
    """The store's newest run's report, or None for an empty store or one whose newest report cannot be
    read (logged): what ``held_in_latest_run`` and the app's shard sizes (``run.measured_times``) read.
    ``warn`` is told when a newest run exists but cannot be read: a run that asked to reuse its times
    must hear why every setup is timed live instead (an edited report is refused whole when read)."""
    from .errors import TEXT_LIMIT, StoreError, printable

    try:
        ids = store.ids()
        report = store.get(ids[0]) if ids else None
    except (StoreError, OSError, ValueError, KeyError) as err:
        log.info("the newest run could not be read (%s); absent ids read as never held", err)
        if warn is not None:
            warn(f"the store's newest run could not be read, so no times are reused and every setup is "
                 f"timed live: {printable(str(err), limit=TEXT_LIMIT)}")
        return None
    return report if isinstance(report, dict) else None


def held_in_report(report: dict[str, Any] | None) -> dict[str, set[str]]:
    """Per target name, the expected ids ``report`` found there (see ``held_in_latest_run``)."""
    if not isinstance(report, dict):
        return {}
    expected = {str(e).split("#page=")[0] for q in report.get("questions") or [] if isinstance(q, dict)
                for e in q.get("expected") or []} | {str(e) for q in report.get("questions") or []
                                                      if isinstance(q, dict) for e in q.get("expected") or []}
    held = {}
    for name in report.get("targets") or {}:
        gone = (report.get("missing") or {}).get(name) or {}
        held[name] = expected - {str(d) for d in (gone.get("documents") or [] if isinstance(gone, dict) else [])}
    return held


def _save(store: Any, report: dict[str, Any], golden_raw: bytes | None,
          fallback_dirs: Sequence[str | Path] | None) -> None:
    from .errors import RunNotSavedError
    from .store.runs import IMPORT_COMMAND, keep_unsaved

    try:
        save_report(store, report, golden_raw)
    except Exception as err:  # whatever failed, the finished run is kept
        kept = keep_unsaved(report, fallback_dirs if fallback_dirs is not None else [Path.cwd()])
        address = getattr(store, "address", store)
        where = (f"the report is kept in {kept}; once the store takes files again, keep it there with "
                 f"`{IMPORT_COMMAND} {kept} --store {address}`" if kept else "no local folder took the report either")
        raise RunNotSavedError(f"run {report.get('id')} could not be saved in {address} ({err}); {where}",
                               report=report, kept=kept, cause=err) from err


def save_unsaved(store: RunStore, raw: bytes, golden_raw: bytes | None = None, *, source: str = "the file") -> str:
    """Keep in ``store`` the report an ``unsaved-run-<id>.json`` holds (``raw``, read from ``source``):
    what a failed save left (``_save``), saved as that save would have (``save_report``: its golden file
    when ``golden_raw`` is given, and its page); the run id.

    The report is checked as a kept one is (``store.runs.checked_report``), so a file edited since, or
    a report that held NaN (kept as it was so that nothing was lost), is a ``DamagedFileError`` naming the
    field. A run the store keeps already with the very same report is not written again; one it keeps
    with another report is a ``StoreError``, as ``save`` says for any id kept already.
    """
    from .errors import StoreError
    from .store.runs import checked_report

    report = checked_report(raw, source)
    if store.has(report["id"]):
        if store.get(report["id"]) != report:
            raise StoreError(f"{source}: run {report['id']} is kept in {store.address} already, with another "
                             "report; a run is kept once, so nothing was written")
        return report["id"]
    return save_report(store, report, golden_raw)


def save_report(store: RunStore, report: dict[str, Any], golden_raw: bytes | None = None) -> str:
    """Keep ``report`` in ``store`` with its golden file and its ``report.html``; the run id (as
    ``RunStore.save``; ``store.report_address(run_id)`` says where it went).

    The page holds this run and the older runs the store keeps on the same golden file, named by
    question id only (anyone who may read runs may read it), and the store's latest chunking and matrix
    runs in a Chunking tab when it keeps any (ids and numbers only). The store's rules hold: everything is
    checked first, nothing is written over.
    """
    from .report.html import run_page

    return store.save(report, golden_raw, html=run_page(report, store))
