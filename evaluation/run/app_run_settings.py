"""How a run in parts is planned, as one object: ``AppRunSettings`` (``plan_app_run``'s settings).

It holds what a run done in parts adds to a run (what a save may reuse, how its batches are cut into
shards), which setups run, and the run's own ``EvaluationSettings``. Built from keywords
(``plan_app_run(..., retime="always", timed=3)``: a field of either object), from the Function App's
settings (``from_app``: what the planning activity passes), and checked once when built, before the
golden file is read. The defaults are the ones written beside their rules (``retime``, ``shards``) and
in ``settings``. No command of the command line plans a run in parts, so there is no ``from_args``.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field, fields, replace
from typing import Any

from ..errors import UsageError, did_you_mean
from ..settings import NAMES as EVALUATION_NAMES
from ..settings import EvaluationSettings
from .retime import DEFAULT_MAX_AGE_DAYS, RETIME_CHOICES
from .shards import DEFAULT_SHARD_SECONDS, check_shard_bounds


@dataclass(frozen=True)
class AppRunSettings:
    """``retime``: ``"when-changed"`` reuses the newest run's times and results where nothing changed,
    ``"always"`` searches and times everything live. ``retime_max_days``: times older than this are
    measured again. ``shard_seconds``: estimated seconds of one setup's searches per shard;
    ``most_questions``: the most questions a shard holds (0: no bound). ``only``, ``skip``: setup
    patterns (``plan_run``'s; ``only`` None: every setup). ``evaluation``: how the run is made."""

    retime: str = RETIME_CHOICES[0]
    retime_max_days: float = DEFAULT_MAX_AGE_DAYS
    shard_seconds: float = DEFAULT_SHARD_SECONDS
    most_questions: int = 0
    only: tuple[str, ...] | None = None
    skip: tuple[str, ...] = ()
    evaluation: EvaluationSettings = field(default_factory=EvaluationSettings)

    def __post_init__(self) -> None:
        """Refuse any setting a run could not be planned with, before the golden file is read."""
        if self.retime not in RETIME_CHOICES:
            raise UsageError(f"retime must be one of {', '.join(RETIME_CHOICES)}, not {self.retime!r}")
        if (isinstance(self.retime_max_days, bool) or not isinstance(self.retime_max_days, (int, float))
                or not math.isfinite(self.retime_max_days) or self.retime_max_days < 0):
            raise UsageError(f"retime_max_days must be a number of days, 0 or more, not {self.retime_max_days!r}")
        check_shard_bounds(self.shard_seconds, self.most_questions)
        for name in ("only", "skip"):
            value = getattr(self, name)
            if value is None and name == "only":
                continue
            if isinstance(value, str):  # one pattern given as a string would be read letter by letter
                raise UsageError(f"{name} is a list of setup patterns, not one string: give [{value!r}]")
            object.__setattr__(self, name, tuple(value))
        if not isinstance(self.evaluation, EvaluationSettings):
            raise UsageError(f"evaluation must be an EvaluationSettings, not {type(self.evaluation).__name__}")

    @classmethod
    def of(cls, settings: AppRunSettings | EvaluationSettings | None = None, **keywords: Any) -> AppRunSettings:
        """``settings`` (or the defaults) with ``keywords`` put over it: how ``plan_app_run``'s keywords
        become the one object. ``settings`` may be the ``EvaluationSettings`` alone (what ``plan_app_run``
        took before), and a keyword may be a field of either object (``retime=``, ``timed=``). A keyword
        that is neither is a ``TypeError``, as for any function."""
        unknown = sorted(set(keywords) - NAMES - EVALUATION_NAMES)
        if unknown:
            known = NAMES | EVALUATION_NAMES
            raise TypeError(f"{unknown[0]!r} is not a setting of a run in parts or of a run; settings: "
                            f"{', '.join(sorted(known))}.{did_you_mean(unknown[0], known)}")
        if isinstance(settings, EvaluationSettings):
            settings = cls(evaluation=settings)
        base = settings or cls()
        own = {name: value for name, value in keywords.items() if name in NAMES}
        run = {name: value for name, value in keywords.items() if name not in NAMES}
        if run:
            own["evaluation"] = EvaluationSettings.of(own.get("evaluation", base.evaluation), **run)
        return replace(base, **own) if own else base

    @classmethod
    def from_app(cls, app: Any) -> AppRunSettings:
        """From the Function App's settings (``app.settings.AppSettings``): EVALUATION_RETIME,
        EVALUATION_RETIME_MAX_DAYS, EVALUATION_SHARD_SECONDS, EVALUATION_SHARD_QUESTIONS, EVALUATION_ONLY
        and EVALUATION_SKIP, and the evaluation settings it lets a team set (``EvaluationSettings.from_app``)."""
        return cls(retime=app.retime, retime_max_days=app.retime_max_days, shard_seconds=app.shard_seconds,
                   most_questions=app.shard_questions, only=tuple(app.only) or None, skip=tuple(app.skip),
                   evaluation=EvaluationSettings.from_app(app))


NAMES = frozenset(f.name for f in fields(AppRunSettings))
