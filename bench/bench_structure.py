"""The code's structure, a tree against a named baseline commit: the table issue 50's closing note asks for.

    python3 bench/bench_structure.py --baseline 8210561            # this checkout against that commit
    python3 bench/bench_structure.py --baseline 8210561 --tree ../other-checkout
    python3 bench/bench_structure.py --walk                        # and the walks (below), on 8210561 too

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

``--walk`` adds the walk of two real calls, each in a subprocess of its own under ``sys.setprofile`` (and
``threading.setprofile``), on the baseline's code and on this tree's:

- the CLI's ``evaluate`` on the shipped sample, keyword setups only, ``--no-save`` (a keyword-only index of
  the sample is built first by the same code, outside the walk), ``--timed 10 --time-floor 10``: each setup
  times exactly ten searches, so the walk is the same from run to run (by default a setup stops timing
  once its median is known, after a number of searches that depends on the times measured);
- the app's plan activity (``activities.planning.plan_evaluation``) on that index published to Azurite and
  the sample's golden file kept as a save keeps it (Azurite from ``AZURITE_BLOB`` or ``.ci/run``'s install
  folder; without it this walk is left out, said so).

Counted over the product's modules (module bodies run at import are not the walk and are left out):

- calls: function calls whose callee is a project module (a generator or coroutine counted once, when it
  starts, not at each resumption); rooms: the distinct project modules entered;
- climbs: calls from one top-level part to another that sits above it: ``evaluation.<part>`` (a package or a
  top module; ``evaluation.compat.aliases`` its own part, as ``tests/test_layout.py`` places it), ``app``,
  ``activities``, ``api``, ``triggers``, ``orchestrators``, ``aws``. A part is above another when it imports
  it, directly or through other parts (every import statement of the tree, a function's own too): a climb
  is a lower part calling back into a higher one (a callback, a hook, a generator a lower part drives). The
  caller is the nearest project frame, so a call through the standard library (``sorted(key=)``,
  ``functools``) counts from the project code that made it;
- the modules entered most.
"""
from __future__ import annotations

import argparse
import ast
import contextlib
import dis
import hashlib
import inspect
import io
import json
import os
import re
import subprocess
import sys
import tarfile
import tempfile
import threading
import tokenize
import tomllib
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType
from typing import Any, Callable, Iterable, Iterator, Mapping

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests"))  # the tests' helpers: how imports are read (test_layout.py), the emulators
from emulators import (AZURITE_ARGUMENTS, DEV_ACCOUNT, Azurite, find_azurite,  # noqa: E402  (tests/ on the path first)
                       free_port, serving)
from import_graph import imported_modules, module_name  # noqa: E402  (tests/ on the path first)

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


def imported_parts(path: Path, root: Path, modules: set[str]) -> set[str]:
    """The top-level parts of ``evaluation`` that a module imports, relative or absolute imports alike."""
    return {m.split(".")[1] for m in imported_modules(path, root, modules) if m.startswith("evaluation.")}


def app_imports(path: Path, root: Path, modules: set[str]) -> set[str]:
    """The app's parts (``app``, ``activities``, ...) a module imports."""
    return {m.split(".")[0] for m in imported_modules(path, root, modules)} & set(APP_PARTS)


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
    modules: set[str] = set()
    for override in config.get("overrides", []):
        if override.get("ignore_errors"):
            names = override.get("module", [])
            modules.update([names] if isinstance(names, str) else names)
    return len(modules)


def structure(root: Path) -> dict[str, int]:
    files = product_files(root)
    modules = {module_name(p, root) for p in files}
    library = [p for p in files if p.is_relative_to(root / "evaluation")]
    pairs = {(evaluation_part(p, root), part) for p in library for part in imported_parts(p, root, modules)
             if part != evaluation_part(p, root)}
    app_pairs = {(p.relative_to(root).parts[0], part) for p in files if p.relative_to(root).parts[0] in APP_PARTS
                 for part in app_imports(p, root, modules) if part != p.relative_to(root).parts[0]}
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


# -- the walk: rooms and climbs (--walk) ----------------------------------------------------------------------

WALKS = {"cli": "the CLI's evaluate (sample, keyword setups, --no-save, ten timed searches)",
         "app": "the app's plan activity (sample, keyword setups, Azurite)"}
MOST_ENTERED = 5
TOP_LEVEL = (*PRODUCT, "function_app")
RESUMABLE = inspect.CO_GENERATOR | inspect.CO_COROUTINE | inspect.CO_ASYNC_GENERATOR
RESUME = dis.opmap.get("RESUME")  # 3.11+: its argument is 0 where a frame starts, more where it resumes


