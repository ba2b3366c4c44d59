"""``write_golden``: a golden file drafted by a model from the collection's own chunks, every row a draft.

How it drafts is one ``WritingSettings`` (``settings.py``: ``n``, ``mix``, ``threshold``, ...). The steps,
for each passage ``passages.spread`` gives, until ``n`` rows are written:

1. the critic rates the passage (clarity, self-containedness, substance, each 0-1; their mean) and it
   is kept at ``threshold`` or more, else passed over;
2. the writer drafts a question of the next kind of ``mix`` (a smooth weighted round robin, so the
   rows keep its proportions), with its answer and the words of the passage that answer it; a
   multi-hop question is given a second passage, the chunk of another document most like this one;
3. the checks no model makes (``checks``): every quote on its passage (a multi-hop row: a quote on
   each), the question not copying the passage, not a near-duplicate of a kept question; then the
   critic, which must find it answerable from the passage at ``threshold`` or more. A question
   turned down is asked for again, saying why, up to ``tries`` drafts; then the passage is set aside;
4. ``evolve`` rewrites make the question harder (fewer of the passage's words, a constraint, a step
   of reasoning, in turn); a rewrite is kept only when it passes the same checks and the critic;
5. when the rows are written, each is searched with every setup of the target that has no ranker
   (a ranker only reorders hybrid's own candidates); a row whose expected document no setup found
   in its top 20 says so in its hint: that is a finding about the question or the search, not a
   failure.

Every reply is kept in ``cache`` as it comes (``cache.ReplyCache``), so a stopped run resumes and a
repeat asks nothing; a cache file that is not a reply cache is refused before any call. A reply that
is not the JSON asked for stops the run (``WriterUnavailableError``) and is not kept, so the next run asks
again. ``path`` is checked before any call too (``files.check_outputs``: never over a file holding
anything, in a folder that takes a file); the file is written at the end, whole, to a temporary file
beside ``path`` that is then linked into place (``files.write_whole``): a run that stops writes nothing
there.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import replace
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from ...errors import GoldenFileError, UsageError, WriterUnavailableError, shown
from ...files import Output, check_outputs, claimed, same_file, write_whole
from ...compat.aliases import also_named
from ...progress import ProgressBar
from ..read import GOLDEN_FILE, questions_jsonl
from ..records import Question, known_id
from . import prompts
from .cache import ReplyCache, prompt_key
from .checks import COPY_SHARE, QUOTE_WORDS, NearDuplicates, copied_share, quote_on_page
from .passages import Passage, is_short, partner, spread
from .result import GoldenWriting
from .settings import WritingSettings

FOUND_DEPTH = 20
DUPLICATE_MODEL = "minilm-l6"  # see bench/bench_golden_checks.py: bge-small puts any two questions near 0.5
Progress = Callable[[int, int, str], None]

# Why a passage was passed over, or a question turned down (the keys of GoldenWriting's counts).
SHORT = "too short to ask about"
LOW_PASSAGE = "the critic rated it below the threshold"
NO_PARTNER = "no passage of another document to pair it with"
NO_QUOTE = "gave no quote of 3 words or more"
QUOTE_OFF_PAGE = "a quote is not on its page"
NO_QUOTE_EACH = "no quote from each passage"
COPIED = "copies the passage's wording"
NEAR_DUPLICATE = "near-duplicate of an earlier question"
LOW_QUESTION = "the critic found it below the threshold"
REWRITE = "rewrite not kept: "


@also_named(db="target")
def write_golden(target: Any, path: str | Path | None = None, n: int | None = None, *, writer: Any = None,
                 critic: Any = None, cache: str | Path | None = None, progress: bool | Progress | None = None,
                 settings: WritingSettings | None = None, **keywords: Any) -> GoldenWriting:
    """Draft ``n`` golden rows from ``target``'s chunks (the steps are the module docstring's) and return
    them with what it did; written as JSONL to ``path`` when given, never over an existing file.

    ``target``: an ``EmbeddedTarget``, an opened index or an index folder. ``writer``: a ``ChatWriter``,
    anything with ``chat(messages) -> text``, or a callable from chat messages to the model's text; left
    out, ``ChatWriter.from_environment()``. ``critic`` judges passages and questions, the writer unless
    given. ``cache``: the reply cache's file. ``progress``: a callback ``(done, total, label)``, or True
    for a bar on stderr.

    What it drafts is ``settings`` (``WritingSettings``); ``n`` and any of its fields may be given as
    keywords instead (``mix={"factual": 1}``, ``evolve=0``, ``examples=[...]``, ``scenario``, ``task``,
    ``threshold``, ``similarity``, ``tries``, ``seed``), over ``settings`` when both are given. The same
    seed on the same index, with the same replies, gives the same rows.
    """
    settings = WritingSettings.of(settings, **({} if n is None else {"n": n}), **keywords)
    if path is None:
        return _write_golden(target, None, settings, writer, critic, cache, progress)
    _check_out(path)  # before anything: a file that cannot be written wastes every model call
    # Two runs aimed at one file: the second stops here, before any model call (its drafts would be refused
    # at the end, after it paid for every one); the claim is let go when this run ends, however it ends.
    with claimed(path, what="the drafts", error=GoldenFileError,
                 fix="wait for that run to finish, or write to another --out"):
        return _write_golden(target, path, settings, writer, critic, cache, progress)


def _check_out(path: str | Path) -> None:
    check_outputs([Output(path, GOLDEN_FILE, what="the drafts")], error=GoldenFileError, make_folders=True)


def _write_golden(target: Any, path: str | Path | None, settings: WritingSettings, writer: Any, critic: Any,
                  cache: str | Path | None, progress: bool | Progress | None) -> GoldenWriting:
    """``write_golden`` once ``path`` (when given) is this run's to write."""
    n, kinds, threshold, similarity = settings.n, settings.kinds, settings.threshold, settings.similarity
    if path is not None:  # again, with the claim held: a run that held it before may have written the file
        _check_out(path)
    if cache is not None and path is not None and same_file(cache, path):
        raise UsageError(f"{cache} is both the golden file to write and the reply cache; give the cache a file of "
                         "its own, such as replies.jsonl")
    replies = ReplyCache(cache)  # refuses a file that is not a reply cache, before any call
    target = _target(target)
    index = target.index
    if not index.models:
        raise UsageError(f"{index.folder}: the index has no embedding model, and the near-duplicate check needs one; "
                         "build it with its default models")
    if writer is None:
        from .chat_writer import ChatWriter

        writer = ChatWriter.from_environment()
    run = _Run(writer, critic if critic is not None else writer, replies, _progress(progress),
               owns_bar=progress is True)
    model = DUPLICATE_MODEL if DUPLICATE_MODEL in index.models else index.models[0]
    from ...engine.models import load_embedder

    duplicates = NearDuplicates(lambda texts: load_embedder(model, threads=target.threads).embed_documents(list(texts)))
    rows: list[Question] = []
    made: Counter[str] = Counter()
    passed_over: Counter[str] = Counter()
    evolved = set_aside = considered = 0
    turn = _Turns(kinds)
    try:
        for passage in spread(index.chunks, settings.seed):
            if len(rows) >= n:
                break
            considered += 1
            run.show(len(rows), n, f"write_golden: writing questions (passage {considered})")
            if is_short(passage):
                passed_over[SHORT] += 1
                continue
            if run.rate(passage.text) < threshold:
                passed_over[LOW_PASSAGE] += 1
                continue
            kind = turn.next()
            places = [passage]
            if kind == "multihop":
                second = partner(passage, index.chunks, index.vectors[model])
                if second is None:
                    passed_over[NO_PARTNER] += 1
                    continue
                places.append(second)
            voice = dict(scenario=settings.scenario, task=settings.task, examples=settings.examples)
            drafted = _draft(run, kind, places, voice, duplicates, threshold, similarity, settings.tries)
            if drafted is None:
                set_aside += 1
                continue
            question, answer, quotes = drafted
            for step in range(settings.evolve):
                harder = _evolve(run, question, answer, places, len(rows) + step, voice, duplicates, threshold,
                                 similarity)
                if harder is not None:
                    question = harder
            evolved += question != drafted[0]
            duplicates.keep(question)
            turn.done(kind)
            made[kind] += 1
            rows.append(_row(len(rows) + 1, kind, question, answer, quotes, places))
        run.show(len(rows), n, f"write_golden: writing questions (passage {considered})")
        rows, unfindable, searched = _findable(target, rows, run)
        if path is not None and rows:  # no row passed: no empty file to mistake for a golden file
            _write(rows, Path(path), cached=cache is not None)
    except BaseException:
        run.close()
        raise
    result = GoldenWriting(rows=tuple(rows), wanted=n, path=str(path) if path is not None and rows else None,
                           kinds={kind: made[kind] for kind in kinds}, evolved=evolved, asked=run.asked,
                           reused=run.reused, passed_over=dict(passed_over), turned_down=dict(run.turned_down),
                           set_aside=set_aside, unfindable=unfindable, searched_with=searched,
                           cache_skipped=replies.skipped_sentence() if replies.skipped else None)
    run.say(result.summary())
    run.close()
    return result


