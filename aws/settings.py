"""The AWS flow's settings, read once from the Lambda environment.

The flow runs the Function App's steps (``app.steps``), so it reads the same ``EVALUATION_*`` settings
the same way (``app.settings.AppSettings``: targets, debounce, only/skip, grain, timing, shards,
re-timing, the golden file's size limit); its own are where its files are and what it starts:

- ``EVALUATION_BUCKET``: the S3 bucket holding ``<collection>/golden.jsonl`` and everything a run keeps.
- ``EVALUATION_STATE_MACHINE_ARN``: the state machine the trigger starts (the trigger's only).

Every one of them is set in ``infra/aws/template.yaml`` and listed in docs/aws.md (tests/aws check both).
"""
from __future__ import annotations

import functools
import os
from dataclasses import dataclass
from typing import Mapping

from app.settings import AppSettings, SettingsError


@dataclass(frozen=True)
class AwsSettings:
    bucket: str                      # EVALUATION_BUCKET
    state_machine_arn: str | None    # EVALUATION_STATE_MACHINE_ARN: set on the trigger only
    app: AppSettings                 # the EVALUATION_* settings both flows share

    @classmethod
    def from_environ(cls, environ: Mapping[str, str] | None = None) -> AwsSettings:
        env = os.environ if environ is None else environ
        bucket = env.get("EVALUATION_BUCKET", "").strip()
        if not bucket:
            raise SettingsError("EVALUATION_BUCKET is not set: set it to the S3 bucket that holds "
                                "<collection>/golden.jsonl (infra/aws/template.yaml sets it on every function)")
        return cls(bucket=bucket, state_machine_arn=env.get("EVALUATION_STATE_MACHINE_ARN", "").strip() or None,
                   app=AppSettings.from_environ(env))


@functools.cache
def current_settings() -> AwsSettings:
    """The flow's settings, read from the environment once per Lambda environment (tests clear the cache)."""
    return AwsSettings.from_environ()
