"""``--env-file F``: settings for one run from a file of ``KEY=VALUE`` lines, read before anything else.

The command line is an edge, so it may read the environment; this puts a settings file's values there
first, so a run on a server's machine finds the same data and keeps the run where the server's pages
read it (``EVALUATION_STORE``, ``AZURE_STORAGE_CONNECTION_STRING``, ``AZURE_SEARCH_ENDPOINT`` ...).

The grammar is the common subset of the ``.env`` files docker and python-dotenv read, and nothing more,
so a line that means something else elsewhere is refused rather than guessed at:

- blank lines, and lines whose first non-space character is ``#``, are skipped;
- ``KEY=VALUE``, spaces allowed around both, an optional ``export `` in front; a key is letters, digits
  and ``_``, not starting with a digit;
- a value in double quotes takes ``\\n``, ``\\t``, ``\\"`` and ``\\\\`` escapes; in single quotes it is
  taken as written; either quote must close on its line, and only a ``# comment`` may follow it;
- an unquoted value runs to the end of the line, or to `` #`` (a space, then a comment).

A key set twice is refused (which one was meant?). Every bad line is reported in one error naming the
file, the line and the fix, and nothing is set when any line is bad. Values from the file replace the
environment's for this run: the flag asks for that file's settings.
"""
from __future__ import annotations

import os
import re
from pathlib import Path
from typing import MutableMapping

from ..errors import LineProblem, SettingsFileError, at_most, nearest_file, printable
from ..files import read_input

_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_ESCAPES = {"n": "\n", "t": "\t", '"': '"', "\\": "\\"}
_SHAPE = "write KEY=VALUE, as in EVALUATION_STORE=/srv/evaluations"


def read_env_file(path: str | Path) -> dict[str, str]:
    """Every setting of ``path``, in order; a ``SettingsFileError`` listing every bad line otherwise."""
    path = Path(path)
    try:
        text = read_input(path).decode("utf-8-sig")  # a named pipe is refused, never waited on
    except FileNotFoundError:
        raise SettingsFileError(f"{path}: no such settings file.{nearest_file(path)}") from None
    except UnicodeDecodeError as err:
        raise SettingsFileError(f"{path}: not UTF-8 text (byte {err.start + 1}); save it as UTF-8") from None
    except OSError as err:
        raise SettingsFileError(f"{path}: cannot read the settings file ({err.strerror or err})") from None
    found: dict[str, str] = {}
    first: dict[str, int] = {}
    problems: list[LineProblem] = []
    for number, line in enumerate(text.splitlines(), start=1):
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        try:
            key, value = _setting(stripped)
        except ValueError as err:
            problems.append(LineProblem(number, str(err)))
            continue
        if key in first:
            problems.append(LineProblem(number, f"{key} is set again (first on line {first[key]}); keep one of them"))
            continue
        first[key] = number
        found[key] = value
    if problems:
        head = (f"{path}: {len(problems)} line{'s' if len(problems) != 1 else ''} that "
                f"{'is' if len(problems) == 1 else 'are'} not a setting; nothing was read from it:")
        raise SettingsFileError("\n".join([head, *at_most([f"  {path}: {p}" for p in problems], indent="  ")]))
    return found


def load_env_file(path: str | Path, environ: MutableMapping[str, str] = os.environ) -> dict[str, str]:
    """Read ``path`` whole, then set its settings in ``environ``; returns what was set."""
    settings = read_env_file(path)
    environ.update(settings)
    return settings


def _setting(line: str) -> tuple[str, str]:
    if line.startswith("export ") or line.startswith("export\t"):
        line = line[len("export"):].lstrip()
    key, equals, rest = line.partition("=")
    key = key.strip()
    if not equals:
        raise ValueError(f"{printable(line)} has no \"=\"; {_SHAPE}")
    if not _KEY.fullmatch(key):
        raise ValueError(f"{printable(key) or 'nothing'} is not a setting's name (letters, digits and _, not starting "
                         f"with a digit); {_SHAPE}")
    value = _value(rest.strip(), key)
    if "\x00" in value:  # no environment variable can hold one: os.environ would raise ValueError
        raise ValueError(f"{key}: its value holds a NUL character, which no setting can hold; remove it")
    return key, value


def _value(text: str, key: str) -> str:
    if not text or text[0] not in "\"'":
        value, _, _ = text.partition(" #")
        return value.rstrip()
    quote = text[0]
    out: list[str] = []
    i = 1
    while i < len(text):
        ch = text[i]
        if ch == quote:
            after = text[i + 1:].strip()
            if after and not after.startswith("#"):
                raise ValueError(f"{key}: {printable(after)} follows the closing quote; put it inside the quotes, "
                                 "or after a #, as a comment")
            return "".join(out)
        if quote == '"' and ch == "\\" and i + 1 < len(text):
            nxt = text[i + 1]
            if nxt not in _ESCAPES:
                raise ValueError(f"{key}: \\{nxt} is not an escape a settings file takes (\\n, \\t, \\\", \\\\); "
                                 "write the character itself, or single quotes to take the value as written")
            out.append(_ESCAPES[nxt])
            i += 2
            continue
        out.append(ch)
        i += 1
    raise ValueError(f"{key}: the value's {quote} quote is not closed on its line; close it, or leave the quotes out")

