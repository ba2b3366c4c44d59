"""``pip install .`` gives the library and ``retrieval-eval`` anywhere (issue 23): the wheel holds every
module and the golden file's schema, names its run-time dependencies (the pins of requirements.txt),
and its script is the command line's entry point."""
from __future__ import annotations

import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
APP_ONLY = {"azure-functions", "azure-functions-durable", "PyJWT"}  # the Function App's, not the library's


def requirement_lines(path: Path) -> set[str]:
    return {line.split("#", 1)[0].strip() for line in path.read_text(encoding="utf-8").splitlines()
            if line.split("#", 1)[0].strip() and not line.startswith("-")}


def test_the_package_declares_every_run_time_requirement_but_the_apps_own():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    declared, azure = set(project["dependencies"]), set(project["optional-dependencies"]["azure"])
    wanted = {line for line in requirement_lines(ROOT / "requirements.txt")
              if not any(line.startswith(name) for name in APP_ONLY)}

    # the library runs locally without the Azure SDKs: they are its "azure" extra, and the app installs them
    assert declared | azure == wanted and not declared & azure
    assert not any(line.startswith("azure") for line in declared)
    assert project["optional-dependencies"]["s3"] == ["boto3>=1.34,<2"]


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> zipfile.ZipFile:
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--no-build-isolation",
                    "--wheel-dir", str(out), str(ROOT)], check=True, capture_output=True, timeout=300)
    (built,) = out.glob("*.whl")
    return zipfile.ZipFile(built)


def test_the_wheel_holds_every_module_and_the_schema(wheel):
    names = set(wheel.namelist())
    modules = {str(p.relative_to(ROOT)) for p in (ROOT / "evaluation").rglob("*.py")}

    assert modules <= names
    assert "evaluation/golden/golden_row.schema.json" in names
    assert not any(n.startswith(("tests/", "bench/", "activities/")) for n in names)


def test_the_wheels_script_is_the_command_lines_entry(wheel):
    (points,) = [n for n in wheel.namelist() if n.endswith("entry_points.txt")]
    text = wheel.read(points).decode("utf-8")

    assert "retrieval-eval = evaluation.cli:entry" in text


def test_the_wheel_is_typed_and_licensed(wheel):
    names = set(wheel.namelist())
    (metadata,) = [n for n in names if n.endswith(".dist-info/METADATA")]
    text = wheel.read(metadata).decode("utf-8")

    assert "evaluation/py.typed" in names
    assert "License: Apache-2.0" in text and "Classifier: License :: OSI Approved :: Apache Software License" in text
    assert "Provides-Extra: azure" in text and "Provides-Extra: s3" in text
    assert (ROOT / "LICENSE").read_text(encoding="utf-8").lstrip().startswith("Apache License")


# Run with the Azure SDKs and boto3 made unimportable, as a plain `pip install .` leaves them out.
WITHOUT_EXTRAS = """
import importlib.abc, sys
class NoCloud(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in ("azure", "msal", "boto3", "botocore"):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
sys.meta_path.insert(0, NoCloud())
for name in [m for m in sys.modules if m.split(".")[0] in ("azure", "boto3")]:
    del sys.modules[name]
"""


def _run_without_extras(code: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", WITHOUT_EXTRAS + code], cwd=cwd, capture_output=True, text=True,
                          timeout=600, env={**__import__("os").environ, "PYTHONPATH": str(ROOT)})


def test_the_library_runs_a_local_evaluation_without_the_azure_sdks_or_boto3(tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "keys.md").write_text("# Keys\n\nSigning keys are rotated every ninety days.\n", encoding="utf-8")
    (docs / "backup.md").write_text("# Backups\n\nBackups are kept for thirty days.\n", encoding="utf-8")
    (tmp_path / "golden.jsonl").write_text('{"question": "How often are keys rotated?", "expected": ["keys.md"]}\n',
                                           encoding="utf-8")
    done = _run_without_extras(
        "from evaluation.cli import main\n"
        "sys.exit(main(['evaluate', '--corpus', 'docs', '--golden', 'golden.jsonl', '--models', 'hash', '--only', "
        "'keyword', '--save-to', 'runs', '--quiet', '--timed', '6', '--time-floor', '6']))", tmp_path)

    assert done.returncode == 0, done.stderr[-2000:]
    assert "Saved as run" in done.stdout and (tmp_path / "runs").is_dir()


@pytest.mark.parametrize("code, extra", [
    ("from evaluation.azure_search import AzureSearchTarget", "azure"),
    ("from evaluation.store import open_store; open_store('https://acct.blob.core.windows.net/runs').ids()", "azure"),
    ("from evaluation.store import open_store; open_store('s3://bucket/runs').ids()", "s3"),
])
def test_a_command_that_needs_an_extra_says_which_and_how_to_install_it(tmp_path, code, extra):
    done = _run_without_extras(
        "from evaluation.errors import EvaluationError\n"
        f"try:\n    {code}\nexcept EvaluationError as err:\n    print(err)\nelse:\n    print('no error')", tmp_path)

    assert f"pip install 'retrieval-evaluation[{extra}]'" in done.stdout, done.stdout + done.stderr[-2000:]
