"""Step 1 of a run: ``plan_run``, everything a run needs before its first search, as a ``Plan``.

It reads the golden file, chooses the setups, samples the timed questions (seeded) and looks up the
expected documents on every target. The plan (``planned.Plan``) is what the other steps (``one_setup``,
``assemble``) need, and all they read: a Durable activity given the plan and a setup's key finds the
setup again on the target it opens (a key is ``<target>.<method>.<models>``).
"""
from __future__ import annotations

import fnmatch
import logging
import random
import warnings
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Sequence

from ..answers.stale import stale_warnings
from ..errors import GoldenFileError, MissingDocumentsWarning, UsageError, did_you_mean
from ..golden.queries import chunk_labels_as_documents
from ..golden.records import known_id
from ..golden import Golden, Question, explain_problems, golden_of, run_problems, unscorable_labels
from ..golden.check import HasChunks, nearest_ids, nothing_findable, nothing_findable_problem, unfound_sentence
from ..report.notes import missing_note
from ..store.report_parts import Missing
from ..settings import EvaluationSettings
from ..store.runs import new_run_id
from ..store.sources import Fetcher
from ..target import Setup, Target, as_targets
from .planned import Plan, PlannedSetup, planned_question

log = logging.getLogger(__name__)

@dataclass(frozen=True)
class PlanContext:
    """What a plan is made in, beside its settings: the run's id and date (None: a new id, now), where its
    warnings go (``warn``; None: the log), how a golden file given by its address is read (``fetcher``, as
    ``read_golden`` takes it), and what an earlier run found on each target (``held_before``: target name
    -> ids, see ``evaluate.held_in_latest_run``), which tells "no longer holds" from "does not hold"."""

    run_id: str | None = None
    created_at: datetime | str | None = None
    warn: Callable[[str], None] | None = None
    fetcher: Fetcher | None = None
    held_before: Mapping[str, Iterable[str]] | None = None


