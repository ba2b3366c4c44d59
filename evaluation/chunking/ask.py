"""How the cutters ask a chat model: a ``ChatModel`` (its ``complete``), or any callable from chat
messages to text, which is what ``compare_chunking``'s ``chat`` may be."""
from __future__ import annotations

from typing import Any

from ..errors import AnswerError


def ask(chat: Any, system: str, user: str, *, what: str, max_tokens: int) -> str:
    """The model's text for one request, stripped; AnswerError naming ``what`` when there is none."""
    complete = getattr(chat, "complete", None)
    if callable(complete):
        return complete(system, user, what=what, max_tokens=max_tokens)
    reply = chat([{"role": "system", "content": system}, {"role": "user", "content": user}])
    if not isinstance(reply, str) or not reply.strip():
        raise AnswerError(f"the chat model replied with nothing for {what}; check the model, or try another")
    return reply.strip()


def where(chat: Any) -> str:
    """The model's address for an error sentence, when it has one."""
    url = getattr(getattr(chat, "settings", None), "url", None)
    return f"the chat model at {url}" if url else "the chat model"


def chat_identity(chat: Any) -> str | None:
    """Which model answers, for keeping its replies: a ``ChatModel``'s endpoint, API and model (or
    deployment) name; None for a plain callable, which does not say (its replies are never kept)."""
    settings = getattr(chat, "settings", None)
    endpoint, model = getattr(settings, "endpoint", None), getattr(settings, "model", None)
    if not endpoint or not model:
        return None
    return f"{getattr(settings, 'api', '')} {endpoint.rstrip('/')} {model}"
