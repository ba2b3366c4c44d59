"""``judge_holes`` against scripted judges of known agreement over HTTP (tests/chat_server.py), on a world
whose every relevance is known (judge_world.py): kappa and tau land within their intervals of the truth
computed from the judge's construction, a biased judge is flagged, the cost cap is never passed, a warm
re-run makes no call, and nothing the judge says reaches the golden file."""
from __future__ import annotations

import json
import math
import re

import pytest
from chat_server import ChatServer, Reply, completion
from judge_world import METHODS, World, ScriptedJudge, results
from test_agreement import binary_truth, graded_truth

from evaluation import evaluate
from evaluation.chat import ChatSettings
from evaluation.errors import HoleJudgeError, UsageError
from evaluation.golden import Question
from evaluation.holes import HoleGrader, HoleJudge, judge_holes, with_judged
from evaluation.holes.agreement import kendall_tau_b
from evaluation.holes.prices import Price, PriceTable


def world_run(world: World) -> tuple[dict, list[Question]]:
    questions = [Question(r["question"], expected=r["expected"], id=r["id"]) for r in world.golden_rows()]
    # exhaustive: every setup judged (timed=0 leaves each fake setup estimated costly, so raced)
    return evaluate(world.target(), questions, timed=0, resamples=200, exhaustive=True), questions


@pytest.fixture(scope="module")
def binary():
    world = World(40)
    return (world, *world_run(world))


@pytest.fixture(scope="module")
def graded():
    world = World(40, graded=True)
    return (world, *world_run(world))


def grader(server: ChatServer, model: str = "judge-model") -> HoleGrader:
    return HoleGrader(ChatSettings(endpoint=f"{server.base}/v1", model=model, api="openai", auth="none", role="judge",
                                   max_tokens=100, retries=0))


PRICES = PriceTable("test prices", {"judge-model": Price("judge-model", input=2.0, output=8.0)})


def judged(world, report, questions, judge: ScriptedJudge, **keywords):
    with ChatServer() as server:
        server.respond = judge
        with grader(server, keywords.pop("model", "judge-model")) as chat:
            block = judge_holes(report, questions, world.texts, chat, prices=PRICES, **keywords)
        return block, len(server.seen)


# -- truths written from the world's construction -------------------------------------------------------

def human_scores(world: World) -> list[float]:
    """found@10 count * (questions + 1) + found@1 count per setup, on the people's labels (a<i> only)."""
    out = []
    for method in METHODS:
        lists = [results(method, i) for i in range(1, world.n + 1)]
        found10 = sum(f"a{i}" in found[:10] for i, found in enumerate(lists, start=1))
        found1 = sum(found[0] == f"a{i}" for i, found in enumerate(lists, start=1))
        out.append(found10 * (world.n + 1) + found1)
    return out


def expected_judged_scores(world: World, p: float) -> list[float]:
    """The same, expected, with the holes judged by a binary judge that flips each with probability p:
    a labelled result counts as labelled; a hole truly relevant counts with 1 - p, one not with p."""
    out = []
    for method in METHODS:
        found10 = found1 = 0.0
        for i in range(1, world.n + 1):
            chances = []
            for unit in results(method, i)[:10]:
                if unit in (f"a{i}", f"c{i}"):
                    chances.append(1.0 if unit == f"a{i}" else 0.0)
                else:
                    chances.append(1 - p if world.truth(f"q{i}", unit) else p)
            found10 += 1 - math.prod(1 - c for c in chances)
            found1 += chances[0]
        out.append(found10 * (world.n + 1) + found1)
    return out


