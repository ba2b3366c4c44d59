"""A stand-in for the Durable Functions extension, for tests with no Functions host.

What the extension does that our code meets, done the way the extension does it:

- **Histories.** Each orchestrator episode gets the JSON the extension sends (``history`` of events in
  its PascalCase shape, ``input``, ``instanceId``, ``isReplaying``, ``upperSchemaVersion`` 1 and
  ``upperSchemaVersionNew`` 2, the timer durations), through the real ``azure.functions``
  orchestration converter and the registered orchestrator. Past events are ``IsPlayed``; each
  episode starts with ``OrchestratorStarted`` and ends with ``OrchestratorCompleted``.
- **Actions -> events.** The actions the SDK returns (all of them, every time) are matched by position
  with what was scheduled before; each new one becomes ``TaskScheduled`` or ``TimerCreated`` with the
  next event id. Retries are the extension's: a failed try adds a retry timer; when it fires, a new
  ``TaskScheduled`` if tries remain, and after the last try one more timer before the task fails
  (DTFx's retry loop, which the SDK mirrors).
- **One new event per episode.** The extension may batch events; one at a time is a valid history,
  and keeps event ids in the order the SDK assigns them.
- **Activities** run in process through the real activity converter (JSON in, JSON out); a raised
  exception becomes ``TaskFailed``. Timers fire on a virtual clock.
- **Management API** on 127.0.0.1 (``start`` and ``status`` of the RPC endpoint the Python client
  calls): unknown id 404 with an empty body; Pending/Running 202, Completed/Failed/Terminated 200; a
  start for an id that is Pending or Running answers 409 Conflict, any other id is replaced.
"""
from __future__ import annotations

import asyncio
import json
import threading
import traceback
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable
from urllib.parse import unquote, urlsplit

import azure.functions as func
from azure.functions.durable_functions import ActivityTriggerConverter, OrchestrationTriggerConverter
from azure.functions.meta import Datum

EXECUTION_STARTED, TASK_SCHEDULED, TASK_COMPLETED, TASK_FAILED = 0, 4, 5, 6
TIMER_CREATED, TIMER_FIRED, ORCHESTRATOR_STARTED, ORCHESTRATOR_COMPLETED = 10, 11, 12, 13
CALL_ACTIVITY, CALL_ACTIVITY_WITH_RETRY, CREATE_TIMER, WHEN_ANY, WHEN_ALL = 0, 1, 5, 11, 12
RUNNING_STATES = ("Pending", "Running", "ContinuedAsNew", "Suspended")
HUB = "RetrievalEvaluation"
START = datetime(2026, 11, 30, 9, 0, 0, tzinfo=timezone.utc)


def stamp(moment: datetime) -> str:
    return moment.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%f") + "Z"


def event(kind: int, moment: datetime, event_id: int = -1, **fields: Any) -> dict[str, Any]:
    """One history event as the extension serialises it."""
    return {"EventType": kind, "EventId": event_id, "IsPlayed": False, "Timestamp": stamp(moment), **fields}


def flatten(actions: list[Any]) -> list[dict[str, Any]]:
    """The SDK's actions in scheduling order: compound WhenAll/WhenAny actions give their children."""
    out: list[dict[str, Any]] = []
    for action in actions:
        if isinstance(action, list):
            out += flatten(action)
        elif action["actionType"] in (WHEN_ANY, WHEN_ALL):
            out += flatten(action["compoundActions"])
        else:
            out.append(action)
    return out


def orchestration_context(history: list[dict[str, Any]], instance_id: str, input_json: str | None) -> str:
    """The JSON the extension binds an orchestrator to (its OrchestrationTriggerAttributeBindingProvider)."""
    return json.dumps({
        "history": history, "input": input_json, "instanceId": instance_id,
        "isReplaying": any(e["IsPlayed"] for e in history), "parentInstanceId": None,
        "upperSchemaVersion": 1, "upperSchemaVersionNew": 2,  # SchemaVersion.V2 and V3, as integers
        "longRunningTimerIntervalDuration": "3.00:00:00", "maximumShortTimerDuration": "6.00:00:00",
        "defaultHttpAsyncRequestSleepTimeMillseconds": 30000,
    })