def plan_run(targets: Target | Sequence[Target], golden: Golden | str | Path, *,
             only: Iterable[str] | None = None, skip: Iterable[str] = (), settings: EvaluationSettings | None = None,
             context: PlanContext | None = None, **keywords: Any) -> Plan:
    """Everything a run needs before its first search, as a ``Plan`` (see the module docstring).

    Raises ``GoldenFileError`` when the golden file has any error (every one listed by line, as
    ``golden check`` lists them: ``check_golden(...).ok`` is False exactly when this refuses), and
    ``UsageError`` for settings or setup patterns that do not fit, all before any search. Expected
    documents a target does not hold are warned and kept under ``missing``; their questions stay in.
    At ``by="evidence"``, evidence quotes that no chunk of their expected documents holds are warned
    about too (on targets that can give their chunk texts), and labels a target can never find as
    written (``unscorable_labels``: a page of a document without pages, ...), in ``golden check``'s words.

    ``settings`` is the run's ``EvaluationSettings``; any of its fields may be given as a keyword
    instead (``timed=20``, ``by="chunk"``), over ``settings`` when both are given. ``context``: the run's
    id and date, its ``warn``, ``fetcher`` and ``held_before`` (``PlanContext``).
    """
    settings = EvaluationSettings.of(settings, **keywords)
    context = context or PlanContext()
    warn, held_before = context.warn, context.held_before
    targets = as_targets(targets)
    names = [t.name for t in targets]
    if len(set(names)) != len(names):
        raise UsageError(f"two targets share a name ({', '.join(names)}); setup keys start with the "
                         "target's name, so give each target its own")
    golden = golden_of(golden, context.fetcher)
    told = warn  # the caller's own, for missing documents (said as a MissingDocumentsWarning either way)
    warn = warn or log.warning
    problems = run_problems(golden)
    if problems:
        raise GoldenFileError(explain_problems(golden.source, problems, golden.read_as))
    questions = list(golden.labelled)
    if golden.format == "queries" and settings.by != "chunk":
        questions = _chunk_labels_by_document(questions, targets, golden.source, warn)

    if settings.min_grade > 1:  # a question with nothing graded that high has nothing to find: not scored
        questions = [q for q in questions if q.relevant(settings.min_grade)]
        if not questions:
            raise GoldenFileError(f"{golden.source}: no question has a document graded {settings.min_grade} or "
                                  "more, so nothing can be scored at that relevance level; lower --min-grade")
    missing = find_missing(targets, questions, settings.by, held_before=held_before)
    say_missing(missing, told)
    unfound = found_nowhere(targets, questions, missing, settings)
    if unfound and unfound["questions"] == len(questions):
        raise GoldenFileError(f"{golden.source}: {unfound['sentence']}")
    written = _found_as_written_nowhere(targets, questions, settings.by)  # every label held, none findable
    if written:
        raise GoldenFileError(f"{golden.source}: {written}")
    if unfound:
        warn(f"{golden.source}: {unfound['sentence']}")
    said = set()  # a label no setup can ever find would score 0 everywhere without a word (golden check's words)
    for target in targets:
        for problem in unscorable_labels(questions, target, settings.by):
            if str(problem) not in said:
                said.add(str(problem))
                warn(f"{golden.source}: {problem}")
    if settings.by == "evidence":  # a quote no chunk holds would score 0 without a word
        for target in targets:
            for sentence in stale_warnings(target, golden.source, questions):
                warn(sentence)
    chosen = select_setups(targets, only=only, skip=skip)
    moment = utc(context.created_at)
    return Plan(
        run_id=context.run_id or new_run_id(moment),
        created_at=moment.isoformat().replace("+00:00", "Z"),
        settings=settings,
        golden={"source": golden.source, "sha256": golden.sha256, "format": golden.format,
                "questions": len(golden.questions), "labelled": len(questions),
                "unfilled": golden.unfilled, "drafts": golden.drafts},
        questions=tuple(planned_question(q) for q in questions),  # what a search and its judging read
        timed_question_ids=tuple(q.id for q in _timed_sample(questions, settings) if q.id is not None),
        setups=tuple(PlannedSetup.of(setup) for _, setup in chosen),
        targets={t.name: t.describe() for t in targets},
        missing=missing,
        unfound=unfound or None,
    )


def found_nowhere(targets: Sequence[Target], questions: Sequence[Question], missing: Mapping[str, Any],
                  settings: EvaluationSettings) -> dict[str, Any] | None:
    """The questions none of whose expected items any target holds (they score 0 in every setup), when
    they are all of them (the run is refused: a run in which nothing can be found is not an answer) or
    more than ``settings.unfound_share`` of them (said loudly, in the text, the page and the JSON):
    ``{"questions": count, "of": all, "share", "limit", "ids": [...], "sentence"}``; None otherwise."""
    if not targets or not questions or len(missing) < len(targets):  # a target missing nothing finds every one
        return None
    lost = set.intersection(*(set(gone.get("questions") or ()) for gone in missing.values()))
    share = len(lost) / len(questions)
    if not lost or (len(lost) < len(questions) and share <= settings.unfound_share):
        return None
    where = "the index" if len(targets) == 1 else "any index"
    if len(lost) == len(questions):  # golden check's sentence, with the ids the first target holds nearest
        first = next(iter(missing.values()))
        sentence = nothing_findable(questions, (), where, settings.by, nearest=first.get("nearest") or {})
    else:
        sentence = unfound_sentence(len(lost), len(questions), where, settings.unfound_share)
    ids = [q.id for q in questions if q.id in lost]
    return {"questions": len(lost), "of": len(questions), "share": round(share, 4),
            "limit": settings.unfound_share, "ids": ids, "sentence": sentence}


