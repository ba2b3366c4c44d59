"""The README and docs/ stay true: the first two commands are the ones that run (and CI runs), every command
a code block shows parses with the real parser, every link lands on a file and a heading that exist, and the
examples that call the library run."""
from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from evaluation.cli import build_parser

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
DOCS = sorted((ROOT / "docs").glob("*.md"))
PAGES = [README, *DOCS]


def readme_commands() -> list[str]:
    block = README.read_text(encoding="utf-8").split("```bash", 1)[1].split("```", 1)[0]
    return [line for line in block.splitlines() if line.strip() and not line.startswith("#")]


def test_the_main_job_command_installs_the_package_and_parses_with_files_the_repo_ships():
    install, main_job = readme_commands()[0].split(" && ")
    assert install == "python3 -m pip install ."  # the package: retrieval-eval is its console script
    assert (ROOT / "pyproject.toml").is_file() and 'retrieval-eval = "evaluation.cli:entry"' in (
        ROOT / "pyproject.toml").read_text(encoding="utf-8")
    words = shlex.split(main_job)
    assert words[:2] == ["retrieval-eval", "evaluate"]
    args = build_parser().parse_args(words[1:])
    assert (ROOT / args.corpus).is_file() and (ROOT / args.golden).is_file()
    assert args.save_to is None  # the default store, which runs list, report and compare read


def test_the_test_command_is_what_ci_runs():
    assert readme_commands()[1] == "bash .ci/run"
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert ci.rstrip().splitlines()[-1] == "python3 -m pytest -q"  # the last thing CI does
    lines = README.read_text(encoding="utf-8").splitlines()
    said = lines[lines.index("bash .ci/run") - 1]
    assert said == "# (python3 -m ruff check . && python3 -m mypy && python3 -m pytest -q):"


def test_the_first_lines_give_the_python_the_package_needs_and_a_virtual_environment():
    import tomllib

    needs = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["requires-python"]
    assert needs == ">=3.11"
    top = README.read_text(encoding="utf-8").split("```bash", 1)[1].split("```", 1)[0].splitlines()
    assert top[1].startswith("# Python 3.11 or newer, in a virtual environment")
    assert top[2] == "#   python3 -m venv .venv && . .venv/bin/activate"


def test_the_ci_section_says_how_many_lost_questions_the_regression_gate_needs_as_its_test_computes():
    # the gate's own test: the exact paired p of k questions lost and none gained, Holm over the setups compared
    from evaluation.scoring.significance import exact_binary_p

    def needed(setups: int, alpha: float = 0.05) -> int:
        return next(k for k in range(1, 64) if min(1.0, exact_binary_p(0, k) * setups) <= alpha)

    assert exact_binary_p(0, 1) == 1.0  # one lost question alone never fails the gate
    text = " ".join(README.read_text(encoding="utf-8").split())
    assert (f"it fails from {needed(1)} lost questions when it compares one setup (`--only KEY`, as above: 2 / "
            f"2^{needed(1)} = {2 / 2 ** needed(1):.3f})") in text
    assert (f"from {needed(11)} when it compares the eleven setups of a default run (11 x 2 / 2^{needed(11)} = "
            f"{11 * 2 / 2 ** needed(11):.3f})") in text
    assert "one lost question alone never fails it (p = 1)" in text


