"""infra/aws/template.yaml: cfn-lint clean (its Step Functions definition included), every Task wired to a
handler that exists, the retries the flow's guarantees stand on, each function's role no wider than its
step, and the settings the functions get are the ones the code reads and docs/aws.md lists."""
from __future__ import annotations

import inspect
import re
from pathlib import Path

import pytest

from step_functions import TEMPLATE, handler_of, import_handler, load_template, state_machine

ROOT = Path(__file__).resolve().parent.parent.parent
DOC = ROOT / "docs" / "aws.md"


def cfn_lint(path: Path) -> list[str]:
    """cfn-lint's findings on ``path`` (the SAM transform applied first), as its command line prints them."""
    from cfnlint.api import lint_file

    return [f"{m.rule.id} {m.message}" for m in lint_file(path)]


@pytest.fixture(scope="module")
def template():
    return load_template()


def test_cfn_lint_finds_nothing_in_the_template():
    assert cfn_lint(TEMPLATE) == []


def test_cfn_lint_reads_the_state_machine_definition_too(tmp_path):
    """The lint above would prove nothing about the states if cfn-lint skipped the definition: a state of a
    kind ASL does not have, and a retry interval that is not a number, are both found."""
    broken = TEMPLATE.read_text(encoding="utf-8").replace("            Type: Wait\n", "            Type: Pause\n")
    broken = broken.replace("                IntervalSeconds: 5\n", "                IntervalSeconds: five\n", 1)
    (tmp_path / "template.yaml").write_text(broken, encoding="utf-8")
    found = cfn_lint(tmp_path / "template.yaml")
    assert any(f.startswith("E3601 'Pause' is not one of") for f in found)
    assert "E3601 'five' is not of type 'number'" in found


# -- the states ---------------------------------------------------------------------------------------------

def _walk(machine: dict) -> dict[str, dict]:
    """Every state of a machine and of the Map states inside it, by name."""
    found = {}
    for name, state in machine["States"].items():
        found[name] = state
        if state["Type"] == "Map":
            found.update(_walk(state["ItemProcessor"]))
    return found


def _nexts(state: dict) -> list[str]:
    names = [state[k] for k in ("Next", "Default") if k in state]
    names += [rule["Next"] for rule in state.get("Choices", ())]
    names += [catch["Next"] for catch in state.get("Catch", ())]
    return names


def test_every_next_names_a_state_and_every_state_is_reached(template):
    definition, _ = state_machine(template)

    def check(machine: dict) -> None:
        reached, todo = set(), [machine["StartAt"]]
        while todo:
            name = todo.pop()
            if name in reached:
                continue
            reached.add(name)
            assert name in machine["States"], name
            todo += _nexts(machine["States"][name])
        assert reached == set(machine["States"])
        for state in machine["States"].values():
            if state["Type"] == "Map":
                check(state["ItemProcessor"])

    check(definition)


def test_every_task_runs_a_handler_of_aws_handlers_and_every_handler_is_a_task(template):
    import aws.handlers

    definition, functions = state_machine(template)
    tasks = [s for s in _walk(definition).values() if s["Type"] == "Task"]
    resources = {s["Resource"] for s in tasks}
    assert resources == {f"${{{name}}}" for name in functions}  # every substitution used, none missing
    handlers = {handler_of(template, logical) for logical in functions.values()}
    public = {f"aws.handlers.{name}" for name, fn in inspect.getmembers(aws.handlers, inspect.isfunction)
              if fn.__module__ == "aws.handlers" and not name.startswith("_")
              and list(inspect.signature(fn).parameters)[:2] == ["event", "context"]}
    assert handlers == public
    for dotted in handlers | {handler_of(template, "GoldenSavedFunction")}:
        assert callable(import_handler(dotted))
    assert handler_of(template, "GoldenSavedFunction") == "aws.trigger.golden_saved"


