"""``ChatJudge``: a judge for ``answer_report`` over any OpenAI-compatible chat completions endpoint.

Where it posts (``JudgeSettings.url``):

- Azure OpenAI (``api="azure"``, or ``"auto"`` on ``*.openai.azure.com`` / ``*.cognitiveservices.azure.com``):
  ``{endpoint}/openai/deployments/{model}/chat/completions?api-version={api_version}``, signed in with
  a key (``api-key`` header) or a managed identity (``Authorization: Bearer``, a token for
  ``https://cognitiveservices.azure.com/.default`` from ``azure_token``);
- OpenAI or a local server (``api="openai"``): ``{endpoint}/chat/completions`` with ``model`` in the
  body and, when there is a key, ``Authorization: Bearer <key>``; ``endpoint`` ends where the API
  version path does (``https://api.openai.com/v1``, ``http://127.0.0.1:8080/v1``).

The judge asks for ``{"score": S, "reason": "..."}`` with S one of 0, 0.25, 0.5, 0.75, 1 and returns
S as the model wrote it (``answer_report`` rejects anything outside 0..1, naming metric and question).

Failures are ``AnswerError`` sentences naming the URL and the fix, never a traceback:

- timeouts, connection failures and 408/429/500/502/503/504 are retried ``retries`` times, waiting
  ``Retry-After`` when the service says (at most 30 s), else 1 s, 2 s, 4 s ...; then a sentence;
- any other 4xx is a refusal, said at once with the service's own message (no retry: it will not
  change its mind);
- a reply that is not chat completions JSON, a content filter stop, a model refusal, or content
  without a score is a malformed reply, said with what came back.

Why httpx rather than the ``openai`` package: the judge needs one POST. httpx (already what the
openai SDK is built on) gives explicit timeouts and a transport tests can point at 127.0.0.1, and
keeps the retry rules, the error sentences and the wire format in this file, where a reader can
check them against the service's documentation; the SDK would add pydantic and its own retry and
error classes for no capability we use. Settings come in as a frozen ``JudgeSettings`` built at the
edge (the command line reads flags and environment variables; this module reads neither).
"""
from __future__ import annotations

import json
import logging
import re
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence
from urllib.parse import urlsplit

from ..errors import AnswerError, UsageError
from ..golden import Question
from .scored import METRICS

log = logging.getLogger(__name__)

AZURE_HOSTS = (".openai.azure.com", ".cognitiveservices.azure.com")
AZURE_SCOPE = "https://cognitiveservices.azure.com/.default"
RETRY_STATUSES = frozenset({408, 429, 500, 502, 503, 504})
LONGEST_WAIT_S = 30.0
APIS = ("auto", "azure", "openai")
AUTHS = ("key", "managed_identity", "none")
LEVELS = "0, 0.25, 0.5, 0.75 or 1"

SYSTEM_PROMPT = (
    "You grade one quality of an answer written by a retrieval-augmented generation system. Be strict and "
    "consistent, judge only the quality asked about, and do not reward length. Reply with one JSON object and "
    f'nothing else: {{"score": S, "reason": "one short sentence"}}, where S is {LEVELS}.')


@dataclass(frozen=True)
class JudgeSettings:
    """Where the judge's model answers and how to reach it (built at the edge; see the module docstring)."""

    endpoint: str
    model: str  # the model name, or the Azure OpenAI deployment name
    api: str = "auto"
    api_version: str = "2024-10-21"  # Azure OpenAI only
    auth: str = "key"  # "key", "managed_identity" (Azure only) or "none" (a local server)
    api_key: str | None = field(default=None, repr=False)
    managed_identity_client_id: str | None = None  # a user-assigned identity; None: the default credential
    timeout_s: float = 60.0
    retries: int = 2
    max_tokens: int = 200

    def __post_init__(self) -> None:
        parts = urlsplit(self.endpoint)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise UsageError(f'judge endpoint "{self.endpoint}" is not an http(s) address, such as '
                             "https://<resource>.openai.azure.com or http://127.0.0.1:8080/v1")
        if not self.model.strip():
            raise UsageError("the judge needs a model (or, on Azure OpenAI, a deployment) name")
        if self.api not in APIS:
            raise UsageError(f'judge api "{self.api}" is not one of {", ".join(APIS)}')
        if self.auth not in AUTHS:
            raise UsageError(f'judge auth "{self.auth}" is not one of {", ".join(AUTHS)}')
        if self.auth == "key" and not self.api_key:
            raise UsageError("the judge is set to sign in with a key, but no key was given")
        if self.auth == "managed_identity" and self.kind != "azure":
            raise UsageError("a managed identity signs in to Azure OpenAI only; for another service use a key")
        if self.timeout_s <= 0 or self.retries < 0 or self.max_tokens < 1:
            raise UsageError("the judge's timeout must be over 0 s, its retries 0 or more, its max tokens 1 or more")

    @property
    def kind(self) -> str:
        """``"azure"`` or ``"openai"`` (``api="auto"`` decides by the host name)."""
        if self.api != "auto":
            return self.api
        host = (urlsplit(self.endpoint).hostname or "").lower()
        return "azure" if host.endswith(AZURE_HOSTS) else "openai"

    @property
    def url(self) -> str:
        base = self.endpoint.rstrip("/")
        if self.kind == "azure":
            return f"{base}/openai/deployments/{self.model}/chat/completions?api-version={self.api_version}"
        return f"{base}/chat/completions"


