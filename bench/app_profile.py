"""Where an activity's seconds go: named steps timed inside each activity of ``bench_app_scale.py``.

``Profiler.wrap`` replaces a function or method by one that times it; times are exclusive (a wrapped
call inside another is taken out of the outer one), so an activity's steps add up to at most its wall
time and what is left is "other" (Python between the steps: building entries, copying dicts, ...).
Nothing here changes what a step does; the wrappers cost about a microsecond a call.
"""
from __future__ import annotations

import contextlib
import functools
import time
from collections import defaultdict
from typing import Any, Callable, Iterator

# (module or class path, attribute, step name): what a warm save might do twice
STEPS = (
    ("evaluation.engine.target", "open_index", "open the index"),
    ("evaluation.engine.models", "load_embedder", "load models"),
    ("evaluation.engine.models", "load_cross_encoder", "load models"),
    ("evaluation.engine.models:Embedder", "embed_queries", "embed questions"),
    ("evaluation.engine.models:CrossEncoder", "score_pairs", "cross-encoder"),
    ("evaluation.engine.cache:PersistentCache", "vectors", "read the cache"),
    ("evaluation.engine.cache:PersistentCache", "scores", "read the cache"),
    ("evaluation.engine.cache:PersistentCache", "put_vectors", "write the cache"),
    ("evaluation.engine.cache:PersistentCache", "put_scores", "write the cache"),
    ("evaluation.engine.target:EmbeddedTarget", "_keyword", "BM25"),
    ("evaluation.engine.target", "dense_top_k", "dense top-k"),
    ("evaluation.engine.target", "rrf", "fusion"),
    ("evaluation.engine.target:EmbeddedTarget", "_hits", "hits"),
    ("evaluation.run.one_setup", "_judged", "judging"),
    ("evaluation.run.side_by_side", "judged", "judging"),
    ("evaluation.run.reuse", "judged_rows", "judging"),
    ("evaluation.run.planned:Plan", "questions_for", "questions from the plan"),
    ("evaluation.run.work_files", "read_plan", "read the plan"),
    # what plan_app_run and join_app_run call (the plan_evaluation and save_report activities)
    ("evaluation.run.app_run", "merge_shards", "merge shards"),
    ("evaluation.run.app_run", "assemble_report", "assemble the report"),
    ("evaluation.run.app_run", "finish_entries", "assemble the report"),
    ("evaluation.store.runs", "report_bytes", "write the report"),
    ("evaluation.report.html", "render_html", "write the report"),
    ("evaluation.run.app_run", "plan_run", "plan the run"),
    ("evaluation.run.app_run", "plan_shards", "plan the run"),
    ("evaluation.run.app_run", "reusable_times", "what to reuse"),
    ("evaluation.run.app_run", "reusable_ranks", "what to reuse"),
    ("evaluation.run.app_run", "reused_timing", "what to reuse"),
    ("evaluation.run.retime", "time_state", "state keys"),
    ("evaluation.run.side_by_side", "time_state", "state keys"),
)


class Profiler:
    """Seconds per (activity kind, step), exclusive of wrapped calls inside."""

    def __init__(self) -> None:
        self.seconds: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
        self.walls: dict[str, float] = defaultdict(float)
        self.counts: dict[str, int] = defaultdict(int)
        self._kind: str | None = None
        self._stack: list[float] = []  # time spent in children of each open wrapped call
        self._undo: list[Callable[[], None]] = []

    def install(self) -> None:
        import importlib

        for where, attribute, step in STEPS:
            module_name, _, class_name = where.partition(":")
            owner: Any = importlib.import_module(module_name)
            if class_name:
                owner = getattr(owner, class_name)
            self._wrap(owner, attribute, step)

    def uninstall(self) -> None:
        while self._undo:
            self._undo.pop()()

    def _wrap(self, owner: Any, attribute: str, step: str) -> None:
        original = owner.__dict__[attribute] if isinstance(owner, type) else getattr(owner, attribute)
        profiler = self

        @functools.wraps(original)
        def timed(*args: Any, **kwargs: Any) -> Any:
            if profiler._kind is None:
                return original(*args, **kwargs)
            profiler._stack.append(0.0)
            started = time.perf_counter()
            try:
                return original(*args, **kwargs)
            finally:
                spent = time.perf_counter() - started
                children = profiler._stack.pop()
                profiler.seconds[profiler._kind][step] += spent - children
                if profiler._stack:
                    profiler._stack[-1] += spent

        setattr(owner, attribute, timed)
        self._undo.append(lambda: setattr(owner, attribute, original))

    @contextlib.contextmanager
    def activity(self, kind: str) -> Iterator[None]:
        """Count what runs inside as one activity of ``kind`` (e.g. "rank keyword")."""
        self._kind, started = kind, time.perf_counter()
        try:
            yield
        finally:
            self.walls[kind] += time.perf_counter() - started
            self.counts[kind] += 1
            self._kind = None

    def table(self, title: str) -> str:
        """One row per activity kind: its activities, wall seconds, and each step's seconds."""
        steps = list(dict.fromkeys(step for _, _, step in STEPS))
        used = [s for s in steps if any(self.seconds[k].get(s, 0) >= 0.05 for k in self.walls)]
        head = ["activity", "n", "wall s"] + used + ["other"]
        rows = []
        for kind, wall in self.walls.items():
            spent = self.seconds[kind]
            other = wall - sum(spent.values())
            rows.append([kind, str(self.counts[kind]), f"{wall:.1f}"] + [f"{spent.get(s, 0):.1f}" for s in used]
                        + [f"{other:.1f}"])
        total_wall = sum(self.walls.values())
        totals = [sum(self.seconds[k].get(s, 0) for k in self.walls) for s in used]
        rows.append(["all", str(sum(self.counts.values())), f"{total_wall:.1f}"] + [f"{t:.1f}" for t in totals]
                    + [f"{total_wall - sum(totals):.1f}"])
        lines = [f"  {title}", "  | " + " | ".join(head) + " |", "  |" + "---|" * len(head)]
        lines += ["  | " + " | ".join(row) + " |" for row in rows]
        return "\n".join(lines)
