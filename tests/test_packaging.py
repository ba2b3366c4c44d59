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
    declared = set(tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["dependencies"])
    wanted = {line for line in requirement_lines(ROOT / "requirements.txt")
              if not any(line.startswith(name) for name in APP_ONLY)}

    assert declared == wanted


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
