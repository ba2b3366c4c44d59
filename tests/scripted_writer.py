"""A scripted golden-writer model for ``ChatServer.respond``: it answers each prompt by its task (the
system message's first line) and by which passage it is shown, the way a model would, and lets a test
change one answer: a quote not on the page, a copied question, a repeat, a low rating."""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Callable

from chat_server import Reply, Seen, completion

from evaluation.golden.writing.prompts import task_of


@dataclass
class Topic:
    """One document of the test collection: a word only it holds, and what a model would write about it."""

    key: str
    question: str
    answer: str
    quote: str


@dataclass
class ScriptedWriter:
    """``topics``: how to recognise a passage and what to write for it. ``drafts[key]``: the replies to
    write_question for that passage, attempt by attempt (then the topic's own); ``ratings[key]``: its
    three passage scores; ``scores[question]``: the critic's score for a question; ``harder[key]``: the
    rewrite (default: the question asked for a beginner); ``generic``: how to write for a passage no
    topic matches (the shipped sample)."""

    topics: list[Topic]
    drafts: dict[str, list[dict]] = field(default_factory=dict)
    ratings: dict[str, tuple[float, float, float]] = field(default_factory=dict)
    scores: dict[str, float] = field(default_factory=dict)
    harder: dict[str, str] = field(default_factory=dict)
    generic: Callable[[str], dict] | None = None
    tasks: list[str] = field(default_factory=list)

    def __call__(self, seen: Seen) -> Reply:
        messages = seen.body["messages"]
        task, user = task_of(messages), messages[-1]["content"]
        self.tasks.append(task)
        if task == "rate_passage":
            clarity, contained, substance = self.ratings.get(self._keys(user)[0] if self._keys(user) else "",
                                                             (0.9, 0.9, 0.9))
            return _json({"clarity": clarity, "self_contained": contained, "substance": substance, "reason": "ok"})
        if task == "write_question":
            return _json(self._draft(user))
        if task == "judge_question":
            question = user.split("\nQuestion: ", 1)[1].split("\nAnswer: ", 1)[0]
            return _json({"score": self.scores.get(question, 0.9), "reason": "ok"})
        if task == "evolve_question":
            question = user.split("\nQuestion: ", 1)[1].split("\nAnswer: ", 1)[0]
            keys = self._keys(user)
            return _json({"question": self.harder.get(keys[0] if keys else "", f"As a beginner, {question[0].lower()}"
                                                                                f"{question[1:]}")})
        if task == "template_question":
            keys = self._keys(user)
            return _json({"question": self._topic(keys[0]).question if keys else "What is this about?"})
        raise AssertionError(f"unexpected task {task!r}")

    def _keys(self, user: str) -> list[str]:
        """The topics of the passages shown, in the order they are shown."""
        found = [(user.find(t.key), t.key) for t in self.topics if t.key in user]
        return [key for _, key in sorted(found)]

    def _topic(self, key: str) -> Topic:
        return next(t for t in self.topics if t.key == key)

    def _draft(self, user: str) -> dict:
        keys = self._keys(user)
        if not keys:
            assert self.generic is not None, "a passage no topic matches"
            return self.generic(_passages(user))
        attempt = int(user.split("Attempt ", 1)[1].split(".", 1)[0]) if "\n\nAttempt " in user else 1
        queued = self.drafts.get(keys[0], [])
        if attempt <= len(queued):
            return queued[attempt - 1]
        first = self._topic(keys[0])
        if len(keys) == 2:  # multi-hop: a question over both, a quote from each
            second = self._topic(keys[1])
            return {"question": f"{first.question[:-1]}, and {second.question[0].lower()}{second.question[1:]}",
                    "answer": f"{first.answer} {second.answer}", "evidence": [first.quote, second.quote]}
        return {"question": first.question, "answer": first.answer, "evidence": [first.quote]}


def _passages(user: str) -> list[str]:
    """The passages a write_question prompt shows, in order."""
    body = user.split("\n\nAttempt ", 1)[0]
    if "Passage 1:\n" not in body:
        return [body.split("Passage:\n", 1)[1]]
    return [part.split("\n\nPassage ", 1)[0] for part in body.split("Passage 1:\n", 1)[1].split("Passage 2:\n")]


def _json(value: dict) -> Reply:
    return Reply(body=completion(json.dumps(value)))


def about_any_passage(passages: list[str]) -> dict:
    """A draft for any passages, the way a plain model might write one: a question naming two of the first
    passage's longest words (not its word pairs), its first sentence as the answer, and ten words of each
    passage, from the sixth on, as the quotes (verbatim: the passage's own words with single spaces)."""
    passage = passages[0]
    words = passage.split()
    terms = sorted({w.strip(".,:;()[]`*#'\"") for w in words if w.strip(".,:;()[]`*#'\"").isalpha()},
                   key=lambda w: (-len(w), w))[:2]
    quotes = [" ".join(p.split()[5:15]) for p in passages]
    return {"question": f"What should I know about {terms[0].lower()} when dealing with {terms[-1].lower()}?",
            "answer": passage.split(". ", 1)[0][:200], "evidence": quotes}
