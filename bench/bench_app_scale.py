"""The Function App at real sizes: a run's activities measured here, then scheduled on N simulated instances.

The orchestrator's work, done the way its activities do it (``activities/planning.py``,
``activities/searches.py``): ``plan_run`` and ``plan_shards`` with the app's rules, then every
(setup, shard) ranked on a target of its own (each activity opens the index again, as on another
instance; the cache between them is one file, standing in for the Blob cache, keyed the same), then
each setup's timed pass, one after another. Every activity's wall time is measured on this machine.

The schedule: the fan-out goes to N instances of 2 slots each (host.json: 2 activities at once), in the
orchestrator's order, each activity to the slot that frees first (the task hub's queue hands work to
whichever worker asks); the timed passes follow one after another on one instance. Simulated wall =
the fan-out's finish + the timed passes. The baseline is the issue's goal: within 1.5x of the longest
single activity of the fan-out plus the timing pass.

Cold is an empty cache; warm is the same golden file with 10% of its questions asked in other words
(outside the timed sample: a changed sampled question is timed again), the cache and the cold run's report kept (times
reused when the index state, software and timed sample are unchanged: ``run.retime``). The warm goal: at most 1/10 of
the cold run's activity-seconds.

Questions: the golden file's, each asked again in numbered variants to reach the count (distinct texts,
the same expected documents), so 1,000 questions cost what 1,000 distinct questions cost.

    python bench/bench_app_scale.py --index .index/docs-XXXX --golden samples/golden.jsonl \\
        [--questions 100,1000,5000] [--instances 1,10,100] [--only PATTERN] [--shard-seconds 180]
        [--sample-shards N] [--cold-only] [--cache-per-setup] [--save FILE] | --combine FILE...

``--sample-shards``, ``--save`` and ``--combine`` (``app_scale_shards.py``) measure the reranked setups
at real sizes in parts small enough for a shared 2-core machine; ``bench_app_memory.py`` measures
an instance's peak memory. ``--save`` keeps the cold run's activities; with neither ``--cold-only`` nor
``--sample-shards`` the warm run follows as usual (so one run gives the cheap setups' warm ratio and
the cold activities to combine), and ``--cache-per-setup`` applies to both runs.
"""
from __future__ import annotations

import argparse
import contextlib
import heapq
import json
import os
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence
from evaluation.run.plan import PlanContext

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

SLOTS = 2  # activities at once per instance (host.json maxConcurrentActivityFunctions)
GOAL_RATIO = 1.5
WARM_GOAL = 0.1
WARM_SHARE = 0.1  # of the questions asked in other words for the warm run


@dataclass(frozen=True)
class Activity:
    name: str
    seconds: float
    measured: bool = True  # False: an unmeasured shard scheduled at its setup's measured mean (--sample-shards)


def simulated_wall(fan_out: Sequence[Activity], timing: Sequence[Activity], instances: int,
                   slots: int = SLOTS) -> float:
    """Seconds from the first fan-out activity to the last timed pass on ``instances`` x ``slots``:
    each fan-out activity, in order, starts on the slot that frees first; the timed passes then run
    one after another."""
    free = [0.0] * (instances * slots)
    heapq.heapify(free)
    finish = 0.0
    for activity in fan_out:
        start = heapq.heappop(free)
        end = start + activity.seconds
        finish = max(finish, end)
        heapq.heappush(free, end)
    return finish + sum(a.seconds for a in timing)


def questions_of(golden: Path, count: int) -> list[dict]:
    rows = [json.loads(line) for line in golden.read_text(encoding="utf-8").splitlines() if line.strip()]
    rows = [r for r in rows if r.get("expected")]
    out = []
    for n in range(count):
        row = rows[n % len(rows)]
        variant = n // len(rows)
        out.append({**row, "id": f"{row['id']}-{variant}",
                    "question": row["question"] if variant == 0 else f"{row['question']} (variant {variant})"})
    return out


def changed(rows: list[dict], share: float, keep: frozenset[str] = frozenset()) -> list[dict]:
    """``rows`` with ``share`` of them asked in other words (same id and expected), spread evenly over
    the rows not in ``keep`` (the cold run's timed sample: a changed sampled question changes what the
    timed pass times, so its times are measured again, ``run.retime``)."""
    free = [n for n, r in enumerate(rows) if r["id"] not in keep]
    want = round(len(rows) * share)
    picked = {free[int(i * len(free) / want)] for i in range(want)} if want and free else set()
    return [({**r, "question": r["question"] + " in other words"} if n in picked else r) for n, r in enumerate(rows)]