def replay(orchestrator: Callable[..., str], context_json: str) -> dict[str, Any]:
    """Run a registered orchestrator on one context JSON, as the worker does: its state, or for an
    orchestrator that raised, the state it carries after ``$OutOfProcData$`` plus ``error``."""
    context = OrchestrationTriggerConverter.decode(Datum(type="json", value=context_json), trigger_metadata=None)
    try:
        return json.loads(orchestrator(context))
    except Exception as err:  # the SDK reports an orchestrator's failure this way
        text = str(err)
        marker = "$OutOfProcData$:"
        if marker not in text:
            raise
        return {**json.loads(text.split(marker, 1)[1]), "raised": text.split("\n\n" + marker)[0]}


@dataclass
class Retry:
    name: str
    input: str
    first_ms: int
    attempts: int
    tries: int = 1


@dataclass
class Instance:
    id: str
    name: str
    input: str | None
    created: datetime
    status: str = "Pending"
    history: list[dict[str, Any]] = field(default_factory=list)
    inbox: list[dict[str, Any]] = field(default_factory=list)
    matched: int = 0          # actions already turned into events
    next_id: int = 0          # the next event id to give
    retries: dict[int, Retry] = field(default_factory=dict)  # task or retry-timer event id -> its retry
    output: Any = None
    custom_status: Any = None
    error: str | None = None
    updated: datetime | None = None
    last_actions: list[dict[str, Any]] = field(default_factory=list)  # what the latest episode scheduled
    statuses: list[Any] = field(default_factory=list)  # the custom status after each episode
    episodes: list[tuple[str, dict[str, Any]]] = field(default_factory=list)  # (context JSON, state) each


@dataclass
class Work:
    kind: str                 # "activity" or "timer"
    instance: str
    event_id: int
    name: str = ""
    input: str = ""
    fire_at: datetime | None = None


