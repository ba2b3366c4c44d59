"""The judge's reply cache in Blob (``holes.replies.BlobReplies``), against Azurite: a warm judging asks
nothing, parts graded at once each keep their own replies, and a damaged blob costs one call, not a run."""
from __future__ import annotations

import json
import logging
import threading

import pytest
from judge_world import ScriptedJudge, World
from test_judge_holes import PRICES, world_run

from evaluation.golden.writing.cache import prompt_key
from evaluation.holes import judge_holes
from evaluation.holes.replies import BlobReplies
from evaluation.holes.settings import HoleSettings
from evaluation.holes.steps import PartSettings, grade_pairs, plan_judging

PREFIX = "docs/judge-replies"


@pytest.fixture
def container(azurite):
    from evaluation.store.blob import container_client, parse_address

    return container_client(parse_address(azurite.address(azurite.new_container())),
                            connection_string=azurite.connection_string)


@pytest.fixture(scope="module")
def small():
    world = World(10)
    return (world, *world_run(world))


def test_a_warm_judging_from_blob_asks_nothing_and_gives_the_same_grades(container, small):
    world, report, questions = small
    first_judge, again_judge = ScriptedJudge(world), ScriptedJudge(world)
    first = judge_holes(report, questions, world.texts, first_judge, prices=PRICES, calibration=12,
                        cache=BlobReplies(container, PREFIX))
    again = judge_holes(report, questions, world.texts, again_judge, prices=PRICES, calibration=12,
                        cache=BlobReplies(container, PREFIX))
    assert len(first_judge.asked) == 12 + 90 and again_judge.asked == []
    assert again["grades"] == first["grades"] and again["cost"]["cached"] == 12 + 90
    assert len(BlobReplies(container, PREFIX).keys()) == 12 + 90


def test_parts_graded_at_once_keep_every_reply_once(container, small):
    world, report, questions = small
    plan = plan_judging(report, questions, world.texts, "judge-model", settings=HoleSettings(calibration=12),
                        prices=PRICES)
    parts = [plan.holes[n::3] for n in range(3)]
    results = [None] * 3

    def grade(n: int) -> None:
        results[n] = grade_pairs(plan, parts[n], questions, report, world.texts, ScriptedJudge(world),
                                 BlobReplies(container, PREFIX), PartSettings(what="grading the holes"))

    threads = [threading.Thread(target=grade, args=(n,)) for n in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sum(r.cost["calls"] for r in results) == len(plan.holes) == 90
    assert len(BlobReplies(container, PREFIX).keys()) == 90
    assert all(g is not None for r in results for g in r.grades)


def test_a_damaged_reply_blob_is_asked_again_with_a_warning(container, small, caplog):
    world, report, questions = small
    judge_holes(report, questions, world.texts, ScriptedJudge(world), prices=PRICES, calibration=12,
                cache=BlobReplies(container, PREFIX))
    from evaluation.store.blob import write_blob

    key = BlobReplies(container, PREFIX).keys()[0]
    write_blob(container, f"{PREFIX}/{key}.json", b'{"sha256": "not its key", "reply": "{}"}')
    again = ScriptedJudge(world)
    with caplog.at_level(logging.WARNING):
        judge_holes(report, questions, world.texts, again, prices=PRICES, calibration=12,
                    cache=BlobReplies(container, PREFIX))
    assert len(again.asked) == 1
    assert "not a reply of its key" in caplog.text


def test_a_reply_is_kept_under_its_prompts_key(container):
    replies = BlobReplies(container, PREFIX)
    key = prompt_key("judge-model", [{"role": "user", "content": "hi"}])
    replies.put(key, '{"grade": 1}')
    replies.put(key, '{"grade": 0}')  # never replaced
    assert replies.get(key) == '{"grade": 1}' and replies.written == 1
    assert json.loads(container.download_blob(f"{PREFIX}/{key}.json").readall()) == {"sha256": key,
                                                                                      "reply": '{"grade": 1}'}
    with pytest.raises(ValueError):
        replies.get("../golden.jsonl")
