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

import codecs
import json
import math
import re
from dataclasses import dataclass
from typing import Any, Callable, Iterator, Sequence

from .errors import JsonLineError, shown  # defined with the library's other exceptions; importable here as before

BOM = b"\xef\xbb\xbf"
COMMENT = "#"
# Only a line that writes a \uD800-\uDFFF escape can hold a surrogate after json.loads: others skip the walk.
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")
# Deeper than this is no file or reply of ours (a golden row, a corpus row's metadata, a chunker config and a
# model's JSON go 3 or 4 levels); Python's parser fails near 1,000 levels, and what walks a value after it sooner.
MAX_DEPTH = 100
_STRING = re.compile(r'"(?:[^"\\]|\\.)*"')
_BRACKET = re.compile(r"[\[\]{}]")


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
            yield Line(number, None, not_utf8(data, err.start, "of the line"))
            continue
        stripped = text.strip()
        if not stripped or stripped.startswith(COMMENT):
            continue
        yield Line(number, text)


def parse_line(text: str, *, object_pairs_hook: Callable[[list[tuple[str, Any]]], Any] | None = None) -> Any:
    """The JSON value of one line; ``JsonLineError`` saying what is wrong when it is not one we read."""
    return parse_json(text, object_pairs_hook=object_pairs_hook)


def parse_json(text: str, *, strict: bool = True,
               object_pairs_hook: Callable[[list[tuple[str, Any]]], Any] | None = None) -> Any:
    """The JSON value of ``text`` (a line, a settings file, a model's reply), or ``JsonLineError`` saying
    what is wrong; every JSON a person or a model hands this tool is read here.

    Nested deeper than ``MAX_DEPTH`` is refused before it is parsed: Python's parser gives up near 1,000
    levels with a RecursionError, and a value just under that breaks whatever walks it next (``repr`` in
    a sentence, ``json.dumps``). ``strict`` (the module docstring's rules for files) also refuses NaN and
    Infinity, numbers too large to be finite, and lone surrogate escapes; a service's reply is read with
    ``strict=False``, which keeps only the nesting bound.
    """
    deepest = _nesting(text)
    if deepest > MAX_DEPTH:
        raise JsonLineError(f"nested too deeply to read: {deepest:,} levels, where this tool reads up to {MAX_DEPTH} "
                            "and its own files need a few", syntax=False)
    try:
        value = (json.loads(text, parse_constant=_refuse_constant, parse_float=_finite_float,
                            object_pairs_hook=object_pairs_hook) if strict
                 else json.loads(text, object_pairs_hook=object_pairs_hook))
    except JsonLineError:
        raise
    except json.JSONDecodeError as err:
        raise JsonLineError(f"not valid JSON ({err.msg} at column {err.colno})", decode=err) from None
    except RecursionError:  # the bound above makes this a last resort (a deep stack of our own)
        raise JsonLineError("nested too deeply to read") from None
    except ValueError:  # json reads an integer of thousands of digits this way
        raise JsonLineError("not valid JSON (a number too long to read)") from None
    if strict and _SURROGATE_ESCAPE.search(text):
        surrogate = _first_surrogate(value)
        if surrogate is not None:
            raise JsonLineError(f"holds the escape \\u{ord(surrogate):04x}, half of a surrogate pair with no "
                                "other half, which is no character; remove it or write the whole character",
                                syntax=False)
    return value


def _nesting(text: str) -> int:
    """How deep the arrays and objects of ``text`` go (brackets inside strings not counted); 0 for a
    text with no more brackets than ``MAX_DEPTH`` in all, the common case, found at C speed."""
    if text.count("[") + text.count("{") <= MAX_DEPTH:
        return 0
    depth = deepest = 0
    for bracket in _BRACKET.findall(_STRING.sub("", text)):
        depth += 1 if bracket in "[{" else -1
        deepest = max(deepest, depth)
    return deepest


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


# -- text in another encoding ------------------------------------------------------------------------

WESTERN = "cp1252"  # Windows-1252: Latin-1 with letters where Latin-1 has control codes; what Excel saves in the West
_WESTERN_NAME = "Windows-1252 or Latin-1"
_BETWEEN_WORDS = re.compile(r'[\s"]')
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0e-\x1f\x7f]")


def not_utf8(data: bytes, start: int, where: str = "") -> str:
    """Why ``data`` is not text, its first bad byte at ``start``, with the encoding it most likely is in
    and the command that saves it as UTF-8: ``not UTF-8 text (byte 28 of the line); save the file as
    UTF-8: it reads as Windows-1252 or Latin-1 ("café"), so iconv -f CP1252 -t UTF-8 FILE > NEW does it``."""
    head = f"not UTF-8 text (byte {start + 1}{' ' + where if where else ''}); save the file as UTF-8: "
    if data.startswith((b"\xff\xfe", b"\xfe\xff")) or b"\x00" in data:
        return head + "it looks like UTF-16 (NUL bytes between letters), so iconv -f UTF-16 -t UTF-8 FILE > NEW does it"
    if _reads_as_western(data):
        word = _word_at(data.decode(WESTERN), start)
        return (head + f"it reads as {_WESTERN_NAME} ({shown(word)}), so iconv -f {WESTERN.upper()} -t UTF-8 "
                "FILE > NEW does it")
    return (head + f"it is not Western European text ({_WESTERN_NAME}) either (byte 0x{data[start]:02X}); find its "
            "encoding (file -i FILE), then iconv -f ENCODING -t UTF-8 FILE > NEW")


