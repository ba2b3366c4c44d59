"""A small local executor of the AWS flow's state machine, for tests only: it reads the definition from
``infra/aws/template.yaml`` as deployed (the ``Definition`` with its ``DefinitionSubstitutions``), maps
each Task's ``Resource`` to the function the template names and that function to the handler its
``ImageConfig.Command`` names, and runs the states in order on a clock of its own.

What it models of Step Functions (the ASL states the template uses; anything else raises, so a new
kind of state cannot pass untested): Pass, Task, Choice, Wait, Map (inline), Succeed, Fail; JSONPath
``InputPath``, ``Parameters`` / ``ItemSelector`` (keys ending ``.$``, context paths ``$$.``),
``ResultPath``, ``OutputPath``; ``Retry`` (``ErrorEquals``, ``IntervalSeconds``, ``MaxAttempts``,
``BackoffRate``) and ``Catch``; a Lambda's error as a direct Lambda ARN hands it on (``Error`` the
exception's type, ``Cause`` JSON with ``errorMessage`` and ``errorType``); a missing path is
``States.Runtime`` and fails the execution, as the service does. Payloads go through JSON both ways and
the largest is recorded (the service's limit is 256 KB).

``LocalStepFunctions`` takes the executions the trigger starts through the real Step Functions API
(moto's, on 127.0.0.1: names unique per state machine, a start with the name and input of a running
execution answered as the first, ``ExecutionAlreadyExists`` otherwise), runs them here, and stops each in
moto when it ends, so that a later start of its name meets a closed execution as it would on AWS.
"""
from __future__ import annotations

import copy
import heapq
import importlib
import itertools
import json
import re
import traceback
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any, Callable, Generator

import yaml

TEMPLATE = Path(__file__).resolve().parent.parent / "infra" / "aws" / "template.yaml"
START = datetime(2026, 12, 1, 9, 0, tzinfo=timezone.utc)


# -- the template ---------------------------------------------------------------------------------------

class _CfnLoader(yaml.SafeLoader):
    """YAML with CloudFormation's short tags kept as their long forms."""


def _tag(name: str) -> Callable[[Any, Any], Any]:
    def construct(loader: Any, node: Any) -> Any:
        if isinstance(node, yaml.ScalarNode):
            value: Any = loader.construct_scalar(node)
            if name == "Fn::GetAtt":
                value = value.split(".", 1)
        elif isinstance(node, yaml.SequenceNode):
            value = loader.construct_sequence(node, deep=True)
        else:
            value = loader.construct_mapping(node, deep=True)
        return {name: value}
    return construct


for _short, _long in {"!Ref": "Ref", "!Sub": "Fn::Sub", "!GetAtt": "Fn::GetAtt", "!Join": "Fn::Join",
                      "!If": "Fn::If", "!Equals": "Fn::Equals"}.items():
    _CfnLoader.add_constructor(_short, _tag(_long))


def load_template(path: Path = TEMPLATE) -> dict[str, Any]:
    return yaml.load(path.read_text(encoding="utf-8"), Loader=_CfnLoader)


def state_machine(template: dict[str, Any]) -> tuple[dict[str, Any], dict[str, str]]:
    """(the definition, {substitution name: function logical id}) of the template's one state machine."""
    [machine] = [r for r in template["Resources"].values() if r["Type"] == "AWS::StepFunctions::StateMachine"]
    props = machine["Properties"]
    functions = {name: value["Fn::GetAtt"][0] for name, value in props["DefinitionSubstitutions"].items()
                 if isinstance(value, dict) and "Fn::GetAtt" in value and value["Fn::GetAtt"][1] == "Arn"}
    return props["Definition"], functions


def handler_of(template: dict[str, Any], logical_id: str) -> str:
    """The ``module.function`` a function's image runs (its ImageConfig.Command)."""
    [command] = template["Resources"][logical_id]["Properties"]["ImageConfig"]["Command"]
    return command


def import_handler(dotted: str) -> Callable[..., Any]:
    module, _, name = dotted.rpartition(".")
    return getattr(importlib.import_module(module), name)


# -- JSONPath, the subset ASL's classic paths use -------------------------------------------------------

class PathMissing(Exception):
    pass


_TOKEN = re.compile(r"\.([A-Za-z0-9_\-]+)|\[(\d+)\]")