class _Run:
    """The model calls of one run: through the cache, counted, every reply checked for its JSON."""

    def __init__(self, writer: Any, critic: Any, cache: ReplyCache, progress: Progress | ProgressBar | None, *,
                 owns_bar: bool = False) -> None:
        """``owns_bar``: the bar is this run's (``progress=True``), so the run closes it and prints its
        summary there; a caller's bar (the command line's) is the caller's to print beside."""
        self.writer, self.critic, self.cache, self.progress = writer, critic, cache, progress
        self.owns_bar = owns_bar
        self.asked = self.reused = 0
        self.turned_down: Counter[str] = Counter()

    def ask(self, model: Any, messages: list[dict[str, str]], keys: Sequence[str]) -> dict[str, Any]:
        key = prompt_key(str(getattr(model, "name", "") or ""), messages)
        text = self.cache.get(key)
        if text is not None:
            found = prompts.parse_object(text, keys)
            if found is not None:
                self.reused += 1
                return found
        text = model.chat(messages) if hasattr(model, "chat") else model(messages)
        self.asked += 1
        task = prompts.task_of(messages)
        if not isinstance(text, str) or not text.strip():
            raise WriterUnavailableError(f"the writer gave no text for {task}; nothing was written (check the model, "
                                         "or that the service is answering)")
        found = prompts.parse_object(text, keys)
        if found is None:
            raise WriterUnavailableError(f"the writer's reply to {task} is not the JSON asked for (an object with "
                                         f"{', '.join(keys)}): {text[:160]!r}; nothing was written (use a model that "
                                         "keeps to a JSON format)")
        self.cache.put(key, text)
        return found

    def rate(self, passage: str) -> float:
        keys = ("clarity", "self_contained", "substance")
        reply = self.ask(self.critic, prompts.rate_passage(passage), keys)
        scores = [score for k in keys if (score := prompts.score_of(reply[k])) is not None]
        if len(scores) < len(keys):
            raise WriterUnavailableError(f"the critic rated a passage outside 0-1: {dict((k, reply[k]) for k in keys)}"
                                         "; nothing was written (use a model that keeps to the format)")
        return sum(scores) / len(scores)

    def judge(self, question: str, answer: str, places: Sequence[Passage]) -> float:
        reply = self.ask(self.critic, prompts.judge_question(question, answer, [p.text for p in places]), ("score",))
        score = prompts.score_of(reply["score"])
        if score is None:
            raise WriterUnavailableError(f"the critic scored a question outside 0-1: {shown(reply['score'])}; nothing "
                                         "was written")
        return score

    def show(self, done: int, total: int, label: str) -> None:
        if self.progress is not None:
            self.progress(done, total, label)

    def say(self, text: str) -> None:
        if self.owns_bar and isinstance(self.progress, ProgressBar):
            for line in text.splitlines():
                self.progress.say(line)

    def close(self) -> None:
        if self.owns_bar and isinstance(self.progress, ProgressBar):
            self.progress.close()