def _found_as_written_nowhere(targets: Sequence[Target], questions: Sequence[Question], by: str) -> str | None:
    """``golden check``'s error when no target that knows its chunks (an embedded index) can find any label as
    written (every label a page of a document without pages, say), though it holds the documents: a run would
    find nothing in every setup. None when one can, or when a target cannot tell (it is not asked again)."""
    if not targets or not all(isinstance(getattr(t, "index", None), HasChunks) for t in targets):
        return None
    sentences = [nothing_findable_problem(questions, target, by) for target in targets]
    return sentences[0] if all(sentences) else None


def _chunk_labels_by_document(questions: list[Question], targets: Sequence[Target], source: str,
                              warn: Callable[[str], None]) -> list[Question]:
    """A queries file's chunk-id labels (``doc-1:0``) judged by their document: the chunk numbers were made
    by some other chunking than this index's, so ``doc-1:0`` here may be other text (said once, in a warning)."""
    def holds(ids: Iterable[str]) -> set[str]:
        wanted = list(ids)
        return set().union(*(set(target.holds(wanted)) for target in targets)) if targets else set()

    questions, mapped = chunk_labels_as_documents(questions, holds)
    if mapped:
        shown = ", ".join(f"{label} -> {doc}" for label, doc in sorted(mapped.items())[:3])
        more = f" and {len(mapped) - 3} more" if len(mapped) > 3 else ""
        warn(f"{source}: {len(mapped)} relevant id{'s name' if len(mapped) != 1 else ' names'} a chunk "
             f"({shown}{more}); "
             "chunk numbers change with the chunking, so they are judged by their document here; give --by chunk "
             "to judge them as chunks of this index")
    return questions


def utc(moment: datetime | str | None) -> datetime:
    if moment is None:
        return datetime.now(timezone.utc)
    if isinstance(moment, str):
        moment = datetime.fromisoformat(moment.replace("Z", "+00:00"))
    return moment.astimezone(timezone.utc) if moment.tzinfo else moment.replace(tzinfo=timezone.utc)


def find_missing(targets: Sequence[Target], questions: Sequence[Question], by: str = "doc", *,
                 held_before: Mapping[str, Iterable[str]] | None = None) -> dict[str, dict]:
    """Per target, the expected items it does not hold, like with like, and the questions they touch.

    At ``chunk`` the expected chunk ids are looked up among the target's chunks (``holds_chunks``; a
    target without it is not checked); at every other grain the documents of the expected items
    (``r.pdf#page=4`` is ``r.pdf``). ``{"unit": "chunk" | "document", "documents": [absent ids],
    "questions": {id: [its absent ids]}`` for questions none of whose expected items is held (lost),
    ``"partly": {id: [its absent ids]}`` for questions that still hold some}``; targets missing
    nothing are left out. Beside them, ``"nearest": {absent id: up to 3 ids the target holds}`` when
    the target can list its ids (a typo gets the id meant), and ``"was_held"``: the absent ids that
    ``held_before`` says an earlier run found on that target (the only ones it "no longer holds").
    """
    by_chunk = by == "chunk"
    units = {q.id: list(dict.fromkeys(q.expected if by_chunk else (i.doc_id for i in q.expected_items)))
             for q in questions}
    wanted = sorted({u for found in units.values() for u in found})
    missing = {}
    for target in targets:
        if by_chunk:
            holds_chunks = getattr(target, "holds_chunks", None)
            if holds_chunks is None:
                log.info("target %s cannot say which chunks it holds; expected chunks are not checked", target.name)
                continue
            held = set(holds_chunks(wanted))
        else:
            held = set(target.holds(wanted))
        absent = [u for u in wanted if u not in held]
        if not absent:
            continue
        lost: dict[str, list[str]] = {}
        partly: dict[str, list[str]] = {}
        for q in questions:
            gone = [u for u in units[q.id] if u not in held]
            if gone:
                (lost if len(gone) == len(units[q.id]) else partly)[known_id(q)] = gone
        missing[target.name] = {"unit": "chunk" if by_chunk else "document", "documents": absent,
                                "questions": lost, "partly": partly}
        known = _listed_ids(target, by_chunk)
        if known:
            close = {u: nearest_ids(u, known) for u in absent}
            missing[target.name]["nearest"] = {u: found for u, found in close.items() if found}
        before = set((held_before or {}).get(target.name) or ())
        if before & set(absent):
            missing[target.name]["was_held"] = [u for u in absent if u in before]
    return missing


