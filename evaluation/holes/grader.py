"""The judge of unjudged results: one chat call grades one (question, passage) on the golden file's scale.

The call goes over the chat route every model of this library uses (``evaluation/chat.py``: Azure
OpenAI with a key or a managed identity, OpenAI, or a server of your own; its retries, timeouts and
sentences), and the reply is read as the answer judge reads one (``answers.judge.read_message``: a
content filter stop or a refusal is said at once). ``HoleGrader`` only adds what grading needs: the
prompt, the ``usage`` the service counted, and the grade read back.

The scale (``Scale.of``) is the golden file's: binary (0 judged not relevant, 1 relevant) when no label
is above 1, else 0 to the highest grade the file gives. The prompt describes each grade; for a 0-3
file it uses the four levels of TREC's deep learning track judgements (as UMBRELA's prompt does), so a
judge grades as the people who made such labels were told to. The reply must be ``{"grade": G}`` with
G a grade of the scale; anything else stops the judging (``HoleJudgeError``), as ``golden write``
stops on a reply that is not the JSON asked for: a model that cannot keep the format on one passage
will not keep it on the next, and the replies it gave are kept in the cache.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Iterable, Mapping, Sequence

from ..answers.judge import read_message
from ..chat import ChatRoute, snippet
from ..errors import AnswerError, HoleJudgeError, JsonLineError
from ..jsonl import parse_json

PROMPT_VERSION = "holes-1"  # part of every cached reply's key through the prompt's own words
PASSAGE_CHARS = 6000  # what a passage is cut to: about 1,500 tokens of English
GRADE_MAX_TOKENS = 100  # {"grade": 2, "reason": "a short sentence"}

TREC_LEVELS = {
    0: "the passage has nothing to do with the question",
    1: "the passage is about the question's subject but does not answer it",
    2: "the passage holds some of the answer, or the answer mixed with other matters",
    3: "the passage is about the question and holds its answer",
}


@dataclass(frozen=True)
class Scale:
    """The grades a label may take, lowest first: (0, 1) for a binary file, (0, 1, ..., top) for a graded one."""

    grades: tuple[int, ...]

    @classmethod
    def of(cls, judgements: Iterable[Mapping[str, int]]) -> Scale:
        """The golden file's scale from every question's judgements (``Question.judgements``)."""
        top = max((grade for judged in judgements for grade in judged.values()), default=1)
        return cls(tuple(range(max(1, top) + 1)))

    @property
    def binary(self) -> bool:
        return self.grades == (0, 1)

    @property
    def top(self) -> int:
        return self.grades[-1]

    def words(self) -> str:
        """Each grade's meaning, one line each, for the prompt."""
        if self.binary:
            return ("0: the passage does not answer the question\n"
                    "1: the passage answers the question, or holds what answers it")
        if self.top == 3:
            return "\n".join(f"{grade}: {TREC_LEVELS[grade]}" for grade in self.grades)
        return "\n".join([f"0: {TREC_LEVELS[0]}", *(f"{g}: answers it in part (higher answers more)"
                                                    for g in self.grades[1:-1]),
                          f"{self.top}: {TREC_LEVELS[3]}"])

    def to_json(self) -> dict[str, Any]:
        return {"kind": "binary" if self.binary else "graded", "grades": list(self.grades)}


SYSTEM = (f"[{PROMPT_VERSION}] You judge search results. Given a question a person asked and one passage a "
          "search returned for it, grade how well the passage answers the question, on the scale given. Judge "
          "only the passage's content against the question; ignore its length, style and position. Reply with one "
          'JSON object and nothing else: {"grade": G, "reason": "one short sentence"}.')


def grade_messages(question: str, passage: str, scale: Scale, *,
                   passage_chars: int = PASSAGE_CHARS) -> list[dict[str, str]]:
    """The chat messages asking for one grade; a passage past ``passage_chars`` is cut, and says so."""
    shown = passage if len(passage) <= passage_chars else passage[:passage_chars] + " [...cut]"
    user = (f"Scale:\n{scale.words()}\n\nQuestion: {question}\n\nPassage:\n<passage>\n{shown}\n</passage>\n\n"
            f"Reply with the JSON object only; grade is one of {', '.join(map(str, scale.grades))}.")
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": user}]


def parse_grade(content: Any, scale: Scale) -> int | None:
    """The grade a reply gives: ``{"grade": G}`` (fenced in ``` or not) with G a grade of ``scale`` (an
    integer, or a number with no fraction); None when there is none."""
    if not isinstance(content, str):
        return None
    text = re.sub(r"^```(?:json)?\s*|\s*```$", "", content.strip())
    try:
        value = parse_json(text, strict=False)
    except JsonLineError:
        match = re.search(r'"grade"\s*:\s*(-?\d+(?:\.\d+)?)', text)
        value = {"grade": float(match.group(1))} if match else None
    grade = value.get("grade") if isinstance(value, dict) else None
    if isinstance(grade, bool) or not isinstance(grade, (int, float)) or grade != int(grade):
        return None
    return int(grade) if int(grade) in scale.grades else None


class HoleGrader(ChatRoute):
    """Asks a chat model for grades: ``ask(messages) -> (content, usage)``; reuse one for many calls.

    ``settings``: a ``chat.ChatSettings`` (its role "judge" names it in every sentence). ``name`` is the
    model (Azure OpenAI: deployment) the replies come from, part of every cached reply's key.
    """

    error = HoleJudgeError

    @property
    def name(self) -> str:
        return self.settings.model

    @property
    def max_tokens(self) -> int:
        return self.settings.max_tokens

    def ask(self, messages: Sequence[Mapping[str, str]]) -> tuple[str, Any]:
        """The model's text for ``messages`` and the reply's ``usage`` field (None when it has none)."""
        reply = self._post(self.body([dict(m) for m in messages]))
        who = f"the {self.settings.role} at {self.settings.url}"
        try:
            content, _ = read_message(reply, who, stopped="on a passage", declined="to grade a passage")
        except AnswerError as err:  # read_message's sentence, raised as this judge's error
            raise HoleJudgeError(str(err)) from None
        if not isinstance(content, str) or not content.strip():
            raise HoleJudgeError(f"{who} replied with no text: {snippet(reply)}; check the model or deployment name")
        return content, reply.get("usage") if isinstance(reply, dict) else None
