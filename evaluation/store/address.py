"""What an address looks like, before anything reads it: ``scheme://...`` is an address, and so is text
that only starts like one (``https:/acct...``), so it is refused with the form it should take instead of
becoming a local folder named ``https:``. It imports nothing of this package: ``sources`` and ``blob`` both
read these rules."""
from __future__ import annotations

import re
from pathlib import Path

from ..errors import printable, shown

ADDRESS_SHOWN = 300  # characters of an address a sentence repeats: any real one, never a megabyte

_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://")
# A scheme of two characters or more, then ":": "https:/acct..." and "https:acct/runs" start like an
# address; "C:/runs" (a Windows drive, one letter) and "./https:/x" do not.
_STARTS_LIKE_AN_ADDRESS = re.compile(r"(?P<scheme>[A-Za-z][A-Za-z0-9+.-]+):")


def is_blob_address(source: str | Path) -> bool:
    """True for anything that starts like an address (``scheme:``, in any case, with or without the
    ``//``): it goes to ``blob.parse_address``, which reads a Blob address or refuses with a sentence
    (``malformed_address`` for a missing ``//``), and never to a local folder named ``https:``. A
    ``Path`` is always local."""
    return not isinstance(source, Path) and bool(_STARTS_LIKE_AN_ADDRESS.match(str(source)))


def malformed_address(text: str) -> str | None:
    """Why ``text`` is not a well-formed address although it starts like one (a scheme not followed by
    ``//``), with the form it should take; None when it is ``scheme://...`` or does not start like one."""
    start = _STARTS_LIKE_AN_ADDRESS.match(text)
    if start is None or _SCHEME.match(text):
        return None
    fixed = f"{start['scheme'].lower()}://{text[start.end():].lstrip(chr(47) + chr(92))}"
    return (f'not a well-formed address: the scheme {shown(start["scheme"] + ":")} is followed by "//", so write '
            f"{printable(fixed, ADDRESS_SHOWN)} (to name a local file or folder whose name holds a colon, write "
            f"./{printable(text, ADDRESS_SHOWN)})")


def local_path_problem(text: str) -> str | None:
    """Why ``text`` cannot name a local path here (it starts like an address), else None: for the
    arguments that take only a local file or folder, so ``https:/x`` never becomes a folder ``https:``."""
    start = _STARTS_LIKE_AN_ADDRESS.match(text)
    if start is None:
        return None
    said = printable(text, ADDRESS_SHOWN)
    return (f'{said} starts like an address ({shown(start["scheme"] + ":")}), but this takes a local path; to '
            f"name a local file or folder whose name holds a colon, write ./{said}")
