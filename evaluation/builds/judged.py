"""Judged mode: a chat model answers from what was handed over, and says whether the answer is right.

``chat`` is any callable from chat messages to the model's text (None when it gave none), such as
``answers.chat.ChatModel``: the answer tools' OpenAI-compatible client asked for plain text.
``answer_with(chat)`` and ``judge_with(chat)`` make the two callables ``compare_chunking`` takes.

A model that refuses, or gives no text three times running, stops the run with ``AnswerError``:
a run whose "right" silently became "wrong" for every question after the model went quiet would
rank builds by when it went quiet. A run stopped so saves nothing.
"""
from __future__ import annotations

import re
from typing import Callable, Sequence

from ..answers.chat import ChatModel  # noqa: F401  the client judged mode is usually given
from ..errors import TEXT_LIMIT, AnswerError, printable
from ..golden import Question
from ..jsonl import JsonLineError, parse_json

Messages = list[dict[str, str]]
Chat = Callable[[Messages], "str | None"]
Answer = Callable[[Question, Sequence[str]], str]
Judge = Callable[[Question, str], bool]
SILENT_IN_A_ROW = 3

ANSWER_PROMPT = ("Answer the question from the passages alone, in a few sentences. If they do not hold the answer, "
                 "say so in one sentence.")
JUDGE_PROMPT = ('You check an answer against the reference answer a person accepts. Reply with one JSON object '
                'and nothing else: {"right": true} when the answer says what the reference says on the question '
                'asked (other words are fine), else {"right": false}.')


class _Watched:
    """Calls ``chat``; a refusal is the model's own error, and ``SILENT_IN_A_ROW`` empty replies stop the run."""

    def __init__(self, chat: Chat, what: str) -> None:
        self.chat, self.what, self.silent = chat, what, 0

    def __call__(self, messages: Messages, question: Question) -> str:
        text = self.chat(messages)
        failure = getattr(self.chat, "failure", None) if text is None else None
        if failure:  # the service answered with an error (a refusal, retries spent): no later call will differ
            raise AnswerError(f"the chat model failed while {self.what} question {question.id!r}: "
                              f"{printable(str(failure), TEXT_LIMIT)}; the run stopped and nothing was saved")
        if text is None or not str(text).strip():
            self.silent += 1
            if self.silent >= SILENT_IN_A_ROW:
                raise AnswerError(f"the chat model gave no text {self.silent} times running ({self.what}, last on "
                                  f"question {question.id!r}); the run stopped and nothing was saved: check the model "
                                  "or deployment name and its quota, then run again")
            return ""
        self.silent = 0
        return str(text)


def answer_with(chat: Chat) -> Answer:
    """An answer for ``compare_chunking``: the model answers from the passages alone."""
    watched = _Watched(chat, "answering")

    def answer(question: Question, passages: Sequence[str]) -> str:
        shown = "\n\n".join(f"Passage {n}:\n{p}" for n, p in enumerate(passages, start=1))
        return watched([{"role": "system", "content": ANSWER_PROMPT},
                        {"role": "user", "content": f"{shown}\n\nQuestion: {question.question}"}], question)

    return answer


def judge_with(chat: Chat) -> Judge:
    """A judge for ``compare_chunking``: the model says whether the answer matches the reference."""
    watched = _Watched(chat, "judging")

    def judge(question: Question, answer: str) -> bool:
        if not answer.strip():
            return False
        text = watched([{"role": "system", "content": JUDGE_PROMPT},
                        {"role": "user", "content": f"Question: {question.question}\nReference answer: "
                                                    f"{question.reference}\nAnswer: {answer}"}], question)
        verdict = _verdict(text)
        if verdict is None and text:
            raise AnswerError(f"the chat model's verdict on question {question.id!r} was neither right nor wrong "
                              f"({text[:120]!r}); it must reply {{\"right\": true}} or {{\"right\": false}}")
        return bool(verdict)

    return judge


def _verdict(text: str) -> bool | None:
    cleaned = re.sub(r"^```(?:json)?\s*|\s*```$", "", text.strip())
    try:
        value = parse_json(cleaned, strict=False)
    except JsonLineError:
        match = re.search(r'"right"\s*:\s*(true|false)', cleaned, re.IGNORECASE)
        return None if match is None else match.group(1).lower() == "true"
    if isinstance(value, dict) and isinstance(value.get("right"), bool):
        return value["right"]
    return None
