"""``search_space``: a declared space searched by successive halving (or ``exhaustive``), resumable from a
work folder, reported with every setup's questions, its stop, the pick, its top tier and the cost.

The work folder (``SpaceSettings.work_dir``) holds ``plan.json`` (the space, the corpus's and the golden
file's sha256 and the plan: a resumed run must match it), one ``round-<n>.json`` per round done (its
values and stops, written whole before the next round starts) and ``vectors.sqlite`` (every passage and
question vector embedded, so the builds a resumed run makes again embed nothing). A run killed between
rounds and started again with the same folder replays the rounds kept and searches the rest: the same
decisions and the same pick (``halving.run_halving``). Without a work folder nothing is kept.

The report holds keys, counts and scores: no question or document text.
"""
from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from ..builds.runner import scratch
from ..builds.settings import BuildPlace
from ..engine.corpus import Corpus, read_corpus
from ..errors import GoldenFileError, UsageError
from ..files.disk import write_whole
from ..golden import Golden, explain_problems, read_golden, run_problems
from .declared import Space
from .halving import ALPHA, Halving, plan_halving, run_halving, top_tier

SPACE_FORMAT = 2  # 2: a stop holds its shortfall from the best (interval [low, None]), one test per setup
PLAN_FILE, VECTORS_FILE = "plan.json", "vectors.sqlite"
Progress = Callable[[int, int, str], None]  # (done, total, what is being done, in words)


@dataclass(frozen=True)
class SpaceSettings:
    """How a space is searched: the order's ``seed``, ``alpha`` family-wise over every setup, the ``margin``
    in questions a setup must be shown to be behind the leader by (more than), ``exhaustive`` (every
    setup on every question), the ``work_dir`` that makes a run resumable, a vector ``cache`` kept
    across runs (default: the work folder's), and ``threads`` for the models."""

    seed: int = 0
    alpha: float = ALPHA
    margin: int = 0
    exhaustive: bool = False
    work_dir: str | Path | None = None
    cache: str | Path | None = None
    threads: int | None = None

    def __post_init__(self) -> None:
        if not 0 < self.alpha < 1:
            raise UsageError(f"alpha is a share between 0 and 1, such as 0.05, not {self.alpha!r}")
        if isinstance(self.margin, bool) or not isinstance(self.margin, int) or self.margin < 0:
            raise UsageError(f"margin is a whole number of questions, 0 or more (0: one best), not {self.margin!r}")
        if isinstance(self.seed, bool) or not isinstance(self.seed, int):
            raise UsageError(f"seed is a whole number, not {self.seed!r}")

    def vector_cache(self) -> Path | None:
        if self.cache is not None:
            return Path(self.cache)
        return Path(self.work_dir) / VECTORS_FILE if self.work_dir is not None else None


def search_space(space: Space, corpus: Corpus | str | Path, golden: Golden | str | Path, *,
                 settings: SpaceSettings | None = None, progress: Progress | None = None) -> dict[str, Any]:
    """Search ``space`` on ``golden``'s questions over ``corpus`` (see the module docstring) and report it."""
    from .searching import SpaceSearcher

    settings = settings or SpaceSettings()
    corpus = corpus if isinstance(corpus, Corpus) else read_corpus(corpus)
    golden = golden if isinstance(golden, Golden) else read_golden(golden)
    problems = run_problems(golden)
    if problems:
        raise GoldenFileError(explain_problems(golden.source, problems))
    questions = list(golden.labelled)
    setups = space.setups()
    plan = plan_halving([s.key for s in setups], len(questions), seed=settings.seed, alpha=settings.alpha,
                        margin=settings.margin, exhaustive=settings.exhaustive)
    work = WorkFolder(settings.work_dir, {"format": SPACE_FORMAT, "space": space.to_dict(), "corpus": corpus.sha256,
                                          "golden": golden.sha256, "plan": plan.to_dict()})
    kept = work.rounds()
    started = time.perf_counter()
    place = BuildPlace(cache=settings.vector_cache(), workdir=settings.work_dir, threads=settings.threads)
    with scratch(place) as where:
        searcher = SpaceSearcher(setups, corpus, questions, where, threads=settings.threads, progress=progress)

        def search(keys: list[str], indices: list[int]) -> dict[str, list[float]]:
            number = len(work.kept) + 1
            if progress is not None:
                progress(0, 1, f"round {number} of {len(plan.budgets)}: {len(keys)} setups on {len(indices)} more "
                               f"questions (up to {plan.budgets[number - 1]} of {plan.population})")
            return searcher(keys, indices)

        state = run_halving(plan, search, kept=kept, on_round=work.keep)
    report = space_report(state, space, {s.key: s.to_dict() for s in setups})
    report.update({"corpus": {"source": str(corpus.source), "sha256": corpus.sha256, "documents": len(corpus)},
                   "golden": {"source": golden.source, "sha256": golden.sha256, "questions": len(questions)},
                   "question_ids": [q.id for q in questions], "resumed_rounds": len(kept),
                   "engine_searches": searcher.searches, "seconds": round(time.perf_counter() - started, 3)})
    return report


