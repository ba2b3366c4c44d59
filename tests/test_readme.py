"""The README's first two commands stay true: the main job parses and its files exist; CI runs the tests."""
from __future__ import annotations

import shlex
from pathlib import Path

from evaluation.cli import build_parser

ROOT = Path(__file__).resolve().parent.parent


def readme_commands() -> list[str]:
    block = (ROOT / "README.md").read_text(encoding="utf-8").split("```bash", 1)[1].split("```", 1)[0]
    return [line for line in block.splitlines() if line.strip() and not line.startswith("#")]


def test_the_main_job_command_parses_and_names_files_the_repo_ships():
    main_job = readme_commands()[0]
    assert main_job.startswith("python3 -m pip install -r requirements.txt && python3 -m evaluation evaluate ")
    words = shlex.split(main_job.split("&&", 1)[1])[3:]
    args = build_parser().parse_args(words)
    assert (ROOT / args.corpus).is_file() and (ROOT / args.golden).is_file()


def test_the_test_command_is_what_ci_runs():
    assert readme_commands()[1] == "bash .ci/run"
    assert "python3 -m pytest -q" in (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert "python3 -m pytest -q)" in (ROOT / "README.md").read_text(encoding="utf-8").splitlines()[6]


def test_ci_runs_ruff_and_mypy_before_the_tests_and_the_readme_says_so():
    ci = [line.strip() for line in (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()]
    assert ci.index("python3 -m ruff check .") < ci.index("python3 -m pytest -q")
    assert ci.index("python3 -m mypy") < ci.index("python3 -m pytest -q")
    said = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()[6]
    assert said == "# (python3 -m ruff check . && python3 -m mypy && python3 -m pytest -q):"


def test_the_library_example_uses_public_names_with_arguments_they_take():
    import ast
    import inspect

    import evaluation

    text = (ROOT / "README.md").read_text(encoding="utf-8")
    snippet = text.split("## Using the library", 1)[1].split("```python", 1)[1].split("```", 1)[0]
    tree = ast.parse(snippet)
    imported = {
        alias.name
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and node.module == "evaluation"
        for alias in node.names
    }
    assert imported and imported <= set(evaluation.__all__)
    calls = [node for node in ast.walk(tree) if isinstance(node, ast.Call)
             and isinstance(node.func, ast.Name) and node.func.id in imported]
    assert {call.func.id for call in calls} == imported
    for call in calls:
        # every call binds to the real signature: a renamed keyword or a dropped argument fails here
        inspect.signature(getattr(evaluation, call.func.id)).bind(
            *[None] * len(call.args), **{kw.arg: None for kw in call.keywords})


def test_the_report_command_in_the_readme_parses():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    line = next(line for line in text.splitlines() if line.startswith("python3 -m evaluation report "))
    words = shlex.split(line.split("#", 1)[0].replace("ID|latest", "latest").replace("[--with-questions]",
                                                                                     "--with-questions"))
    args = build_parser().parse_args(words[3:])
    assert (args.run_id, args.out, args.with_questions) == ("latest", "report.html", True)


def test_the_routes_table_lists_every_route_the_app_registers_with_its_caller():
    import re

    import azure.functions as func

    from api import routes

    text = (ROOT / "README.md").read_text(encoding="utf-8")
    table = dict(re.findall(r"^\| `GET /api/([^`?]+)[^`]*` \| ([^|]+) \|", text, flags=re.M))
    registered = {}
    for route in (routes.evaluate_page, routes.list_evaluations, routes.get_evaluation,
                  routes.get_evaluation_report, routes.get_evaluation_golden):
        trigger = route.build().get_trigger()
        registered[trigger.route] = trigger.auth_level
    assert set(table) == set(registered)
    for path, caller in table.items():  # "function key" rows are function level, the rest check a sign-in
        assert (registered[path] == func.AuthLevel.FUNCTION) == (caller.strip() == "function key"), path


def library_example() -> str:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    return text.split("### Using the library", 1)[1].split("```python", 1)[1].split("```", 1)[0]


def test_the_library_example_runs_from_a_folder_outside_the_clone(sample_index, tmp_path, monkeypatch, capsys):
    """Run as written, in an empty folder: the sample comes from the package (evaluation.sample), the index
    is the shared test index copied where the example builds it (so build_index reuses it: its fingerprint
    is the same corpus and settings), and evaluate runs the keyword setup only (the cross-encoder's
    setups take minutes; which setups run is not what this proves)."""
    import shutil

    import evaluation

    snippet = library_example()
    assert "samples/" not in snippet  # no path that exists only inside the clone
    shutil.copytree(sample_index, tmp_path / ".index" / "sample")
    monkeypatch.chdir(tmp_path)
    real = evaluation.evaluate
    monkeypatch.setattr(evaluation, "evaluate", lambda *a, **k: real(*a, **{**k, "only": ["keyword"], "timed": 6}))
    exec(compile(snippet, "README.md", "exec"), {})

    out, err = capsys.readouterr()
    assert "Ready to run." in out and "'finds_the_most': 'local.keyword.bm25'" in out
    assert "running 1 setup on 36 questions" in err  # progress=True drew its bar
    assert list((tmp_path / "runs" / "retrieval" / "runs").glob("*/report.html"))
