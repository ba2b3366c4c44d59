"""The library's old addresses (``evaluation.steps``, ``evaluation.targets``) stay for users' code and warn
when imported, naming the new place; nothing in this project imports them, so a reader following a call
from the app or the command line never passes through a star re-export."""
from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
OLD = {"evaluation.steps": "evaluation.run", "evaluation.targets": "evaluation.target_specs",
       "evaluation.chunking_eval": "evaluation.builds", "evaluation.matrix": "evaluation.builds"}
# The house's Python: the app, the library, the benchmarks, the tooling and the tests. The two old modules
# themselves are what is looked for; this file imports them on purpose.
SCANNED = ("function_app.py", "activities", "api", "app", "orchestrators", "triggers", "evaluation", "bench",
           "infra", "tests")
NOT_SCANNED = {ROOT / "evaluation" / "steps.py", ROOT / "evaluation" / "targets.py",
               ROOT / "evaluation" / "chunking_eval" / "__init__.py", ROOT / "evaluation" / "matrix" / "__init__.py",
               Path(__file__).resolve()}


def _python_files() -> list[Path]:
    files = []
    for name in SCANNED:
        path = ROOT / name
        files += [path] if path.is_file() else sorted(path.rglob("*.py"))
    return [p for p in files if p.resolve() not in NOT_SCANNED and "__pycache__" not in p.parts]


def _module_of(path: Path) -> list[str]:
    """``["evaluation", "run", "plan"]`` for evaluation/run/plan.py: where a relative import starts from."""
    return list(path.relative_to(ROOT).with_suffix("").parts)


def old_names_used(path: Path) -> list[str]:
    """``file:line old.module`` for every import of an old address in ``path`` (absolute, relative,
    ``from evaluation import steps``, or a module name handed to ``importlib.import_module``)."""
    found = []
    tree = ast.parse(path.read_text(encoding="utf-8"))
    here = _module_of(path)
    package = here if path.name == "__init__.py" else here[:-1]
    for node in ast.walk(tree):
        named: list[str] = []
        if isinstance(node, ast.Import):
            named = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = (package[:len(package) - (node.level - 1)] if node.level else []) + \
                (node.module.split(".") if node.module else [])
            named = [".".join(base)] + [".".join([*base, alias.name]) for alias in node.names]
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            named = [node.value]
        hits = sorted({old for name in named for old in OLD if name == old or name.startswith(old + ".")})
        found += [f"{path.relative_to(ROOT)}:{node.lineno} {old}" for old in hits]
    return found


def test_no_file_of_the_house_imports_an_old_address():
    used = [line for path in _python_files() for line in old_names_used(path)]
    assert used == [], "import these from their new places (" + ", ".join(f"{o} -> {n}" for o, n in OLD.items()) + \
        "):\n" + "\n".join(used)


def test_the_scan_sees_each_way_of_naming_an_old_address(tmp_path, monkeypatch):
    monkeypatch.setattr(sys.modules[__name__], "ROOT", tmp_path)
    (tmp_path / "evaluation" / "run").mkdir(parents=True)
    (tmp_path / "evaluation" / "run" / "plan.py").write_text("from ..targets import TargetSpec\n")
    (tmp_path / "activity.py").write_text("from evaluation import steps\nimport evaluation.steps\n"
                                          "def f():\n    importlib.import_module('evaluation.targets')\n"
                                          "from evaluation.run import plan_run\n")
    assert old_names_used(tmp_path / "evaluation" / "run" / "plan.py") == [
        "evaluation/run/plan.py:1 evaluation.targets"]
    assert old_names_used(tmp_path / "activity.py") == [
        "activity.py:1 evaluation.steps", "activity.py:2 evaluation.steps", "activity.py:4 evaluation.targets"]


def _fresh(code: str) -> dict:
    """What ``code`` (in a new interpreter at the repository's root, every warning recorded) prints as JSON."""
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True)
    return json.loads(run.stdout.strip().splitlines()[-1])


RECORDED = ("import importlib, json, pkgutil, sys, warnings\n"
            "warnings.simplefilter('always')\n"
            "with warnings.catch_warnings(record=True) as seen:\n"
            "    warnings.simplefilter('always')\n"
            "{body}\n"
            "print(json.dumps({{'warned': [str(w.message) for w in seen if issubclass(w.category, DeprecationWarning)]"
            ", 'loaded': sorted(m for m in sys.modules if m in {old}), 'extra': extra}}))")


def test_importing_the_app_and_every_library_module_warns_of_no_old_address():
    body = ("    import function_app, evaluation\n"
            # found on disk: pkgutil.walk_packages imports each package to look inside it, old ones too
            "    from pathlib import Path\n"
            "    names = ['.'.join(p.with_suffix('').parts).removesuffix('.__init__')\n"
            "             for p in sorted(Path('evaluation').rglob('*.py')) if '__pycache__' not in p.parts]\n"
            f"    old = {sorted(OLD)!r} + ['evaluation.__main__']\n"
            "    modules = [n for n in names if not any(n == o or n.startswith(o + '.') for o in old)]\n"
            "    for name in modules:\n"
            "        importlib.import_module(name)\n"
            "    extra = len(modules)")
    seen = _fresh(RECORDED.format(body=body, old=set(OLD)))
    assert seen["extra"] > 150  # every module of the library was imported, not a few
    assert seen["loaded"] == [] and seen["warned"] == []


@pytest.mark.parametrize("old", sorted(OLD))
def test_an_old_address_warns_naming_the_new_one_and_still_gives_its_names(old):
    new = OLD[old]
    body = (f"    import {old}\n"
            f"    import {new}\n"
            f"    public = getattr({new}, '__all__', None) or [n for n in dir({new}) if not n.startswith('_')\n"
            f"                                                 and not isinstance(getattr({new}, n), type(sys))]\n"
            f"    public = getattr({old}, '__all__', None) or public  # an old package names what it kept\n"
            f"    extra = [n for n in public if getattr({old}, n, None) is not getattr({new}, n)]")
    seen = _fresh(RECORDED.format(body=body, old=set(OLD)))
    assert len(seen["warned"]) == 1 and seen["warned"][0].startswith(f"{old} is ") and new in seen["warned"][0]
    assert seen["extra"] == []  # every public name the old place offers is the same object under the new one