def warm_questions(rows: list[dict], cold_report: dict) -> list[dict]:
    """The warm run's golden rows: ``rows`` with 10% asked in other words, none of the cold run's timed
    sample among them (``changed``)."""
    return changed(rows, WARM_SHARE, frozenset(cold_report["timed_question_ids"]))

def written(value: Any) -> bytes:
    """``value`` as a run's working file holds it: compact UTF-8 JSON, as the app's ``write_work`` writes
    it. Every part crosses between activities this way, written once and ``read`` by each that needs it."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def read(data: bytes) -> Any:
    """A working file's value, as ``read_work`` reads it."""
    return json.loads(data)


def run_once(index: Path, rows: list[dict], cache: Path, *, only: list[str] | None, shard_seconds: float,
             earlier: dict | None, workdir: Path, profiler: Any = None, retime: str = "when-changed",
             around: list[Activity] | None = None, sample_shards: int = 0,
             cache_per_setup: bool = False) -> tuple[list[Activity], list[Activity], dict | None]:
    """One run the app's way: (fan-out activities, timed passes, the report). Each activity makes the
    library call its Function does, on what it reads from the run's working files (``written``, ``read``):
    ``plan_evaluation`` is ``plan_app_run`` (what ``earlier``, the collection's newest report, lets the
    run reuse, which setups are settled, the shards) and writes its parts; ``rank_shard`` is
    ``rank_setup`` over one shard; ``time_setup`` is ``time_setups`` of one setup with the reused
    times; ``save_report`` is ``join_app_run`` of what they kept, then the report's bytes and its page
    as the store writes them (``report_bytes``, ``render_html``; the upload itself is not timed). The
    plan and the save are activities too: given a list as ``around``, their ``Activity("plan")`` and
    ``Activity("save")`` are added to it. ``sample_shards``: measure
    that many shards of a setup that has more (``app_scale_shards``); the report is then None.
    ``cache_per_setup``: each setup's activities start from a cache of their own, empty on a cold run,
    as when every setup's shards run at once on instances of their own (no setup reads the query
    vectors or pair scores another computed in the same run)."""
    from app_scale_shards import sampled, scheduled
    from evaluation.engine.target import EmbeddedTarget
    from evaluation.evaluate import held_in_report
    from evaluation.report.html import render_html
    from evaluation.store.runs import report_bytes
    from evaluation.run import Plan, join_app_run, plan_app_run, rank_setup, time_setups

    golden = workdir / f"golden-{len(rows)}-{time.monotonic_ns()}.jsonl"
    golden.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    profiled = profiler.activity if profiler is not None else (lambda kind: contextlib.nullcontext())
    newest = report_bytes(earlier) if earlier is not None else None  # as the store keeps it

    def target(key: str | None = None) -> EmbeddedTarget:
        own = (
            cache.with_name(f"{cache.stem}-{plan_keys.index(key)}{cache.suffix}") if cache_per_setup and key else cache
        )
        return EmbeddedTarget(index, cache=own)

    plan_keys: list[str] = []

    started = time.perf_counter()
    with profiled("plan"):  # plan_evaluation
        report = read(newest) if newest is not None else None  # newest_report: read from the store
        planned = plan_app_run(target(), golden, newest=report, retime=retime, shard_seconds=shard_seconds, only=only,
                               context=PlanContext(held_before=held_in_report(report)))
        files = {"plan": written(planned.plan.to_json()),  # keep_plan: the plan leaves as its JSON
                 **{name: written(getattr(planned, name)) for name in ("shards", "reused_times")}}
        reused_ranks = {key: written(found) for key, found in planned.reused_ranks.items()}
        settled = list(planned.settled)  # plan_evaluation's answer: plain JSON in the orchestration
    planned_at = Activity("plan", time.perf_counter() - started)
    def read_plan() -> Plan:  # work_files.read_plan: each activity reads the plan from its working file
        return Plan.from_json(read(files["plan"]))

    plan, shards = read_plan(), read(files["shards"])  # the orchestrator's view (not timed)
    plan_keys += plan.setup_keys
    fan_out, parts, searched = [], {}, {}
    for key in plan.setup_keys:
        chosen, seconds = sampled(len(shards[key]), sample_shards), {}
        for n in chosen:
            started = time.perf_counter()
            with profiled(f"rank {key}"):  # rank_shard: the plan and its shard from the working files
                entry = rank_setup(target(key), read_plan(), key,
                                   questions=read(files["shards"])[key][n])
                parts.setdefault(key, []).append(written(entry))
            searched[key] = searched.get(key, True) and entry["error"] is None  # rank_shard's "ok"
            seconds[n] = time.perf_counter() - started
            if sample_shards:  # as measured: a run stopped part way keeps what it measured
                print(f"  measured rank {key} #{n + 1}: {seconds[n]:.1f} s (load {os.getloadavg()[0]:.1f})", flush=True)
        fan_out += scheduled(key, seconds, len(shards[key]))
    complete = all(a.measured for a in fan_out)
    # the orchestrator's: the setups whose every shard searched without error are timed, unless settled
    ranked_ok = [key for key in plan_keys if searched.get(key, True)]
    timing, times = [], {}
    for key in ranked_ok:
        if key in settled:  # times and the sample's results reused: no timed pass (as the orchestrator does)
            continue
        started = time.perf_counter()
        with profiled(f"time {key}"):  # time_setup: the plan and this setup's reused times, if any
            reused = {k: v for k, v in read(files["reused_times"]).items() if k == key}
            opened = target(key)
            times[key] = written(time_setups({opened.name: opened}, read_plan(), [key],
                                             reused=reused)[key])
        timing.append(Activity(f"time {key}", time.perf_counter() - started))
        if sample_shards:
            print(f"  measured time {key}: {timing[-1].seconds:.1f} s (load {os.getloadavg()[0]:.1f})", flush=True)
    if not complete:  # a sampled run: shards are missing, so there is nothing to merge or save
        return fan_out, timing, None
    started = time.perf_counter()
    with profiled("save"):  # save_report: join_app_run of the working files (evaluation/run/work_files.run_parts)
        report = join_app_run(
            read_plan(), failures={}, settled=[key for key in ranked_ok if key in settled],
            shard_entries={key: [read(p) for p in parts.get(key, [])] for key in shards},
            reused_ranks={key: read(found) for key, found in reused_ranks.items()},
            times={key: read(times[key]) if key in times else None for key in shards if key not in settled},
            reused_times=read(files["reused_times"]) if settled else {}, owned=True)
        report_bytes(report), render_html(report)  # what evaluation.save_report writes (history: none here)
    if around is not None:
        around += [planned_at, Activity("save", time.perf_counter() - started)]
    return fan_out, timing, report