def _reads_as_western(data: bytes) -> bool:
    """Whether ``data`` reads as Western European text in Windows-1252: it decodes, and its other
    characters are letters standing among ASCII ones ("café", "Müller"). Most 8-bit text of other
    scripts decodes too (Cyrillic's as runs of accented letters, "Êàê"), so runs of three or more are
    taken as another encoding, not named."""
    try:
        text = data.decode(WESTERN)
    except UnicodeDecodeError:
        return False
    if _CONTROL.search(text):  # no text file of ours holds NUL or other control codes
        return False
    runs = re.findall(r"[^\x00-\x7f]+", text)
    letters = sum(ch.isalpha() for run in runs for ch in run)
    total = sum(len(run) for run in runs)
    return bool(total) and letters * 5 >= total * 4 and all(len(run) < 3 for run in runs)


def _word_at(text: str, start: int) -> str:
    """The word of ``text`` around character ``start`` (an 8-bit text: characters are bytes), at most 40."""
    begin = start
    while begin > 0 and start - begin < 20 and not _BETWEEN_WORDS.match(text[begin - 1]):
        begin -= 1
    word = _BETWEEN_WORDS.split(text[begin:], maxsplit=1)[0]
    return word[:40]


def decode_text(raw: bytes, encoding: str | None = None) -> tuple[str | None, str | None]:
    """``(text, None)``: ``raw`` read as ``encoding`` (None: UTF-8, a byte order mark skipped); or
    ``(None, why)`` naming the line and byte it cannot read, and for UTF-8 the encoding it looks like
    (``not_utf8``). For text files that are not JSONL (topics, qrels) and for reading a file as the user
    says it is encoded."""
    if encoding is not None and known_encoding(encoding):
        return None, known_encoding(encoding)
    codec = encoding or "utf-8-sig"
    try:
        return raw.decode(codec), None
    except UnicodeDecodeError as err:
        line_start = raw.rfind(b"\n", 0, err.start) + 1
        line_end = raw.find(b"\n", err.start)
        number = raw.count(b"\n", 0, err.start) + 1
        data = raw[line_start:line_end if line_end >= 0 else len(raw)]
        if encoding is None:
            return None, f"line {number}: {not_utf8(data, err.start - line_start, 'of the line')}"
        return None, (f"line {number}: byte {err.start - line_start + 1} of the line (0x{raw[err.start]:02X}) is not "
                      f"{encoding} text ({err.reason}); check the encoding")
    except (UnicodeError, ValueError) as err:  # a codec such as idna fails without saying where
        return None, f"cannot be read as {encoding} text ({str(err)[:100]}); check the encoding"


def as_utf8(raw: bytes, encoding: str | None) -> tuple[bytes, str | None]:
    """``raw`` as UTF-8 bytes, read as ``encoding`` (unchanged when None or UTF-8: its lines are checked
    where they are read); or ``(b"", why)`` when ``raw`` is not ``encoding`` text (``decode_text``)."""
    if encoding is None or not known_encoding(encoding) and codecs.lookup(encoding).name == "utf-8":
        return raw, None
    text, why = decode_text(raw, encoding)
    return (b"", why) if text is None else (text.encode("utf-8", "surrogatepass"), None)


def known_encoding(name: str) -> str | None:
    """Why ``name`` is no encoding Python reads, with the usual ones; None when it is one."""
    try:
        "a".encode(name)  # a text encoding: codecs such as rot13 or base64 are known but turn bytes into bytes
    except (LookupError, ValueError, UnicodeError):
        return (f"{shown(name)} is not a text encoding Python knows; for example cp1252 (Windows, Western), latin-1, "
                "cp1251, shift_jis, gb18030, utf-16")
    return None


# -- mistakes of the whole file -----------------------------------------------------------------------

_NOT_A_FIELD = re.compile(r'^"(?P<name>[^"]+)" is not a field\b')
_NEEDS_FIELD = re.compile(r'^needs "(?P<name>[^"]+)"')
_NOT_UTF8 = "not UTF-8 text"


@dataclass(frozen=True)
class FileWide:
    """What ``file_wide`` found: one sentence per mistake of the whole file, and the line problems those
    sentences do not already explain (``kept``)."""

    sentences: tuple[str, ...]
    kept: tuple[Any, ...]


