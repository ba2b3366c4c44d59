"""Read a corpus: a JSONL file of documents or a folder of ``.md`` / ``.txt`` files.

A JSONL row is ``{"id", "text", "title"?, "source_uri"?, "metadata"?}`` (the ElectriPy corpus format),
its lines read as ``evaluation.jsonl`` reads the golden file too: ``\\n`` ends a line (U+2028 inside
a string is text), blank and ``#`` lines are skipped, strict UTF-8, no ``NaN``, no lone surrogate.
A form feed (``\\f``) in ``text`` separates pages, as ``pdftotext`` writes them: page n is the n-th
segment, so ``report.pdf#page=41`` can be judged. In a folder, a document's id is its path relative
to the folder, with ``/`` separators; other file types are passed over and counted (``Corpus.passed_over``),
so a folder of ``.html`` files is told what a folder corpus reads instead of "holds no documents".

A document id must be one a golden file can name as written (``document_id_problem``): no control
character, no space at either end, and no ``#page=``, which would make it read as a page.

Every row is checked before anything is returned: all problems are raised together, each with its
line and the fix, so nothing is dropped without a word.
"""
from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any, Iterator, Mapping

from ..errors import CorpusError, JsonLineError, LineProblem, at_most, did_you_mean, nearest_file
from ..files import read_input
from ..jsonl import file_wide, parse_line, read_lines

PAGE_BREAK = "\f"
FOLDER_SUFFIXES = (".md", ".markdown", ".txt")
_ROW_FIELDS = ("id", "text", "title", "source_uri", "metadata")
PAGE_MARK = "#page="  # how a golden file names one page of a document: "report.pdf#page=41"
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")  # the characters a golden file's expected item refuses


def document_id_problem(doc_id: str) -> str | None:
    """Why a golden file could not name ``doc_id`` as written, or None when it can.

    The rule mirrors ``golden.parse_expected`` (a test checks that every id allowed here parses back
    to itself as a whole document), so ``golden template`` never writes a row ``golden check`` refuses.
    """
    shown = json.dumps(doc_id, ensure_ascii=False).encode("utf-8", "backslashreplace").decode("utf-8")
    if not doc_id.strip():
        return 'needs "id", a non-empty string, for example "id": "guide.md"'
    if any("\ud800" <= ch <= "\udfff" for ch in doc_id):
        return f"id {shown} is not valid Unicode text; rename the document"
    if _CONTROL.search(doc_id):
        return (f"id {shown} holds a line break, tab or other control character, which a golden file "
                "cannot name; rename the document")
    if doc_id != doc_id.strip():
        return (f"id {shown} has a space at the start or end, which a golden file cannot name; "
                f"write {json.dumps(doc_id.strip(), ensure_ascii=False)}")
    if PAGE_MARK in doc_id:
        return (f'id {shown} holds "{PAGE_MARK}", so a golden file would read it as a page of '
                f'{json.dumps(doc_id.partition(PAGE_MARK)[0], ensure_ascii=False)}; rename the document '
                '(for example "#" to "-")')
    return None


@dataclass(frozen=True)
class Document:
    id: str
    text: str
    title: str | None = None
    source_uri: str | None = None
    metadata: Mapping[str, Any] = field(default_factory=dict)

    @property
    def pages(self) -> tuple[str, ...] | None:
        """The document's pages (1-based by position), or None when its text has no page breaks."""
        if PAGE_BREAK not in self.text:
            return None
        return tuple(self.text.split(PAGE_BREAK))


def document_text(document: Document) -> str:
    """What the document BM25 indexes: the title on the first line, then the text as written (its
    Markdown heading lines included), so a title or heading word counts for the whole document."""
    return f"{document.title}\n{document.text}" if document.title else document.text


CorpusProblem = LineProblem  # a bad row of a corpus


@dataclass(frozen=True)
class Corpus:
    source: str
    documents: tuple[Document, ...]
    sha256: str  # of the raw bytes read, in reading order: the index fingerprint builds on it
    # a folder's files of other types, by suffix ("(none)" for no suffix): read by no one, said by the caller
    passed_over: Mapping[str, int] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.documents)

    def __iter__(self) -> Iterator[Document]:
        return iter(self.documents)

    @property
    def ids(self) -> frozenset[str]:
        return frozenset(d.id for d in self.documents)

    def get(self, doc_id: str) -> Document | None:
        return self._by_id.get(doc_id)

    @cached_property
    def _by_id(self) -> dict[str, Document]:
        return {d.id: d for d in self.documents}


def read_corpus(source: str | Path) -> Corpus:
    """Read every document of ``source``; raise one ``CorpusError`` listing every bad row."""
    path = Path(source)
    if not path.exists():
        shape = ' Give a JSONL file of {"id", "text"} rows or a folder of .md / .txt files.'
        raise CorpusError(f"{path}: no such corpus.{nearest_file(path) or shape}")
    passed: dict[str, int] = {}
    if path.is_dir():
        documents, problems, digest = _read_folder(path, passed)
    else:
        documents, problems, digest = _read_jsonl(path)
    if not documents and not problems:
        problems.append(CorpusProblem(None, _empty_folder(passed) if path.is_dir() else
                                      "the corpus holds no documents; add rows or files to it"))
    if problems:
        raise CorpusError(_summarise(path, problems), problems=problems)
    return Corpus(source=str(path), documents=tuple(documents), sha256=digest, passed_over=passed)