def test_a_perfect_judge_agrees_fully_and_its_tau_is_the_worlds(binary):
    world, report, questions = binary
    block, _ = judged(world, report, questions, ScriptedJudge(world))
    kappa = block["calibration"]["kappa"]
    assert kappa["value"] == 1.0 and block["counted"]
    # the world's orders: people keyword > hybrid > dense.m1 > dense.m2; truly keyword = dense.m1 > hybrid > dense.m2:
    # one pair discordant (hybrid, dense.m1), one tied on the judged side (keyword, dense.m1): (4 - 1) / sqrt(6 * 5)
    truth = (4 - 1) / math.sqrt(6 * 5)
    assert kendall_tau_b(human_scores(world), expected_judged_scores(world, 0.0)) == pytest.approx(truth)
    ranking = block["ranking"]
    assert ranking["tau"] == pytest.approx(truth, abs=1e-4)
    assert ranking["interval"][0] <= truth + 1e-4 and truth - 1e-4 <= ranking["interval"][1]
    assert block["holes"]["judged"] == block["holes"]["total"] == 9 * 40  # b<i> and fillers across the setups


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_noisy_judges_kappa_and_tau_land_within_their_intervals_of_the_truth(binary, seed):
    world, report, questions = binary
    p = 0.1
    block, _ = judged(world, report, questions, ScriptedJudge(world, "noisy", p=p, seed=seed), calibration=80)
    kappa = block["calibration"]["kappa"]
    slice_ones = sum(1 for *_, people, _judge in block["calibration"]["labels"] if people == 1) / kappa["pairs"]
    truth = binary_truth(slice_ones, p)
    assert kappa["interval"][0] <= truth <= kappa["interval"][1], (kappa, truth)
    assert block["counted"]
    tau_truth = kendall_tau_b(human_scores(world), expected_judged_scores(world, p))
    low, high = block["ranking"]["interval"]
    assert low - 1e-9 <= tau_truth <= high + 1e-9, (block["ranking"], tau_truth)


def test_a_noisy_graded_judges_weighted_kappa_lands_within_its_interval_of_the_truth(graded):
    world, report, questions = graded
    p = 0.15
    block, _ = judged(world, report, questions, ScriptedJudge(world, "noisy", p=p, seed=3), calibration=80)
    weighted = block["calibration"]["weighted_kappa"]
    people = [row[2] for row in block["calibration"]["labels"]]
    margins = [people.count(g) / len(people) for g in range(4)]
    truth = graded_truth(margins, p)
    assert weighted["interval"][0] <= truth <= weighted["interval"][1], (weighted, truth)
    assert block["calibration"]["confusion"]["grades"] == [0, 1, 2, 3]
    assert sum(map(sum, block["calibration"]["confusion"]["counts"])) == weighted["pairs"] == 80


def test_an_honest_noisy_judge_on_a_graded_scale_is_not_flagged_whatever_grades_a_setup_holds(graded):
    # hybrid's top 10 holds the a<i> (grade 3, only ever graded down by noise) and no c<i> (grade 0, only ever
    # graded up): compared with labels of other grades it would look disfavoured; within its grade it is not
    world, report, questions = graded
    for seed in range(3):
        honest, _ = judged(world, report, questions, ScriptedJudge(world, "noisy", p=0.15, seed=seed), calibration=80)
        assert honest["calibration"]["bias"]["flagged"] == [], seed


def test_a_judge_biased_toward_one_setup_is_flagged_and_an_honest_one_is_not(binary):
    world, report, questions = binary
    biased, _ = judged(world, report, questions, ScriptedJudge(world, "biased", favoured="keyword"), calibration=80,
                       min_kappa=0.0)
    assert biased["calibration"]["bias"]["flagged"] == ["w.keyword.bm25"]
    assert biased["setups"]["w.keyword.bm25"]["biased"] is True
    gated, _ = judged(world, report, questions, ScriptedJudge(world, "biased", favoured="keyword"), calibration=80)
    kappa = gated["calibration"]["kappa"]
    assert kappa["value"] >= 0.4 > kappa["interval"][0]  # moderate on its face, not with 95% confidence
    assert not gated["counted"] and "its low end is under 0.4" in gated["why_not_counted"]
    for seed in range(3):
        honest, _ = judged(world, report, questions, ScriptedJudge(world, "noisy", p=0.15, seed=seed), calibration=80)
        assert honest["calibration"]["bias"]["flagged"] == []


def test_a_judge_under_min_kappa_grades_no_hole_and_counts_nothing(binary):
    world, report, questions = binary
    block, calls = judged(world, report, questions, ScriptedJudge(world, "noisy", p=0.45, seed=1), calibration=40)
    assert not block["counted"] and "under 0.4" in block["why_not_counted"]
    assert calls == 40 and block["holes"]["judged"] == 0 and "setups" not in block


def test_the_cost_cap_is_never_passed_and_stops_before_the_call_that_could_pass_it(binary):
    world, report, questions = binary
    for cap in (0.01, 0.05, 0.2):
        block, calls = judged(world, report, questions, ScriptedJudge(world), calibration=40, max_cost=cap)
        cost = block["cost"]
        billed = calls * (300 * 2.0 + 12 * 8.0) / 1_000_000  # what the service counted, priced
        assert billed <= cap and cost["cost"] <= cap and cost["cost_at_most"] <= cap
        assert cost["calls"] == calls and block["stopped_by_cap"]
        assert cost["refused_by_cap"] >= 1  # refused, not made and regretted
        if cap == 0.01:  # not even the calibration: nothing counts
            assert not block["counted"] and f"after {calls} of 40 calibration labels" in block["why_not_counted"]