def test_every_task_is_retried_as_the_function_apps_activities_are(template):
    """Two more tries 5 s apart (the orchestrator's RETRY: 3 attempts, 5 s), and the fold counts the same."""
    from orchestrators.evaluate_golden import RETRY

    definition, _ = state_machine(template)
    states = _walk(definition)
    for name, state in states.items():
        if state["Type"] == "Task":
            assert state["Retry"] == [{"ErrorEquals": ["States.ALL"], "IntervalSeconds": 5, "MaxAttempts": 2,
                                       "BackoffRate": 1}], name
    assert RETRY.max_number_of_attempts == 2 + 1 == states["FoldRanks"]["Parameters"]["attempts"]
    assert RETRY.first_retry_interval_in_milliseconds == 5 * 1000


def test_a_shard_failing_after_its_retries_is_caught_inside_the_map_and_the_run_goes_on(template):
    definition, _ = state_machine(template)
    states = _walk(definition)
    [catch] = states["RankShard"]["Catch"]
    assert catch["ErrorEquals"] == ["States.ALL"] and states[catch["Next"]]["Type"] == "Pass"
    assert states[catch["Next"]]["Parameters"]["failed.$"] == "$.error.Cause" == catch["ResultPath"] + ".Cause"
    assert states["RankEveryShard"]["Next"] == "FoldRanks"


def test_the_run_waits_the_debounce_the_trigger_gives_before_anything_else(template):
    definition, _ = state_machine(template)
    first = definition["States"][definition["StartAt"]]
    assert first == {"Type": "Wait", "SecondsPath": "$.debounce_seconds", "Next": "GoldenNow"}


def test_the_bucket_notifies_the_trigger_of_golden_files_only(template):
    from evaluation.store.collections import GOLDEN_NAME

    [event] = template["Resources"]["GoldenSavedFunction"]["Properties"]["Events"].values()
    assert event["Type"] == "S3" and event["Properties"]["Events"] == "s3:ObjectCreated:*"
    assert event["Properties"]["Filter"]["S3Key"]["Rules"] == [{"Name": "suffix", "Value": f"/{GOLDEN_NAME}"}]
    machine = template["Resources"]["EvaluateGoldenStateMachine"]["Properties"]
    assert machine["StateMachineType"] == "STANDARD"  # names unique for 90 days; an Express one has no such rule


# -- least privilege ---------------------------------------------------------------------------------------

G, KEPT, WORK = "*/golden.jsonl", "*/golden_dataset/*", "*/golden_dataset/runs_in_progress/*"
RUNS, TARGETS, IDX, BUCKET = "*/retrieval/runs/*", "*/targets.json", "${IndexesPrefix}/*", "bucket"
EXPECTED = {  # function -> {action: resources (inside the bucket)}: what its step reads, writes or deletes
    "GoldenSavedFunction": {"s3:GetObject": {G, RUNS, TARGETS, IDX}, "s3:ListBucket": {BUCKET}},
    "GoldenHashFunction": {"s3:GetObject": {G}, "s3:ListBucket": {BUCKET}},
    "KeepGoldenFunction": {"s3:GetObject": {G, KEPT}, "s3:PutObject": {"*/golden_dataset/*.jsonl"},
                           "s3:ListBucket": {BUCKET}},
    "NameRunFunction": {},
    "CheckGoldenFunction": {"s3:GetObject": {KEPT}, "s3:ListBucket": {BUCKET}},
    "RefuseRunFunction": {"s3:GetObject": {KEPT, RUNS}, "s3:PutObject": {RUNS}, "s3:ListBucket": {BUCKET}},
    "PlanFunction": {"s3:GetObject": {KEPT, TARGETS, RUNS, IDX}, "s3:PutObject": {WORK}, "s3:ListBucket": {BUCKET}},
    "RankShardFunction": {"s3:GetObject": {WORK, IDX}, "s3:PutObject": {WORK}, "s3:ListBucket": {BUCKET}},
    "FoldRanksFunction": {},
    "TimeSideBySideFunction": {"s3:GetObject": {WORK, IDX}, "s3:PutObject": {WORK}, "s3:ListBucket": {BUCKET}},
    "SaveReportFunction": {"s3:GetObject": {G, KEPT, RUNS}, "s3:PutObject": {RUNS}, "s3:DeleteObject": {RUNS},
                           "s3:ListBucket": {BUCKET}},
    "DiscardRunFilesFunction": {"s3:DeleteObject": {WORK}, "s3:ListBucket": {BUCKET}},
}