@contextlib.contextmanager
def _installed(profiler: Any):
    if profiler is None:
        yield
        return
    profiler.install()
    try:
        yield
    finally:
        profiler.uninstall()


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--index", type=Path, required=True)
    parser.add_argument("--golden", type=Path, required=True)
    parser.add_argument("--questions", default="100,1000,5000")
    parser.add_argument("--instances", default="1,10,100")
    parser.add_argument("--only", action="append", default=None)
    parser.add_argument("--shard-seconds", type=float, default=180.0)
    parser.add_argument("--sample-shards", type=int, default=0, metavar="N",
                        help="measure N shards (first, last, between) of a setup with more, the rest at their mean; "
                             "0: every shard (default). Implies --cold-only when a shard goes unmeasured")
    parser.add_argument("--cold-only", action="store_true", help="no warm run")
    parser.add_argument("--cache-per-setup", action="store_true",
                        help="each setup's activities start from an empty cache of their own (all at once on 100 "
                             "instances); a warm run then reads the cache its setup's cold run filled")
    parser.add_argument("--save", type=Path, metavar="FILE", help="the cold run's activities as JSON, for --combine "
                                                                  "(one question count; the warm run still runs "
                                                                  "unless --cold-only)")
    parser.add_argument("--combine", type=Path, nargs="+", metavar="FILE",
                        help="schedule saved runs (--save) together as one run, measuring nothing")
    parser.add_argument("--retime", choices=("when-changed", "always"), default="when-changed",
                        help="always: the warm run searches and times everything live, as EVALUATION_RETIME=always")
    parser.add_argument("--profile", action="store_true",
                        help="also print each activity's seconds by step (bench/app_profile.py)")
    args = parser.parse_args(argv)
    from _machine import describe_machine

    print(describe_machine())
    if args.combine:
        from app_scale_shards import print_combined

        print_combined(args.combine, [int(n) for n in args.instances.split(",")])
        return 0
    if args.sample_shards or args.cold_only:
        return _cold_only(args)
    counts = [int(c) for c in args.questions.split(",")]
    instances = [int(n) for n in args.instances.split(",")]
    if args.save and len(counts) != 1:
        raise SystemExit("--save keeps one run: give one --questions count")
    from app_scale_shards import activity_lines, save
    with tempfile.TemporaryDirectory() as work:
        for count in counts:
            rows = questions_of(args.golden, count)
            cache = Path(work) / f"cache-{count}.sqlite"
            load = os.getloadavg()
            profilers = {}
            if args.profile:
                from app_profile import Profiler

                profilers = {"cold": Profiler(), "warm": Profiler()}
            around: dict[str, list[Activity]] = {"cold": [], "warm": []}
            with _installed(profilers.get("cold")):
                cold = run_once(args.index, rows, cache, only=args.only, shard_seconds=args.shard_seconds,
                                earlier=None, workdir=Path(work), profiler=profilers.get("cold"), around=around["cold"],
                                cache_per_setup=args.cache_per_setup)
            if args.save:  # the cold run, as --cold-only saves it, for --combine with the reranked setups' runs
                save(args.save, count, cold[0], cold[1], (load[0], os.getloadavg()[0]))
            warm_rows = warm_questions(rows, cold[2])
            with _installed(profilers.get("warm")):
                warm = run_once(args.index, warm_rows, cache, only=args.only,
                                shard_seconds=args.shard_seconds, earlier=cold[2], workdir=Path(work),
                                profiler=profilers.get("warm"), retime=args.retime, around=around["warm"],
                                cache_per_setup=args.cache_per_setup)
            print(f"\n{count} questions, {len(cold[2]['setups'])} setups (load {' '.join(f'{x:.1f}' for x in load)} "
                  f"before, {' '.join(f'{x:.1f}' for x in os.getloadavg())} after)")
            for name, (fan_out, timed, report) in (("cold", cold), ("warm", warm)):
                seconds = sum(a.seconds for a in fan_out + timed)
                longest = max(fan_out, key=lambda a: a.seconds, default=Activity("none", 0.0))
                baseline = longest.seconds + sum(a.seconds for a in timed)
                print(f"  {name}: {len(fan_out)} rank activities, {len(timed)} timed passes, "
                      f"{seconds:.1f} activity-seconds (with plan and save: "
                      f"{seconds + sum(a.seconds for a in around[name]):.1f}); longest activity "
                      f"{longest.seconds:.1f} s "
                      f"({longest.name}); timing pass {sum(a.seconds for a in timed):.1f} s; reused times "
                      f"{sum(1 for s in report['setups'] if s.get('timed_in'))}, reused results "
                      f"{sum(len(s.get('ranked_in') or {}) for s in report['setups'])} (question x setup)")
                for n in instances:
                    wall = simulated_wall(fan_out, timed, n)
                    print(f"    {n:>4} instances: wall {wall:8.1f} s = {wall / max(baseline, 1e-9):.2f}x "
                          f"(longest activity + timing pass, goal <= {GOAL_RATIO}x)")
                for line in activity_lines(fan_out, timed):
                    print(f"  {line}")
            searches = [sum(a.seconds for a in run[0] + run[1]) for run in (cold, warm)]
            ratio = searches[1] / searches[0]
            whole = ((searches[1] + sum(a.seconds for a in around["warm"]))
                     / (searches[0] + sum(a.seconds for a in around["cold"])))
            asked = {r["id"]: r["question"] for r in warm_rows}
            unchanged = [r["id"] for r in rows if asked[r["id"]] == r["question"]]
            before = {s["key"]: s for s in cold[2]["setups"]}
            same = all(s[name][q] == before[s["key"]][name][q]
                       for s in warm[2]["setups"] for q in unchanged for name in ("ranks", "results"))
            print(f"  warm / cold activity-seconds: {ratio:.3f} (with plan and save: {whole:.3f}; goal <= "
                  f"{WARM_GOAL}); "
                  f"ranks and results of unchanged questions identical: {same}")
            for name, profiler in profilers.items():
                print(profiler.table(f"{name} run, {count} questions: seconds by activity and step"))
    return 0


