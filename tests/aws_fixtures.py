"""The AWS flow against moto on 127.0.0.1 (S3 and Step Functions), for the flow and trigger tests: a
bucket of its own, the flow's settings, the state machine of infra/aws/template.yaml registered in
moto's Step Functions, and the local executor that runs its executions through the handlers."""
from __future__ import annotations

import hashlib
import json
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote_plus

import pytest

from step_functions import LocalStepFunctions, load_template, runner_from_template, state_machine

ROLE = "arn:aws:iam::123456789012:role/local-evaluate-golden"


@dataclass
class AwsFlow:
    """One test's flow: its bucket, moto's Step Functions with the template's state machine, the executor."""

    s3: Any  # conftest.S3Emulator
    bucket: str
    state_machine_arn: str
    stepfunctions: Any
    host: LocalStepFunctions

    def index_address(self, name: str = "docs") -> str:
        return f"s3://{self.bucket}/indexes/{name}"

    def save(self, path: str, data: bytes) -> str:
        return self.s3.client().put_object(Bucket=self.bucket, Key=path, Body=data)["ETag"]

    def read(self, path: str) -> bytes:
        return self.s3.client().get_object(Bucket=self.bucket, Key=path)["Body"].read()

    def delete(self, path: str) -> None:
        self.s3.client().delete_object(Bucket=self.bucket, Key=path)

    def names(self, prefix: str = "") -> list[str]:
        pages = self.s3.client().get_paginator("list_objects_v2").paginate(Bucket=self.bucket, Prefix=prefix)
        return sorted(item["Key"] for page in pages for item in page.get("Contents") or ())

    def event(self, path: str, *, name: str = "ObjectCreated:Put", bucket: str | None = None) -> dict[str, Any]:
        """The S3 notification Lambda receives for ``path`` (the key URL-encoded, as S3 sends it)."""
        return {"Records": [{
            "eventVersion": "2.1", "eventSource": "aws:s3", "awsRegion": "us-east-1",
            "eventTime": "2026-12-01T09:00:00.000Z", "eventName": name,
            "s3": {"s3SchemaVersion": "1.0", "configurationId": "GoldenSaved",
                   "bucket": {"name": bucket or self.bucket, "arn": f"arn:aws:s3:::{bucket or self.bucket}"},
                   "object": {"key": quote_plus(path), "size": 1, "eTag": "0" * 32,
                              "sequencer": "0062E99A88DC407460"}}}]}

    def deliver(self, path: str = "docs/golden.jsonl", **kwargs: Any) -> dict[str, Any]:
        from aws.trigger import golden_saved

        return golden_saved(self.event(path, **kwargs), None)

    def save_and_deliver(self, data: bytes, path: str = "docs/golden.jsonl") -> str:
        self.save(path, data)
        self.deliver(path)
        return hashlib.sha256(data).hexdigest()

    def executions(self) -> list[dict[str, Any]]:
        return self.stepfunctions.list_executions(stateMachineArn=self.state_machine_arn)["executions"]

    def reports(self, collection: str = "docs") -> list[dict[str, Any]]:
        return [json.loads(self.read(name)) for name in self.names(f"{collection}/retrieval/runs/")
                if name.endswith("/report.json")]

    def outcomes(self) -> list[str]:
        return sorted(run.output["outcome"] for run in self.host.runs.values() if run.output)

    def ran(self, handler: str) -> int:
        return sum(1 for _, name, _ in self.host.runner.calls if name == handler)


def clear_caches() -> None:
    from app import settings as app_settings
    from aws import settings as aws_settings
    from aws import storage as aws_storage

    aws_settings.current_settings.cache_clear()
    aws_storage.s3.cache_clear()
    app_settings.current_settings.cache_clear()


@pytest.fixture
def aws_flow(s3, monkeypatch, tmp_path) -> Any:
    """The flow's settings (its only environment) pointing at a fresh bucket, and the state machine."""
    import boto3

    bucket = s3.new_bucket()
    monkeypatch.setenv("AWS_ENDPOINT_URL_SFN", s3.endpoint)  # moto's server answers Step Functions too
    stepfunctions = boto3.client("stepfunctions", endpoint_url=s3.endpoint, region_name="us-east-1",
                                 aws_access_key_id="testing", aws_secret_access_key="testing")
    definition, _ = state_machine(load_template())
    name = f"local-evaluate-golden-{uuid.uuid4().hex[:8]}"
    arn = stepfunctions.create_state_machine(name=name, definition=json.dumps(definition),
                                             roleArn=ROLE)["stateMachineArn"]
    monkeypatch.setenv("EVALUATION_BUCKET", bucket)
    monkeypatch.setenv("EVALUATION_STATE_MACHINE_ARN", arn)
    monkeypatch.setenv("EVALUATION_INDEX_CACHE", str(tmp_path / "index-cache"))
    monkeypatch.setenv("EVALUATION_TARGETS", json.dumps(
        {"docs": [{"name": "local", "engine": "embedded", "index": f"s3://{bucket}/indexes/docs"}]}))
    for setting in ("EVALUATION_ONLY", "EVALUATION_SKIP", "EVALUATION_TIMED", "EVALUATION_TIME_BUDGET",
                    "EVALUATION_DEBOUNCE_SECONDS", "EVALUATION_SHARD_SECONDS", "EVALUATION_SHARD_QUESTIONS",
                    "EVALUATION_STORAGE_ACCOUNT_URL", "EVALUATION_STORAGE_CONNECTION_STRING", "AZURE_SEARCH_ENDPOINT"):
        monkeypatch.delenv(setting, raising=False)
    clear_caches()
    runner = runner_from_template(executions_arn=arn.replace(":stateMachine:", ":execution:"))
    yield AwsFlow(s3, bucket, arn, stepfunctions, LocalStepFunctions(stepfunctions, runner, arn))
    clear_caches()


def publish_fake_index(flow: AwsFlow, folder: Path, name: str, fingerprint: str) -> str:
    """Publish a folder holding only a manifest: enough for ``target_state`` (no model needed)."""
    from evaluation.engine.published import publish_index

    folder.mkdir(parents=True, exist_ok=True)
    (folder / "manifest.json").write_text(json.dumps({"format": 1, "fingerprint": fingerprint}))
    publish_index(folder, flow.index_address(name))
    return flow.index_address(name)
