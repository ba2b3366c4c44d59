"""``golden accept``: the judge's grades reach a golden file only when a person asks, in a new file, as
drafts whose hints name what the judge graded; the golden file the run read is never written."""
from __future__ import annotations

import json

import pytest
from chat_server import ChatServer
from judge_world import ScriptedJudge, World
from test_judge_holes import PRICES, grader

from evaluation import evaluate
from evaluation.cli import main
from evaluation.errors import UsageError
from evaluation.golden import read_golden
from evaluation.holes import HoleJudge, accepted_questions


@pytest.fixture(scope="module")
def judged_run(tmp_path_factory):
    folder = tmp_path_factory.mktemp("accept")
    world = World(8)
    golden = folder / "golden.jsonl"
    golden.write_text("".join(json.dumps(row) + "\n" for row in world.golden_rows()), encoding="utf-8")
    store = folder / "runs"
    with ChatServer() as server:
        server.respond = ScriptedJudge(world)
        with grader(server) as chat:
            report = evaluate(world.target(), golden, save_to=store, timed=0, resamples=200, exhaustive=True,
                              holes=HoleJudge(chat, texts=world.texts, prices=PRICES, calibration=16))
    return golden, store, report


def test_accepted_grades_are_drafts_beside_the_peoples_labels(judged_run):
    golden, _, report = judged_run
    questions = accepted_questions(read_golden(golden), report)
    first = questions[0]
    assert first.draft and first.judgements == {"a1": 1, "c1": 0, "b1": 1, **{f"n1_{k}": 0 for k in range(8)}}
    assert first.hint.startswith("b1 (1), n1_0 (0)") and "graded by the judge judge-model in run" in first.hint
    assert "kappa 1.00 on 16 labels" in first.hint and first.hint.endswith('check each, then remove "draft"')


def test_a_persons_label_is_never_replaced_by_the_judges_grade(judged_run):
    golden, _, report = judged_run
    forged = json.loads(json.dumps(report))
    forged["judged"]["grades"]["q1"]["c1"] = 1  # the judge disagrees with a label the people gave
    first = accepted_questions(read_golden(golden), forged)[0]
    assert first.judgements["c1"] == 0 and "c1" not in first.hint


def test_grades_that_did_not_count_or_another_golden_file_are_refused(judged_run, tmp_path):
    golden, _, report = judged_run
    uncounted = json.loads(json.dumps(report))
    uncounted["judged"]["counted"] = False
    with pytest.raises(UsageError, match="did not count"):
        accepted_questions(read_golden(golden), uncounted)
    edited = tmp_path / "edited.jsonl"
    edited.write_bytes(golden.read_bytes() + b"\n")
    with pytest.raises(UsageError, match="is not the golden file run"):
        accepted_questions(read_golden(edited), report)


def test_golden_accept_writes_a_new_file_and_never_the_golden_file(judged_run, tmp_path, capsys):
    golden, store, report = judged_run
    before = golden.read_bytes()
    assert main(["golden", "accept", "latest", "--golden", str(golden), "--out", str(golden),
                 "--store", str(store)]) == 2
    assert golden.read_bytes() == before
    out = tmp_path / "reviewed.jsonl"
    assert main(["golden", "accept", "latest", "--golden", str(golden), "--out", str(out), "--store", str(store)]) == 0
    said = capsys.readouterr().out
    assert "8 of them gained 72 judged grade(s)" in said  # b<i> and 8 fillers, for each of 8 questions
    assert golden.read_bytes() == before
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert all(row["draft"] for row in rows) and rows[0]["expected"]["b1"] == 1
    assert main(["golden", "check", str(out)]) == 0
