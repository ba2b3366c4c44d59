"""How the golden-file modules write to people: quoted text, counts and lists of lines.

Every message that quotes what a person wrote goes through ``quoted``, so it stays short, shows
invisible characters as JSON escapes, and can always be printed as UTF-8.
"""
from __future__ import annotations

from typing import Any, Iterable

from ..errors import shown

ROW_EXAMPLE = '{"question": "How often are keys rotated?", "expected": ["report.pdf#page=41"]}'


def template_command(out: str = "golden.jsonl") -> str:
    """The command that starts a golden file from a corpus, for messages about a missing or empty one."""
    return f"python3 -m evaluation golden template --corpus CORPUS --out {out}"


# The golden modules' name for the one way a sentence quotes a value (``errors.shown``): in double
# quotes, escaped as JSON writes it, cut to 60 characters with the length said.
quoted = shown


def plural(count: int, noun: str, nouns: str | None = None) -> str:
    """``plural(1, "row")`` -> ``"1 row"``; ``plural(3, "row")`` -> ``"3 rows"``."""
    return f"{count} {noun if count == 1 else (nouns or noun + 's')}"


def line_list(lines: Iterable[int]) -> str:
    """``[2, 3, 4, 9]`` -> ``"lines 2-4, 9"``; ``[5]`` -> ``"line 5"``."""
    numbers = sorted(set(lines))
    spans: list[str] = []
    start = previous = None
    for number in [*numbers, None]:
        if previous is not None and number == previous + 1:
            previous = number
            continue
        if start is not None:
            spans.append(str(start) if start == previous else f"{start}-{previous}")
        start = previous = number
    return f"{'line' if len(numbers) == 1 else 'lines'} {', '.join(spans)}"


def json_kind(value: Any) -> str:
    """What a JSON value is, in words: ``"a string"``, ``"a list"``, ``"true or false"``..."""
    if isinstance(value, bool):
        return "true or false"
    if value is None:
        return "null"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    return "an object"
