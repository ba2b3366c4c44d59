"""``compare_chunking``: every build, each technique at its best, the pick; saved under chunking/runs/ with
counts and ids only; vectors from the cache the second time; judged mode against a chat server on
127.0.0.1 (scripted replies), where a refusing or silent model stops the run and nothing is saved."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from chat_server import ChatServer, Reply, completion
from chunking_cut import engine_cutter, small_sample
from evaluation import compare_chunking
from evaluation.answers import ChatModel, JudgeSettings
from evaluation.engine.corpus import read_corpus
from evaluation.errors import AnswerError
from evaluation.golden import read_golden
from evaluation.store.builds import chunking_store


@pytest.fixture(scope="module")
def compared(tmp_path_factory):
    folder = tmp_path_factory.mktemp("compare")
    corpus, golden = small_sample(folder, questions=6, others=2)
    store, cache = folder / "runs", folder / "chunking.cache.sqlite"
    report = compare_chunking(corpus, golden, techniques=("markdown", "fixed"), sizes=(1000,), headings=(True, False),
                              late=False, save_to=store, cache=cache)
    return report, folder, corpus, golden, store, cache


def test_every_build_is_made_and_each_technique_is_its_best(compared):
    report = compared[0]
    assert sorted(b["key"] for b in report["builds"]) == ["fixed-1000-h", "fixed-1000-n", "markdown-1000-h",
                                                          "markdown-1000-n"]
    order = [(-b["right"], b["chunks"], b["key"]) for b in report["builds"]]
    assert order == sorted(order)
    best_of = {}
    for build in report["builds"]:
        best_of.setdefault(build["technique"], build["key"])
    assert {t["technique"]: t["build"] for t in report["techniques"]} == best_of
    assert report["techniques"][0]["best"] is True and report["pick"]["pick"] == report["builds"][0]["key"]


def test_without_a_model_it_counts_what_was_found_within_the_budget_and_says_so(compared):
    report = compared[0]
    assert report["scored"] == "found" and report["budget"] == 6000
    assert "no chat model was given" in report["scored_note"]
    skipped = {s["what"]: s["reason"] for s in report["skipped"]}
    assert "llm" not in skipped  # not asked for: techniques=("markdown", "fixed")
    assert "needs a chat model" in skipped["c"]
    assert all(b["handed_chars"] <= 6000 * b["questions"] for b in report["builds"])


def test_the_run_is_saved_under_chunking_runs_with_its_golden_file(compared):
    report, _, _, golden, store, _ = compared
    saved = Path(store) / "chunking" / "runs" / report["id"] / "report.json"
    assert json.loads(saved.read_text()) == report
    assert (Path(store) / "golden_dataset" / f"{read_golden(golden).sha256}.jsonl").is_file()
    runs = chunking_store(str(store))
    assert runs.ids() == [report["id"]] and runs.get("latest") == report


def test_the_saved_run_holds_no_question_or_passage_text(compared):
    report, _, corpus, golden, store, _ = compared
    kept = (Path(store) / "chunking" / "runs" / report["id"] / "report.json").read_text()
    for question in read_golden(golden).questions:
        assert question.question not in kept and question.reference not in kept
    for document in read_corpus(corpus):
        for start in range(0, len(document.text) - 40, 400):  # any 40 characters of any passage
            assert document.text[start:start + 40] not in kept


def test_a_second_run_takes_every_vector_from_the_cache(compared):
    first, folder, corpus, golden, _, cache = compared
    assert first["vectors"]["vectors_computed"] > 0
    again = compare_chunking(corpus, golden, techniques=("fixed",), sizes=(1000,), headings=(True,), late=False,
                             cache=cache)
    assert again["vectors"]["vectors_computed"] == 0 and again["vectors"]["share_from_cache"] == 1.0
    first_fixed = next(b for b in first["builds"] if b["key"] == "fixed-1000-h")
    assert again["builds"][0]["right"] == first_fixed["right"]  # the same vectors: the same outcome


@pytest.fixture
def chat():
    with ChatServer() as server:
        yield server


def model(server: ChatServer) -> ChatModel:
    return ChatModel(JudgeSettings(endpoint=f"{server.base}/v1", model="m", api="openai", auth="none", retries=0))


def test_judged_mode_answers_from_the_budget_and_counts_what_the_judge_called_right(chat, tmp_path):
    corpus, golden = small_sample(tmp_path, questions=2, others=0)
    # question 1: an answer, judged right; question 2: an answer, judged wrong
    chat.answer(Reply(body=completion("An answer.")), Reply(body=completion('{"right": true}')),
                Reply(body=completion("Another answer.")), Reply(body=completion('{"right": false}')))
    report = compare_chunking(corpus, golden, techniques=("fixed",), sizes=(200,), headings=(False,), late=False,
                              chat=model(chat), budget=700, cutter=engine_cutter, save_to=tmp_path / "runs")
    assert report["scored"] == "answered" and report["builds"][0]["right"] == 1
    asked = chat.seen[0].body["messages"][1]["content"]
    passages = asked.split("\n\nQuestion: ")[0]
    assert 0 < len(passages) - asked.count("Passage ") * len("Passage N:\n") <= 700 + 10
    assert "c" not in {s["what"] for s in report["skipped"]}  # a model was given: notes could be written


def test_a_refusing_model_stops_the_run_and_nothing_is_saved(chat, tmp_path):
    corpus, golden = small_sample(tmp_path, questions=2, others=0)
    chat.answer(Reply(body=completion(None, refusal="I cannot help with that.")))
    with pytest.raises(AnswerError, match="declined the request: I cannot help with that"):
        compare_chunking(corpus, golden, techniques=("fixed",), sizes=(200,), headings=(False,), late=False,
                         chat=model(chat), cutter=engine_cutter, save_to=tmp_path / "runs")
    assert not (tmp_path / "runs" / "chunking").exists()


def test_a_silent_model_stops_the_run_after_three_empty_replies(chat, tmp_path):
    corpus, golden = small_sample(tmp_path, questions=4, others=0)
    chat.answer(Reply(body=completion("")))
    with pytest.raises(AnswerError, match="gave no text 3 times running"):
        compare_chunking(corpus, golden, techniques=("fixed",), sizes=(200,), headings=(False,), late=False,
                         chat=model(chat), cutter=engine_cutter, save_to=tmp_path / "runs")
    assert len(chat.seen) == 3 and not (tmp_path / "runs" / "chunking").exists()