def _draft(run: _Run, kind: str, places: list[Passage], voice: dict, duplicates: NearDuplicates, threshold: float,
           similarity: float, tries: int) -> tuple[str, str, tuple[str, ...]] | None:
    """A question, its answer and its quotes that passed every check, in at most ``tries`` drafts; else None."""
    reason = None
    for attempt in range(1, tries + 1):
        reply = run.ask(run.writer, prompts.write_question(kind, [p.text for p in places], attempt=attempt,
                                                           turned_down=reason, **voice),
                        ("question", "answer", "evidence"))
        question, answer, quotes = _fields(reply)
        reason = (_quotes_problem(quotes, places) or _wording_problem(question, places, duplicates, similarity)
                  or (LOW_QUESTION if run.judge(question, answer, places) < threshold else None))
        if reason is None:
            return question, answer, quotes
        run.turned_down[reason] += 1
    return None


def _evolve(run: _Run, question: str, answer: str, places: list[Passage], step: int, voice: dict,
            duplicates: NearDuplicates, threshold: float, similarity: float) -> str | None:
    """The question rewritten harder when the rewrite passes the checks and the critic; else None."""
    messages = prompts.evolve_question(question, answer, [p.text for p in places], step, scenario=voice["scenario"],
                                       task=voice["task"])
    harder = run.ask(run.writer, messages, ("question",))["question"]
    if not isinstance(harder, str) or not harder.strip():
        raise WriterUnavailableError(f"the writer's rewrite has no question: {shown(harder)}; nothing was written")
    harder = harder.strip()
    if harder == question:
        return None
    reason = (_wording_problem(harder, places, duplicates, similarity)
              or (LOW_QUESTION if run.judge(harder, answer, places) < threshold else None))
    if reason is not None:
        run.turned_down[REWRITE + reason] += 1
        return None
    return harder


