"""A race killed mid-way and resumed gives the report it would have given: ``python3 -m evaluation evaluate``
as a real process on the shipped sample with the real engine, its reranked setup racing (the cross-encoder
over 3 candidates: costly enough to race, quick enough for a test), killed (SIGKILL: no handler runs)
once its third batch is kept, then run again with the same command.

What the resumed run must equal is the race the killed one was running, uninterrupted: the same plan and
the same times (a run timed again would time differently, and timing can move a time pick). So the
work folder as the kill left it is copied, the copy's batches removed (its plan and times kept), and that
copy run to the end: the resumed report must be it, field for field; and the resumed run said it resumed,
under the killed run's id."""
from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent.parent
RERANKED = "local.hybrid_reranked.bge-small"
pytestmark = pytest.mark.slow


def command(index: Path, work: Path, store: Path) -> list[str]:
    return [sys.executable, "-m", "evaluation", "evaluate", "--index", str(index),
            "--golden", str(ROOT / "samples" / "golden.jsonl"), "--only", "keyword", "--only", "hybrid.bge-small",
            "--only", "hybrid_reranked.bge-small", "--rerank-candidates", "3", "--timed", "6",
            "--work-dir", str(work), "--save-to", str(store), "--json"]


def without_cache(report: dict) -> dict:
    kept = {k: v for k, v in report.items() if k != "cache"}
    kept["setups"] = [{k: v for k, v in s.items() if k != "cache"} for s in report["setups"]]
    return kept


def finished(argv: list[str]) -> tuple[dict, str]:
    done = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout), done.stderr


def test_a_race_killed_mid_way_resumes_with_the_report_the_race_would_have_given(sample_index, tmp_path):
    work = tmp_path / "work"
    process = subprocess.Popen(command(sample_index, work, tmp_path / "store"), cwd=ROOT,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 600
    while not list(work.glob(f"run-*/race/{RERANKED}/3.json")):
        assert process.poll() is None, "the run ended before its third batch was kept"
        assert time.monotonic() < deadline, "no third batch within ten minutes"
        time.sleep(0.05)
    process.send_signal(signal.SIGKILL)
    process.wait(timeout=60)
    [kept] = work.iterdir()
    plan = json.loads((kept / "plan.json").read_text(encoding="utf-8"))
    assert plan["race"]["raced"] == [RERANKED] and (kept / "times.json").is_file()

    # the race uninterrupted: the same plan and times, its batches searched again from the first
    fresh = tmp_path / "fresh-work"
    shutil.copytree(work, fresh)
    [copy] = fresh.iterdir()
    for searched in ("race", "entries"):
        shutil.rmtree(copy / searched, ignore_errors=True)
    whole, _ = finished(command(sample_index, fresh, tmp_path / "store-fresh"))

    resumed, said = finished(command(sample_index, work, tmp_path / "store"))

    assert f"resuming run {plan['run_id']}" in said
    assert resumed["id"] == plan["run_id"] == whole["id"]
    # field for field (the picks, the race's stops and looks, every setup's numbers) but for the cache's
    # bookkeeping: where each batch's vectors came from (the cache file beside the index, filled meanwhile)
    assert without_cache(resumed) == without_cache(whole)
    assert resumed["picks"] == whole["picks"] and resumed["race"]["stopped"] == whole["race"]["stopped"]
    assert not work.exists() or not any(work.iterdir())
    assert os.path.isfile(tmp_path / "store" / "retrieval" / "runs" / plan["run_id"] / "report.json")