class DurableHost:
    """Instances, their histories, and a queue of activities and timers (see the module docstring)."""

    def __init__(self, orchestrators: dict[str, Callable[..., str]], activities: dict[str, Callable[[Any], Any]],
                 *, now: datetime = START) -> None:
        self.orchestrators, self.activities = orchestrators, activities
        self.now = now
        self.instances: dict[str, Instance] = {}
        self.work: list[Work] = []
        self.lock = threading.RLock()
        self.before_activity: Callable[[str, Any], None] | None = None  # a test's hook, e.g. to save mid-run
        self.activity_log: list[tuple[str, str, Any]] = []  # (instance, activity, input) in the order run
        self.largest_payload = (0, "")  # bytes, what: the largest activity input or result seen
        self.starts: list[str] = []
        self.requests: list[tuple[str, str]] = []  # (method, path) of every management call
        self.hidden_once: set[str] = set()  # ids whose next status read says "no instance" (a race)
        self.server: ThreadingHTTPServer | None = None

    # -- the management API --------------------------------------------------------------------------
    def start_new(self, name: str, instance_id: str, input_json: str | None) -> tuple[int, dict[str, Any]]:
        with self.lock:
            old = self.instances.get(instance_id)
            if old is not None and old.status in RUNNING_STATES:
                return 409, {"Message": f"An Orchestration instance with the status {old.status} already exists."}
            self.work = [w for w in self.work if w.instance != instance_id]  # a replaced instance's leftovers
            inst = Instance(instance_id, name, input_json, created=self.now)
            inst.inbox.append(event(EXECUTION_STARTED, self.now, Name=name, Version="", Input=input_json,
                                    OrchestrationInstance={"InstanceId": instance_id,
                                                           "ExecutionId": f"e{len(self.starts)}"},
                                    ParentInstance=None, Tags=None))
            self.instances[instance_id] = inst
            self.starts.append(instance_id)
            return 202, self.management_payload(instance_id)

    def status(self, instance_id: str) -> tuple[int, dict[str, Any] | None]:
        with self.lock:
            inst = self.instances.get(instance_id)
            if inst is None or instance_id in self.hidden_once:
                self.hidden_once.discard(instance_id)
                return 404, None
            code = 202 if inst.status in RUNNING_STATES else 200
            return code, {"name": inst.name, "instanceId": inst.id, "runtimeStatus": inst.status,
                          "input": inst.input, "customStatus": inst.custom_status, "output": inst.output,
                          "createdTime": inst.created.strftime("%Y-%m-%dT%H:%M:%SZ"),
                          "lastUpdatedTime": (inst.updated or inst.created).strftime("%Y-%m-%dT%H:%M:%SZ")}

    def set_status(self, instance_id: str, status: str) -> None:
        """Put an instance in a state directly (as if it had got there), for the dedupe tests."""
        with self.lock:
            if instance_id not in self.instances:
                self.instances[instance_id] = Instance(instance_id, "evaluate_golden", None, created=self.now)
            self.instances[instance_id].status = status

    # -- running ------------------------------------------------------------------------------------
    def run(self, *, until_done: bool = True, limit: int = 100_000) -> None:
        """Deliver events, run activities and due timers until nothing is left; with ``until_done``,
        move the clock to each next timer as well."""
        for _ in range(limit):
            if self.step():
                continue
            timers = [w for w in self.work if w.kind == "timer"]
            if not until_done or not timers:
                return
            self.now = max(self.now, min(w.fire_at for w in timers))
        raise AssertionError("the host did not settle")

    def advance(self, seconds: float) -> None:
        self.now += timedelta(seconds=seconds)

    def step(self) -> bool:
        """One unit of work: an episode for an instance with an event waiting, else the first queued
        activity, else the earliest due timer. False when there is nothing to do now."""
        with self.lock:
            waiting = next((i for i in self.instances.values() if i.inbox), None)
            if waiting is not None:
                self._episode(waiting)
                return True
            job = next((w for w in self.work if w.kind == "activity"), None)
            if job is None:
                due = sorted((w for w in self.work if w.kind == "timer" and w.fire_at <= self.now),
                             key=lambda w: w.fire_at)
                if not due:
                    return False
                timer = due[0]
                self.work.remove(timer)
                self.instances[timer.instance].inbox.append(
                    event(TIMER_FIRED, self.now, TimerId=timer.event_id, FireAt=stamp(timer.fire_at)))
                return True
            self.work.remove(job)
        self._run_activity(job)  # outside the lock: an activity may call the management API
        return True

    def _run_activity(self, job: Work) -> None:
        arg = ActivityTriggerConverter.decode(Datum(type="json", value=job.input), trigger_metadata=None)
        self._measure(job.input, f"{job.name} input")
        self.activity_log.append((job.instance, job.name, arg))
        if self.before_activity:
            self.before_activity(job.name, arg)
        try:
            result = ActivityTriggerConverter.encode(self.activities[job.name](arg), expected_type=None).value
            self._measure(result, f"{job.name} result")
            done = event(TASK_COMPLETED, self.now, TaskScheduledId=job.event_id, Result=result)
        except Exception as err:  # noqa: BLE001 - an activity that raises is a TaskFailed, as in the host
            done = event(TASK_FAILED, self.now, TaskScheduledId=job.event_id,
                         Reason=f"{type(err).__name__}: {err}", Details=traceback.format_exc())
        with self.lock:
            inst = self.instances.get(job.instance)
            if inst is not None and inst.status in RUNNING_STATES:
                inst.inbox.append(done)

    def _measure(self, text: str, what: str) -> None:
        size = len(text.encode("utf-8"))
        if size > self.largest_payload[0]:
            self.largest_payload = (size, what)

    def _episode(self, inst: Instance) -> None:
        new = inst.inbox.pop(0)
        started = event(ORCHESTRATOR_STARTED, self.now)
        past = [{**e, "IsPlayed": True} for e in inst.history]
        context_json = orchestration_context(past + [started, new], inst.id, inst.input)
        state = replay(self.orchestrators[inst.name], context_json)
        inst.episodes.append((context_json, state))
        inst.history += [started, new]
        inst.status, inst.updated = "Running", self.now
        self._retry_events(inst, new)
        actions = flatten(state.get("actions") or [])
        inst.last_actions = actions[inst.matched:]
        for action in inst.last_actions:
            self._schedule(inst, action)
        inst.matched = len(actions)
        inst.history.append(event(ORCHESTRATOR_COMPLETED, self.now))
        inst.custom_status = state.get("customStatus")
        inst.statuses.append(inst.custom_status)
        if "raised" in state:
            inst.status, inst.error, inst.output = "Failed", state["raised"], state["raised"]
        elif state.get("isDone"):
            inst.status, inst.output = "Completed", state.get("output")
        if inst.status not in RUNNING_STATES:
            self.work = [w for w in self.work if w.instance != inst.id]

    def _schedule(self, inst: Instance, action: dict[str, Any]) -> None:
        kind = action["actionType"]
        if kind in (CALL_ACTIVITY, CALL_ACTIVITY_WITH_RETRY):
            event_id = self._task(inst, action["functionName"], action["input"])
            if kind == CALL_ACTIVITY_WITH_RETRY:
                options = action["retryOptions"]
                inst.retries[event_id] = Retry(action["functionName"], action["input"],
                                               options["firstRetryIntervalInMilliseconds"],
                                               options["maxNumberOfAttempts"])
        elif kind == CREATE_TIMER:
            self._timer(inst, datetime.fromisoformat(action["fireAt"].replace("Z", "+00:00")))
        else:
            raise AssertionError(f"the host does not handle action type {kind}")

    def _task(self, inst: Instance, name: str, input_json: str) -> int:
        event_id, inst.next_id = inst.next_id, inst.next_id + 1
        inst.history.append(event(TASK_SCHEDULED, self.now, event_id, Name=name, Version="", Input=input_json))
        self.work.append(Work("activity", inst.id, event_id, name=name, input=input_json))
        return event_id

    def _timer(self, inst: Instance, fire_at: datetime) -> int:
        event_id, inst.next_id = inst.next_id, inst.next_id + 1
        inst.history.append(event(TIMER_CREATED, self.now, event_id, FireAt=stamp(fire_at)))
        self.work.append(Work("timer", inst.id, event_id, fire_at=fire_at))
        return event_id

    def _retry_events(self, inst: Instance, new: dict[str, Any]) -> None:
        """DTFx's retry loop: after each failed try a timer; when it fires, the next try if any is left."""
        if new["EventType"] == TASK_FAILED and new["TaskScheduledId"] in inst.retries:
            retry = inst.retries.pop(new["TaskScheduledId"])
            timer = self._timer(inst, self.now + timedelta(milliseconds=retry.first_ms))
            inst.retries[timer] = retry
        elif new["EventType"] == TIMER_FIRED and new["TimerId"] in inst.retries:
            retry = inst.retries.pop(new["TimerId"])
            if retry.tries < retry.attempts:
                retry.tries += 1
                inst.retries[self._task(inst, retry.name, retry.input)] = retry

    # -- HTTP ---------------------------------------------------------------------------------------
    def serve(self) -> str:
        """Start the management API on 127.0.0.1; the client binding JSON for it."""
        host = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:  # quiet
                pass

            def _send(self, code: int, body: Any) -> None:
                data = b"" if body is None else json.dumps(body).encode()
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:
                host.requests.append(("GET", self.path))
                parts = urlsplit(self.path).path.split("/")
                if parts[1:3] == ["durabletask", "instances"] and len(parts) == 4:
                    self._send(*host.status(unquote(parts[3])))
                else:
                    self._send(404, None)

            def do_POST(self) -> None:
                host.requests.append(("POST", self.path))
                parts = urlsplit(self.path).path.split("/")
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                if parts[1:3] == ["durabletask", "orchestrators"] and len(parts) == 5:
                    # The Python client posts its input JSON as a JSON string: decode once, keep the text.
                    input_json = json.loads(body) if body else None
                    self._send(*host.start_new(unquote(parts[3]), unquote(parts[4]), input_json))
                else:
                    self._send(404, None)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self.binding()

    def management_payload(self, instance_id: str) -> dict[str, Any]:
        """What the extension answers a start with: the instance's management URLs."""
        urls = json.loads(self.binding())["managementUrls"]
        return {key: value.replace("INSTANCEID", instance_id) for key, value in urls.items()}

    def binding(self) -> str:
        port = self.server.server_address[1] if self.server else 1
        public = f"http://127.0.0.1:{port}/runtime/webhooks/durabletask"
        query = f"taskHub={HUB}&connection=Storage&code=hostkey"
        instance = f"{public}/instances/INSTANCEID"
        return json.dumps(
            {
                "taskHubName": HUB,
                "creationUrls": {
                    "createNewInstancePostUri": (f"{public}/orchestrators/{{functionName}}[/{{instanceId}}]"
                                                 "?code=hostkey"),
                    "createAndWaitOnNewInstancePostUri": (
                        f"{public}/orchestrators/{{functionName}}[/{{instanceId}}]"
                        "?timeout={timeoutInSeconds}&pollingInterval={intervalInSeconds}&code=hostkey"),
                },
                "managementUrls": {
                    "id": "INSTANCEID",
                    "statusQueryGetUri": f"{instance}?{query}",
                    "sendEventPostUri": f"{instance}/raiseEvent/{{eventName}}?{query}",
                    "terminatePostUri": f"{instance}/terminate?reason={{text}}&{query}",
                    "rewindPostUri": f"{instance}/rewind?reason={{text}}&{query}",
                    "purgeHistoryDeleteUri": f"{instance}?{query}",
                    "restartPostUri": f"{instance}/restart?{query}",
                    "suspendPostUri": f"{instance}/suspend?reason={{text}}&{query}",
                    "resumePostUri": f"{instance}/resume?reason={{text}}&{query}",
                },
                "baseUrl": public,
                "requiredQueryStringParameters": "code=hostkey",
                "rpcBaseUrl": f"http://127.0.0.1:{port}/durabletask/",
                "httpBaseUrl": "",
                "maxGrpcMessageSizeInBytes": 0,
                "grpcHttpClientTimeout": "00:01:40",
            }
        )

    def close(self) -> None:
        if self.server:
            self.server.shutdown()
            self.server.server_close()


