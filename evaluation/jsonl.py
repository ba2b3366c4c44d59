"""One reading of JSONL bytes, shared by the corpus and the golden file, so the two never disagree.

Lines are what an editor numbers: the bytes split on ``\\n`` only (a trailing ``\\r`` dropped), counted
from 1. Unicode's other line separators (U+2028, U+0085, ...) are text: JSON allows them unescaped
inside a string, and ``json.dumps(ensure_ascii=False)`` writes them so. A UTF-8 byte order mark at
the start of a line is skipped (files joined with ``cat`` keep theirs). Blank lines, and lines whose
first non-blank character is ``#`` (a comment, or a row put aside), are skipped but keep their number.

Each line must be strict UTF-8, and its JSON may hold neither ``NaN`` / ``Infinity`` (nor a number too
large to be finite) nor a lone surrogate escape such as ``\\ud800``, which is no character and cannot
be written back as UTF-8. Each refusal is a sentence for that line; the caller adds the file and line.
"""
from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from typing import Any, Callable, Iterator

BOM = b"\xef\xbb\xbf"
COMMENT = "#"
# Only a line that writes a \uD800-\uDFFF escape can hold a surrogate after json.loads: others skip the walk.
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")


class JsonLineError(ValueError):
    """A line that is not one JSON value this project reads; ``str()`` is the sentence, without the line.

    ``syntax`` is True when the line is not JSON at all (callers then show an example of a good row),
    False when it is JSON holding a value refused here (NaN, a lone surrogate).
    """

    def __init__(self, message: str, *, syntax: bool = True) -> None:
        super().__init__(message)
        self.syntax = syntax


@dataclass(frozen=True)
class Line:
    """One line worth reading: its 1-based number, and its text, or why it is not text (``problem``)."""

    number: int
    text: str | None
    problem: str | None = None


def read_lines(raw: bytes) -> Iterator[Line]:
    """Every line of ``raw`` that is neither blank nor a comment, as the module docstring says."""
    for number, data in enumerate(raw.split(b"\n"), start=1):
        data = data.removeprefix(BOM).removesuffix(b"\r")
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as err:
            yield Line(number, None, f"not UTF-8 text (byte {err.start + 1} of the line); save the file as UTF-8")
            continue
        stripped = text.strip()
        if not stripped or stripped.startswith(COMMENT):
            continue
        yield Line(number, text)


def parse_line(text: str, *, object_pairs_hook: Callable[[list[tuple[str, Any]]], Any] | None = None) -> Any:
    """The JSON value of one line; ``JsonLineError`` saying what is wrong when it is not one we read."""
    try:
        value = json.loads(text, parse_constant=_refuse_constant, parse_float=_finite_float,
                           object_pairs_hook=object_pairs_hook)
    except JsonLineError:
        raise
    except json.JSONDecodeError as err:
        raise JsonLineError(f"not valid JSON ({err.msg} at column {err.colno})") from None
    except RecursionError:
        raise JsonLineError("nested too deeply to read") from None
    except ValueError:  # json reads an integer of thousands of digits this way
        raise JsonLineError("not valid JSON (a number too long to read)") from None
    if _SURROGATE_ESCAPE.search(text):
        surrogate = _first_surrogate(value)
        if surrogate is not None:
            raise JsonLineError(f"holds the escape \\u{ord(surrogate):04x}, half of a surrogate pair with no "
                                "other half, which is no character; remove it or write the whole character",
                                syntax=False)
    return value


def _refuse_constant(name: str) -> Any:
    raise JsonLineError(f"holds {name}, which is not a number JSON allows; write a finite number or null",
                        syntax=False)


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise JsonLineError(f"holds the number {text[:30]}, too large to be finite; write a smaller number",
                            syntax=False)
    return value


def _first_surrogate(value: Any) -> str | None:
    """The first lone surrogate in any string or key of ``value`` (walked without recursion)."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            found = next((ch for ch in item if "\ud800" <= ch <= "\udfff"), None)
            if found is not None:
                return found
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return None
