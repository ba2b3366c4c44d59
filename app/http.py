"""How the app says no over HTTP, and how it answers JSON: one refusal and one answer for the triggers
(``evaluate_now``) and the routes (``api``), so every refusal has the same shape wherever it is made.

A refusal is a status and a sentence naming what to change (and, for a golden file with errors, its
problems, capped: see ``problems_body``). Its body is ``{"error": sentence, "status": status}``.
"""
from __future__ import annotations

import json
import re
from typing import Any, Mapping
from urllib.parse import quote

import azure.functions as func

# A 400 body lists at most this many of a golden file's problems and counts the rest: 1M one-byte rows
# gave 1M problems (and a body of about 80 MB) in one answer before the cap (issue 22, probe 9).
MAX_PROBLEMS = 100


class Refusal(Exception):
    """A request the app answers with ``status`` and a sentence (and maybe a golden file's ``problems``)."""

    def __init__(self, status: int, message: str, problems: list[dict[str, Any]] | None = None) -> None:
        super().__init__(message)
        self.status, self.message, self.problems = status, message, problems


def json_answer(data: Any, status: int = 200, *, headers: Mapping[str, str] | None = None) -> func.HttpResponse:
    """``data`` as JSON (UTF-8, not cached, never sniffed as anything else)."""
    return func.HttpResponse(_dumps(data), status_code=status, mimetype="application/json", charset="utf-8",
                             headers={"X-Content-Type-Options": "nosniff", "Cache-Control": "no-store",
                                      **(headers or {})})


def refusal_answer(refusal: Refusal) -> func.HttpResponse:
    """The answer to a refused request: ``{"error", "status"}``, with the problems when there are any."""
    body: dict[str, Any] = {"error": refusal.message, "status": refusal.status}
    if refusal.problems is not None:
        body.update(problems_body(refusal.problems))
    return json_answer(body, refusal.status)


def problems_body(problems: list[dict[str, Any]], limit: int = MAX_PROBLEMS) -> dict[str, Any]:
    """``{"problems": the first limit, "more_problems": how many were left out}``."""
    return {"problems": problems[:limit], "more_problems": max(0, len(problems) - limit)}


def attachment(filename: str) -> str:
    """A ``Content-Disposition`` value that downloads as ``filename``, whatever characters it holds.

    RFC 6266: ``filename*`` carries the exact name, UTF-8 and percent-encoded (RFC 5987); ``filename``
    is a stand-in for old clients, ASCII letters, digits and ``._-`` only (every other character "_").
    The value is plain printable ASCII, so a quote, a ";" or a CR/LF in a collection name (Blob takes
    them) can neither break the header nor add one.
    """
    fallback = re.sub(r"[^A-Za-z0-9._-]", "_", filename) or "download"
    exact = quote(filename.encode("utf-8", "surrogatepass"), safe="")
    return f"attachment; filename=\"{fallback}\"; filename*=UTF-8''{exact}"


def _dumps(data: Any) -> str:
    # A lone surrogate (a JSON "\ud800" escape in a golden id or a request) cannot be written as UTF-8:
    # escape it rather than fail the answer.
    text = json.dumps(data, ensure_ascii=False)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        text = json.dumps(data, ensure_ascii=True)
    return text