def call_client_function(function: Callable[..., Any], **kwargs: Any) -> Any:
    """Call a registered client function (its DF middleware, which builds the real Durable client from
    the binding JSON) in a fresh event loop. The SDK keeps one aiohttp session per process; it is
    opened in this loop and closed before the loop ends."""
    from azure.durable_functions.models.utils import http_utils

    async def main() -> Any:
        http_utils._client_session = None
        try:
            return await function(**kwargs)
        finally:
            if http_utils._client_session is not None:
                await http_utils._client_session.close()
            http_utils._client_session = None

    return asyncio.run(main())


def registered(decorated: Any) -> Callable[..., Any]:
    """The function a decorated app function registers, as the worker calls it."""
    return decorated.build().get_user_function()


def event_grid(subject: str, *, event_type: str = "Microsoft.Storage.BlobCreated", event_id: str = "ev-1",
               sequencer: str = "000000000000000000000000000001", url: str = "") -> func.EventGridEvent:
    """A BlobCreated event as Event Grid delivers it to the function."""
    return func.EventGridEvent(
        id=event_id, topic="/subscriptions/s/resourceGroups/g/providers/Microsoft.Storage/storageAccounts/a",
        subject=subject, event_type=event_type, event_time=START, data_version="",
        data={"api": "PutBlob", "clientRequestId": "c", "requestId": "r", "eTag": "0x8D", "contentType":
              "application/octet-stream", "contentLength": 100, "blobType": "BlockBlob", "url": url,
              "sequencer": sequencer, "storageDiagnostics": {"batchId": "b"}})