def _fields(reply: dict[str, Any]) -> tuple[str, str, tuple[str, ...]]:
    question, answer, evidence = reply["question"], reply["answer"], reply["evidence"]
    if isinstance(evidence, str):
        evidence = [evidence]
    if (not isinstance(question, str) or not question.strip() or not isinstance(answer, str)
            or not isinstance(evidence, list) or not all(isinstance(q, str) for q in evidence)):
        raise WriterUnavailableError("the writer's question is not the JSON asked for (a question and an answer as "
                                     f"text, evidence a list of quotes): {str(reply)[:160]}; nothing was written")
    return question.strip(), answer.strip(), tuple(q.strip() for q in evidence if q.strip())


def _quotes_problem(quotes: tuple[str, ...], places: list[Passage]) -> str | None:
    if not any(len(q.split()) >= QUOTE_WORDS for q in quotes):
        return NO_QUOTE
    if not all(any(quote_on_page(q, p.text) for p in places) for q in quotes):
        return QUOTE_OFF_PAGE
    if not all(any(quote_on_page(q, p.text) for q in quotes) for p in places):
        return NO_QUOTE_EACH
    return None


def _wording_problem(question: str, places: list[Passage], duplicates: NearDuplicates,
                     similarity: float) -> str | None:
    if max(copied_share(question, p.text) for p in places) > COPY_SHARE:
        return COPIED
    if duplicates.closest(question) >= similarity:
        return NEAR_DUPLICATE
    return None


