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

from typing import Any

from ..errors import AnswerError
from ..chat import snippet as _snippet
from .judge import ChatJudge

Messages = list[dict[str, str]]


class ChatModel(ChatJudge):
    """``model(messages) -> text | None`` and ``model.complete(system, user, what=...) -> text``."""

    role = "chat model"

    def __init__(self, settings: Any, **options: Any) -> None:
        # main's ChatRoute words its wire errors by ``settings.role``: this client is "the chat model"
        import dataclasses

        if dataclasses.is_dataclass(settings) and getattr(settings, "role", self.role) != self.role:
            settings = dataclasses.replace(settings, role=self.role)
        super().__init__(settings, **options)

    def __call__(self, messages: Messages) -> str | None:  # type: ignore[override]
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
        body: dict[str, Any] = {"messages": messages, "temperature": 0,
                                "max_tokens": max_tokens or self.settings.max_tokens}
        if self.settings.kind == "openai":
            body["model"] = self.settings.model
        reply = self._post(body)
        return read_message(reply, f"the chat model at {self.settings.url}", stopped=f"for {what}", declined=what)


def read_message(reply: Any, who: str, *, stopped: str, declined: str) -> tuple[Any, Any]:
    """``(content, finish_reason)`` of a chat completions reply; AnswerError, beginning with ``who``, for a
    reply that is not one, a content filter stop (``stopped``: what it stopped on) or a refusal
    (``declined``: what was declined)."""
    try:
        choice = reply["choices"][0]
        message = choice["message"]
    except (KeyError, IndexError, TypeError):
        raise AnswerError(f"{who} sent a reply without choices[0].message, which is not a chat completions "
                          f"reply: {_snippet(reply)}; check that the endpoint speaks that API") from None
    if choice.get("finish_reason") == "content_filter":
        raise AnswerError(f"{who} stopped its reply {stopped}: the service's content filter blocked it")
    if isinstance(message, dict) and message.get("refusal"):
        raise AnswerError(f"{who} declined {declined}: {message['refusal']}")
    return (message.get("content") if isinstance(message, dict) else None), choice.get("finish_reason")