def part_of(module: str) -> str:
    """The top-level part a module sits in: ``evaluation.<package or top module>`` (``evaluation.compat.aliases``
    apart, the leaf the core's functions wear, as tests/test_layout.py places it), else its first name."""
    names = module.split(".")
    if names[0] != "evaluation":
        return names[0]
    return "evaluation.compat.aliases" if names[1:3] == ["compat", "aliases"] else ".".join(names[:2])


def part_imports(root: Path) -> dict[str, set[str]]:
    """Per top-level part of the product (``part_of``), the other parts its modules import."""
    files = product_files(root)
    modules = {module_name(p, root) for p in files}
    graph: dict[str, set[str]] = {}
    for path in files:
        mine = part_of(module_name(path, root))
        graph.setdefault(mine, set()).update(part_of(m) for m in imported_modules(path, root, modules)
                                             if m.split(".")[0] in TOP_LEVEL)
        graph[mine].discard(mine)
    return graph


def parts_above(imports: Mapping[str, Iterable[str]]) -> dict[str, set[str]]:
    """Per part, the parts above it: every part that imports it, directly or through other parts."""
    above: dict[str, set[str]] = {part: set() for part in imports}
    for top in imports:
        reached: set[str] = set()
        stack = list(imports[top])
        while stack:
            part = stack.pop()
            if part not in reached:
                reached.add(part)
                stack.extend(imports.get(part, ()))
        for part in reached:
            above.setdefault(part, set()).add(top)
    return above


@dataclass(frozen=True)
class Walk:
    """One walk counted: ``calls`` into project modules, ``rooms`` (the modules entered), ``climbs`` (calls up
    the layer order), and per module the calls into it (``entered``), per (caller part, callee part) the climbs."""

    calls: int
    rooms: int
    climbs: int
    entered: Counter[str] = field(default_factory=Counter)
    climbing: Counter[tuple[str, str]] = field(default_factory=Counter)


def count_walk(edges: Iterable[tuple[str | None, str, int]], imports: Mapping[str, Iterable[str]]) -> Walk:
    """``edges``: (caller module or None when no project code made the call, callee module, calls), as
    ``trace`` gives them; ``imports``: ``part_imports``. A climb is a call into another part above the
    caller's (``parts_above``)."""
    above = parts_above(imports)
    entered: Counter[str] = Counter()
    climbing: Counter[tuple[str, str]] = Counter()
    for caller, callee, calls in edges:
        entered[callee] += calls
        if caller is None:
            continue
        mine, theirs = part_of(caller), part_of(callee)
        if theirs != mine and theirs in above.get(mine, set()):
            climbing[(mine, theirs)] += calls
    return Walk(calls=sum(entered.values()), rooms=len(entered), climbs=sum(climbing.values()), entered=entered,
                climbing=climbing)


def trace(root: Path, run: Callable[[], Any]) -> tuple[Any, list[tuple[str | None, str, int]]]:
    """``run()`` under ``sys.setprofile`` (and ``threading.setprofile`` for the threads it starts): what it
    returned, and every function call into a module of the product under ``root`` as (caller module, callee
    module, calls). The caller is the nearest frame of the product's code (None: none on the stack); a
    module's body run at import is left out."""
    top = str(root.resolve())
    names: dict[str, str | None] = {}
    counts: Counter[tuple[str | None, str]] = Counter()

    def module(filename: str) -> str | None:
        if filename not in names:
            path = Path(os.path.abspath(filename))
            inside = filename.endswith(".py") and path.is_relative_to(top)
            relative = path.relative_to(top) if inside else None
            names[filename] = (module_name(path, Path(top)) if relative is not None and (
                relative.parts[0] in PRODUCT or relative.as_posix() == "function_app.py") else None)
        return names[filename]

    def profile(frame: FrameType, event: str, arg: Any) -> None:
        if event != "call" or frame.f_code.co_name == "<module>" or not started(frame):
            return
        callee = module(frame.f_code.co_filename)
        if callee is None:
            return
        caller, back = None, frame.f_back
        while back is not None and caller is None:
            caller, back = module(back.f_code.co_filename), back.f_back
        counts[(caller, callee)] += 1

    threading.setprofile(profile)
    sys.setprofile(profile)
    try:
        result = run()
    finally:
        sys.setprofile(None)
        threading.setprofile(None)
    return result, [(caller, callee, n) for (caller, callee), n in sorted(counts.items(), key=str)]


def started(frame: FrameType) -> bool:
    """Whether a profiler's "call" is a call, not a generator or coroutine resumed (a call each resumption)."""
    code = frame.f_code
    if not code.co_flags & RESUMABLE or RESUME is None:
        return True
    at = frame.f_lasti
    return code.co_code[at] != RESUME or code.co_code[at + 1] == 0


