"""Which environment variables the Function App's own code reads, found by reading the code.

The app's code is every top-level module and package that ``infra/package.py`` deploys, except the
library, which reads no app setting (see ``NOT_SCANNED``). In those files a name counts as read when
it is

- the key of a direct read: ``os.environ[...]``, ``os.environ.get(...)``, ``os.getenv(...)``, or
  ``.get``/``[...]`` on anything called ``env``/``environ``/``environment``; or
- any string constant shaped like a setting name (``EVALUATION_CONTAINER``, ``AZURE_SEARCH_ENDPOINT``,
  ``AzureWebJobsStorage``), wherever it appears: that catches helpers such as ``text("EVALUATION_BY")``
  and tables of names read in a loop, which ``app/settings.py`` may use.

A name built at run time (``f"EVALUATION_{x}"``) is not seen: write setting names out in full.
"""
from __future__ import annotations

import ast
import importlib.util
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

NOT_SCANNED = {
    "evaluation": "the library reads no app setting; settings are read once at the edge (app/settings.py) "
                  "and passed in. Its command line reads AZURE_STORAGE_CONNECTION_STRING for local use only",
}

SETTING_NAME = re.compile(r"[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+|AzureWebJobs[A-Za-z0-9_]+")
_ENV_OBJECTS = {"environ", "env", "environment"}


def _packager():
    spec = importlib.util.spec_from_file_location("infra_package", ROOT / "infra" / "package.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def app_sources(root: Path = ROOT) -> list[Path]:
    """The ``.py`` files of the deployed app that may read settings."""
    packager = _packager()
    files = packager.app_modules(root)
    for package in packager.app_packages(root):
        if package.name not in NOT_SCANNED:
            files += sorted(p for p in package.rglob("*.py") if "__pycache__" not in p.parts)
    return files


def _is_env_object(node: ast.AST) -> bool:
    if isinstance(node, ast.Name):
        return node.id in _ENV_OBJECTS
    if isinstance(node, ast.Attribute):
        return node.attr in _ENV_OBJECTS
    return False


def _direct_read_keys(tree: ast.AST) -> list[ast.AST]:
    keys = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and node.args:
            func = node.func
            if isinstance(func, ast.Attribute) and func.attr == "getenv":
                keys.append(node.args[0])
            elif isinstance(func, ast.Attribute) and func.attr in {"get", "pop", "setdefault"} \
                    and _is_env_object(func.value):
                keys.append(node.args[0])
        elif isinstance(node, ast.Subscript) and _is_env_object(node.value):
            keys.append(node.slice)
        elif isinstance(node, ast.Compare) and any(isinstance(op, (ast.In, ast.NotIn)) for op in node.ops) \
                and any(_is_env_object(c) for c in node.comparators):
            keys.append(node.left)
    return keys


def settings_read(files: list[Path] | None = None) -> dict[str, list[str]]:
    """setting name -> where it is read (``file:line``), over ``files`` (default: the app's sources)."""
    found: dict[str, list[str]] = {}
    for path in app_sources() if files is None else files:
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        where = path.relative_to(ROOT) if path.is_relative_to(ROOT) else path
        direct = {id(key) for key in _direct_read_keys(tree)}
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) \
                    and (id(node) in direct or SETTING_NAME.fullmatch(node.value)):
                found.setdefault(node.value, []).append(f"{where}:{node.lineno}")
    return found