def test_ci_runs_ruff_and_mypy_before_the_tests():
    ci = [line.strip() for line in (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()]
    assert ci.index("python3 -m ruff check .") < ci.index("python3 -m pytest -q")
    assert ci.index("python3 -m mypy") < ci.index("python3 -m pytest -q")


def test_mypy_checks_the_library_and_every_part_of_the_app_with_no_module_left_out():
    import tomllib

    mypy = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["mypy"]
    assert set(mypy["files"]) == {"evaluation", "app", "activities", "aws", "api", "triggers", "orchestrators",
                                  "function_app.py"}
    assert [o["module"] for o in mypy.get("overrides", []) if o.get("ignore_errors")] == []


def test_the_readme_stays_under_about_400_lines():
    assert len(README.read_text(encoding="utf-8").splitlines()) <= 400


# -- commands in code blocks -----------------------------------------------------------------------------------

def code_blocks(text: str) -> list[str]:
    """The body of every fenced code block, in order."""
    return re.findall(r"^```[^\n]*\n(.*?)^```", text, flags=re.DOTALL | re.MULTILINE)


def shown_commands(text: str) -> list[str]:
    """Every ``retrieval-eval ...`` or ``python3 -m evaluation ...`` command a code block shows: a shell line,
    a YAML ``run:`` step, or a part of a line joined by ``&&``; comments dropped."""
    commands: list[str] = []
    for block in code_blocks(text):
        following = False  # the line before was a command, so an indented [...] line continues it (a synopsis)
        for line in block.replace("\\\n", " ").splitlines():  # a command continued with \ is one line
            line = re.sub(r"(^|\s)#.*$", "", line)  # a comment, never a page's #page=N
            if following and re.match(r"\s+(\[|--)", line):
                commands[-1] += " " + line.strip()
                continue
            following = False
            line = re.sub(r"^\s*-?\s*run:\s*", "", line).strip()
            for part in line.split("&&"):
                part = part.strip()
                if part.startswith(("retrieval-eval ", "python3 -m evaluation ")):
                    commands.append(part)
                    following = True
    return commands


def parsed(command: str):
    words = shlex.split(command, comments=True)
    words = words[1:] if words[0] == "retrieval-eval" else words[3:]
    return build_parser().parse_args(words)  # an unknown flag or a missing argument exits 2 here


def test_every_command_the_readme_shows_parses_with_the_real_parser(capsys):
    commands = shown_commands(README.read_text(encoding="utf-8"))
    failed = {}
    for command in commands:
        try:
            args = parsed(command)
        except SystemExit:
            failed[command] = capsys.readouterr().err.strip()
            continue
        assert args.handler is not None, command
    assert failed == {}
    # the README shows the commands a newcomer needs, each in a block that is checked here
    shown = {" ".join(shlex.split(command, comments=True)[1:3]) for command in commands}
    assert {"evaluate --corpus", "golden template", "golden check", "compare 20261203T101500000Z-1a2b3c",
            "index samples/corpus.jsonl"} <= shown


def subcommand_parser(command: str):
    """The parser of the (sub)command a line names, and the words that named it: ``runs list|show ID`` is
    ``runs list``'s, a synopsis's alternatives read as their first."""
    import argparse

    words = command.split()
    words = words[1:] if words[0] == "retrieval-eval" else words[3:]
    parser, named = build_parser(), []
    for word in words:
        choices = next((action.choices for action in parser._actions
                        if isinstance(action, argparse._SubParsersAction)), None)
        if not choices or word.split("|")[0] not in choices:
            break
        parser = choices[word.split("|")[0]]
        named.append(word.split("|")[0])
    return parser, named


def test_every_flag_a_docs_synopsis_names_is_a_flag_of_its_command():
    """docs/ shows synopses (``[--force]``, ``CORPUS|--index DIR``) that cannot be parsed as they stand:
    every ``--flag`` they name must still be one of that command's."""
    unknown = []
    for page in PAGES:
        for command in shown_commands(page.read_text(encoding="utf-8")):
            parser, named = subcommand_parser(command)
            assert named, command
            flags = {option for action in parser._actions for option in action.option_strings}
            unknown += [f"{page.name}: {' '.join(named)} {flag}" for flag in
                        re.findall(r"(?<![\w-])--[a-z][a-z0-9-]*", command) if flag not in flags]
    assert unknown == []


def test_the_readme_commands_use_the_installed_script_and_the_default_store():
    commands = shown_commands(README.read_text(encoding="utf-8"))
    assert commands and all(command.startswith("retrieval-eval ") for command in commands)
    assert not [command for command in commands if "--store" in command or "--save-to" in command]


def test_the_ci_gate_judges_the_deployed_setup_alone_and_fails_on_a_regression():
    yaml_block = next(block for block in code_blocks(README.read_text(encoding="utf-8")) if "actions/cache" in block)
    gate = next(command for command in shown_commands("```\n" + yaml_block + "```\n")
                if " evaluate " in f" {command} ")
    args = parsed(gate)
    assert args.only and all("*" not in pattern for pattern in args.only)  # one exact setup key
    assert args.fail_under and args.baseline == "latest" and args.fail_on_regression
    cached = re.findall(r"path: (\S+)", yaml_block)
    assert ".index" in cached and "evaluations" in cached  # the index folder, and the default store


def test_the_report_command_in_the_reference_parses():
    text = (ROOT / "docs" / "reference.md").read_text(encoding="utf-8")
    line = next(line for line in text.splitlines() if line.startswith("retrieval-eval report "))
    words = shlex.split(line.split("#", 1)[0].replace("ID|latest", "latest").replace("[--store STORE] ", "")
                        .replace("[--with-questions]", "--with-questions"))
    args = build_parser().parse_args(words[1:])
    assert (args.run_id, args.out, args.with_questions) == ("latest", "report.html", True)


# -- links -----------------------------------------------------------------------------------------------------

def github_slug(heading: str) -> str:
    """The anchor GitHub gives a heading: lower case, punctuation but ``-`` and ``_`` dropped (backticks
    too), each space a ``-``."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def anchors(path: Path) -> set[str]:
    """Every heading's anchor in a Markdown file (outside code blocks); a repeated heading gets ``-1``,
    ``-2``, ... as on GitHub."""
    text = re.sub(r"^```.*?^```", "", path.read_text(encoding="utf-8"), flags=re.DOTALL | re.MULTILINE)
    seen: dict[str, int] = {}
    found = set()
    for heading in re.findall(r"^#{1,6} (.+)$", text, flags=re.MULTILINE):
        slug = github_slug(heading)
        found.add(f"{slug}-{seen[slug]}" if slug in seen else slug)
        seen[slug] = seen.get(slug, 0) + 1
    return found


def links(path: Path) -> list[str]:
    """Every Markdown link target in a file, outside code blocks and inline code."""
    text = re.sub(r"^```.*?^```", "", path.read_text(encoding="utf-8"), flags=re.DOTALL | re.MULTILINE)
    text = re.sub(r"`[^`\n]*`", "", text)
    return re.findall(r"\]\(([^)\s]+)\)", text)


def test_github_slugs_as_github_makes_them():
    assert github_slug("How to cut the documents: `chunking sweep` and `chunking compare`") == \
        "how-to-cut-the-documents-chunking-sweep-and-chunking-compare"
    assert (github_slug("Coming from ElectriPy's RAG evaluation runner")
            == "coming-from-electripys-rag-evaluation-runner")
    assert github_slug("The first run, and how to read it") == "the-first-run-and-how-to-read-it"
    assert github_slug("One run per save: dedupe and debounce") == "one-run-per-save-dedupe-and-debounce"


def test_a_repeated_heading_gets_the_anchor_github_gives_it_and_code_is_no_heading(tmp_path):
    page = tmp_path / "page.md"
    page.write_text("# Setup\n\n## Setup\n\n```bash\n# a comment, not a heading\n```\n\n### Setup\n", encoding="utf-8")
    assert anchors(page) == {"setup", "setup-1", "setup-2"}


@pytest.mark.parametrize("page", PAGES, ids=lambda page: page.relative_to(ROOT).as_posix())
def test_every_link_lands_on_a_file_and_a_heading_that_exist(page):
    assert DOCS, "docs/ holds the reference the README links to"
    broken = []
    for target in links(page):
        if re.match(r"[a-z]+:", target):  # https:, mailto: - not ours to check offline
            continue
        file, _, anchor = target.partition("#")
        where = (page.parent / file).resolve() if file else page
        if not where.exists():
            broken.append(f"{target}: no such file")
        elif anchor and where.suffix == ".md" and anchor not in anchors(where):
            broken.append(f"{target}: no such heading in {where.relative_to(ROOT)}")
    assert broken == []


def test_every_docs_page_is_linked_from_the_readme():
    linked = {(ROOT / target.partition("#")[0]).resolve() for target in links(README) if target.startswith("docs/")}
    assert set(DOCS) <= linked


# -- the library examples --------------------------------------------------------------------------------------

def library_example() -> str:
    text = README.read_text(encoding="utf-8")
    return text.split("### Using the library", 1)[1].split("```python", 1)[1].split("```", 1)[0]


def test_the_library_example_uses_public_names_with_arguments_they_take():
    import ast
    import inspect

    import evaluation

    tree = ast.parse(library_example())
    imported = {alias.name for node in ast.walk(tree)
                if isinstance(node, ast.ImportFrom) and node.module == "evaluation"
                for alias in node.names}
    assert imported and imported <= set(evaluation.__all__)
    calls = [node for node in ast.walk(tree) if isinstance(node, ast.Call)
             and isinstance(node.func, ast.Name) and node.func.id in imported]
    assert {call.func.id for call in calls} == imported
    for call in calls:
        # every call binds to the real signature: a renamed keyword or a dropped argument fails here
        inspect.signature(getattr(evaluation, call.func.id)).bind(
            *[None] * len(call.args), **{kw.arg: None for kw in call.keywords})


def test_the_routes_table_lists_every_route_the_app_registers_with_its_caller():
    import azure.functions as func

    from api import routes

    text = (ROOT / "docs" / "azure.md").read_text(encoding="utf-8")
    table = dict(re.findall(r"^\| `GET /api/([^`?]+)[^`]*` \| ([^|]+) \|", text, flags=re.MULTILINE))
    registered = {}
    for route in (routes.evaluate_page, routes.list_evaluations, routes.get_evaluation,
                  routes.get_evaluation_report, routes.get_evaluation_golden):
        trigger = route.build().get_trigger()
        registered[trigger.route] = trigger.auth_level
    assert set(table) == set(registered)
    for path, caller in table.items():  # "function key" rows are function level, the rest check a sign-in
        assert (registered[path] == func.AuthLevel.FUNCTION) == (caller.strip() == "function key"), path


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
    assert list((tmp_path / "evaluations" / "retrieval" / "runs").glob("*/report.html"))


def test_the_first_command_leaves_nothing_untracked_in_the_clone():
    # the index folder and the default store the first command writes are ignored by git
    from evaluation.cli.common import DEFAULT_STORE

    ignored = (ROOT / ".gitignore").read_text(encoding="utf-8").splitlines()
    assert "/.index/" in ignored and f"/{DEFAULT_STORE}/" in ignored