def space_report(state: Halving, space: Space, described: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """What a finished run reports (also what the bench assembles from a replay): per setup the questions
    it ran and what it found over them, its stop (round, leader, interval, adjusted p) or its place in
    the top tier; the pick; the rounds; the cost against every setup on every question."""
    plan = state.plan
    pick = state.pick()
    full = {key: state.values[key] for key in state.running()}
    tier = top_tier(full, pick, alpha=plan.rule.alpha) if pick else {}
    entries = []
    for key in plan.keys:
        ran = state.values.get(key, [])
        stop = state.stops.get(key)
        entries.append({**described[key], "questions": len(ran), "found": int(sum(ran)),
                        "stopped": stop.to_dict() if stop else None,
                        "top_tier": tier.get(key)})
    searched = sum(e["questions"] for e in entries)
    every = len(plan.keys) * plan.population
    return {"kind": "space", "format": SPACE_FORMAT, "space": space.to_dict(), "setups": entries,
            "builds": len(space.builds()), "plan": plan.to_dict(),
            "rounds": [{"round": r["round"], "budget": r["budget"], "running": len(r["values"]),
                        "leader": r["leader"], "stopped": list(r["stopped"])} for r in state.rounds],
            "pick": pick, "top_tier": list(tier),
            "cost": {"searches": searched, "exhaustive": every, "share": round(searched / every, 4) if every else 1.0}}


class WorkFolder:
    """A run's kept plan and rounds (see the module docstring); with no folder, nothing is kept."""

    def __init__(self, folder: str | Path | None, identity: dict[str, Any]) -> None:
        self.folder = Path(folder) if folder is not None else None
        self.kept: list[dict[str, Any]] = []
        if self.folder is None:
            return
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
        except OSError as err:
            raise UsageError(f"work folder {self.folder}: cannot be made ({err.strerror or err}); name a folder you "
                             "can write in") from None
        plan_file = self.folder / PLAN_FILE
        if plan_file.exists():
            found = _read(plan_file)
            if found != identity:
                differs = ", ".join(k for k in identity if found.get(k) != identity[k]) if isinstance(found, dict) \
                    else "everything"
                raise UsageError(f"{plan_file}: is another run's (its {differs} differ); resume with the same space, "
                                 "corpus, golden file, seed, alpha and margin, or give an empty --work-dir")
        else:
            write_whole(plan_file, json.dumps(identity, indent=1, sort_keys=True), what="the space's plan")

    def rounds(self) -> list[dict[str, Any]]:
        """The rounds kept, in order (a gap ends them: a later one without its predecessor is not read)."""
        if self.folder is None:
            return []
        found: list[dict[str, Any]] = []
        while (self.folder / f"round-{len(found) + 1}.json").exists():
            found.append(_read(self.folder / f"round-{len(found) + 1}.json"))
        self.kept = list(found)
        return found

    def keep(self, kept_round: dict[str, Any]) -> None:
        self.kept.append(kept_round)
        if self.folder is not None:
            write_whole(self.folder / f"round-{kept_round['round']}.json", json.dumps(kept_round, sort_keys=True),
                        what=f"round {kept_round['round']}")


def _read(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as err:
        raise UsageError(f"{path}: cannot be read as a kept round or plan ({err}); remove it to search that round "
                         "again, or give an empty --work-dir") from None