def _cold_only(args: argparse.Namespace) -> int:
    """Cold runs alone, shards sampled as ``--sample-shards`` says (``app_scale_shards``), saved with ``--save``."""
    from app_scale_shards import activity_lines, sample_lines, save, schedule_lines

    counts = [int(c) for c in args.questions.split(",")]
    if args.save and len(counts) != 1:
        raise SystemExit("--save keeps one run: give one --questions count")
    with tempfile.TemporaryDirectory() as work:
        for count in counts:
            before = os.getloadavg()[0]
            fan_out, timing, _ = run_once(args.index, questions_of(args.golden, count),
                                          Path(work) / f"cache-{count}.sqlite",
                                          only=args.only, shard_seconds=args.shard_seconds, earlier=None,
                                          workdir=Path(work), sample_shards=args.sample_shards,
                                          cache_per_setup=args.cache_per_setup)
            load = (before, os.getloadavg()[0])
            print(f"\n{count} questions, cold, {len(timing)} setups timed (load {load[0]:.1f} before, {load[1]:.1f} "
                  f"after)")
            for line in (activity_lines(fan_out, timing) + sample_lines(fan_out)
                         + schedule_lines(fan_out, timing, [int(n) for n in args.instances.split(",")])):
                print(line)
            if args.save:
                save(args.save, count, fan_out, timing, load)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
