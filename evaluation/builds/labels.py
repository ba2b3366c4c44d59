"""The chunk-id trap: ``doc-1:0`` under 500-character chunks is other text than under 1,000.

ElectriPy's runner judges ``relevant_ids`` as chunk ids in every variant of its matrix, so a label made
with one chunking is held against chunks of another that share only the name. Here a label that names
a chunk (``<document>:<n>``, the document in the corpus, the label not itself a document) is judged
by its document unless ``by="chunk"``; then it is judged as a chunk only in the variant its chunking
was made with (``labels_from``), and by its document in the others, each experiment saying which.
"""
from __future__ import annotations

from typing import Any, Sequence

from ..engine.corpus import Corpus
from ..errors import UsageError
from ..golden import Question
from ..golden.queries import chunk_labels_as_documents
from .variants import ChunkVariant, chunk_ids


def chunk_label_map(questions: Sequence[Question], corpus: Corpus) -> tuple[list[Question], dict[str, str]]:
    """``questions`` with chunk labels read as documents, and ``{label: document}`` for each replaced."""
    ids = corpus.ids
    return chunk_labels_as_documents(questions, lambda wanted: {i for i in wanted if i in ids})


def grains(variants: Sequence[ChunkVariant], by: str, mapped: dict[str, str],
           labels_from: ChunkVariant | None) -> tuple[dict[ChunkVariant, str], ChunkVariant | None]:
    """Each variant's grain, and the variant chunk labels are judged against (None unless ``by="chunk"``)."""
    if by != "chunk":
        return {v: by for v in variants}, None
    if labels_from is None:
        if len(variants) != 1:
            raise UsageError(f"--by chunk judges chunk ids against the chunking they were made with, and the matrix "
                             f"has {len(variants)} variants ({', '.join(map(str, variants))}); name it with "
                             "--labels-from <technique>-<size>-<overlap>, such as --labels-from "
                             f"{variants[0]}")
        labels_from = variants[0]
    if labels_from not in variants:
        raise UsageError(f"--labels-from {labels_from} is not a variant of the matrix "
                         f"({', '.join(map(str, variants))}); add it or name one of those")
    return {v: "chunk" if v == labels_from else "doc" for v in variants}, labels_from


def trap_note(mapped: dict[str, str], by: str, labels_from: ChunkVariant | None, corpus: Corpus,
              questions: Sequence[Question]) -> dict[str, Any]:
    """What the report says about chunk-id labels: how many, how they are judged, in which variant."""
    labels = sorted(mapped)
    note: dict[str, Any] = {"chunk_labels": len(labels), "examples": labels[:3]}
    if not labels:
        note["said"] = "no relevant id names a chunk; every label names a document"
        return note
    if by != "chunk":
        note["judged_by"] = "doc"
        names = "relevant id names a chunk" if len(labels) == 1 else "relevant ids name chunks"
        more = f" and {len(labels) - 3} more" if len(labels) > 3 else ""
        note["said"] = (f"{len(labels)} {names} ({', '.join(labels[:3])}{more}); a chunk number means "
                        "other text under another chunking, so each is judged by its document in every variant "
                        "(--by chunk --labels-from VARIANT judges them as chunks of the variant they were made with)")
        return note
    assert labels_from is not None, "grains names the variant whenever chunk ids are judged as chunks"
    held = chunk_ids(labels_from, corpus)
    wanted = {item for q in questions for item in q.expected}
    absent = sorted(label for label in wanted if label not in held)
    note.update({"judged_by": "chunk", "labels_from": str(labels_from), "absent_in_labels_from": absent[:10],
                 "said": (f"{len(labels)} relevant "
                          f"id{'s name chunks; they are' if len(labels) != 1 else ' names a chunk; it is'} "
                          f"judged as {'chunks' if len(labels) != 1 else 'a chunk'} only in {labels_from}, "
                          "the variant they were made with, and by their document in the other variants")})
    return note
