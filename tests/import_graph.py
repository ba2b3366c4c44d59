"""What a module imports, read from its source: one reading for the layout test (``test_layout.py``: no
arrow back up, no loop) and the structure bench (``bench/bench_structure.py``: imports between parts, the
layer order a walk climbs against)."""
from __future__ import annotations

import ast
from pathlib import Path
from typing import Collection


def module_name(path: Path, root: Path) -> str:
    """``evaluation.run.plan`` for ``root/evaluation/run/plan.py``; a package's ``__init__.py`` is the package."""
    parts = list(path.relative_to(root).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported_modules(path: Path, root: Path, modules: Collection[str]) -> set[str]:
    """Every module ``path`` (under ``root``) imports anywhere in it, a function's own imports too, as dotted
    names with relative imports resolved: ``from m import name`` gives ``m.name`` when ``modules`` holds it
    (a submodule), else ``m``; ``import a.b`` gives ``a.b``. Outside modules (``json``) come back as named."""
    name = module_name(path, root)
    package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = (package[:len(package) - (node.level - 1)] if node.level else []) + (
                node.module.split(".") if node.module else [])
            for alias in node.names:
                whole = ".".join([*base, alias.name])
                found.add(whole if whole in modules else ".".join(base))
    return found
