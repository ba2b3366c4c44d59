"""A run's finished steps kept in a local folder, so a run killed midway (Ctrl-C, a closed laptop, a
killed process) resumes where it stopped when started again with the same inputs, and gives the same
report: the timed pass's times, each fully-run setup's batch, each raced setup's batch per look
(``local_race``). The race decides from those alone, so a resumed race stops the same setups.

A run's folder is named by the sha256 of its plan without its id and date (the golden file's
questions and their sha256, the settings and seed, the setups, each target's description with its
index fingerprint) and of the software that ranks (``reuse.ranking_software``): the same command on
the same files finds it, anything changed does not. A resumed run keeps the id and date its plan was
first made with. Each file is written whole (``files.write_whole``), so a kill while writing leaves
the step undone, never half a step; the folder is removed once the report is made.
"""
from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path
from typing import Any, Mapping, NamedTuple

from ..files import write_whole
from .planned import Plan
from .reuse import ranking_software

PLAN = "plan"
TIMES = "times"
MADE = "made"  # the folders above the run's that its first start made: a resumed run removes them too
IDENTITY_DIGITS = 16


def plan_identity(plan: Plan | Mapping[str, Any]) -> str:
    """The sha256 of what decides a run's results, whatever its id and date (see the module docstring): of
    the plan's JSON, as it is kept (``plan`` a ``Plan``, or that JSON read back)."""
    kept = plan.to_json() if isinstance(plan, Plan) else plan
    described = {"plan": {k: v for k, v in kept.items() if k not in ("run_id", "created_at")},
                 "software": ranking_software()}
    return hashlib.sha256(json.dumps(described, sort_keys=True, default=str).encode("utf-8")).hexdigest()


class Started(NamedTuple):
    """A run's working folder as ``WorkFolder.start`` found it: the folder, the plan to run (a resumed run's
    first id and date put back) and whether it resumes a run stopped there."""

    folder: WorkFolder
    plan: Plan
    resumed: bool


class WorkFolder:
    """One run's kept steps under ``<base>/run-<identity>/``: JSON files by name (``get``, ``put``)."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)
        self.made: list[Path] = []  # the folders above it this run made, removed again when empty


    @classmethod
    def start(cls, base: str | Path, plan: Plan) -> Started:
        """The folder of ``plan``'s run under ``base``, the plan to run (a resumed run's first id and date
        put back), and whether it resumes one (its plan was kept there before, as JSON)."""
        written = plan.to_json()
        identity = plan_identity(written)
        folder = cls(Path(base) / f"run-{identity[:IDENTITY_DIGITS]}")
        kept = folder.get(PLAN)
        if isinstance(kept, dict) and plan_identity(kept) == identity:
            folder.made = [Path(p) for p in folder.get(MADE) or []]
            return Started(folder, plan.with_start(str(kept["run_id"]), str(kept["created_at"])), True)
        folder.made = [parent for parent in folder.root.parents if not parent.exists()]
        folder.put(MADE, [str(p) for p in folder.made])
        folder.put(PLAN, written)
        return Started(folder, plan, False)

    def _path(self, name: str) -> Path:
        parts = name.split("/")
        if any(part in ("", ".", "..") for part in parts):
            raise ValueError(f"{name!r} is not a working file's name")
        # the suffix added, never replaced: a setup key's last dot begins its model's name
        # (local.dense.bge-small and local.dense.minilm-l6 are two files, not one local.dense.json)
        return self.root.joinpath(*parts[:-1], parts[-1] + ".json")

    def get(self, name: str) -> Any:
        """The value kept as ``name``, or None when that step has not finished (or its file is damaged:
        the step is then done again)."""
        try:
            return json.loads(self._path(name).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None

    def put(self, name: str, value: Any) -> None:
        """Keep ``value`` as ``name``, written whole."""
        write_whole(self._path(name), json.dumps(value, ensure_ascii=False, separators=(",", ":")),
                    what="a run's working file")

    def discard(self) -> None:
        """Remove the folder and everything in it (the run's report is made), and the folders above it
        this run made, when nothing else is in them (``--no-save`` keeps nothing anywhere)."""
        shutil.rmtree(self.root, ignore_errors=True)
        for parent in self.made:  # deepest first
            try:
                parent.rmdir()
            except OSError:  # another run's folder, or a file someone put there: left as it is
                break