def _inside_bucket(resource: object) -> str:
    text = resource["Fn::Sub"] if isinstance(resource, dict) and "Fn::Sub" in resource else str(resource)
    whole = re.fullmatch(r"arn:\$\{AWS::Partition\}:s3:::\$\{BucketName\}(?:/(.+))?", text)
    assert whole, f"not a resource of the collections bucket: {text}"
    return whole.group(1) or BUCKET


def s3_grants(function: dict) -> dict[str, set[str]]:
    grants: dict[str, set[str]] = {}
    for policy in function["Properties"].get("Policies", ()):
        for statement in policy["Statement"]:
            assert statement["Effect"] == "Allow"
            actions = statement["Action"] if isinstance(statement["Action"], list) else [statement["Action"]]
            resources = statement["Resource"] if isinstance(statement["Resource"], list) else [statement["Resource"]]
            for action in actions:
                assert "*" not in action, action
                if action.startswith("s3:"):
                    grants.setdefault(action, set()).update(_inside_bucket(r) for r in resources)
    return grants


def test_each_function_may_touch_only_what_its_step_reads_writes_or_deletes(template):
    functions = {name: r for name, r in template["Resources"].items() if r["Type"] == "AWS::Serverless::Function"}
    assert {name: s3_grants(function) for name, function in functions.items()} == EXPECTED


def test_no_role_may_write_a_golden_file_and_only_save_report_may_delete_a_run():
    writers = {name for name, grants in EXPECTED.items() for res in grants.get("s3:PutObject", ()) if res in (G, "*")}
    assert writers == set()
    deleters = {name for name, grants in EXPECTED.items() if RUNS in grants.get("s3:DeleteObject", ())}
    assert deleters == {"SaveReportFunction"}


def test_the_trigger_may_start_and_describe_only_this_state_machine(template):
    statements = template["Resources"]["GoldenSavedFunction"]["Properties"]["Policies"][0]["Statement"]
    other = {s["Action"]: s["Resource"] for s in statements if not s["Action"].startswith("s3:")}
    assert other == {"states:StartExecution": {"Ref": "EvaluateGoldenStateMachine"},
                     "states:DescribeExecution": {"Fn::Sub": "arn:${AWS::Partition}:states:${AWS::Region}:"
                                                            "${AWS::AccountId}:execution:${AWS::StackName}"
                                                            "-evaluate-golden:*"}}
    name = template["Resources"]["EvaluateGoldenStateMachine"]["Properties"]["StateMachineName"]
    assert name == {"Fn::Sub": "${AWS::StackName}-evaluate-golden"}  # the name the Describe grant is built on


def test_the_state_machine_may_invoke_its_functions_and_nothing_else(template):
    role = template["Resources"]["EvaluateGoldenRole"]["Properties"]
    [policy] = role["Policies"]
    [statement] = policy["PolicyDocument"]["Statement"]
    _, functions = state_machine(template)
    assert statement["Action"] == "lambda:InvokeFunction"
    assert sorted(r["Fn::GetAtt"][0] for r in statement["Resource"]) == sorted(functions.values())


# -- settings ------------------------------------------------------------------------------------------------

def _documented() -> set[str]:
    table = DOC.read_text(encoding="utf-8").split("## Settings", 1)[1]
    return set(re.findall(r"^\| `([A-Z0-9_]+)` \|", table, flags=re.M))


def test_the_settings_the_functions_get_are_read_by_the_code_and_listed_in_docs_aws(template):
    from app_env import settings_read

    given = set(template["Globals"]["Function"]["Environment"]["Variables"])
    given |= set(template["Resources"]["GoldenSavedFunction"]["Properties"]["Environment"]["Variables"])
    read = set(settings_read([ROOT / "app" / "settings.py", *sorted((ROOT / "aws").glob("*.py"))]))
    assert given - read == set()  # nothing set that no code reads
    assert given == _documented()
    assert {"EVALUATION_BUCKET", "EVALUATION_STATE_MACHINE_ARN"} <= given
