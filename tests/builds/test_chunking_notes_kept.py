"""``c`` notes are kept per (chat model, chunk text, document) in the cross-run cache file: a second build
or a rerun asks the model nothing twice (requests counted on a scripted chat server on 127.0.0.1), and a
note is asked for again only when the model, the chunk or its document changed."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from chat_server import ChatServer, Reply, completion, note_by_first_words
from evaluation.answers import ChatModel, JudgeSettings
from evaluation.chunking import cut
from evaluation.builds.cutters import chunking_cutter
from evaluation.builds.notes import ChatNotes
from evaluation.engine.corpus import Corpus, Document
from evaluation.errors import AnswerError

SAMPLE = Path(__file__).resolve().parents[2] / "evaluation" / "sample" / "corpus.jsonl"
ROWS = [json.loads(line) for line in SAMPLE.read_text(encoding="utf-8").splitlines()]
DOC = ROWS[0]   # azure-identity's overview, 1,068 characters: 4 chunks at markdown-500, 3 at markdown-2000


@pytest.fixture
def server():
    with ChatServer() as running:
        running.respond = note_by_first_words  # the same passage always gets the same note
        yield running


def chat_for(server: ChatServer, model: str = "noter") -> ChatModel:
    return ChatModel(JudgeSettings(endpoint=server.base + "/v1", model=model, api="openai", auth="none",
                                   retries=0, timeout_s=5.0))


def test_a_rerun_with_the_same_cache_file_asks_the_model_nothing(server, tmp_path):
    cache = tmp_path / "chunking.cache.sqlite"
    chunks = len(cut("markdown-500-n", DOC["id"], DOC["text"], DOC["title"]))
    first_notes = ChatNotes(cache)
    first = cut("markdown-500-c", DOC["id"], DOC["text"], DOC["title"], chat=chat_for(server), notes=first_notes)
    first_notes.close()
    assert len(server.seen) == chunks == 4
    rerun = ChatNotes(cache)                      # a new run: nothing in memory, the file only
    again = cut("markdown-500-c", DOC["id"], DOC["text"], DOC["title"], chat=chat_for(server), notes=rerun)
    rerun.close()
    assert len(server.seen) == 4                  # 4 asked the first time + 0 the second
    assert [c.embed_text for c in again] == [c.embed_text for c in first]
    assert rerun.counts == {"notes_kept": 4, "notes_asked": 0}


def test_another_model_or_a_changed_document_is_asked_again(server, tmp_path):
    notes = ChatNotes(tmp_path / "c.sqlite")
    cut("markdown-500-c", DOC["id"], DOC["text"], DOC["title"], chat=chat_for(server), notes=notes)
    cut("markdown-500-c", DOC["id"], DOC["text"], DOC["title"], chat=chat_for(server, "another"), notes=notes)
    assert len(server.seen) == 4 + 4
    changed = DOC["text"] + "\n\nOne more line at the end.\n"
    cut("markdown-500-c", DOC["id"], changed, DOC["title"], chat=chat_for(server), notes=notes)
    # every chunk's document changed, so every note is asked again (the last chunk's text changed too)
    assert len(server.seen) == 4 + 4 + 4
    notes.close()


def test_builds_of_one_run_share_notes_of_chunks_cut_alike(server, tmp_path):
    corpus = Corpus(source="one", documents=(Document(id=DOC["id"], text=DOC["text"], title=DOC["title"]),),
                    sha256="0" * 64)
    notes = ChatNotes(None)                       # memory only: this run's builds
    cutter = chunking_cutter(chat=chat_for(server), notes=notes)
    small = cutter("markdown-500-c", corpus)
    large = cutter("markdown-2000-c", corpus)     # [0, 786) is new; [788, 883) and [885, 1068) were cut at 500 too
    small_again = cutter("markdown-500-c", corpus)
    assert (len(small.chunks), len(large.chunks)) == (4, 3)
    assert len(server.seen) == 4 + 1 + 0
    assert [c.embed_text for c in small_again.chunks] == [c.embed_text for c in small.chunks]


def test_notes_asked_before_a_refusal_are_kept_so_the_rerun_asks_from_the_refused_chunk_on(server, tmp_path):
    cache = tmp_path / "c.sqlite"
    replies = iter([Reply(body=completion("First note.")), Reply(body=completion(None, refusal="No."))])
    server.respond = lambda seen: next(replies)
    notes = ChatNotes(cache)
    with pytest.raises(AnswerError, match="declined the note for chunk"):
        cut("markdown-500-c", DOC["id"], DOC["text"], DOC["title"], chat=chat_for(server), notes=notes)
    notes.close()
    server.respond = lambda seen: Reply(body=completion("Later note."))
    rerun = ChatNotes(cache)
    noted = cut("markdown-500-c", DOC["id"], DOC["text"], DOC["title"], chat=chat_for(server), notes=rerun)
    rerun.close()
    assert len(server.seen) == 2 + 3              # chunk 1 kept; chunks 2, 3 and 4 asked on the rerun
    assert [c.note for c in noted] == ["First note.", "Later note.", "Later note.", "Later note."]


def test_a_plain_callable_which_does_not_say_what_model_it_is_is_asked_every_time(tmp_path):
    asked = []

    def chat(messages):
        asked.append(messages)
        return "A note."

    notes = ChatNotes(tmp_path / "c.sqlite")
    cut("markdown-500-c", DOC["id"], DOC["text"], DOC["title"], chat=chat, notes=notes)
    cut("markdown-500-c", DOC["id"], DOC["text"], DOC["title"], chat=chat, notes=notes)
    notes.close()
    assert len(asked) == 4 + 4
