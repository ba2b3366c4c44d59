"""The code's structure, a tree against a named baseline commit: the table issue 50's closing note asks for.

    python3 bench/bench_structure.py --baseline 8210561            # this checkout against that commit
    python3 bench/bench_structure.py --baseline 8210561 --tree ../other-checkout

Rows, each counted over the product's code (``evaluation/``, the Function App's ``app/``, ``activities/``,
``api/``, ``triggers/``, ``orchestrators/``, ``aws/`` and ``function_app.py``; tests and benchmarks left out):

- modules and lines of Python;
- imports between the top-level parts of ``evaluation/`` (a package or a top module: ``engine``, ``run``,
  ``settings.py``, ...), as distinct (importer, imported) pairs, and the same between the app's parts;
- public functions over eight parameters outside ``evaluation/compat/`` (``tests/test_structure.py``'s rule);
- modules in mypy's ignore list (``ignore_errors = true`` in ``pyproject.toml``) and ``type: ignore`` comments;
- comment lines that narrate history, by a heuristic: a comment holding "used to", "previously", "before
  issue", "no longer", "was " or "now " (a comment should say why, not what happened before).

The baseline is read from git (``git archive <commit>`` into a temporary folder), so the checkout is untouched.
"""
from __future__ import annotations

import argparse
import ast
import io
import re
import subprocess
import sys
import tarfile
import tempfile
import tokenize
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
PRODUCT = ("evaluation", "app", "activities", "api", "triggers", "orchestrators", "aws")
APP_PARTS = ("app", "activities", "api", "triggers", "orchestrators")
MOST_PARAMETERS = 8
HISTORY = re.compile(r"used to|previously|before issue|no longer|\bwas |\bnow ", re.IGNORECASE)


def product_files(root: Path) -> list[Path]:
    files = [root / "function_app.py"] if (root / "function_app.py").exists() else []
    return files + sorted(p for part in PRODUCT if (root / part).is_dir() for p in (root / part).rglob("*.py"))


def evaluation_part(path: Path, root: Path) -> str:
    relative = path.relative_to(root / "evaluation")
    return relative.parts[0] if len(relative.parts) > 1 else relative.stem


def imported_parts(path: Path, root: Path) -> set[str]:
    """The top-level parts of ``evaluation`` that a module of it imports, relative or absolute imports alike."""
    package = list(path.relative_to(root / "evaluation").parent.parts)
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.level:
            base = package[:len(package) - (node.level - 1)] + (node.module.split(".") if node.module else [])
            found.update([base[0]] if base else [alias.name for alias in node.names])
        elif isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "evaluation":
            found.add(node.module.split(".")[1] if "." in node.module else node.names[0].name)
        elif isinstance(node, ast.Import):
            found.update(a.name.split(".")[1] for a in node.names if a.name.startswith("evaluation."))
    return found


def app_imports(path: Path) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(a.name.split(".")[0] for a in node.names)
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            found.add(node.module.split(".")[0])
    return found & set(APP_PARTS)


def wide_functions(path: Path) -> int:
    count = 0

    def walk(node: ast.AST, public: bool, method: bool) -> None:
        nonlocal count
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                args = child.args
                names = [a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)]
                n = len(names) - (1 if method and names[:1] in (["self"], ["cls"]) else 0)
                count += public and not child.name.startswith("_") and n > MOST_PARAMETERS
            elif isinstance(child, ast.ClassDef):
                walk(child, public and not child.name.startswith("_"), True)

    walk(ast.parse(path.read_text(encoding="utf-8")), True, False)
    return count


def comments(path: Path) -> list[str]:
    tokens = tokenize.generate_tokens(io.StringIO(path.read_text(encoding="utf-8")).readline)
    return [t.string for t in tokens if t.type == tokenize.COMMENT]


def mypy_ignored(root: Path) -> int:
    config = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8")).get("tool", {}).get("mypy", {})
    modules = set()
    for override in config.get("overrides", []):
        if override.get("ignore_errors"):
            names = override.get("module", [])
            modules.update([names] if isinstance(names, str) else names)
    return len(modules)


def structure(root: Path) -> dict[str, int]:
    files = product_files(root)
    library = [p for p in files if p.is_relative_to(root / "evaluation")]
    pairs = {(evaluation_part(p, root), part) for p in library for part in imported_parts(p, root)
             if part != evaluation_part(p, root)}
    app_pairs = {(p.relative_to(root).parts[0], part) for p in files if p.relative_to(root).parts[0] in APP_PARTS
                 for part in app_imports(p) if part != p.relative_to(root).parts[0]}
    notes = [c for p in files for c in comments(p)]
    return {
        "modules": len(files),
        "lines of Python": sum(len(p.read_text(encoding="utf-8").splitlines()) for p in files),
        "imports between evaluation/'s parts": len(pairs),
        "imports between app/, activities/, api/, triggers/, orchestrators/": len(app_pairs),
        "public functions over 8 parameters (outside compat/)": sum(
            wide_functions(p) for p in files if not p.is_relative_to(root / "evaluation" / "compat")),
        "mypy ignore list (modules)": mypy_ignored(root),
        "type: ignore comments": sum(len(re.findall(r"type:\s*ignore", c)) for c in notes),
        "comment lines narrating history": sum(bool(HISTORY.search(c)) for c in notes),
    }


def baseline_tree(commit: str, into: Path) -> Path:
    archive = subprocess.run(["git", "-C", str(REPO), "archive", commit], capture_output=True, check=True).stdout
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(into, filter="data")
    return into


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--baseline", required=True, help="the commit to compare with (as git names it: 8210561)")
    parser.add_argument("--tree", type=Path, default=REPO, help="the checkout to measure (default: this one)")
    args = parser.parse_args(argv)
    head = subprocess.run(["git", "-C", str(args.tree), "rev-parse", "--short", "HEAD"], capture_output=True,
                          text=True).stdout.strip() or "?"
    with tempfile.TemporaryDirectory() as folder:
        before = structure(baseline_tree(args.baseline, Path(folder)))
    after = structure(args.tree)
    width = max(map(len, before))
    print(f"structure of {args.tree} (HEAD {head}, with its uncommitted changes) against {args.baseline}")
    print(f"{'':{width}}  {args.baseline:>10}  {'this tree':>10}  {'change':>8}")
    for name, value in before.items():
        print(f"{name:{width}}  {value:>10}  {after[name]:>10}  {after[name] - value:>+8}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
