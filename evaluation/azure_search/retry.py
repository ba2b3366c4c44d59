"""Throttling: a request answered 429 or 503 is sent again after the wait the service asks for, bounded.

azure-core's own ``RetryPolicy`` is replaced on purpose: it never retries a POST answered 503 (and a
search is a POST), and it waits whatever ``Retry-After`` says, however long. This policy retries 429
and 503 (and connection failures) at most ``max_retries`` times; each wait is the service's
``retry-after-ms`` / ``x-ms-retry-after-ms`` / ``Retry-After`` (seconds) when given, else
``base_delay * 2**n``, and never longer than ``max_wait``. A ``Retry-After`` given as an HTTP date is
treated as absent: honouring it would need a clock of our own. Once the retries are spent the last
answer goes back to the SDK, which raises it, and the target turns it into the setup's error.

``on_send(retry)`` is called before every attempt (``retry`` True for the second and later), so the
target can count requests and retries per setup; ``sleep`` is injectable so tests wait no real time
(the time a caller waits, retries included, is measured by whoever times the search).
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Callable

from azure.core.exceptions import ServiceRequestError, ServiceResponseError
from azure.core.pipeline import PipelineRequest, PipelineResponse
from azure.core.pipeline.policies import HTTPPolicy

RETRY_STATUSES = (429, 503)
_MS_HEADERS = ("retry-after-ms", "x-ms-retry-after-ms")


@dataclass(frozen=True)
class RetrySettings:
    max_retries: int = 4
    max_wait: float = 30.0    # seconds, the longest single wait
    base_delay: float = 1.0   # seconds, the first wait when the service names none


def retry_wait(headers, retries_so_far: int, settings: RetrySettings) -> float:
    """Seconds to wait before the next attempt, from the answer's headers or the backoff, bounded."""
    asked = None
    for name in _MS_HEADERS:
        value = headers.get(name) if headers is not None else None
        if value is not None:
            try:
                asked = float(value) / 1000
                break
            except ValueError:
                pass
    if asked is None and headers is not None and headers.get("retry-after") is not None:
        try:
            asked = float(headers.get("retry-after"))
        except ValueError:
            asked = None  # an HTTP date: see the module docstring
    if asked is None or asked < 0:
        asked = settings.base_delay * 2 ** retries_so_far
    return min(asked, settings.max_wait)


class ThrottleRetryPolicy(HTTPPolicy):
    """Sits where azure-core's RetryPolicy would (before authentication, so each attempt is signed)."""

    def __init__(self, settings: RetrySettings, *, sleep: Callable[[float], None] = time.sleep,
                 on_send: Callable[[bool], None] | None = None) -> None:
        super().__init__()
        self.settings = settings
        self._sleep = sleep
        self._on_send = on_send

    def send(self, request: PipelineRequest) -> PipelineResponse:
        retries = 0
        while True:
            if self._on_send is not None:
                self._on_send(retries > 0)
            try:
                response = self.next.send(request)
            except (ServiceRequestError, ServiceResponseError):
                if retries >= self.settings.max_retries:
                    raise
                wait = retry_wait(None, retries, self.settings)
            else:
                status = response.http_response.status_code
                if status not in RETRY_STATUSES or retries >= self.settings.max_retries:
                    return response
                wait = retry_wait(response.http_response.headers, retries, self.settings)
            self._sleep(wait)
            retries += 1