def _unwrapped(decorated: Any) -> Callable[..., Any]:
    """The function a Functions decorator registered, as the worker calls it."""
    return decorated.build().get_user_function()


def _app_job(root: Path, index: Path, endpoint: str, scratch: Path) -> dict[str, Any]:
    """The plan activity's input as a save gives it: the sample's golden file saved and kept, the index
    published, the app's settings in the environment (keyword setups only, as the CLI's walk)."""
    from azure.storage.blob import BlobServiceClient

    emulator = Azurite(endpoint)
    connection, container = emulator.connection_string, emulator.new_container()
    golden = (root / "samples" / "golden.jsonl").read_bytes()
    with BlobServiceClient.from_connection_string(connection) as service:
        service.get_container_client(container).upload_blob("docs/golden.jsonl", golden)
    for name in ("EVALUATION_STORAGE_ACCOUNT_URL", "EVALUATION_SKIP", "EVALUATION_TIMED", "EVALUATION_TIME_BUDGET",
                 "EVALUATION_SHARD_SECONDS", "EVALUATION_SHARD_QUESTIONS", "AZURE_SEARCH_ENDPOINT",
                 "EVALUATION_JUDGE_DEPLOYMENT", "EVALUATION_JUDGE_MAX_COST", "EVALUATION_JUDGE_PAIRS"):
        os.environ.pop(name, None)
    os.environ.update({
        "EVALUATION_STORAGE_CONNECTION_STRING": connection, "EVALUATION_CONTAINER": container,
        "EVALUATION_INDEX_CACHE": str(scratch / "index-cache"), "EVALUATION_ONLY": "keyword",
        "EVALUATION_TARGETS": json.dumps({"docs": [{"name": "local", "engine": "embedded",
                                                    "index": f"{endpoint}/{container}/indexes/docs"}]})})
    from evaluation.engine.published import publish_index

    publish_index(index, f"{endpoint}/{container}/indexes/docs", connection_string=connection)
    from activities.golden import keep_golden

    sha256 = hashlib.sha256(golden).hexdigest()
    kept = _unwrapped(keep_golden)({"collection": "docs", "sha256": sha256})
    if not kept.get("kept"):
        raise SystemExit(f"keep_golden did not keep the sample's golden file: {kept}")
    return {"collection": "docs", "sha256": sha256, "run_id": "20261205T000000000Z-abcdef",
            "created_at": "2026-12-05T00:00:00+00:00", "state": None}


def walk_child(kind: str, root: Path, out: Path, endpoint: str | None) -> int:
    """One walk in this process (``--walk`` starts one per walk and tree): the tree's own code builds a
    keyword-only index of the sample, then the walk runs traced; its edges are written to ``out``."""
    root = root.resolve()
    sys.path.insert(0, str(root))
    os.chdir(root)
    import evaluation
    from evaluation.engine.index import IndexSettings, build_index

    if not Path(evaluation.__file__).resolve().is_relative_to(root):
        raise SystemExit(f"evaluation was imported from {evaluation.__file__}, not from {root}")
    with tempfile.TemporaryDirectory() as folder:
        scratch = Path(folder)
        index = scratch / "sample-keyword"
        build_index(root / "samples" / "corpus.jsonl", index, IndexSettings(models=()))
        if kind == "cli":
            from evaluation.cli import main

            argv = ["evaluate", "--index", str(index), "--golden", str(root / "samples" / "golden.jsonl"),
                    "--only", "keyword", "--no-save", "--quiet", "--timed", "10", "--time-floor", "10"]
            with contextlib.redirect_stdout(io.StringIO()):
                code, edges = trace(root, lambda: main(argv))
            if code:
                raise SystemExit(f"evaluate exited {code} on {root}")
        else:
            if endpoint is None:
                raise SystemExit("the app's walk needs --blob-endpoint (Azurite)")
            job = _app_job(root, index, endpoint, scratch)
            from activities.planning import plan_evaluation

            answer, edges = trace(root, lambda: _unwrapped(plan_evaluation)(job))
            if "refused" in answer:
                raise SystemExit(f"the plan activity refused the run on {root}: {answer['refused']}")
    out.write_text(json.dumps({"edges": edges}), encoding="utf-8")
    return 0


@contextlib.contextmanager
def azurite() -> Iterator[str | None]:
    """Azurite's blob endpoint on a free port for as long as the block runs (None, said on stderr, when it
    is not installed: AZURITE_BLOB, .ci/run's folder, or azurite-blob on PATH)."""
    binary, why = find_azurite()
    if binary is None:
        print(f"{why}: the app's walk is left out", file=sys.stderr)
        yield None
        return
    port = free_port()
    argv = [binary, *AZURITE_ARGUMENTS, "--blobPort", str(port)]
    with tempfile.TemporaryDirectory() as workspace, serving("Azurite", argv, port, Path(workspace)):
        yield f"http://127.0.0.1:{port}/{DEV_ACCOUNT}"


