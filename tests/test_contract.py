"""The names other parts and users rely on stay: every CLI command and flag, every public name the library
exports (``evaluation`` and each package's ``__all__``), and every key a report holds, as they were when
``tests/fixtures/contract/names.json`` was written (before issue 40 moved the rooms). Adding is free;
a name that disappears fails here with the list of what went, so a refactor cannot drop one unseen.

To record names added on purpose: ``python3 tests/test_contract.py --write`` (it only ever adds)."""
from __future__ import annotations

import argparse
import importlib
import json
import pkgutil
import sys
from pathlib import Path

FIXTURE = Path(__file__).parent / "fixtures" / "contract" / "names.json"


def cli_flags() -> dict[str, list[str]]:
    """Every leaf command of the real parser, by its words, with its option strings and positionals."""
    from evaluation.cli import build_parser

    found: dict[str, list[str]] = {}

    def walk(parser: argparse.ArgumentParser, words: tuple[str, ...]) -> None:
        subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
        names = sorted({s for a in parser._actions for s in (a.option_strings or [a.dest])
                        if not isinstance(a, (argparse._SubParsersAction, argparse._HelpAction))})
        found[" ".join(words) or "(top)"] = names
        for action in subs:
            for name, child in action.choices.items():
                walk(child, (*words, name))

    walk(build_parser(), ())
    return found


def public_names() -> dict[str, list[str]]:
    """``__all__`` of ``evaluation`` and of each of its packages (a package without one lists nothing)."""
    import evaluation

    out = {"evaluation": sorted(evaluation.__all__)}
    for info in pkgutil.iter_modules(evaluation.__path__):
        if info.ispkg:
            module = importlib.import_module(f"evaluation.{info.name}")
            out[f"evaluation.{info.name}"] = sorted(getattr(module, "__all__", []))
    return out


def report_keys() -> dict[str, list[str]]:
    """The keys of a report a real run makes (the fake target of tests/fakes.py, every step of a run):
    its top level, a setup's entry, its summary and the rules."""
    import tempfile

    from evaluation import evaluate
    from fakes import ANSWERS, ListTarget, write_golden

    folder = Path(tempfile.mkdtemp())
    golden = write_golden(folder, [{"question": "where is alpha", "expected": ["alpha"]},
                                   {"question": "where is beta", "expected": ["beta"]}])
    report = evaluate(ListTarget("t", ANSWERS, held={"alpha", "beta", "gamma"}), golden)
    entry = next(s for s in report["setups"] if s.get("summary"))
    return {"report": sorted(report), "setup": sorted(entry), "summary": sorted(entry["summary"]),
            "rules": sorted(report["rules"])}


def current() -> dict[str, dict[str, list[str]]]:
    return {"cli": cli_flags(), "public": public_names(), "report": report_keys()}


def missing(recorded: dict, now: dict) -> list[str]:
    gone = []
    for part, groups in recorded.items():
        for group, names in groups.items():
            have = set(now.get(part, {}).get(group, []))
            if group not in now.get(part, {}):
                gone.append(f"{part}: {group} (all of it)")
                continue
            gone += [f"{part}: {group}: {name}" for name in names if name not in have]
    return gone


def test_no_command_flag_public_name_or_report_key_disappears():
    recorded = json.loads(FIXTURE.read_text(encoding="utf-8"))
    gone = missing(recorded, current())
    assert not gone, "names others rely on went away:\n" + "\n".join(gone)


def test_the_contract_catches_a_name_that_goes():
    recorded = {"cli": {"evaluate": ["--golden"]}, "public": {}, "report": {"rules": ["rank_among"]}}
    now = {"cli": {"evaluate": ["--corpus"]}, "public": {}, "report": {"rules": []}}
    assert missing(recorded, now) == ["cli: evaluate: --golden", "report: rules: rank_among"]


if __name__ == "__main__" and sys.argv[1:] == ["--write"]:
    sys.path.insert(0, str(Path(__file__).parent))
    now = current()
    old = json.loads(FIXTURE.read_text(encoding="utf-8")) if FIXTURE.exists() else {}
    merged = {part: {group: sorted(set(names) | set(old.get(part, {}).get(group, [])))
                     for group, names in {**old.get(part, {}), **now[part]}.items()} for part in now}
    FIXTURE.parent.mkdir(parents=True, exist_ok=True)
    FIXTURE.write_text(json.dumps(merged, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    print(f"wrote {FIXTURE}")
