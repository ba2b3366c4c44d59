"""The library's shape: packages import only lower ones, and ``import evaluation`` stays light."""
from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

import evaluation

ROOT = Path(evaluation.__file__).parent
# Lower first. A module may import its own package and anything on an earlier line, never a later one.
LAYERS = [
    {"errors", "target", "jsonl", "lazy", "progress", "unreachable", "sample"},
    {"store"},
    {"engine"},
    {"azure_search"},  # reuses the engine's bundled models and cross-encoder
    {"golden"},
    {"scoring"},
    {"report"},
    {"answers"},
    {"targets"},
    {"steps"},
    {"evaluate"},
    {"cli", "__main__"},
]
LEVEL = {name: level for level, names in enumerate(LAYERS) for name in names}


def _part(module_path: Path) -> str:
    """The top-level part of ``evaluation`` a file belongs to: a package, or a module at the top."""
    relative = module_path.relative_to(ROOT)
    return relative.parts[0] if len(relative.parts) > 1 else relative.stem


def _imported_parts(path: Path) -> set[str]:
    """Top-level parts of ``evaluation`` that ``path`` imports (relative or absolute)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = path.relative_to(ROOT).parent.parts
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = list(package[:len(package) - (node.level - 1)])
                target = base + (node.module.split(".") if node.module else [])
                names = [target + [alias.name] for alias in node.names] if not target else [target]
            elif node.module and node.module.split(".")[0] == "evaluation":
                names = [node.module.split(".")[1:] or [alias.name for alias in node.names][:1]]
            else:
                continue
            found.update(name[0] for name in names if name)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                parts = alias.name.split(".")
                if parts[0] == "evaluation" and len(parts) > 1:
                    found.add(parts[1])
    return found


def test_every_part_of_the_library_has_a_layer():
    parts = {_part(p) for p in ROOT.rglob("*.py") if p.name != "__init__.py" or p.parent != ROOT}
    assert parts - set(LEVEL) == set()


@pytest.mark.parametrize("path", sorted(p for p in ROOT.rglob("*.py") if p.parent != ROOT or p.name != "__init__.py"),
                         ids=lambda p: str(p.relative_to(ROOT)))
def test_no_module_imports_a_higher_layer(path):
    mine = LEVEL[_part(path)]
    higher = {part for part in _imported_parts(path) if LEVEL.get(part, -1) > mine}
    assert higher == set(), f"{path.relative_to(ROOT)} imports {sorted(higher)}, which sit above it"


def test_the_layer_check_sees_relative_and_absolute_imports(tmp_path):
    assert _imported_parts(ROOT / "golden" / "scan.py") >= {"errors", "store"}
    assert _imported_parts(ROOT / "cli" / "evaluate_cmd.py") >= {"evaluate", "scoring", "errors"}
    assert _imported_parts(ROOT / "cli" / "common.py") >= {"engine", "errors"}


def test_importing_the_library_loads_no_model_runtime_search_engine_or_azure_sdk():
    code = ("import evaluation, evaluation.golden, evaluation.store, evaluation.engine, evaluation.cli, "
            "evaluation.azure_search, evaluation.answers, evaluation.steps, sys;"
            "print(sorted(m for m in sys.modules if m.split('.')[0] in {'onnxruntime','bm25s','azure','httpx'}))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_every_public_name_resolves_and_is_listed():
    for name in evaluation.__all__:
        assert getattr(evaluation, name) is not None, name
    assert {"evaluate", "plan_run", "run_setup", "assemble_report", "read_golden", "check_golden",
            "golden_template", "save_questions", "open_store", "EmbeddedTarget", "build_index", "open_index",
            "Target", "Setup", "Hit", "EvaluationError", "StoreError"} <= set(evaluation.__all__)
    with pytest.raises(AttributeError):
        evaluation.not_a_name  # noqa: B018


def test_evaluate_stays_the_function_after_its_module_is_imported():
    code = ("import evaluation.evaluate, evaluation.cli.evaluate_cmd, evaluation;"
            "print(callable(evaluation.evaluate) and evaluation.evaluate.__name__)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "evaluate"