FOLDER_TYPES = ", ".join(FOLDER_SUFFIXES[:-1]) + " or " + FOLDER_SUFFIXES[-1]


def _empty_folder(passed: Mapping[str, int]) -> str:
    said = f"the folder holds no {FOLDER_TYPES} files, the only ones a folder corpus reads"
    if not passed:
        return f"{said}; add some"
    return (f'{said}; {passed_over_words(passed)}; convert them to text, or give a JSONL file of {{"id", "text"}} '
            "rows")


def passed_over_words(passed: Mapping[str, int]) -> str:
    """"passed over: 12 .html, 3 .pdf": a folder's files of other types, most first."""
    shown = sorted(passed.items(), key=lambda item: (-item[1], item[0]))
    listed = ", ".join(f"{count} {suffix}" for suffix, count in shown[:6])
    return f"passed over: {listed}" + (f" and {len(shown) - 6} more types" if len(shown) > 6 else "")


def corpus_of_rows(rows: list[dict[str, Any]], source: str, labels: list[str] | None = None) -> Corpus:
    """A corpus of rows held in memory (``{"id", "text", ...}``), checked as a JSONL file's rows are; one
    ``CorpusError`` listing every bad row, each named by ``labels`` (how the caller named it) when given.
    Its ``sha256`` is that of the rows as JSONL, so the same documents give the same fingerprint."""
    documents: list[Document] = []
    problems: list[CorpusProblem] = []
    seen: set[str] = set()
    hasher = hashlib.sha256()
    for number, row in enumerate(rows, start=1):
        hasher.update(json.dumps(row, ensure_ascii=False, sort_keys=True).encode("utf-8", "surrogateescape") + b"\n")
        document, row_problems = _document_from_row(row, number)
        where = labels[number - 1] if labels else None
        problems.extend(CorpusProblem(None, f"{where}: {p.message}") if where else p for p in row_problems)
        if document is not None and document.id in seen:
            problems.append(CorpusProblem(None if where else number, f"{where + ': ' if where else ''}id "
                                          f'"{document.id}" is used again; ids must be unique'))
        elif document is not None:
            seen.add(document.id)
            documents.append(document)
    if not rows:
        problems.append(CorpusProblem(None, "no documents given; give at least one"))
    if problems:
        head = (f"{source}: {len(problems)} problem{'s' if len(problems) != 1 else ''} in the documents; fix and run "
                f"again:")
        raise CorpusError("\n".join([head, *at_most([f"  {p}" for p in problems], indent="  ")]), problems=problems)
    return Corpus(source=source, documents=tuple(documents), sha256=hasher.hexdigest())


def check_corpus(source: str | Path) -> list[CorpusProblem]:
    """Every problem ``read_corpus`` would raise, as a list (empty when the corpus is fine)."""
    try:
        read_corpus(source)
    except CorpusError as err:
        return list(getattr(err, "problems", None) or [CorpusProblem(None, str(err))])
    return []


def _summarise(path: Path, problems: list[CorpusProblem]) -> str:
    head = (f"{path}: {len(problems)} problem{'s' if len(problems) != 1 else ''} in the corpus; fix "
            f"{'it' if len(problems) == 1 else 'them'} and run again:")
    return "\n".join([head, *at_most([f"  {p}" for p in problems], indent="  ")])


def _read_jsonl(path: Path) -> tuple[list[Document], list[CorpusProblem], str]:
    raw = _read_file(path)
    digest = hashlib.sha256(raw).hexdigest()
    documents: list[Document] = []
    problems: list[CorpusProblem] = []
    first_line: dict[str, int] = {}
    rows = 0
    for line in read_lines(raw):
        rows += 1
        number = line.number
        if line.text is None:
            problems.append(CorpusProblem(number, line.problem or "cannot be read"))
            continue
        try:
            row = parse_line(line.text)
        except JsonLineError as err:
            problems.append(CorpusProblem(number,
                                          f'{err}; each line must be one object like {{"id": "a", "text": "..."}}'
                                          if err.syntax else str(err)))
            continue
        if not isinstance(row, dict):
            problems.append(
                CorpusProblem(number, 'not an object; each line must be one object like {"id": "a", "text": "..."}')
            )
            continue
        document, row_problems = _document_from_row(row, number)
        problems.extend(row_problems)
        if document is None:
            continue
        if document.id in first_line:
            problems.append(CorpusProblem(number, f'id "{document.id}" is used again (first on line '
                                                  f"{first_line[document.id]}); ids must be unique"))
            continue
        first_line[document.id] = number
        documents.append(document)
    wide = file_wide(raw, problems, rows)  # an array, another encoding, "body" for "text": said once
    return documents, [CorpusProblem(None, s) for s in wide.sentences] + list(wide.kept), digest