def test_the_cap_counts_a_reply_without_usage_at_its_worst_case(binary):
    world, report, questions = binary
    block, calls = judged(world, report, questions, ScriptedJudge(world, usage=False), calibration=40, max_cost=0.3)
    cost = block["cost"]
    assert cost["estimated_calls"] == calls > 0
    assert cost["cost_at_most"] <= 0.3 and cost["cost"] < cost["cost_at_most"]


def test_a_warm_rerun_makes_no_call_and_costs_nothing(binary, tmp_path):
    world, report, questions = binary
    cache = tmp_path / "judge-replies.jsonl"
    first, calls = judged(world, report, questions, ScriptedJudge(world), calibration=40, cache=cache)
    again, calls_again = judged(world, report, questions, ScriptedJudge(world), calibration=40, cache=cache)
    assert calls > 0 and calls_again == 0
    assert again["cost"]["calls"] == 0 and again["cost"]["cost"] == 0 and again["cost"]["cached"] == calls
    assert again["grades"] == first["grades"] and again["calibration"]["kappa"] == first["calibration"]["kappa"]


def test_another_model_is_asked_again_whatever_the_cache_holds(binary, tmp_path):
    world, report, questions = binary
    cache = tmp_path / "judge-replies.jsonl"
    _, calls = judged(world, report, questions, ScriptedJudge(world), calibration=40, cache=cache)
    _, calls_other = judged(world, report, questions, ScriptedJudge(world, name="other-model"), calibration=40,
                            cache=cache, model="other-model", max_cost=None)
    assert calls_other == calls


def test_a_reply_without_a_grade_stops_the_judging_and_is_not_cached(binary, tmp_path):
    world, report, questions = binary
    cache = tmp_path / "judge-replies.jsonl"
    with ChatServer() as server:
        server.answer(Reply(body=completion('{"grade": 7}')))
        with grader(server) as chat, pytest.raises(HoleJudgeError, match="not .*grade.* one of 0, 1"):
            judge_holes(report, questions, world.texts, chat, cache=cache, calibration=10)
    assert not cache.exists() or cache.read_text() == ""


def test_a_judge_of_a_family_under_test_is_refused_before_any_call(binary):
    world, report, questions = binary
    reranked = json.loads(json.dumps(report))
    reranked["setups"][0]["method"] = "hybrid_reranked"
    with ChatServer() as server:
        server.respond = ScriptedJudge(world)
        with grader(server, "cross-encoder/ms-marco-MiniLM-L-6-v2") as chat:
            with pytest.raises(UsageError, match="MiniLM / MS MARCO family"):
                judge_holes(reranked, questions, world.texts, chat, calibration=10)
            assert server.seen == []
            block = judge_holes(reranked, questions, world.texts, chat, calibration=10, allow_family=True)
    assert block["conflicts"][0]["setup"] == reranked["setups"][0]["key"]


def test_a_cap_for_a_model_the_table_does_not_price_is_refused_before_any_call(binary):
    world, report, questions = binary
    with ChatServer() as server:
        server.respond = ScriptedJudge(world)
        with grader(server, "unpriced") as chat, pytest.raises(UsageError, match="does not price unpriced"):
            judge_holes(report, questions, world.texts, chat, prices=PRICES, max_cost=1.0)
        assert server.seen == []


def test_the_judged_numbers_sit_apart_and_the_picks_stay_the_peoples_unless_asked(binary):
    world, report, questions = binary
    block, _ = judged(world, report, questions, ScriptedJudge(world))
    kept = with_judged(report, block)
    assert kept["picks"] == report["picks"] == {name: "w.keyword.bm25" for name in report["picks"]}
    assert kept["picks_from"] == "human"
    assert [s["summary"] for s in kept["setups"]] == [s["summary"] for s in report["setups"]]
    assert block["setups"]["w.dense.m1"]["summary"]["counts"]["10"] == 40  # b<i> first on every question
    assert block["judged_picks"]["picks"]["finds_the_most"] == "w.dense.m1"
    block, _ = judged(world, report, questions, ScriptedJudge(world), picks_from="judged")
    chosen = with_judged(report, block)
    assert chosen["picks"]["finds_the_most"] == "w.dense.m1" and chosen["picks_from"] == "human+judged"
    assert chosen["judged"]["human_picks"]["picks"] == report["picks"]