def file_wide(raw: bytes, problems: Sequence[Any], rows: int) -> FileWide:
    """Mistakes made once for the whole file, each said once with its count, instead of once per line.

    ``problems`` are line problems (``.line``, ``.message``) of a file of ``rows`` non-blank lines.
    Found: text in UTF-16 (every line unreadable), lines in another 8-bit encoding (Windows-1252 or
    Latin-1: each such line is not UTF-8), one JSON array instead of one object per line, and a
    problem that every row has (a field named ``body`` where ``text`` belongs: 2 messages per row).
    Measured on the shipped sample: its golden file as an array gave 428 lines, now 1; its corpus
    with ``body`` for ``text`` gave 368 lines for 184 rows, now 1.
    """
    problems = list(problems)
    if not problems or (rows < 2 and _array_length(raw) is None):  # one line's own sentence says it
        return FileWide((), tuple(problems))
    text = _utf16(raw)
    if text is not None:
        return FileWide((f"the file is UTF-16 text, not UTF-8, so none of its {rows} lines can be read; save it "
                         "as UTF-8 (for example: iconv -f UTF-16 -t UTF-8 FILE > NEW)",), ())
    sentences: list[str] = []
    unreadable = [p for p in problems if p.message.startswith(_NOT_UTF8)]
    if len(unreadable) > 1:  # one such line is said well enough by its own problem, with its byte
        lines = sorted(p.line for p in unreadable if p.line is not None)
        listed = ", ".join(map(str, lines[:10])) + (", ..." if len(lines) > 10 else "")
        western = _reads_as_western(raw)
        guess = f" ({'it reads' if len(lines) == 1 else 'they read'} as {_WESTERN_NAME} text)" if western else ""
        count = f"{len(lines)} of its {rows} lines {'is' if len(lines) == 1 else 'are'}"
        fix = (f"iconv -f {WESTERN.upper()} -t UTF-8 FILE > NEW" if western else
               "find its encoding (file -i FILE), then iconv -f ENCODING -t UTF-8 FILE > NEW")
        sentences.append(f"the file is not all UTF-8: {count} in another encoding{guess}, line"
                         f"{'s' if len(lines) != 1 else ''} {listed}; save the file as UTF-8: {fix}")
        problems = [p for p in problems if p not in unreadable]
    if _is_array(raw):
        items = _array_length(raw)
        count = f"one JSON array of {items} item{'s' if items != 1 else ''}" if items is not None else "a JSON array"
        sentences.append(f"the file is {count}, not one JSON object per line (JSONL); write each object on a line "
                         "of its own, for example: python3 -c \"import json,sys; [print(json.dumps(r, ensure_ascii="
                         "False)) for r in json.load(open(sys.argv[1]))]\" FILE > NEW.jsonl")
        return FileWide(tuple(sentences), ())
    every, problems = _on_every_row(problems, rows)
    return FileWide(tuple(sentences + every), tuple(problems))


def _utf16(raw: bytes) -> str | None:
    """The text when ``raw`` is UTF-16 (a byte order mark, or the NUL bytes of ASCII written as UTF-16)."""
    head = raw[:4096]
    if not (head.startswith((b"\xff\xfe", b"\xfe\xff")) or (len(head) >= 4 and head.count(b"\x00") * 3 >= len(head))):
        return None
    try:
        return raw.decode("utf-16")
    except UnicodeDecodeError:
        return None


def _is_array(raw: bytes) -> bool:
    """The whole file is one JSON array, or it opens one on a line that is not JSON by itself
    (``[`` alone, as ``json.dump(rows, indent=2)`` writes it); a line ``[1]`` is a row, wrongly."""
    if _array_length(raw) is not None:
        return True
    for data in raw.split(b"\n"):
        stripped = data.removeprefix(BOM).strip()
        if stripped and not stripped.startswith(b"#"):
            if not stripped.startswith(b"["):
                return False
            try:
                json.loads(stripped)
            except (UnicodeDecodeError, ValueError, RecursionError):
                return True
            return False
    return False


def _array_length(raw: bytes) -> int | None:
    try:
        value = json.loads(raw.removeprefix(BOM).decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        return None
    return len(value) if isinstance(value, list) else None


def _on_every_row(problems: list[Any], rows: int) -> tuple[list[str], list[Any]]:
    """Sentences for the messages every row has (at least two rows), and the problems left."""
    if rows < 2:
        return [], problems
    lines_of: dict[str, set] = {}
    for problem in problems:
        lines_of.setdefault(problem.message, set()).add(problem.line)
    shared = [m for m, lines in lines_of.items() if None not in lines and len(lines) == rows]
    if not shared:
        return [], problems
    unknown = [m.group("name") for m in map(_NOT_A_FIELD.match, shared) if m]
    needed = [m.group("name") for m in map(_NEEDS_FIELD.match, shared) if m]
    sentences, said = [], set()
    if len(unknown) == 1 and len(needed) == 1:  # a field under another name: the rename is the fix
        sentences.append(f'every one of the {rows} rows has "{unknown[0]}" and no "{needed[0]}"; rename "{unknown[0]}" '
                         f'to "{needed[0]}" on every line')
        said = {m for m in shared if _NOT_A_FIELD.match(m) or _NEEDS_FIELD.match(m)}
    for message in shared:
        if message not in said:
            sentences.append(f"every one of the {rows} rows: {message}")
    return sentences, [p for p in problems if p.message not in shared]