def _document_from_row(row: dict, number: int) -> tuple[Document | None, list[CorpusProblem]]:
    problems = []
    for name in row:
        if name not in _ROW_FIELDS:
            hint = did_you_mean(name, _ROW_FIELDS) or f" Fields are: {', '.join(_ROW_FIELDS)}."
            problems.append(CorpusProblem(number, f'"{name}" is not a field.{hint}'))
    doc_id, text = row.get("id"), row.get("text")
    if not isinstance(doc_id, str) or not doc_id.strip():
        problems.append(CorpusProblem(number, 'needs "id", a non-empty string, for example "id": "guide.md"'))
    elif (id_problem := document_id_problem(doc_id)) is not None:
        problems.append(CorpusProblem(number, id_problem))
    if not isinstance(text, str) or not text.strip():
        problems.append(CorpusProblem(number, 'needs "text", a non-empty string with the document\'s words'))
    for name in ("title", "source_uri"):
        if row.get(name) is not None and not isinstance(row[name], str):
            problems.append(CorpusProblem(number, f'"{name}" must be a string, for example "{name}": "..."'))
    if row.get("metadata") is not None and not isinstance(row["metadata"], dict):
        problems.append(CorpusProblem(number, '"metadata" must be an object, for example "metadata": {"lang": "en"}'))
    if problems:
        return None, problems
    assert isinstance(doc_id, str) and isinstance(text, str), "any other id or text is a problem above"
    return Document(id=doc_id, text=text, title=row.get("title"), source_uri=row.get("source_uri"),
                    metadata=row.get("metadata") or {}), []


def corpus_sha256(source: str | Path) -> str:
    """The ``sha256`` ``read_corpus(source)`` gives, from the bytes alone (nothing parsed, so a few
    milliseconds a megabyte): how an index is checked against the corpus it was built from."""
    path = Path(source)
    if not path.is_dir():
        return hashlib.sha256(_read_file(path)).hexdigest()
    hasher = hashlib.sha256()
    for file in _folder_files(path):
        hasher.update(_folder_part(path, file, _read_file(file)))
    return hasher.hexdigest()


def _visible_files(path: Path) -> list[Path]:
    """Every file under a folder corpus but hidden files and those in hidden folders."""
    return [p for p in path.rglob("*") if p.is_file()
            and not any(part.startswith(".") for part in p.relative_to(path).parts)]


def _folder_files(path: Path) -> list[Path]:
    """The files a folder corpus reads, in the order it reads (and hashes) them."""
    return sorted(p for p in _visible_files(path) if p.suffix.lower() in FOLDER_SUFFIXES)


def _folder_part(path: Path, file: Path, raw: bytes) -> bytes:
    """What one file adds to a folder corpus's sha256: its id and its bytes."""
    return file.relative_to(path).as_posix().encode("utf-8", "surrogateescape") + b"\0" + raw + b"\0"


def _read_folder(path: Path, passed: dict[str, int]) -> tuple[list[Document], list[CorpusProblem], str]:
    """The documents of a folder's ``FOLDER_SUFFIXES`` files; ``passed`` gains the count of every other
    file type (hidden files and folders aside)."""
    hasher = hashlib.sha256()
    documents: list[Document] = []
    problems: list[CorpusProblem] = []
    for other in _visible_files(path):
        if other.suffix.lower() not in FOLDER_SUFFIXES:
            suffix = other.suffix.lower() or "(no suffix)"
            passed[suffix] = passed.get(suffix, 0) + 1
    for file in _folder_files(path):
        doc_id = file.relative_to(path).as_posix()
        raw = _read_file(file)
        hasher.update(_folder_part(path, file, raw))
        refused = document_id_problem(doc_id)
        if refused:
            problems.append(CorpusProblem(None, f"{_shown(doc_id)}: the path is the document's {refused}"))
            continue
        try:
            text = raw.decode("utf-8-sig")
        except UnicodeDecodeError as err:
            problems.append(CorpusProblem(None, f"{doc_id}: not UTF-8 (byte {err.start + 1}); save it as UTF-8"))
            continue
        if not text.strip():
            problems.append(CorpusProblem(None, f"{doc_id}: the file is empty; add its text or remove it"))
            continue
        documents.append(Document(id=doc_id, text=text, title=_first_heading(text), source_uri=file.resolve().as_uri()))
    return documents, problems, hasher.hexdigest()


def _read_file(path: Path) -> bytes:
    try:
        return read_input(path)  # a named pipe is refused, never waited on
    except OSError as err:
        raise CorpusError(f"{_shown(str(path))}: cannot read the corpus ({err.strerror or err}); "
                          "check the path and that you may read it") from err


def _shown(text: str) -> str:
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def _first_heading(text: str) -> str | None:
    for line in text.splitlines():
        if line.startswith("#"):
            return line.lstrip("#").strip() or None
    return None