def walks(root: Path, endpoint: str | None) -> dict[str, Walk]:
    """Each walk of ``WALKS`` on the tree at ``root``, in a subprocess of its own, counted against the
    tree's own imports (the app's left out without Azurite)."""
    imports = part_imports(root)
    found = {}
    for kind in WALKS:
        if kind == "app" and endpoint is None:
            continue
        with tempfile.TemporaryDirectory() as folder:
            out = Path(folder) / "edges.json"
            done = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--walk-child", kind, "--tree",
                                   str(root), "--out", str(out), *(["--blob-endpoint", endpoint] if endpoint else [])],
                                  capture_output=True, text=True)
            if done.returncode:
                raise SystemExit(f"the walk of {WALKS[kind]} on {root} failed:\n{done.stderr[-3000:]}")
            edges = json.loads(out.read_text(encoding="utf-8"))["edges"]
        found[kind] = count_walk([(caller, callee, n) for caller, callee, n in edges], imports)
    return found


def print_walks(baseline: str, before: Mapping[str, Walk], after: Mapping[str, Walk]) -> None:
    rows: tuple[tuple[str, Callable[[Walk], int]], ...] = (
        ("rooms (project modules entered)", lambda walk: walk.rooms),
        ("climbs (calls up the layer order)", lambda walk: walk.climbs),
        ("calls into project modules", lambda walk: walk.calls),
        # the modules issue 50 counted: the plan made (run/plan.py) and the typed plan read (run/planned.py)
        ("calls into evaluation.run.plan", lambda walk: walk.entered["evaluation.run.plan"]),
        ("calls into evaluation.run.planned", lambda walk: walk.entered["evaluation.run.planned"]))
    title = "walks, each traced in a subprocess (sys.setprofile)"
    width = max(len(title), *(len(name) + 2 for name, _ in rows))
    print(f"\n{title:{width}}  {baseline:>10}  {'this tree':>10}  {'change':>8}")
    for kind, words in WALKS.items():
        if kind not in before or kind not in after:
            continue
        print(words)
        for name, count in rows:
            old, new = count(before[kind]), count(after[kind])
            print(f"  {name:{width - 2}}  {old:>10}  {new:>10}  {new - old:>+8}")
    for label, counted in ((baseline, before), ("this tree", after)):
        for kind, walk in counted.items():
            most = ", ".join(f"{m} {n}" for m, n in walk.entered.most_common(MOST_ENTERED))
            climbs = ", ".join(f"{a} -> {b} {n}" for (a, b), n in walk.climbing.most_common(3)) or "none"
            print(f"{label}, {kind}: entered most: {most}; climbs: {climbs}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--baseline", default="8210561",
                        help="the commit to compare with, as git names it (default 8210561: before issue 50)")
    parser.add_argument("--tree", type=Path, default=REPO, help="the checkout to measure (default: this one)")
    parser.add_argument("--walk", action="store_true",
                        help="also walk the CLI's evaluate and the app's plan activity on both (rooms, climbs)")
    parser.add_argument("--walk-child", choices=sorted(WALKS), help=argparse.SUPPRESS)  # one walk, in its process
    parser.add_argument("--out", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--blob-endpoint", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.walk_child:
        return walk_child(args.walk_child, args.tree, args.out, args.blob_endpoint)
    head = subprocess.run(["git", "-C", str(args.tree), "rev-parse", "--short", "HEAD"], capture_output=True,
                          text=True).stdout.strip() or "?"
    walked_before: dict[str, Walk] = {}
    walked_after: dict[str, Walk] = {}
    with tempfile.TemporaryDirectory() as folder, (azurite() if args.walk else contextlib.nullcontext()) as blob:
        old = baseline_tree(args.baseline, Path(folder))
        before = structure(old)
        if args.walk:
            walked_before, walked_after = walks(old, blob), walks(args.tree, blob)
    after = structure(args.tree)
    width = max(map(len, before))
    print(f"structure of {args.tree} (HEAD {head}, with its uncommitted changes) against {args.baseline}")
    print(f"{'':{width}}  {args.baseline:>10}  {'this tree':>10}  {'change':>8}")
    for name, value in before.items():
        print(f"{name:{width}}  {value:>10}  {after[name]:>10}  {after[name] - value:>+8}")
    if args.walk:
        print_walks(args.baseline, walked_before, walked_after)
    return 0


if __name__ == "__main__":
    sys.exit(main())
