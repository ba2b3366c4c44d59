"""``golden_template``: golden-file rows to fill in, one per sampled document or page of a corpus.

Each row names its ``expected`` already (``doc`` or ``doc#page=N``), leaves ``question`` empty, and
shows in ``hint`` how the document or page starts, so a person writes a question it answers.
"""
from __future__ import annotations

import random
from pathlib import Path
from typing import Literal

from ..engine.corpus import Corpus, read_corpus
from ..errors import GoldenFileError, UsageError
from ..store.sources import is_blob_address
from .read import save_questions
from .records import PAGE_MARK, Question

HINT_WORDS = 25
NEAR_EMPTY_WORDS = 20  # a page with fewer words (a cover, a blank page) cannot answer a question


def golden_template(corpus: Corpus | str | Path, path: str | Path, n: int = 50, seed: int = 0,
                    by: Literal["doc", "page"] = "doc", *, overwrite: bool = False) -> tuple[Question, ...]:
    """Write up to ``n`` template rows to ``path`` and return them; same corpus and seed, same rows.

    ``by="doc"``: a random sample of documents, in corpus order. ``by="page"``: pages spread evenly
    through the pages of all documents (a random start, then every ``total / n``-th page), skipping
    pages of fewer than 20 words; a document with no page breaks counts as one page, named without
    ``#page=``. Refuses to replace an existing file unless ``overwrite``.
    """
    if n < 1:
        raise UsageError(f"the template needs at least one row; ask for n >= 1, not {n}")
    if by not in ("doc", "page"):
        raise UsageError(f'a template samples by "doc" or "page", not {by!r}')
    if is_blob_address(str(path)):
        raise UsageError(f"{path}: a template is written to a local file, so this takes a local path; write it here, "
                         "fill in its questions, then upload it (saving golden.jsonl to the collection's folder starts "
                         f"a run); to name a local file whose name holds a colon, write ./{path}")
    if Path(path).is_dir():
        raise GoldenFileError(f"{path} is a folder; give the path of the golden file to write, "
                              f"for example {Path(path) / 'golden.jsonl'}")
    source = corpus.source if isinstance(corpus, Corpus) else str(corpus)
    if Path(path).resolve() == Path(source).resolve():
        raise GoldenFileError(f"{path} is the corpus the template is made from; write the template to another file")
    if Path(path).exists() and not overwrite:
        raise GoldenFileError(f"{path} already exists and may hold written questions; choose another file, "
                              "or replace it on purpose (--force on the command line)")
    if not isinstance(corpus, Corpus):
        corpus = read_corpus(corpus)
    rng = random.Random(seed)
    units = _documents(corpus, n, rng) if by == "doc" else _pages(corpus, n, rng)
    if not units:
        raise GoldenFileError(f"{corpus.source}: no page has {NEAR_EMPTY_WORDS} words or more to write a "
                              'question about; sample by "doc" instead')
    rows = tuple(Question(id=f"q{line}", question="", expected=(expected,), hint=_hint(text), line=line)
                 for line, (expected, text) in enumerate(units, start=1))
    try:
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        save_questions(rows, path)
    except OSError as err:
        raise GoldenFileError(f"{path}: cannot write the template there ({err.strerror or err}); "
                              "give a file in a folder you may write to") from err
    return rows


def _documents(corpus: Corpus, n: int, rng: random.Random) -> list[tuple[str, str]]:
    chosen = sorted(rng.sample(range(len(corpus.documents)), min(n, len(corpus.documents))))
    return [(corpus.documents[i].id, corpus.documents[i].text) for i in chosen]


def _pages(corpus: Corpus, n: int, rng: random.Random) -> list[tuple[str, str]]:
    pages = [(f"{document.id}{PAGE_MARK}{number}" if document.pages else document.id, text)
             for document in corpus
             for number, text in enumerate(document.pages or (document.text,), start=1)
             if len(text.split()) >= NEAR_EMPTY_WORDS]
    if not pages:
        return []
    count = min(n, len(pages))
    step = len(pages) / count
    start = rng.random() * step
    # step >= 1, so the positions are distinct; min() guards the last one against rounding up
    return [pages[min(int(start + i * step), len(pages) - 1)] for i in range(count)]


def _hint(text: str) -> str:
    words = text.split()
    return " ".join(words[:HINT_WORDS]) + (" …" if len(words) > HINT_WORDS else "")
