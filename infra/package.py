"""Build the Function App's deployment package: the app's own files and nothing else.

    python3 infra/package.py [--out build/app.zip]

The zip holds ``host.json`` and ``requirements.txt`` at its root, every top-level module
(``function_app.py``, ``app_settings.py``) and every top-level package of the app (``evaluation/`` with
its data files, ``triggers/``, ``orchestrators/``, ``activities/``, ``api/``), without caches. No
dependency is in it: the remote build installs ``requirements.txt`` on Linux with the app's Python.
Publish it with ``az functionapp deployment source config-zip ... --build-remote true``.

What is not the app is named once, with the reason, in ``NOT_APP``; a new top-level package is in the
package unless it is added there.
"""
from __future__ import annotations

import argparse
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# Top-level folders that hold Python but are never deployed.
NOT_APP = {
    "tests": "tests run on a developer's machine and in CI",
    "bench": "benchmarks run on a developer's machine",
    "samples": "the sample corpus and golden file are uploaded by a person, not shipped in the app",
    "infra": "deployment tooling",
    "build": "build output",
}
# Files at the top level the Functions host needs besides the Python modules.
HOST_FILES = ("host.json", "requirements.txt")
# Never shipped, wherever they are: caches, and the local settings file that may hold a connection string.
SKIPPED_NAMES = {"__pycache__", "local.settings.json", ".DS_Store"}
SKIPPED_SUFFIXES = {".pyc", ".pyo"}


def app_packages(root: Path = ROOT) -> list[Path]:
    """Top-level folders holding Python that belong to the app, sorted by name."""
    return sorted(path for path in root.iterdir()
                  if path.is_dir() and not path.name.startswith((".", "_")) and path.name not in NOT_APP
                  and any(path.rglob("*.py")))


def app_modules(root: Path = ROOT) -> list[Path]:
    """Top-level ``*.py`` files of the app (``function_app.py``, ``app_settings.py``, ...)."""
    return sorted(path for path in root.glob("*.py") if not path.name.startswith((".", "_")))


def package_files(root: Path = ROOT) -> list[Path]:
    """Every file that goes into the package, as paths under ``root``."""
    files = [root / name for name in HOST_FILES] + app_modules(root)
    for package in app_packages(root):
        files += [path for path in package.rglob("*") if path.is_file() and not _skipped(path, root)]
    missing = [path.name for path in files if not path.is_file()]
    if missing:
        raise SystemExit(f"package: {', '.join(missing)} missing under {root}; run from a full checkout")
    return sorted(files)


def build(out: Path, root: Path = ROOT) -> list[str]:
    """Write the zip to ``out`` and return the names inside it."""
    out.parent.mkdir(parents=True, exist_ok=True)
    names = []
    with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for path in package_files(root):
            name = path.relative_to(root).as_posix()
            archive.write(path, name)
            names.append(name)
    return names


def _skipped(path: Path, root: Path) -> bool:
    parts = path.relative_to(root).parts
    return any(part in SKIPPED_NAMES for part in parts) or path.suffix in SKIPPED_SUFFIXES


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Build the Function App's deployment zip.")
    parser.add_argument("--out", type=Path, default=ROOT / "build" / "app.zip", help="zip to write")
    args = parser.parse_args(argv)
    names = build(args.out)
    print(f"{args.out}: {len(names)} files")
    return 0


if __name__ == "__main__":
    sys.exit(main())
