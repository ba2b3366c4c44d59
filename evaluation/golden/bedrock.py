"""Rows of an Amazon Bedrock RAG evaluation prompt dataset, read as golden-file questions.

A row is ``{"conversationTurns": [{"prompt": {"content": [{"text": ...}]},
"referenceResponses": [{"content": [{"text": ...}]}]}]}``. Every turn is a question: its id is
``q<line>``, or ``q<line>.<turn>`` when the line has several turns; its reference is the text of
``referenceResponses``. The format names no documents, so ``expected`` stays empty until labelled.
"""
from __future__ import annotations

from difflib import get_close_matches
from typing import Any

from .records import Question
from .schema import FIELDS, closest_field, unknown_field

TURNS = "conversationTurns"
BEDROCK_EXAMPLE = '{"conversationTurns": [{"prompt": {"content": [{"text": "How often are keys rotated?"}]}}]}'
_PROMPT_EXAMPLE = '"prompt": {"content": [{"text": "How often are keys rotated?"}]}'
_REFERENCE_RULE = '"referenceResponses" must be a list like [{"content": [{"text": "Every 90 days."}]}]'


def looks_like_bedrock(row: dict[str, Any]) -> bool:
    """True when ``row`` has ``conversationTurns``, or a key one typo away from it."""
    return TURNS in row or any(get_close_matches(key, [TURNS], n=1, cutoff=0.8) for key in row if key not in FIELDS)


def bedrock_questions(row: dict[str, Any], line: int) -> tuple[list[Question], list[str]]:
    """The questions of one Bedrock row, and a sentence for each thing wrong with it."""
    errors = [unknown_field(key, [TURNS]) for key in row if key != TURNS]
    if TURNS not in row:
        if TURNS not in {closest_field(key, [TURNS]) for key in row}:  # else the typo's sentence says it
            errors.append(f'needs "{TURNS}", as every row of an Amazon Bedrock dataset does, '
                          f"for example {BEDROCK_EXAMPLE}")
        return [], errors
    turns = row[TURNS]
    if not isinstance(turns, list) or not turns:
        errors.append(f'"{TURNS}" must be a non-empty list of turns, for example {BEDROCK_EXAMPLE}')
        return [], errors
    questions = []
    for number, turn in enumerate(turns, start=1):
        question, turn_errors = _turn(turn, number)
        errors.extend(turn_errors)
        if question is not None:
            turn_id = f"q{line}" if len(turns) == 1 else f"q{line}.{number}"
            questions.append(Question(id=turn_id, question=question[0], expected=(), reference=question[1], line=line))
    return questions, errors


def _turn(turn: Any, number: int) -> tuple[tuple[str, str | None] | None, list[str]]:
    """``((question, reference), errors)`` for one turn; the pair is None when the turn has no prompt."""
    if not isinstance(turn, dict):
        return None, [f"turn {number} must be an object like {{{_PROMPT_EXAMPLE}}}"]
    errors = []
    prompt = _text(turn.get("prompt"))
    if prompt is None:
        errors.append(f"turn {number} needs a prompt like {_PROMPT_EXAMPLE}")
    elif not prompt.strip():
        errors.append(f'turn {number} has an empty prompt; write the question in its "text"')
    responses = turn.get("referenceResponses", [])
    texts = [_text(response) for response in responses] if isinstance(responses, list) else [None]
    if any(text is None for text in texts):
        errors.append(f"turn {number}: {_REFERENCE_RULE}")
    if errors or prompt is None:
        return None, errors
    reference = "\n".join(t for t in texts if t) or None
    return (prompt, reference), []


def _text(block: Any) -> str | None:
    """The text of ``{"content": [{"text": ...}, ...]}`` (parts joined by newlines), None when it is not that shape."""
    if not isinstance(block, dict) or not isinstance(block.get("content"), list):
        return None
    parts = block["content"]
    if not all(isinstance(part, dict) and isinstance(part.get("text"), str) for part in parts):
        return None
    return "\n".join(part["text"] for part in parts)