class ChatJudge:
    """``judge(metric, question, answer, sources) -> score``, asking a chat model; reuse one for many calls.

    ``token_provider`` (a callable giving a bearer token) replaces the managed identity's, and
    ``transport`` httpx's network layer (tests); ``sleep`` is how a retry waits.
    """

    role = "judge"  # how its error sentences name the service; ``ChatModel`` (answers/chat.py) says "chat model"

    def __init__(self, settings: JudgeSettings, *, token_provider: Callable[[], str] | None = None,
                 transport: Any = None, sleep: Callable[[float], None] = time.sleep) -> None:
        self.settings = settings
        self._token_provider = token_provider
        self._transport = transport
        self._sleep = sleep
        self._client = None

    # -- the judge ----------------------------------------------------------------------------
    def __call__(self, metric: str, question: Question, answer: str, sources: Sequence[str] = ()) -> float:
        if metric not in METRICS:
            raise UsageError(f'"{metric}" is not a metric the judge knows: {", ".join(METRICS)}')
        reply = self._post(self.request_body(metric, question, answer, sources))
        return self._score(reply, metric, question.id)

    def request_body(self, metric: str, question: Question, answer: str, sources: Sequence[str]) -> dict[str, Any]:
        """The chat completions request for one (metric, question, answer)."""
        parts = [f"Quality to grade: {metric.replace('_', ' ')}. {METRICS[metric]}", "", f"Question: {question.question}"]
        if question.reference:
            parts.append(f"Reference answer: {question.reference}")
        for number, source in enumerate(sources, start=1):
            parts.append(f"Source {number}: {source}")
        parts += [f"Answer to grade: {answer}", "", f"Reply with the JSON object only; score is {LEVELS}."]
        body: dict[str, Any] = {"messages": [{"role": "system", "content": SYSTEM_PROMPT},
                                             {"role": "user", "content": "\n".join(parts)}],
                                "temperature": 0, "max_tokens": self.settings.max_tokens}
        if self.settings.kind == "openai":
            body["model"] = self.settings.model
        return body

    def close(self) -> None:
        if self._client is not None:
            self._client.close()
            self._client = None

    def __enter__(self) -> ChatJudge:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- the wire -----------------------------------------------------------------------------
    def _headers(self) -> dict[str, str]:
        settings = self.settings
        if settings.auth == "none":
            return {}
        if settings.auth == "managed_identity":
            if self._token_provider is None:
                from .azure_token import bearer_token_provider

                self._token_provider = bearer_token_provider(AZURE_SCOPE, settings.managed_identity_client_id)
            return {"Authorization": f"Bearer {self._token_provider()}"}
        if settings.kind == "azure":
            return {"api-key": settings.api_key or ""}
        return {"Authorization": f"Bearer {settings.api_key}"}

    def _http(self):
        if self._client is None:
            import httpx

            self._client = httpx.Client(timeout=httpx.Timeout(self.settings.timeout_s), transport=self._transport)
        return self._client

    def _post(self, body: dict[str, Any]) -> Any:
        import httpx

        settings, url = self.settings, self.settings.url
        attempts = settings.retries + 1
        for attempt in range(1, attempts + 1):
            wait = min(2.0 ** (attempt - 1), LONGEST_WAIT_S)
            try:
                response = self._http().post(url, json=body, headers=self._headers())
            except httpx.TimeoutException as err:
                problem = (f"the {self.role} at {url} did not answer within {settings.timeout_s:g} s "
                           f"({attempts} attempt(s)); check that the service is up, or allow more time (--timeout)")
                log.warning("judge timed out (attempt %d of %d): %s", attempt, attempts, err)
            except httpx.TransportError as err:
                problem = (f"the {self.role} at {url} could not be reached ({type(err).__name__}: {err}) after "
                           f"{attempts} attempt(s); check the endpoint address and the network")
                log.warning("judge unreachable (attempt %d of %d): %s", attempt, attempts, err)
            else:
                if response.status_code == 200:
                    return _json(response, url, self.role)
                message = _service_message(response)
                if response.status_code not in RETRY_STATUSES:
                    raise AnswerError(f"the {self.role} at {url} refused the request: {response.status_code} "
                                      f"{response.reason_phrase}: {message}{_fix(response.status_code)}")
                problem = (f"the {self.role} at {url} answered {response.status_code} {response.reason_phrase} "
                           f"{attempts} time(s): {message}; try again later, or lower the request rate")
                wait = min(_retry_after(response) or wait, LONGEST_WAIT_S)
                log.warning("judge answered %d (attempt %d of %d)", response.status_code, attempt, attempts)
            if attempt < attempts:
                self._sleep(wait)
        raise AnswerError(problem)

    def _score(self, reply: Any, metric: str, question_id: str) -> Any:
        url = self.settings.url
        asked = f'{metric} of question "{question_id}"'
        content, _ = read_message(reply, f"the judge at {url}", stopped=f"on {asked}", declined=f"to score {asked}")
        score = parse_score(content) if isinstance(content, str) else None
        if score is None:
            raise AnswerError(f"the judge at {url} replied without a score for {metric} of question "
                              f"\"{question_id}\": {_snippet(content)}; it must reply "
                              '{"score": S, "reason": "..."} (check the model or deployment name)')
        return score


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