def read_path(path: str, data: Any, context: dict[str, Any]) -> Any:
    if path.startswith("$$"):
        data, path = context, path[1:]
    if not path.startswith("$"):
        raise ValueError(f"not a path: {path}")
    rest, value = path[1:], data
    while rest:
        found = _TOKEN.match(rest)
        if found is None:
            raise ValueError(f"path {path!r}: cannot read {rest!r}")
        name, index = found.groups()
        try:
            value = value[name] if name is not None else value[int(index)]
        except (KeyError, IndexError, TypeError) as err:
            raise PathMissing(path) from err
        rest = rest[found.end():]
    return value


def write_path(path: str | None, data: Any, value: Any) -> Any:
    """``ResultPath``: None discards the result, ``$`` replaces the input, ``$.a.b`` sets it in a copy."""
    if path is None:
        return data
    if path == "$":
        return value
    whole = copy.deepcopy(data)
    names = [m.group(1) for m in _TOKEN.finditer(path[1:])]
    here = whole
    for name in names[:-1]:
        here = here.setdefault(name, {})
    here[names[-1]] = value
    return whole


def fill(template: Any, data: Any, context: dict[str, Any]) -> Any:
    """``Parameters`` / ``ItemSelector``: keys ending ``.$`` take the value at their path."""
    if isinstance(template, dict):
        out = {}
        for key, value in template.items():
            if key.endswith(".$"):
                if not isinstance(value, str) or value.startswith("States."):
                    raise NotImplementedError(f"intrinsic functions are not modelled: {value!r}")
                out[key[:-2]] = read_path(value, data, context)
            else:
                out[key] = fill(value, data, context)
        return out
    if isinstance(template, list):
        return [fill(v, data, context) for v in template]
    return template


# -- running ------------------------------------------------------------------------------------------

class Failed(Exception):
    """A state failed: ``error`` and ``cause`` as the service names them."""

    def __init__(self, error: str, cause: str) -> None:
        super().__init__(f"{error}: {cause}")
        self.error, self.cause = error, cause


@dataclass(frozen=True)
class Sleep:
    until: datetime


_RULES = {"StringEquals", "StringEqualsPath", "BooleanEquals", "BooleanEqualsPath", "IsPresent", "IsString",
          "IsNull", "IsBoolean", "NumericEquals", "NumericGreaterThan", "NumericLessThan", "And", "Or", "Not"}


def _matches(rule: dict[str, Any], data: Any, context: dict[str, Any]) -> bool:
    if "And" in rule:
        return all(_matches(r, data, context) for r in rule["And"])
    if "Or" in rule:
        return any(_matches(r, data, context) for r in rule["Or"])
    if "Not" in rule:
        return not _matches(rule["Not"], data, context)
    operators = [k for k in rule if k not in ("Variable", "Next")]
    [operator] = operators
    if operator not in _RULES:
        raise NotImplementedError(f"Choice operator {operator} is not modelled")
    try:
        value = read_path(rule["Variable"], data, context)
    except PathMissing:
        if operator == "IsPresent":
            return rule[operator] is False
        raise Failed("States.Runtime", f"Invalid path {rule['Variable']}: the choice state's condition path "
                                       "references an invalid value") from None
    wanted = rule[operator]
    if operator.endswith("Path"):
        wanted, operator = read_path(wanted, data, context), operator[:-4]
    if operator == "IsPresent":
        return wanted is True
    if operator == "IsString":
        return isinstance(value, str) is wanted
    if operator == "IsNull":
        return (value is None) is wanted
    if operator == "IsBoolean":
        return isinstance(value, bool) is wanted
    if operator == "StringEquals":
        return isinstance(value, str) and value == wanted
    if operator == "BooleanEquals":
        return isinstance(value, bool) and value is wanted
    if operator.startswith("Numeric"):
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return False
        return {"NumericEquals": value == wanted, "NumericGreaterThan": value > wanted,
                "NumericLessThan": value < wanted}[operator]
    raise NotImplementedError(operator)


def _lambda_error(err: BaseException) -> Failed:
    """How Step Functions hands on a Python Lambda's exception (direct Lambda ARN)."""
    cause = {"errorMessage": str(err), "errorType": type(err).__name__, "requestId": "local",
             "stackTrace": traceback.format_tb(err.__traceback__)}
    return Failed(type(err).__name__, json.dumps(cause))


def _retrier(retry: list[dict[str, Any]], error: str) -> int | None:
    for n, rule in enumerate(retry):
        names = rule["ErrorEquals"]
        task_failed = "States.TaskFailed" in names and not error.startswith("States.")
        if error in names or "States.ALL" in names or task_failed:
            return n
    return None


