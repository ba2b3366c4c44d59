"""``ChatModel``: the answer tools' OpenAI-compatible client, asked for plain text.

``ChatJudge`` posts a grading request and reads a score; a chunking run's judged mode, the ``llm``
cutter and the ``c`` notes need the model's text itself, over the same wire (``JudgeSettings``: Azure
OpenAI, OpenAI or a local server; the same sign-in, retries, timeouts and error sentences, which
name it "the chat model").

- ``model(messages) -> text | None``: any chat messages; None when the reply has no text.
- ``model.complete(system, user, what=...) -> text``: one system and one user message; a reply with no
  text, or one cut off at the token limit, is an ``AnswerError`` naming ``what`` was asked, so a
  caller never goes on with half an answer.

Either way a refusal or a content-filter stop is an ``AnswerError`` at once: the model will not
change its mind.
"""
from __future__ import annotations

from dataclasses import replace
from typing import Any

from ..chat import ChatRoute, ChatSettings
from ..errors import AnswerError
from .judge import read_message

Messages = list[dict[str, str]]


class ChatModel(ChatRoute):
    """``model(messages) -> text | None`` and ``model.complete(system, user, what=...) -> text``.

    Given a ``JudgeSettings`` (or any ``ChatSettings`` of the judge or of no role), its sentences say
    "the chat model"; the shared route (``evaluation/chat.py``) does the posting.
    """

    error = AnswerError

    def __init__(self, settings: ChatSettings, **options: Any) -> None:
        if settings.role in ("judge", "model"):
            settings = replace(settings, role="chat model")
        super().__init__(settings, **options)

    def __call__(self, messages: Messages) -> str | None:
        content, _ = self._reply(messages, what="the request", max_tokens=None)
        return content if isinstance(content, str) and content.strip() else None

    def complete(self, system: str, user: str, *, what: str, max_tokens: int | None = None) -> str:
        """The model's reply to one system and one user message, stripped; ``what`` names the request in
        errors ("the topics of document d1"). ``max_tokens`` left out is the settings' own."""
        limit = max_tokens or self.settings.max_tokens
        content, finish = self._reply([{"role": "system", "content": system}, {"role": "user", "content": user}],
                                      what=what, max_tokens=limit)
        url = self.settings.url
        if not isinstance(content, str) or not content.strip():
            raise AnswerError(f"the chat model at {url} replied with nothing for {what}; check the model (Azure: "
                              "deployment) name, or try another model")
        if finish == "length":
            raise AnswerError(f"the chat model at {url} was cut off at its token limit for {what} "
                              f"({limit} tokens): raise max_tokens in its settings")
        return content.strip()

    def _reply(self, messages: Messages, *, what: str, max_tokens: int | None) -> tuple[Any, Any]:
        """(content, finish_reason) of one call; AnswerError for a malformed reply, a refusal or a filter stop."""
        reply = self._post(self.body(messages, max_tokens=max_tokens or self.settings.max_tokens))
        return read_message(reply, f"the chat model at {self.settings.url}", stopped=f"for {what}", declined=what)
