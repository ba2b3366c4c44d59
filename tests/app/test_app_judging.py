"""The Function App judging a save's holes end to end, with no Functions host: the real activities in
process through ``durable_host``, against Azurite, the sample's index published to Blob, and a scripted
judge on 127.0.0.1 (tests/holes/test_judge_holes_cli.py's). The judge's grades equal what ``judge_holes``
gives on the same report in one process; the replies are kept in Blob, so the next save asks nothing."""
from __future__ import annotations

import json

import pytest
from chat_server import ChatServer
from test_app_end_to_end import reports, save_and_deliver
from test_judge_holes_cli import TruthfulJudge, labelled_golden

from app_fixtures import App
from evaluation.chat import ChatSettings
from evaluation.golden import golden_from_bytes
from evaluation.holes import HoleGrader, judge_holes
from evaluation.holes.texts import index_texts

pytestmark = [pytest.mark.azurite, pytest.mark.slow]


@pytest.fixture
def judged_app(app: App, sample_index, monkeypatch, tmp_path):
    from app import judging_steps
    from app import settings as app_settings
    from evaluation.engine.published import publish_index

    publish_index(sample_index, app.address("indexes/docs"), connection_string=app.azurite.connection_string)
    path, rows = labelled_golden(tmp_path)
    server = ChatServer().__enter__()
    server.respond = TruthfulJudge(sample_index, rows)
    monkeypatch.setenv("EVALUATION_ONLY", "keyword")
    monkeypatch.setenv("EVALUATION_TIMED", "3")
    monkeypatch.setenv("EVALUATION_JUDGE_DEPLOYMENT", "judge-model")
    monkeypatch.setenv("EVALUATION_JUDGE_PAIRS", "30")  # several parts a stage, graded at once
    monkeypatch.setenv("AZURE_OPENAI_ENDPOINT", server.base)
    app_settings.current_settings.cache_clear()
    # the sign-in is the chat route's (tested in tests/answers/test_chat_judge.py): here the judge needs none
    monkeypatch.setattr(judging_steps, "judge_of", lambda settings: grader(server))
    yield app, path.read_bytes(), server
    server.__exit__(None, None, None)


def grader(server: ChatServer) -> HoleGrader:
    return HoleGrader(ChatSettings(endpoint=f"{server.base}/v1", model="judge-model", api="openai", auth="none",
                                   role="judge", max_tokens=100, retries=0))


def test_a_save_judges_its_holes_in_parts_as_one_process_would_and_the_next_asks_nothing(judged_app, sample_index):
    app, data, server = judged_app
    save_and_deliver(app, data, "ev-1")
    app.host.run()
    [report] = reports(app)
    block = report["judged"]
    assert block["counted"] and block["holes"]["judged"] == block["holes"]["total"] > 30
    parts = [job for _, name, job in app.host.activity_log if name == "judge_part"]
    assert sorted({job["stage"] for job in parts}) == ["calibration", "holes"] and len(parts) > 2
    asked = len(server.seen)
    assert asked == block["cost"]["calls"] == block["calibration"]["graded"] + block["holes"]["judged"]
    assert app.names("docs/retrieval/judge-replies/")  # kept in Blob, inside the collection's folder
    assert not [n for n in app.names("docs/") if "/runs_in_progress/" in n or "/judging/" in n]

    # the same grades, kappa and numbers as judge_holes in one process on the same report
    human = {k: v for k, v in report.items() if k not in ("judged", "picks_from")}
    from evaluation.engine.index import open_index

    golden = golden_from_bytes(data, "golden.jsonl")
    with grader(server) as chat:
        alone = judge_holes(human, golden, index_texts(open_index(sample_index).chunks), chat, calibration=100)
    for name in ("grades", "calibration", "setups", "ranking", "judged_picks", "counted"):
        assert block[name] == alone[name], name

    changed = b"".join(data.splitlines(keepends=True)[:-1])  # one question fewer: every prompt asked before
    before = len(server.seen)
    save_and_deliver(app, changed, "ev-2")
    app.host.run()
    warm = max(reports(app), key=lambda r: r["id"])["judged"]
    assert warm["counted"] and warm["cost"]["calls"] == 0 and warm["cost"]["cached"] > 0
    assert len(server.seen) == before  # the warm save's judging asked the model nothing


def test_a_judge_that_is_refused_leaves_the_run_saved_unjudged_saying_why(judged_app, monkeypatch):
    app, data, server = judged_app
    from app import settings as app_settings

    monkeypatch.setenv("EVALUATION_JUDGE_MAX_COST", "1")  # the judge-model is in no price table
    app_settings.current_settings.cache_clear()
    save_and_deliver(app, data, "ev-1")
    app.host.run()
    [report] = reports(app)
    assert report["judged"]["refused"].startswith("a cost cap needs the judge's price")
    assert report["picks_from"] == "human" and server.seen == []
    assert json.loads(json.dumps(report))["setups"]