class Execution:
    """One execution of the definition: a generator that yields ``Sleep`` and returns the output."""

    def __init__(self, runner: Runner, name: str, input_: Any) -> None:
        self.runner, self.name, self.input = runner, name, input_
        self.context: dict[str, Any] = {"Execution": {"Id": f"{runner.executions_arn}:{name}", "Name": name,
                                                      "Input": input_, "StartTime": _iso(runner.now)}}

    def run(self) -> Generator[Sleep, None, Any]:
        return (yield from self._states(self.runner.definition, self.input))

    def _states(self, machine: dict[str, Any], data: Any) -> Generator[Sleep, None, Any]:
        name = machine["StartAt"]
        while True:
            state = machine["States"][name]
            self.context["State"] = {"Name": name, "EnteredTime": _iso(self.runner.now)}
            self.runner.visited.append(name)
            kind = state["Type"]
            try:
                if kind == "Fail":
                    error = (read_path(state["ErrorPath"], data, self.context) if "ErrorPath" in state
                             else state.get("Error"))
                    cause = (read_path(state["CausePath"], data, self.context) if "CausePath" in state
                             else state.get("Cause"))
                    raise Failed(str(error), str(cause))
                input_path = state.get("InputPath", "$")  # null: the state sees {}
                effective = read_path(input_path, data, self.context) if input_path is not None else {}
                if kind == "Succeed":
                    return self._output(state, effective)
                if kind == "Choice":
                    name = next((rule["Next"] for rule in state["Choices"] if _matches(rule, data, self.context)),
                                state.get("Default"))
                    if name is None:
                        raise Failed("States.NoChoiceMatched", f"no choice of {self.context['State']['Name']} matched")
                    continue
                if kind == "Wait":
                    yield Sleep(self._until(state, effective))
                    result = effective
                elif kind == "Pass":
                    result = (fill(state["Parameters"], effective, self.context) if "Parameters" in state
                              else state["Result"] if "Result" in state else effective)
                elif kind == "Task":
                    result = yield from self._task(state, effective)
                elif kind == "Map":
                    result = yield from self._map(state, effective)
                else:
                    raise NotImplementedError(f"state type {kind} is not modelled")
            except PathMissing as err:
                raise Failed("States.Runtime", f"an invalid path {err} in state {name}") from None
            except Failed as err:
                if kind in ("Fail", "Choice") or err.error == "States.Runtime":
                    raise
                catcher = next((c for c in state.get("Catch", ()) if _retrier([c], err.error) is not None), None)
                if catcher is None:
                    raise
                data = write_path(catcher.get("ResultPath", "$"), data, {"Error": err.error, "Cause": err.cause})
                name = catcher["Next"]
                continue
            data = self._output(state, write_path(state.get("ResultPath", "$"), data, result))
            if state.get("End"):
                return data
            name = state["Next"]

    def _output(self, state: dict[str, Any], data: Any) -> Any:
        return read_path(state["OutputPath"], data, self.context) if "OutputPath" in state else data

    def _until(self, state: dict[str, Any], data: Any) -> datetime:
        if "Seconds" in state:
            return self.runner.now + timedelta(seconds=state["Seconds"])
        if "SecondsPath" in state:
            seconds = read_path(state["SecondsPath"], data, self.context)
            if isinstance(seconds, bool) or not isinstance(seconds, int) or seconds < 0:
                raise Failed("States.Runtime", f"SecondsPath gave {seconds!r}, not a whole number of seconds")
            return self.runner.now + timedelta(seconds=seconds)
        raise NotImplementedError("Wait with a timestamp is not modelled")

    def _task(self, state: dict[str, Any], data: Any) -> Generator[Sleep, None, Any]:
        payload = fill(state["Parameters"], data, self.context) if "Parameters" in state else data
        retry = state.get("Retry", [])
        tries = [0] * len(retry)
        while True:
            try:
                return self.runner.invoke(state["Resource"], payload)
            except Failed as err:
                n = _retrier(retry, err.error)
                if n is None or tries[n] >= retry[n].get("MaxAttempts", 3):
                    raise
                rule = retry[n]
                wait = rule.get("IntervalSeconds", 1) * rule.get("BackoffRate", 2.0) ** tries[n]
                tries[n] += 1
                yield Sleep(self.runner.now + timedelta(seconds=wait))

    def _map(self, state: dict[str, Any], data: Any) -> Generator[Sleep, None, Any]:
        if "Retry" in state:
            raise NotImplementedError("a Map state's own Retry is not modelled")
        items = read_path(state.get("ItemsPath", "$"), data, self.context)
        processor = state.get("ItemProcessor") or state["Iterator"]
        results = []
        for index, item in enumerate(items):
            self.context["Map"] = {"Item": {"Index": index, "Value": item}}
            selector = state.get("ItemSelector", state.get("Parameters"))
            item_input = fill(selector, data, self.context) if selector is not None else item
            saved = self.context.get("State")
            results.append((yield from self._states(processor, item_input)))
            self.context["State"] = saved
        self.context.pop("Map", None)
        return results


