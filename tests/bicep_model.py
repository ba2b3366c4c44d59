"""infra/ as data for the tests: every Bicep file parsed once with pycep-parser, and small walkers.

No Bicep compiler runs here, so the tests read the templates as the parser gives them. One quirk to
know: pycep returns an identifier and a string literal alike as a plain string (``location`` and
``'location'`` both read ``"location"``); ``resolve`` looks a plain string up among the file's
variables first, which is what a reader of the template would do.
"""
from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

from pycep import BicepParser

ROOT = Path(__file__).resolve().parent.parent
INFRA = ROOT / "infra"
MAIN = INFRA / "main.bicep"


def bicep_files() -> list[Path]:
    return sorted(INFRA.rglob("*.bicep"))


@functools.cache
def parse(path: Path) -> dict[str, Any]:
    return BicepParser().parse(file_path=path)


@dataclass(frozen=True)
class Resource:
    """One ``resource`` declaration; ``body`` is its object with any ``if``/``for`` unwrapped."""
    file: Path
    symbol: str
    type: str
    existing: bool
    condition: Any
    loop: Any
    body: dict[str, Any]


def unwrap(config: dict[str, Any]) -> tuple[Any, Any, dict[str, Any]]:
    """(condition, loop, body) of a resource or module value: ``if (...) {...}``, ``[for ...: {...}]``."""
    condition = loop = None
    while isinstance(config, dict) and "config" in config and ("condition" in config or "loop_type" in config):
        condition = config.get("condition") or condition
        loop = config.get("loop_type") or loop
        config = config["config"]
    return condition, loop, config


def resources(type_name: str | None = None, *, existing: bool | None = False) -> list[Resource]:
    """Resources of every file (of ``type_name``); ``existing=None`` keeps references to existing ones too."""
    found = []
    for path in bicep_files():
        for symbol, declared in parse(path).get("resources", {}).items():
            if type_name is not None and declared["type"] != type_name:
                continue
            if existing is not None and declared["existing"] != existing:
                continue
            condition, loop, body = unwrap(declared["config"])
            found.append(Resource(path, symbol, declared["type"], declared["existing"], condition, loop, body))
    return found


def one(type_name: str) -> Resource:
    """The single resource of ``type_name`` that a template creates."""
    matches = resources(type_name)
    assert len(matches) == 1, f"expected one {type_name}, found {[(m.file.name, m.symbol) for m in matches]}"
    return matches[0]


def variables(path: Path) -> dict[str, Any]:
    return {name: declared["value"] for name, declared in parse(path).get("variables", {}).items()}


def parameters(path: Path) -> dict[str, dict[str, Any]]:
    return parse(path).get("parameters", {})


def resolve(path: Path, value: Any) -> Any:
    """``value`` with a bare variable name replaced by the variable's value (followed through chains)."""
    seen = set()
    known = variables(path)
    while isinstance(value, str) and value in known and value not in seen:
        seen.add(value)
        value = known[value]
    return value


def walk(node: Any) -> Iterator[Any]:
    """Every node under ``node``, depth first, dict keys included (they are names of settings and properties)."""
    yield node
    if isinstance(node, dict):
        for key, child in node.items():
            yield key
            yield from walk(child)
    elif isinstance(node, list):
        for child in node:
            yield from walk(child)


def strings(node: Any) -> list[str]:
    return [item for item in walk(node) if isinstance(item, str)]


def functions(node: Any, function_type: str) -> list[dict[str, Any]]:
    """Parameters of every call of ``function_type`` (pycep's name: ``guid``, ``subscription_resource_id``, ...)."""
    return [item["function"]["parameters"] for item in walk(node)
            if isinstance(item, dict) and isinstance(item.get("function"), dict)
            and item["function"].get("type") == function_type]


_JOINERS = {"property_accessor": ".", "nested_resource_accessor": "::"}


def accessor_path(node: Any) -> str | None:
    """``a.b.c`` / ``a::b.id`` for a chain of accessors (``identity.properties.clientId``), else None."""
    if isinstance(node, str):
        return node
    if isinstance(node, dict) and isinstance(node.get("operator"), dict) \
            and node["operator"].get("type") in _JOINERS:
        operands = node["operator"]["operands"]
        left, right = accessor_path(operands["operand_1"]), accessor_path(operands["operand_2"])
        return f"{left}{_JOINERS[node['operator']['type']]}{right}" if left and right else None
    return None


def module_calls(path: Path = MAIN) -> dict[str, dict[str, Any]]:
    """symbol -> {"path": module file, "condition": ..., "params": {...}} for every module a template calls."""
    calls = {}
    for symbol, declared in parse(path).get("modules", {}).items():
        condition, _, body = unwrap(declared["config"])
        calls[symbol] = {"path": (path.parent / declared["detail"]["path"]).resolve(),
                         "condition": condition, "params": body.get("params", {}), "body": body}
    return calls


def raw_lines(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines()


# Literal text that is a credential, whatever the setting is called.
_SECRET_TEXT = [
    (re.compile(r"AccountKey=", re.I), "a storage account key"),
    (re.compile(r"SharedAccess(Key|Signature)", re.I), "a shared access key or signature"),
    (re.compile(r"[?&;]sig=", re.I), "a SAS signature"),
    (re.compile(r"InstrumentationKey=[0-9a-f-]{8,}", re.I), "an Application Insights instrumentation key"),
    (re.compile(r"(password|passwd|pwd|client_?secret|api_?key)\s*[=:]", re.I), "a password or secret"),
    (re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----"), "a private key"),
    (re.compile(r"\beyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}"), "a token"),
    (re.compile(r"\.?\blist[A-Za-z]*\(|\bgetSecret\("), "a list*() or getSecret() call that returns secrets"),
]


# A key or SAS written out: 40+ base64 characters mixing upper case, lower case and digits (resource
# type paths such as Storage/storageAccounts/blobServices are as long, but hold no digit).
_BASE64_RUN = re.compile(r"[A-Za-z0-9+/]{40,}={0,2}")


def _looks_like_base64_key(text: str) -> bool:
    return any(re.search(r"[a-z]", run) and re.search(r"[A-Z]", run) and re.search(r"[0-9]", run)
               for run in _BASE64_RUN.findall(text))


def secret_problems(node: Any) -> list[str]:
    """What in ``node`` looks like a secret: literal credentials, and calls that read keys (``listKeys()``)."""
    problems = []
    for item in walk(node):
        if isinstance(item, str):
            problems += [f"{item!r} looks like {what}" for pattern, what in _SECRET_TEXT if pattern.search(item)]
            if _looks_like_base64_key(item):
                problems.append(f"{item!r} looks like a key written out")
        elif isinstance(item, dict):
            # listKeys(id, version) and resource.listKeys() both carry the name as "func_name"
            name = item.get("func_name")
            if isinstance(name, str) and (name.lower().startswith("list") or name == "getSecret"):
                problems.append(f"calls {name}(), which returns secrets")
    return problems
