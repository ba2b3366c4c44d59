"""``ChatModel``: the answer tools' OpenAI-compatible client, asked for plain text.

``ChatJudge`` posts a grading request and reads a score; a chunking run's judged mode, the ``llm``
cutter and the ``c`` notes need the model's text itself. ``ChatModel(settings)(messages)`` sends the
chat messages through the same wire (``JudgeSettings``: Azure OpenAI, OpenAI or a local server; the
same retries, timeouts and error sentences) and returns the reply's text, None when it has none. A
refusal or a content-filter stop is an ``AnswerError`` at once: the model will not change its mind.
"""
from __future__ import annotations

from typing import Any

from ..errors import AnswerError
from .judge import ChatJudge

Messages = list[dict[str, str]]


class ChatModel(ChatJudge):
    """``model(messages) -> text``: one chat completions call through the judge's client."""

    def __call__(self, messages: Messages) -> str | None:  # type: ignore[override]
        body: dict[str, Any] = {"messages": messages, "temperature": 0, "max_tokens": self.settings.max_tokens}
        if self.settings.kind == "openai":
            body["model"] = self.settings.model
        reply = self._post(body)
        try:
            choice = reply["choices"][0]
            message = choice["message"]
        except (KeyError, IndexError, TypeError):
            raise AnswerError(f"the chat model at {self.settings.url} sent a reply without choices[0].message, "
                              "which is not a chat completions reply; check that the endpoint speaks that API") from None
        if choice.get("finish_reason") == "content_filter":
            raise AnswerError(f"the chat model at {self.settings.url} stopped its reply: the service's content "
                              "filter blocked it")
        if isinstance(message, dict) and message.get("refusal"):
            raise AnswerError(f"the chat model at {self.settings.url} refused: {message['refusal']}")
        content = message.get("content") if isinstance(message, dict) else None
        return content if isinstance(content, str) and content.strip() else None