def parse_score(content: str) -> Any:
    """The ``score`` of a reply: a JSON object (fenced in ``` or not), or a bare number; None when there is
    none. The value is returned as written, so a judge saying 7 is caught by ``answer_report``."""
    text = re.sub(r"^```(?:json)?\s*|\s*```$", "", content.strip())
    try:
        value = json.loads(text)
    except json.JSONDecodeError:
        match = re.search(r'"score"\s*:\s*(-?\d+(?:\.\d+)?)', text)
        return float(match.group(1)) if match else None
    if isinstance(value, dict):
        return value.get("score")
    return value if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _json(response: Any, url: str, role: str = "judge") -> Any:
    try:
        return response.json()
    except (json.JSONDecodeError, UnicodeDecodeError):
        raise AnswerError(f"the {role} at {url} sent a reply that is not JSON: {_snippet(response.text)}; check "
                          "that the endpoint speaks the chat completions API") from None


def _service_message(response: Any) -> str:
    """The service's own explanation (``error.message`` in OpenAI and Azure OpenAI errors), else the body."""
    try:
        body = response.json()
        error = body.get("error") if isinstance(body, dict) else None
        if isinstance(error, dict) and error.get("message"):
            return str(error["message"])
        if isinstance(error, str):
            return error
    except (json.JSONDecodeError, UnicodeDecodeError, AttributeError):
        pass
    return _snippet(response.text) or "(no message)"


def _fix(status: int) -> str:
    return {400: "; the service could not use the request (a content filter, or a parameter this model does not take)",
            401: "; check the key, or that the identity can sign in",
            403: "; the identity needs the Cognitive Services OpenAI User role on the resource, or the key is wrong",
            404: "; check the endpoint and the model (Azure: deployment) name, and the api version"}.get(status, "")


def _retry_after(response: Any) -> float | None:
    value = response.headers.get("retry-after")
    try:
        return max(0.0, float(value)) if value is not None else None
    except ValueError:
        return None  # an HTTP date: use our own backoff


def _snippet(value: Any, most: int = 200) -> str:
    text = value if isinstance(value, str) else json.dumps(value, default=str)
    return text if len(text) <= most else text[: most - 1] + "…"