def _iso(moment: datetime) -> str:
    return moment.astimezone(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


@dataclass
class Runner:
    """The definition with its handlers, a clock, and what ran (for assertions)."""

    definition: dict[str, Any]
    handlers: dict[str, Callable[..., Any]]  # Resource as written ("${PlanArn}") -> handler
    executions_arn: str = "arn:aws:states:us-east-1:123456789012:execution:local-evaluate-golden"
    now: datetime = START
    before_task: Callable[[str, Any], None] | None = None
    calls: list[tuple[datetime, str, Any]] = field(default_factory=list)
    visited: list[str] = field(default_factory=list)
    largest_payload: int = 0

    def invoke(self, resource: str, payload: Any) -> Any:
        handler = self.handlers[resource]
        text = json.dumps(payload)
        self.largest_payload = max(self.largest_payload, len(text))
        self.calls.append((self.now, handler.__name__, json.loads(text)))
        if self.before_task is not None:
            self.before_task(handler.__name__, json.loads(text))
        try:
            answer = handler(json.loads(text), None)
        except Exception as err:  # the service hands every function error on as Error and Cause
            raise _lambda_error(err) from err
        answer_text = json.dumps(answer)
        self.largest_payload = max(self.largest_payload, len(answer_text))
        return json.loads(answer_text)


def runner_from_template(template: dict[str, Any] | None = None, **kwargs: Any) -> Runner:
    template = template or load_template()
    definition, functions = state_machine(template)
    handlers = {f"${{{sub}}}": import_handler(handler_of(template, logical)) for sub, logical in functions.items()}
    return Runner(definition=definition, handlers=handlers, **kwargs)


# -- executions started through the Step Functions API -------------------------------------------------

@dataclass
class Run:
    name: str
    execution: Execution
    steps: Generator[Sleep, None, Any]
    status: str = "RUNNING"
    output: Any = None
    error: Failed | None = None


class LocalStepFunctions:
    """Runs, here, the executions started on a state machine of moto's Step Functions (module docstring)."""

    def __init__(self, client: Any, runner: Runner, state_machine_arn: str) -> None:
        self.client, self.runner, self.arn = client, runner, state_machine_arn
        self.runs: dict[str, Run] = {}
        self._queue: list[tuple[datetime, int, str]] = []
        self._order = itertools.count()

    def adopt(self) -> None:
        """Take every execution moto holds as RUNNING that is not running here yet."""
        for listed in self.client.list_executions(stateMachineArn=self.arn, statusFilter="RUNNING")["executions"]:
            name = listed["name"]
            if name in self.runs:
                continue
            described = self.client.describe_execution(executionArn=listed["executionArn"])
            execution = Execution(self.runner, name, json.loads(described["input"]))
            self.runs[name] = Run(name, execution, execution.run())
            heapq.heappush(self._queue, (self.runner.now, next(self._order), name))

    def advance(self, seconds: float) -> None:
        """Run everything due until ``seconds`` from now, then set the clock there."""
        self._run_until(self.runner.now + timedelta(seconds=seconds))

    def run(self, limit: int = 10_000) -> None:
        """Run until no execution is left running (new ones started meanwhile included)."""
        self._run_until(None, limit)

    def _run_until(self, until: datetime | None, limit: int = 10_000) -> None:
        for _ in range(limit):
            self.adopt()
            if not self._queue or (until is not None and self._queue[0][0] > until):
                break
            due, _, name = heapq.heappop(self._queue)
            self.runner.now = max(self.runner.now, due)
            self._step(self.runs[name])
        else:
            raise AssertionError("the executions did not settle")
        if until is not None:
            self.runner.now = max(self.runner.now, until)

    def _step(self, run: Run) -> None:
        try:
            sleep = next(run.steps)
        except StopIteration as done:
            run.status, run.output = "SUCCEEDED", done.value
        except Failed as err:
            run.status, run.error = "FAILED", err
        else:
            heapq.heappush(self._queue, (sleep.until, next(self._order), run.name))
            return
        # closed: a later start of this name now meets ExecutionAlreadyExists, as on AWS
        self.client.stop_execution(executionArn=f"{self.arn.replace(':stateMachine:', ':execution:')}:{run.name}")

    def outputs(self) -> list[Any]:
        return [run.output for run in self.runs.values() if run.status == "SUCCEEDED"]
