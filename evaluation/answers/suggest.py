"""``suggest_expected``: propose ``expected`` documents for questions that have a reference answer and none.

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
first three documents for 36 of 36 (``tests/test_suggest_expected.py``). The cross-encoder is not the
default: on reference answers it found fewer (29 of 36) and took minutes on a shared 2-core machine.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from ..errors import GoldenFileError, UsageError
from ..files import Output, check_outputs
from ..golden import Golden, Question, read_golden, save_questions
from ..golden.read import GOLDEN_FILE
from ..golden.wording import line_list, plural
from ..target import Setup, Target
from ..store.sources import Fetcher
from .setup_choice import choose_setup

PREFERRED = ("hybrid", "dense", "keyword")  # statements search well by meaning; the reranker is slow here


@dataclass(frozen=True)
class Suggestions:
    """What ``suggest_expected`` proposed, and the rows it wrote (every row of the file, in line order)."""

    setup: str
    rows: tuple[Question, ...]
    suggested: tuple[str, ...]  # question ids given draft expected documents
    labelled: int  # questions that already named their documents (left as they were)
    without_reference: tuple[str, ...]  # no reference answer to search with: left without expected
    no_result: tuple[str, ...]  # the search with the reference found nothing
    left_out: tuple[int, ...] = ()  # lines with errors (not read, so not written): `golden check` says why
    path: str | None = None

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
            lines.append(f"Wrote {plural(len(self.rows), 'row')} to {self.path}; the proposals are drafts "
                         '("draft": true): check each, fix "expected", remove "draft", then run '
                         f"`python3 -m evaluation golden check {self.path}`.")
        return "\n".join(lines)


def suggest_expected(target: Target, golden: Golden | str | Path, out: str | Path | None = None, *,
                     setup: Setup | str | None = None, propose: int = 1, depth: int = 20,
                     fetcher: Fetcher | None = None) -> Suggestions:
    """Propose ``expected`` for each question with a reference answer and no ``expected`` (see the module
    docstring): the first ``propose`` distinct documents of the search with the reference answer.

    Writes the rows to ``out`` when given, refusing an existing file (``GoldenFileError``). ``golden`` may
    be an address, read by ``fetcher`` when one is given.
    """
    if propose < 1:
        raise UsageError(f"propose at least one document per question, not {propose}")
    if out is not None:  # before any search: never over a file holding anything, never over the golden file
        source = golden if isinstance(golden, (str, Path)) and "://" not in str(golden) else None  # a local file
        check_outputs([Output(out, GOLDEN_FILE, what="the suggestions")],
                      [("the golden file the suggestions are made from", source)], error=GoldenFileError,
                      make_folders=True)
    golden = golden if isinstance(golden, Golden) else read_golden(golden, fetcher)
    chosen = choose_setup(target, setup, PREFERRED)
    to_search = [q for q in golden.questions if not q.labelled and q.reference and q.reference.strip()]
    results = target.search_batch(chosen, [q.reference for q in to_search], max(depth, propose)) if to_search else []
    proposals = {}
    for question, hits in zip(to_search, results, strict=True):
        documents = list(dict.fromkeys(hit.doc_id for hit in hits))[:propose]
        if documents:
            proposals[question.id] = replace(question, expected=tuple(documents), draft=True)
    rows = tuple(sorted((proposals.get(q.id, q) for q in (*golden.questions, *golden.unfilled)),
                        key=lambda q: (q.line is None, q.line or 0)))
    if out is not None:
        save_questions(rows, out, overwrite=False)
    return Suggestions(
        setup=chosen.key, rows=rows, suggested=tuple(proposals),
        labelled=sum(q.labelled for q in golden.questions),
        without_reference=tuple(q.id for q in golden.questions if not q.labelled and not (q.reference or "").strip()),
        no_result=tuple(q.id for q in to_search if q.id not in proposals),
        left_out=tuple(sorted({p.line for p in golden.problems if p.line is not None})),
        path=str(out) if out is not None else None)
