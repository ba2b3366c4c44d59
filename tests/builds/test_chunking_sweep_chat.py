"""``sweep`` with a chat model makes ``-c`` builds (a note in front of every chunk, written by the model
on a scripted chat-completions server on 127.0.0.1), keeps the notes in the cache file so a rerun asks
nothing, and without a model fails such a build with the reason; ``chunking sweep --endpoint`` does the same."""
from __future__ import annotations

import json

import pytest

from chat_server import ChatServer, note_by_first_words
from chunking_cut import small_sample
from evaluation import sweep
from evaluation.cli import main
from evaluation.answers import ChatModel, JudgeSettings
from evaluation.builds.plan import sweep_keys


@pytest.fixture
def server():
    with ChatServer() as running:
        running.respond = note_by_first_words  # the same passage always gets the same note
        yield running


def chat_for(server: ChatServer) -> ChatModel:
    return ChatModel(JudgeSettings(endpoint=server.base + "/v1", model="noter", api="openai", auth="none",
                                   retries=0, timeout_s=5.0))


def test_a_sweep_with_a_chat_model_makes_c_builds_and_a_rerun_asks_for_no_note_again(server, tmp_path):
    corpus, golden = small_sample(tmp_path, questions=2, others=1)
    cache = tmp_path / "chunking.cache.sqlite"

    first = sweep(corpus, golden, builds=["fixed-1000-c"], methods=("keyword",), timed=0, chat=chat_for(server),
                  cache=cache)
    asked = len(server.seen)
    again = sweep(corpus, golden, builds=["fixed-1000-c"], methods=("keyword",), timed=0, chat=chat_for(server),
                  cache=cache)

    assert first["failed"] == [] and [r["build"] for r in first["rows"]] == ["fixed-1000-c"]
    assert asked == first["rows"][0]["chunks"] > 0  # one note per chunk
    assert len(server.seen) == asked  # the rerun read every note from the cache file
    assert again["rows"][0]["counts"] == first["rows"][0]["counts"]


def test_a_c_build_without_a_chat_model_fails_with_the_reason_and_the_others_run(tmp_path):
    corpus, golden = small_sample(tmp_path, questions=2, others=1)

    report = sweep(corpus, golden, builds=["fixed-1000-c", "fixed-1000-n"], methods=("keyword",), timed=0)

    [failed] = report["failed"]
    assert failed["build"] == "fixed-1000-c" and "needs one" in failed["error"] and "--endpoint" in failed["error"]
    assert [r["build"] for r in report["rows"]] == ["fixed-1000-n"]


def test_sweep_keys_with_a_chat_model_add_llm_and_each_techniques_middle_size_with_a_note():
    keys = sweep_keys(["fixed", "llm"], sizes=[500, 1000, 2000], chat=True)
    assert keys == ["fixed-500-h", "fixed-1000-h", "fixed-2000-h", "fixed-1000-c",
                    "llm-500-h", "llm-1000-h", "llm-2000-h", "llm-1000-c"]
    assert sweep_keys(["fixed", "llm"], sizes=[1000]) == ["fixed-1000-h"]  # llm needs the model: left out


def test_chunking_sweep_on_the_command_line_takes_the_chat_model_flags(server, tmp_path, capsys):
    corpus, golden = small_sample(tmp_path, questions=2, others=1)

    code = main(["chunking", "sweep", "--corpus", str(corpus), "--golden", str(golden), "--builds", "fixed-1000-c",
                 "--methods", "keyword", "--timed", "0", "--json", "--no-cache", "--endpoint", server.base + "/v1",
                 "--model", "noter", "--auth", "none"])

    report = json.loads(capsys.readouterr().out)
    assert code == 0 and report["failed"] == [] and report["rows"][0]["build"] == "fixed-1000-c"
    assert len(server.seen) == report["rows"][0]["chunks"]
