"""Files, in two parts: ``disk`` does things to a file (hash it, lock it, claim it, read it without
waiting on a pipe, write it whole) for the engine, the store, the command line and the app alike;
``outputs`` is the rule for which files a command may write at all, checked before any work
(``check_outputs``, an ``OutputKind`` per kind of file the tool writes).

Bottom layer: imports nothing of the library but its errors. Import from here; every name the one
``files`` module had is here.
"""
from __future__ import annotations

from ..errors import NotAFile  # noqa: F401  (its name before the naming rule, importable here as before)
from .disk import (CLAIM_SUFFIX, TEMP_SUFFIX, claimed, locked, read_input, same_file, sha256_file, temp_prefix,
                   try_writing_in, write_whole)
from .outputs import HEAD_BYTES, Input, Output, OutputKind, Replace, check_outputs

__all__ = ["CLAIM_SUFFIX", "HEAD_BYTES", "Input", "Output", "OutputKind", "Replace", "TEMP_SUFFIX", "check_outputs",
           "claimed", "locked", "read_input", "same_file", "sha256_file", "temp_prefix", "try_writing_in",
           "write_whole"]