def test_the_run_keeps_ids_and_grades_only_and_the_golden_file_is_not_touched(tmp_path):
    world = World(12)
    golden = tmp_path / "golden.jsonl"
    golden.write_text("".join(json.dumps(row) + "\n" for row in world.golden_rows()), encoding="utf-8")
    before = golden.read_bytes()
    store = tmp_path / "runs"
    with ChatServer() as server:
        server.respond = ScriptedJudge(world)
        with grader(server) as chat:
            report = evaluate(world.target(), golden, save_to=store, timed=0, resamples=200, exhaustive=True,
                              holes=HoleJudge(chat, texts=world.texts, prices=PRICES, calibration=20))
    assert golden.read_bytes() == before
    kept = list(store.rglob("golden_dataset/*.jsonl")) or list(store.rglob("*.jsonl"))
    assert all(path.read_bytes() == before for path in kept if path.name != "judge-replies.jsonl")
    text = json.dumps(report)
    assert "what does topic" not in text and "A passage of the world" not in text
    assert report["judged"]["grades"]["q1"] == {"b1": 1, **{f"n1_{k}": 0 for k in range(8)}}
    assert [q["expected"] for q in report["questions"]] == [[f"a{i}"] for i in range(1, 13)]


def test_hole_pairs_are_asked_best_placed_first(binary):
    world, report, questions = binary
    judge = ScriptedJudge(world)
    judged(world, report, questions, judge, calibration=10)
    holes = judge.asked[10:]
    place = {}
    for setup in report["setups"]:
        for qid, units in setup["holes"].items():
            for n, unit in enumerate(units):
                place[(qid, unit)] = min(place.get((qid, unit), n), n)
    assert sorted(holes) == sorted(place)
    assert [place[pair] for pair in holes] == sorted(place[pair] for pair in holes)
    # every question's first hole in the top setup (keyword: n<i>_0, after a<i> and c<i>) before any other setup's
    assert holes[:40] == [(f"q{i}", f"n{i}_0") for i in range(1, 41)] and holes[40] == ("q1", "b1")


def test_parts_graded_at_once_share_the_cap_in_order_and_never_pass_it():
    from evaluation.holes.steps import part_budgets

    worst = [[0.3, 0.3], [0.5], [0.4, 0.4]]
    assert part_budgets(worst, 1.0) == pytest.approx([0.6, 0.4, 0.0])  # 0.6 whole, then what is left, then nothing
    assert part_budgets(worst, 5.0) == pytest.approx([0.6, 0.5, 0.8])
    assert part_budgets(worst, None) == [None, None, None]


@pytest.mark.parametrize("part, says", [
    (dict(budget=-0.5), "a part's budget is -0.5: give 0 or more dollars, or None for no cap"),
    (dict(budget=float("nan")), "a part's budget is nan"),
    (dict(total=10, done=11), "a part's progress starts at 11 of 10 pairs"),
    (dict(done=-1), "a part's progress starts at -1 of None pairs"),
], ids=["a budget below nothing", "a budget of no number", "done past total", "done below nothing"])
def test_a_parts_settings_are_refused_with_the_fix_when_no_part_could_be_graded_so(part, says):
    from evaluation.holes.steps import PartSettings

    with pytest.raises(UsageError, match=re.escape(says)):
        PartSettings(**part)
    assert PartSettings(budget=0.0, total=10, done=10).budget == 0.0  # the edges themselves are allowed


def test_the_plan_is_plain_json_and_reads_back_the_same(binary):
    from evaluation.holes.settings import HoleSettings
    from evaluation.holes.steps import JudgingPlan, plan_judging

    world, report, questions = binary
    plan = plan_judging(report, questions, world.texts, "judge-model", settings=HoleSettings(calibration=20),
                        prices=PRICES)
    again = JudgingPlan.from_json(json.loads(json.dumps(plan.to_json())))
    assert again == plan and len(plan.calibration) == 20 and len(plan.holes) == 360
    assert all(cost > 0 for cost in plan.worst_holes)
    assert "what does topic" not in json.dumps(plan.to_json())  # ids and numbers: no text
