"""``ChatModel``: any prompt to an OpenAI-compatible chat completions endpoint, over the judge's wire.

The chunking techniques that need a model (``llm`` cuts, ``c`` notes) and anything else that asks a
chat model for text use this, so one set of rules holds for every call: the endpoints, sign-in,
retries and error sentences of ``ChatJudge`` (judge.py says why httpx). ``complete`` returns the
reply's text and raises ``AnswerError`` for a refusal, a content filter stop, a reply cut off at the
token limit, or an empty reply, naming what was asked, so a caller never goes on with half an answer.
"""
from __future__ import annotations

from typing import Any

from ..errors import AnswerError
from .judge import ChatJudge, _snippet


class ChatModel(ChatJudge):
    """``complete(system, user, what=...) -> str``; reuse one for many calls (it keeps its connection)."""

    role = "chat model"

    def complete(self, system: str, user: str, *, what: str, max_tokens: int | None = None) -> str:
        """The model's reply to one system and user message; ``what`` names the request in errors
        ("the topics of document d1"). ``max_tokens`` left out is the settings' own."""
        body: dict[str, Any] = {"messages": [{"role": "system", "content": system},
                                             {"role": "user", "content": user}],
                                "temperature": 0, "max_tokens": max_tokens or self.settings.max_tokens}
        if self.settings.kind == "openai":
            body["model"] = self.settings.model
        reply = self._post(body)
        url = self.settings.url
        try:
            choice = reply["choices"][0]
            message = choice["message"]
        except (KeyError, IndexError, TypeError):
            raise AnswerError(f"the chat model at {url} sent a reply without choices[0].message for {what}, which "
                              f"is not a chat completions reply: {_snippet(reply)}; check that the endpoint "
                              "speaks that API") from None
        if choice.get("finish_reason") == "content_filter":
            raise AnswerError(f"the chat model at {url} stopped its reply for {what}: the service's content "
                              "filter blocked it")
        if isinstance(message, dict) and message.get("refusal"):
            raise AnswerError(f"the chat model at {url} declined {what}: {message['refusal']}")
        content = message.get("content") if isinstance(message, dict) else None
        if not isinstance(content, str) or not content.strip():
            raise AnswerError(f"the chat model at {url} replied with nothing for {what}; check the model (Azure: "
                              "deployment) name, or try another model")
        if choice.get("finish_reason") == "length":
            raise AnswerError(f"the chat model at {url} was cut off at its token limit for {what} "
                              f"({body['max_tokens']} tokens): raise max_tokens in its settings")
        return content.strip()
