"""``check_golden``: every problem of a golden file, line by line, so all of them are fixed in one go.

Counts, as ``to_dict`` gives them:

- ``rows``: non-blank lines of the file (a Bedrock line with several turns is one row);
- ``ready``: questions a run can score, that is labelled (``expected`` non-empty) and on a row with
  no error; drafts count, with a warning;
- ``unfilled``: template rows still waiting for a question (skipped by a run);
- ``drafts``: ready-to-read questions marked ``"draft": true``.

Errors stop a run (``ok`` is False); warnings do not. ``line`` is 1-based, None for the whole file.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Iterable, Protocol, runtime_checkable

from ..errors import GoldenFileError
from ..engine.corpus import Corpus
from .records import ExpectedItem, GoldenProblem, Question
from .scan import load_raw, scan_golden
from .wording import plural, quoted


@runtime_checkable
class HoldsDocuments(Protocol):
    """An index target: which of ``ids`` it holds."""

    def holds(self, ids: set[str]) -> set[str]: ...


@runtime_checkable
class HasDocumentIds(Protocol):
    """A corpus, or anything that lists its document ids."""

    @property
    def ids(self) -> Any: ...


@dataclass(frozen=True)
class GoldenCheck:
    """What ``check_golden`` found; see the module docstring for what each count means."""

    source: str
    rows: int
    ready: int
    unfilled: int
    drafts: int
    errors: tuple[GoldenProblem, ...]
    warnings: tuple[GoldenProblem, ...]
    format: str = "jsonl"

    @property
    def ok(self) -> bool:
        """True when nothing stops a run: no errors (warnings allowed)."""
        return not self.errors

    def with_warnings(self, problems: Iterable[GoldenProblem]) -> GoldenCheck:
        """This check with ``problems`` added to its warnings, in line order (checks made elsewhere, such as
        stale evidence quotes, which need a search target this package does not know)."""
        return replace(self, warnings=_in_line_order([*self.warnings, *problems]))

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON: ``{"ok", "rows", "ready", "unfilled", "drafts", "errors", "warnings"}``."""
        return {"ok": self.ok, "rows": self.rows, "ready": self.ready, "unfilled": self.unfilled,
                "drafts": self.drafts, "errors": [_item(p) for p in self.errors],
                "warnings": [_item(p) for p in self.warnings]}

    def summary(self) -> str:
        """A few lines for a person: the counts, then each error and warning with its line."""
        counts = [plural(self.rows, "row"), f"{plural(self.ready, 'question')} ready"]
        if self.unfilled:
            counts.append(f"{plural(self.unfilled, 'template row')} waiting")
        if self.drafts:
            counts.append(plural(self.drafts, "draft"))
        kind = " (Amazon Bedrock dataset)" if self.format == "bedrock" else ""
        lines = [f"{self.source}{kind}: {', '.join(counts)}."]
        if self.errors:
            lines.append(f"{plural(len(self.errors), 'error')}; fix {'it' if len(self.errors) == 1 else 'them'} "
                         "and check again:")
            lines += [f"  {problem}" for problem in self.errors]
        if self.warnings:
            lines.append(f"{plural(len(self.warnings), 'warning')}:")
            lines += [f"  {problem}" for problem in self.warnings]
        if not self.ok:
            lines.append("Not ready to run.")
        elif self.ready:
            lines.append("Ready to run.")
        else:
            lines.append('Nothing stops a run, but no question can be scored until one has "expected".')
        return "\n".join(lines)


def _item(problem: GoldenProblem) -> dict[str, Any]:
    return {"line": problem.line, "message": problem.message}


def check_golden(source: str | Path, corpus: HoldsDocuments | HasDocumentIds | None = None) -> GoldenCheck:
    """Check every line of ``source``; never raises for a bad, empty or missing file.

    Given ``corpus`` (a ``Corpus``, anything with ``.ids``, or an index target with ``holds(ids)``),
    also warns about expected documents it does not hold, and, for a ``Corpus``, pages past a
    document's last page.
    """
    try:
        raw = load_raw(source)
    except GoldenFileError as err:
        return GoldenCheck(source=str(source), rows=0, ready=0, unfilled=0, drafts=0,
                           errors=(GoldenProblem(None, str(err)),), warnings=())
    return check_golden_bytes(raw, source, corpus)


def check_golden_bytes(raw: bytes, source: str | Path,
                       corpus: HoldsDocuments | HasDocumentIds | None = None) -> GoldenCheck:
    """``check_golden`` for bytes already read (a Blob's, say); ``source`` names them in messages."""
    scan = scan_golden(raw)
    warnings = list(scan.row_warnings)
    if corpus is not None:
        warnings += _corpus_warnings(scan.questions, corpus)
    return GoldenCheck(source=str(source), rows=scan.rows, ready=sum(q.labelled for q in scan.questions),
                       unfilled=len(scan.unfilled), drafts=len(scan.drafts),
                       errors=scan.row_errors + scan.file_errors,
                       warnings=_in_line_order(warnings) + scan.file_warnings, format=scan.format)


def _in_line_order(problems: Iterable[GoldenProblem]) -> tuple[GoldenProblem, ...]:
    return tuple(sorted(problems, key=lambda p: (p.line is None, p.line or 0)))


def _corpus_warnings(questions: tuple[Question, ...],
                     corpus: HoldsDocuments | HasDocumentIds) -> list[GoldenProblem]:
    wanted = {item.doc_id for q in questions for item in q.expected_items}
    if isinstance(corpus, HoldsDocuments):
        held, where = set(corpus.holds(set(wanted))), "the index"
    elif isinstance(corpus, HasDocumentIds):
        held, where = set(corpus.ids) & wanted, "the corpus"
    else:
        raise TypeError(f"corpus must have .ids or .holds(ids), not {type(corpus).__name__}")
    warnings = []
    for question in questions:
        items = question.expected_items
        missing = list(dict.fromkeys(item.doc_id for item in items if item.doc_id not in held))
        if missing:
            names = ", ".join(quoted(doc_id) for doc_id in missing)
            verb = "is" if len(missing) == 1 else "are"
            warnings.append(GoldenProblem(question.line, f"{names} {verb} not in {where}; "
                                                         "check the id, or add the document"))
        if isinstance(corpus, Corpus):  # only a corpus has the text to count pages in
            warnings += [GoldenProblem(question.line, message) for message in _pages_past_end(items, corpus)]
    return warnings


def _pages_past_end(items: Iterable[ExpectedItem], corpus: Corpus) -> list[str]:
    """A sentence for each ``doc#page=N`` past the document's last page (a text with no page breaks is one page)."""
    messages = []
    for item in items:
        document = corpus.get(item.doc_id) if item.page is not None else None
        if document is None:
            continue
        count = len(document.pages or (document.text,))
        if item.page is not None and item.page > count:
            messages.append(f"{quoted(str(item))} is past the last page of {quoted(item.doc_id)} "
                            f"({plural(count, 'page')}); check the page number")
    return messages
