"""What a chunking run reads: the corpus and the golden questions, whose labels name documents.

Labels have to survive a change of chunker, so they name documents (or one page of one): a chunk id
such as ``guide.md:3`` means another passage in every build, so a golden file holding one is refused
before anything is cut, naming the line and the fix (``refuse_chunk_labels``).
"""
from __future__ import annotations

import re
from pathlib import Path
from typing import Iterable, Sequence

from ..engine.corpus import Corpus, read_corpus
from ..errors import GoldenFileError
from ..golden import Golden, Question, read_golden

_CHUNK_ID = re.compile(r"(?P<doc>.+):(?P<n>\d+)")


def corpus_of(corpus: Corpus | str | Path) -> Corpus:
    return corpus if isinstance(corpus, Corpus) else read_corpus(corpus)


def golden_of(golden: Golden | str | Path | Iterable[Question]) -> tuple[Golden | None, list[Question]]:
    """The golden file (None for questions given in memory) and its labelled questions."""
    if isinstance(golden, Golden):
        return golden, list(golden.labelled)
    if isinstance(golden, (str, Path)):
        read = read_golden(golden)
        if read.problems:
            first = read.problems[0]
            raise GoldenFileError(f"{golden}: {first}; run `python3 -m evaluation golden check {golden}` for every "
                                  f"problem ({len(read.problems)} in all), fix them, then run again")
        return read, list(read.labelled)
    questions = [q for q in golden if q.labelled]
    return None, questions


def labelled_questions(golden: Golden | str | Path | Iterable[Question],
                       corpus: Corpus) -> tuple[Golden | None, list[Question]]:
    """``golden_of``'s file and labelled questions, once ``refuse_chunk_labels`` found no chunk id among them."""
    read, questions = golden_of(golden)
    refuse_chunk_labels(questions, corpus, str(read.source) if read is not None else "the golden questions")
    return read, questions


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
