"""How holes are judged, as one object: ``HoleSettings``, its defaults written here once (``judge_holes``'
keywords, ``evaluate --judge-*`` flags and the Function App's ``EVALUATION_JUDGE_*`` settings all become one)."""
from __future__ import annotations

from dataclasses import dataclass, fields, replace
from typing import Any

from ..errors import UsageError, did_you_mean
from .grader import PASSAGE_CHARS

PICKS_FROM = ("human", "judged")
DEFAULT_CALIBRATION = 100
DEFAULT_MIN_KAPPA = 0.4


@dataclass(frozen=True)
class HoleSettings:
    """How holes are judged (the module docstring): ``calibration`` labels set aside (seeded by ``seed``),
    the ``min_kappa`` the low end of kappa's interval must reach, the cost ``max_cost`` (None: no cap),
    where the picks come from, whether a judge of a family under test may judge, the longest passage
    shown, and the resamples of tau's interval and ``alpha`` of the bias test."""

    calibration: int = DEFAULT_CALIBRATION
    seed: int = 0
    min_kappa: float = DEFAULT_MIN_KAPPA
    max_cost: float | None = None
    picks_from: str = "human"
    allow_family: bool = False
    passage_chars: int = PASSAGE_CHARS
    resamples: int = 1000
    alpha: float = 0.05

    def __post_init__(self) -> None:
        if isinstance(self.calibration, bool) or not isinstance(self.calibration, int) or self.calibration < 2:
            raise UsageError(f"calibration={self.calibration!r}: set aside 2 or more labels (kappa needs pairs)")
        if not -1 <= self.min_kappa <= 1:
            raise UsageError(f"min_kappa={self.min_kappa!r}: a kappa is from -1 to 1")
        if self.max_cost is not None and not self.max_cost >= 0:
            raise UsageError(f"max_cost={self.max_cost!r}: a cost cap is 0 or more (in the price table's currency)")
        if self.picks_from not in PICKS_FROM:
            raise UsageError(f'picks_from="{self.picks_from}": one of {", ".join(PICKS_FROM)}.'
                             f"{did_you_mean(str(self.picks_from), PICKS_FROM)}")
        if self.passage_chars < 200 or self.resamples < 100 or not 0 < self.alpha < 1:
            raise UsageError("passage_chars must be 200 or more, resamples 100 or more, alpha between 0 and 1")

    @classmethod
    def of(cls, settings: HoleSettings | None = None, **keywords: Any) -> HoleSettings:
        names = {f.name for f in fields(cls)}
        unknown = sorted(set(keywords) - names)
        if unknown:
            raise TypeError(f"{unknown[0]!r} is not a setting of judge_holes; settings: {', '.join(sorted(names))}."
                            f"{did_you_mean(unknown[0], names)}")
        return replace(settings or cls(), **keywords)

    @classmethod
    def from_app(cls, app: Any) -> HoleSettings:
        """From the Function App's settings (``app.settings.AppSettings``): EVALUATION_JUDGE_MAX_COST,
        _CALIBRATION, _MIN_KAPPA, _PICKS_FROM and _ALLOW_FAMILY."""
        return cls(calibration=app.judge_calibration, min_kappa=app.judge_min_kappa, max_cost=app.judge_max_cost,
                   picks_from=app.judge_picks_from, allow_family=app.judge_allow_family)
