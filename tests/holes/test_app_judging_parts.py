"""The judging in parts as the Function App runs it (``run.app_judging``), on a folder kept in memory:
parts graded one after another or at once share the cap and never pass it together, and the joined
block is the one ``judge_holes`` gives in one process when no cap binds."""
from __future__ import annotations

import json

import pytest
from judge_world import ScriptedJudge, World
from test_judge_holes import PRICES, world_run

from evaluation.errors import StoreError
from evaluation.golden.writing.cache import ReplyCache
from evaluation.holes import judge_holes
from evaluation.holes.settings import HoleSettings
from evaluation.run import app_judging


class MemoryFolder:
    """The parts of ``CollectionFolder`` the judging uses, in memory."""

    def __init__(self, golden: bytes) -> None:
        self.files: dict[str, str] = {}
        self.golden = golden

    def write_work(self, run_id, name, value):
        self.files[name] = json.dumps(value)

    def read_work(self, run_id, name):
        if name not in self.files:
            raise StoreError(f"no working file {name}")
        return json.loads(self.files[name])

    def kept_golden(self, sha256):
        return self.golden

    def address(self, path=""):
        return f"memory://{path}"


@pytest.fixture(scope="module")
def world_report():
    world = World(12)
    report, questions = world_run(world)
    golden = "".join(json.dumps(row) + "\n" for row in world.golden_rows()).encode()
    return world, report, questions, golden


def judge_in_parts(world, report, golden, settings, per=10):
    folder = MemoryFolder(golden)
    judging = app_judging.AppJudgingSettings(judge="judge-model", settings=settings, prices=PRICES, pairs_per_part=per)
    planned = app_judging.plan_app_judging(folder, "run", "sha", report, judging, texts=world.texts)
    judge, cache = ScriptedJudge(world), ReplyCache()
    for stage in ("calibration", "holes"):
        if stage == "holes" and not app_judging.app_judging_gate(folder, "run")["counted"]:
            break
        for part in range(planned[stage]):
            app_judging.judge_app_part(folder, "run", "sha", stage, part, judge, texts=world.texts, cache=cache)
    return app_judging.join_app_judging(folder, "run")["judged"], judge


def test_parts_give_the_block_one_process_gives(world_report):
    world, report, questions, golden = world_report
    block, judge = judge_in_parts(world, report, golden, HoleSettings(calibration=20))
    alone = judge_holes(report, questions, world.texts, ScriptedJudge(world), prices=PRICES, calibration=20)
    for name in ("grades", "calibration", "setups", "ranking", "judged_picks", "counted", "holes"):
        assert block[name] == alone[name], name
    assert block["cost"]["calls"] == alone["cost"]["calls"] == len(judge.asked)


@pytest.mark.parametrize("cap", [0.02, 0.05, 0.08])
def test_parts_share_the_cap_and_never_pass_it_together(world_report, cap):
    world, report, _, golden = world_report
    block, judge = judge_in_parts(world, report, golden, HoleSettings(calibration=20, max_cost=cap))
    assert block["cost"]["cost_at_most"] <= cap and block["cost"]["cost"] <= cap
    assert len(judge.asked) * (300 * 2.0 + 12 * 8.0) / 1_000_000 <= cap  # what the service billed, priced
    assert block["stopped_by_cap"]
