"""``ChatJudge``: a judge for ``answer_report`` over any OpenAI-compatible chat completions endpoint.

Where it posts, how it signs in, what it retries and the sentences its failures become are the shared
chat route's (``evaluation/chat.py``, also the golden writer's); every failure here is an
``AnswerError`` naming the URL and the fix, never a traceback. ``JudgeSettings`` is ``ChatSettings``
with the role "judge" (``JudgeSettings.url``: Azure OpenAI's deployment path, or ``{endpoint}/chat/completions``).

The judge asks for ``{"score": S, "reason": "..."}`` with S one of 0, 0.25, 0.5, 0.75, 1 and returns
S as the model wrote it (``answer_report`` rejects anything outside 0..1, naming metric and question).
A reply that is not chat completions JSON, a content filter stop, a model refusal, or content without
a score is a malformed reply, said with what came back.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Sequence

from ..chat import ChatRoute, ChatSettings, snippet as _snippet
from ..errors import AnswerError, JsonLineError, UsageError
from ..jsonl import parse_json
from ..golden import Question
from .scored import METRICS

LEVELS = "0, 0.25, 0.5, 0.75 or 1"

SYSTEM_PROMPT = (
    "You grade one quality of an answer written by a retrieval-augmented generation system. Be strict and "
    "consistent, judge only the quality asked about, and do not reward length. Reply with one JSON object and "
    f'nothing else: {{"score": S, "reason": "one short sentence"}}, where S is {LEVELS}.')


@dataclass(frozen=True)
class JudgeSettings(ChatSettings):
    """Where the judge's model answers and how to reach it: ``ChatSettings`` whose sentences say "judge"."""

    role: str = "judge"


class ChatJudge(ChatRoute):
    """``judge(metric, question, answer, sources) -> score``, asking a chat model; reuse one for many calls.

    ``token_provider`` (a callable giving a bearer token) replaces the managed identity's, and
    ``transport`` httpx's network layer (tests); ``sleep`` is how a retry waits.
    """

    error = AnswerError

    # -- the judge ----------------------------------------------------------------------------
    def __call__(self, metric: str, question: Question, answer: str, sources: Sequence[str] = ()) -> float:
        if metric not in METRICS:
            raise UsageError(f'"{metric}" is not a metric the judge knows: {", ".join(METRICS)}')
        reply = self._post(self.request_body(metric, question, answer, sources))
        return self._score(reply, metric, question.id or question.question)

    def request_body(self, metric: str, question: Question, answer: str, sources: Sequence[str]) -> dict[str, Any]:
        """The chat completions request for one (metric, question, answer)."""
        parts = [f"Quality to grade: {metric.replace('_', ' ')}. {METRICS[metric]}", "",
                 f"Question: {question.question}"]
        if question.reference:
            parts.append(f"Reference answer: {question.reference}")
        for number, source in enumerate(sources, start=1):
            parts.append(f"Source {number}: {source}")
        parts += [f"Answer to grade: {answer}", "", f"Reply with the JSON object only; score is {LEVELS}."]
        return self.body([{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": "\n".join(parts)}])

    def _score(self, reply: Any, metric: str, question_id: str) -> Any:
        """The score in ``reply``; ``question_id`` names the question in the errors (its text when it has no id)."""
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
    (``declined``: what was declined). The judge and ``ChatModel`` (answers/chat.py) read replies so."""
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
        value = parse_json(text, strict=False)
    except JsonLineError:
        match = re.search(r'"score"\s*:\s*(-?\d+(?:\.\d+)?)', text)
        return float(match.group(1)) if match else None
    if isinstance(value, dict):
        return value.get("score")
    return value if isinstance(value, (int, float)) and not isinstance(value, bool) else None