def _row(number: int, kind: str, question: str, answer: str, quotes: tuple[str, ...],
         places: list[Passage]) -> Question:
    where = " and ".join(p.place for p in places)
    hint = (f"{kind} question drafted by a model from {where}; check the question, expected, the answer and the "
            'quotes, then remove "draft"')
    return Question(id=f"q{number}", question=question, expected=tuple(dict.fromkeys(p.doc_id for p in places)),
                    reference=answer, evidence=quotes, hint=hint, draft=True, line=number)


def _findable(target: Any, rows: list[Question], run: _Run) -> tuple[list[Question], tuple[str, ...], tuple[str, ...]]:
    """Rows with a finding in the hint where some expected document is in no setup's top 20 (see step 5)."""
    setups = [s for s in target.setups() if s.ranker is None]
    found: list[set[str]] = [set() for _ in rows]
    for number, setup in enumerate(setups, start=1):
        run.show(number - 1, len(setups), f"write_golden: searching the questions with each setup ({setup.key})")
        for seen, hits in zip(
            found, target.search_batch(setup, [r.question for r in rows], FOUND_DEPTH) if rows else [], strict=True
        ):
            seen.update(hit.doc_id for hit in hits)
    run.show(len(setups), len(setups), "write_golden: searching the questions with each setup (done)")
    out, unfindable = [], []
    for row, seen in zip(rows, found, strict=True):
        missing = [doc for doc in row.expected if doc not in seen]
        if missing:
            unfindable.append(known_id(row))
            row = replace(row, hint=f"{row.hint}. May be unanswerable by search: no setup found "
                                    f"{', '.join(missing)} in its top {FOUND_DEPTH}")
        out.append(row)
    return out, tuple(unfindable), tuple(s.key for s in setups)


def _write(rows: list[Question], path: Path, *, cached: bool) -> None:
    """Write ``rows`` whole, never over a file holding anything, never half (``files.write_whole``).
    ``cached``: a reply cache was given, so a run again asks for nothing; without one it asks for every reply
    again, and the sentences say so rather than promise what no cache holds."""
    again = ("the reply cache makes that cost nothing" if cached else
             "with no --reply-cache given, that asks the model for every reply again")
    try:
        write_whole(path, questions_jsonl(rows), replace=False, error=GoldenFileError,
                    what="the drafts (the reply cache keeps every reply)" if cached else "the drafts")
    except FileExistsError:
        raise GoldenFileError(f"{path} appeared while the questions were drafted; they were not written over "
                              f"it: run again with another --out ({again})") from None


def _target(target: Any) -> Any:
    from ...engine.index import OpenedIndex
    from ...engine.target import EmbeddedTarget

    if isinstance(target, EmbeddedTarget):
        return target
    if isinstance(target, (OpenedIndex, str, Path)):
        return EmbeddedTarget(target, cross_encoder=False)
    raise UsageError(f"write_golden drafts from the embedded engine's index: give an EmbeddedTarget, an opened index "
                     f"or an index folder, not {type(target).__name__}")


class _Turns:
    """Which kind the next row is: a smooth weighted round robin over the mix, moved on by rows written,
    so a passage set aside does not skip a kind. With factual=2, howto=1: factual, howto, factual, ..."""

    def __init__(self, weights: Mapping[str, int]) -> None:
        self.weights = dict(weights)
        self.current = dict.fromkeys(weights, 0)
        self._pending: str | None = None

    def next(self) -> str:
        if self._pending is None:
            total = sum(self.weights.values())
            for kind, weight in self.weights.items():
                self.current[kind] += weight
            self._pending = max(self.current, key=lambda kind: self.current[kind])  # first of equals: mix order
            self.current[self._pending] -= total
        return self._pending

    def done(self, kind: str) -> None:
        if kind == self._pending:
            self._pending = None


def _progress(progress: bool | Progress | None) -> Progress | ProgressBar | None:
    if progress is True:
        return ProgressBar()
    return progress or None
