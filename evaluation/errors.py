"""The library's exceptions: one small hierarchy, so callers catch what they can act on.

Every message is a sentence a person can act on: it names the file, the line where there is one,
and the fix. The command line prints ``str(err)`` and nothing else.
"""
from __future__ import annotations


class EvaluationError(Exception):
    """Base of every error this library raises on purpose."""


class GoldenFileError(EvaluationError):
    """A golden file is missing, unreadable or has no question ready to run."""


class CorpusError(EvaluationError):
    """A corpus is missing or has rows that cannot be indexed; ``problems`` lists each one."""

    def __init__(self, message: str, *, problems: list | None = None) -> None:
        super().__init__(message)
        self.problems = list(problems or [])


class SearchIndexError(EvaluationError):
    """An embedded index folder is missing, stale or corrupt."""


class ModelError(EvaluationError):
    """A bundled model's files are missing or do not match their checksum."""


class StoreError(EvaluationError):
    """A run store cannot be opened, read or written, or a run id is not allowed."""


class UsageError(EvaluationError):
    """Arguments that do not fit together (the command line turns these into exit code 2)."""
