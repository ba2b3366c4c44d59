"""What the golden writer asks its model, and how a reply is read.

Each prompt asks for one JSON object and nothing else, and names its task on the system message's first
line (``Task: rate_passage`` ...), so a log, a cache file or a scripted test can tell the calls apart.
A reply is read by ``parse_object``: the object (fenced in ``` or not) when it has every key asked
for, else None, which the writer turns into ``WriterUnavailableError`` (a model that does not keep to the
format on one passage will not on the next).
"""
from __future__ import annotations

import re
from typing import Any, Sequence

from ...errors import JsonLineError
from ...jsonl import parse_json

KINDS = ("factual", "howto", "comparison", "multihop")
KIND_WORDS = {
    "factual": "a factual question: a fact the passage states (a number, a name, a default, a limit)",
    "howto": "a how-to question: how to do something the passage explains, as a person would ask before doing it",
    "comparison": "a comparison question: how two options, settings or cases the passage describes differ, "
                  "or which to choose when",
    "multihop": "a multi-hop question that needs both passages to answer: one fact from each, combined",
}
EVOLUTIONS = (
    "use fewer of the passage's own words: ask it the way someone who has not read the passage would",
    "add a constraint from the asker's situation that the passage still answers",
    "make answering it take one step of reasoning over what the passage says",
)
MESSAGES = list[dict[str, str]]


def _system(task: str, reply: str, rules: str = "") -> dict[str, str]:
    return {"role": "system", "content": f"Task: {task}\nYou help write a golden file: questions people really ask "
                                         "a search system, each with the document that answers it. "
                                         f"{rules}Reply with one JSON object and nothing else: {reply}"}


def _voice(scenario: str, task: str, examples: Sequence[str]) -> str:
    lines = []
    if scenario:
        lines.append(f"Who asks: {scenario}")
    if task:
        lines.append(f"Why they ask: {task}")
    if examples:
        lines.append("Questions they really ask, for the style (do not copy them):")
        lines += [f"- {example}" for example in examples]
    return "\n".join(lines)


def rate_passage(passage: str) -> MESSAGES:
    """The critic: would a person ask about this passage? Three scores from 0 to 1."""
    return [_system("rate_passage", '{"clarity": C, "self_contained": S, "substance": U, "reason": "one sentence"}, '
                    "each score from 0 to 1.",
                    "Rate whether a person would ask a question this passage answers: clarity (is it clear what it "
                    "says), self_contained (can it be understood without the rest of the document), substance (does "
                    "it hold a fact or an instruction worth asking about, not a table of contents or a link list). "),
            {"role": "user", "content": f"Passage:\n{passage}"}]


def write_question(kind: str, passages: Sequence[str], *, scenario: str = "", task: str = "",
                   examples: Sequence[str] = (), attempt: int = 1, turned_down: str | None = None) -> MESSAGES:
    """The writer: one question of ``kind`` about ``passages`` (two for multi-hop), its answer, and the
    exact words of each passage that answer it. ``attempt`` and ``turned_down`` make a retry a new prompt
    (a cached reply is keyed by the prompt) and tell the model what was wrong."""
    quotes = ("one exact quote from each passage, in order (passage 1 first)" if len(passages) > 1
              else "one or two exact quotes from the passage")
    rules = (f"Write {KIND_WORDS[kind]}. Use your own words for the question, not the passage's; the answer must be in "
             f"the passage{'s' if len(passages) > 1 else ''}. Evidence is {quotes}: words copied character for "
             "character, at least five words each, that a checker will look for on the page. ")
    parts = [_voice(scenario, task, examples)] if (scenario or task or examples) else []
    for number, passage in enumerate(passages, start=1):
        parts.append(f"Passage {number}:\n{passage}" if len(passages) > 1 else f"Passage:\n{passage}")
    if turned_down:
        parts.append(f"Attempt {attempt}. The last question was turned down: {turned_down}. Write a different one.")
    return [_system("write_question", '{"question": "...", "answer": "...", "evidence": ["...", ...]}', rules),
            {"role": "user", "content": "\n\n".join(parts)}]


def judge_question(question: str, answer: str, passages: Sequence[str]) -> MESSAGES:
    """The critic: is the question clear, natural, and answered by the passages? One score from 0 to 1."""
    body = "\n\n".join(f"Passage {n}:\n{p}" for n, p in enumerate(passages, start=1))
    return [_system("judge_question", '{"score": S, "reason": "one sentence"}, S from 0 to 1.',
                    "Judge a drafted question: 1 when it is clear, sounds like a person asking, and the passages "
                    "fully answer it with the answer given; 0 when it is unanswerable from them, vague, or "
                    "needs the passage in front of you to make sense. "),
            {"role": "user", "content": f"{body}\n\nQuestion: {question}\nAnswer: {answer}"}]


def evolve_question(question: str, answer: str, passages: Sequence[str], step: int, *,
                    scenario: str = "", task: str = "") -> MESSAGES:
    """The writer again: the question rewritten harder (``EVOLUTIONS[step % 3]``), the answer unchanged."""
    how = EVOLUTIONS[step % len(EVOLUTIONS)]
    body = "\n\n".join(f"Passage {n}:\n{p}" for n, p in enumerate(passages, start=1))
    voice = _voice(scenario, task, ())
    return [_system("evolve_question", '{"question": "..."}',
                    f"Rewrite a question to make it harder: {how}. The passages must still answer it, with the "
                    "same answer. "),
            {"role": "user", "content": f"{voice + chr(10) * 2 if voice else ''}{body}\n\nQuestion: {question}\n"
                                        f"Answer: {answer}"}]


def template_question(text: str) -> MESSAGES:
    """For ``golden_template(writer=)``: one question the document's text answers."""
    return [_system("template_question", '{"question": "..."}',
                    "Write one question a person would ask that this document answers, in your own words. "),
            {"role": "user", "content": f"Document:\n{text[:6000]}"}]


def task_of(messages: Sequence[dict[str, str]]) -> str:
    """The task a prompt names (``rate_passage``, ``write_question`` ...), read back from its first line."""
    first = messages[0]["content"].split("\n", 1)[0] if messages else ""
    return first[len("Task: "):] if first.startswith("Task: ") else ""


def parse_object(text: str, keys: Sequence[str]) -> dict[str, Any] | None:
    """The JSON object in a reply (fenced in ``` or not, or the first {...} in it) when it has every key in
    ``keys``; else None."""
    cleaned = re.sub(r"^```(?:json)?\s*|\s*```$", "", text.strip())
    candidates = [cleaned]
    start, end = cleaned.find("{"), cleaned.rfind("}")
    if 0 <= start < end:
        candidates.append(cleaned[start:end + 1])
    for candidate in candidates:
        try:
            value = parse_json(candidate, strict=False)
        except JsonLineError:  # not JSON, or nested past any reply asked for
            continue
        if isinstance(value, dict) and all(key in value for key in keys):
            return value
    return None


def score_of(value: Any) -> float | None:
    """A score from 0 to 1 as a float, else None (a bool, a string, 7)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value) if 0 <= value <= 1 else None