def say_missing(missing: Mapping[str, Mapping[str, Any]], warn: Callable[[str], None] | None = None) -> None:
    """Each target's note (``report.notes.missing_note``), in target order, as a ``MissingDocumentsWarning``
    and to ``warn`` when given (the command line prints it, and ignores the warning); without ``warn``
    the log has it at INFO only, so a script's stderr shows it once."""
    for target_name, gone in missing.items():
        note = missing_note(target_name, Missing.from_json(dict(gone)))
        (warn or log.info)(note)
        warnings.warn(note, MissingDocumentsWarning, stacklevel=3)


def _listed_ids(target: Target, by_chunk: bool) -> list[str]:
    """Every id a target holds, when it can list them without a search (the embedded index), else []."""
    index = getattr(target, "index", None)
    try:
        if by_chunk:
            return sorted(c.id for c in getattr(index, "chunks", ()) or ())
        return sorted(getattr(index, "doc_ids", ()) or ())
    except TypeError:
        return []


def select_setups(targets: Sequence[Target], *, only: Iterable[str] | None,
                  skip: Iterable[str]) -> list[tuple[Target, Setup]]:
    """Every setup of every target, filtered: a pattern is a glob on the key (``local.hybrid*``), or
    whole parts of it in a row (``hybrid``, ``bm25``, ``hybrid.bge-small``), or a retrieval method
    (``hybrid`` also selects ``hybrid_reranked`` and ``hybrid_colbert``)."""
    every = [(t, s) for t in targets for s in t.setups()]
    keys = [s.key for _, s in every]
    only, skip = _patterns(only), _patterns(skip)
    for pattern in (only or []) + skip:
        if not any(_matches(pattern, s) for _, s in every):
            hint = did_you_mean(pattern, keys + sorted({s.method for _, s in every}))
            raise UsageError(f'"{pattern}" matches no setup.{hint} Setups: {", ".join(keys)}')
    chosen = [(t, s) for t, s in every if selected(s, only, skip)]
    if not chosen:
        raise UsageError("--only and --skip leave no setup to run")
    return chosen


def selected(setup: Setup, only: Iterable[str] | None, skip: Iterable[str]) -> bool:
    """Whether ``--only`` / ``--skip`` patterns (``select_setups``' rules) leave ``setup`` in the run."""
    wanted, left_out = _patterns(only), _patterns(skip)
    return (not wanted or any(_matches(p, setup) for p in wanted)) and not any(_matches(p, setup) for p in left_out)


def _patterns(values: Iterable[str] | None) -> list[str]:
    if values is None:
        return []
    if isinstance(values, str):
        values = [values]
    return [p.strip() for v in values for p in v.split(",") if p.strip()]


def _matches(pattern: str, setup: Setup) -> bool:
    if any(ch in pattern for ch in "*?["):
        return fnmatch.fnmatchcase(setup.key, pattern)
    wanted, parts = pattern.split("."), setup.key.split(".")
    in_a_row = any(parts[i:i + len(wanted)] == wanted for i in range(len(parts) - len(wanted) + 1))
    return in_a_row or pattern == setup.retrieval


def _timed_sample(questions: list[Question], settings: EvaluationSettings) -> list[Question]:
    """Up to ``timed`` questions in a seeded random order: the order they are timed in, so a timed pass
    that stops early (its median known precisely enough) has timed a random sample, not the file's first
    questions."""
    picked = random.Random(settings.seed).sample(range(len(questions)), min(settings.timed, len(questions)))
    return [questions[i] for i in picked]


def planned_setup(plan: Plan, setup_key: str) -> PlannedSetup:
    """The plan's setup ``setup_key`` (``Plan.setup``; a ``UsageError`` naming the closest key otherwise)."""
    return plan.setup(setup_key)
