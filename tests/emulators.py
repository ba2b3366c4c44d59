"""The emulators the tests and the benches start on 127.0.0.1: where Azurite is installed, its development
account, and one way to run an emulator until a block ends (``conftest``'s fixtures; ``bench_structure
--walk``'s plan activity)."""
from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterator, NoReturn

AZURITE_CANDIDATES = (
    Path("/opt/azurite/node_modules/.bin/azurite-blob"),
    Path.home() / ".cache/azurite-3.37.0/node_modules/.bin/azurite-blob",
)
AZURITE_ARGUMENTS = ("--blobHost", "127.0.0.1", "--inMemoryPersistence", "--skipApiVersionCheck",
                     "--disableTelemetry", "--silent")
DEV_ACCOUNT = "devstoreaccount1"  # Azurite's published development account and key, nothing secret
DEV_KEY = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
# Node takes seconds to start on a busy 2-core machine (over 20 s at load 3.6 under `nice`): the
# deadline only bounds a broken install, so it is generous.
START_TIMEOUT_S = 90.0


class EmulatorError(RuntimeError):
    """An emulator did not start; the message holds the end of its log."""


@dataclass(frozen=True)
class Azurite:
    blob_endpoint: str  # http://127.0.0.1:<port>/devstoreaccount1

    @property
    def connection_string(self) -> str:
        return (f"DefaultEndpointsProtocol=http;AccountName={DEV_ACCOUNT};AccountKey={DEV_KEY};"
                f"BlobEndpoint={self.blob_endpoint};")

    def address(self, container: str, prefix: str = "") -> str:
        return "/".join(p for p in (self.blob_endpoint, container, prefix.strip("/")) if p)

    def new_container(self) -> str:
        """A fresh container (tests share one emulator, so each takes its own)."""
        from azure.storage.blob import BlobServiceClient

        name = f"t{uuid.uuid4().hex[:20]}"
        with BlobServiceClient.from_connection_string(self.connection_string) as service:
            service.create_container(name)
        return name


def find_azurite() -> tuple[str | None, str]:
    """The emulator's path, or None and why: AZURITE_BLOB, then the usual install folders, then PATH."""
    given = os.environ.get("AZURITE_BLOB")
    if given:
        if os.access(given, os.X_OK):
            return given, ""
        return None, f"AZURITE_BLOB={given} is not an executable file"
    for candidate in AZURITE_CANDIDATES:
        if os.access(candidate, os.X_OK):
            return str(candidate), ""
    found = shutil.which("azurite-blob")
    return found, "" if found else "Azurite not found: set AZURITE_BLOB or `npm install azurite@3.37.0` (see .ci/run)"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def answers(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5):
            return True
    except OSError:
        return False


def _refuse(message: str) -> NoReturn:
    raise EmulatorError(message)


@contextlib.contextmanager
def serving(name: str, argv: list[str], port: int, workspace: Path,
            fail: Callable[[str], NoReturn] = _refuse) -> Iterator[None]:
    """Run an emulator until the block ends: started in ``workspace`` (anything it writes stays there),
    waited for until 127.0.0.1:``port`` answers, stopped after; ``fail`` is given a sentence with the end of
    its log when it does not start (a test fails with it; by default an ``EmulatorError``)."""
    log_path = workspace / "server.log"
    with log_path.open("wb") as log:
        process = subprocess.Popen(argv, cwd=workspace, stdout=log, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + START_TIMEOUT_S
        while not answers(port):
            if process.poll() is not None or time.monotonic() > deadline:
                output = log_path.read_text(errors="replace")[-2000:]
                fail(f"{name} did not start on 127.0.0.1:{port} within {START_TIMEOUT_S:g} s:\n{output}")
            time.sleep(0.1)
        yield
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
