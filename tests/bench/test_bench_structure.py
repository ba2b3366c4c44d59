"""bench/bench_structure.py's walk (``--walk``): a call is counted into the module it enters, and a climb is a
call from one top-level part into another part above it, one that imports the caller's part directly or
through others; a call between parts neither of which imports the other is no climb. Proved on a tiny
package whose every call is written out below, traced for real in a process of its own."""
from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent.parent / "bench"))
import bench_structure as bench

BENCH = Path(bench.__file__).parent

# top imports middle and side, middle imports low, activities imports low and top: top sits above low only
# through middle; side and middle do not import each other
PACKAGE = {
    "evaluation/__init__.py": "",
    "evaluation/low.py": "def apply(fn, x):\n    return fn(x)\n\n\ndef total(items):\n    return sum(items)\n",
    "evaluation/side.py": "def call(fn):\n    return fn(1)\n",
    "evaluation/middle/__init__.py": "",
    "evaluation/middle/step.py": ("from ..low import apply, total\n\n\ndef double(x):\n    return 2 * x\n\n\n"
                                  "def numbers():\n    yield 1\n    yield 2\n\n\n"
                                  "def run(fn):\n    return apply(double, 1) + apply(fn, 1) + total(numbers())\n"),
    "evaluation/top.py": ("from . import side\nfrom .middle.step import double, run\n\n\n"
                          "def hook(x):\n    return x\n\n\ndef go():\n    return run(hook) + side.call(double)\n"),
    "activities/__init__.py": "",
    "activities/act.py": ("from evaluation.low import apply\nfrom evaluation.top import go\n\n\n"
                          "def noted(x):\n    return x\n\n\ndef main():\n    return go() + apply(noted, 1)\n"),
}


def tiny_package(root: Path) -> Path:
    for name, text in PACKAGE.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")
    return root


def traced(root: Path) -> list[tuple[str | None, str, int]]:
    """``activities.act.main`` traced by ``bench.trace`` in a fresh interpreter (this one has the real
    ``evaluation`` imported)."""
    code = (f"import json, sys; sys.path[:0] = [{str(root)!r}, {str(BENCH)!r}]\n"
            "from pathlib import Path\nimport bench_structure, activities.act\n"
            f"result, edges = bench_structure.trace(Path({str(root)!r}), activities.act.main)\n"
            "print(json.dumps([result, edges]))")
    result, edges = json.loads(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                                              check=True).stdout)
    # run(hook): double(1) + hook(1) + (1 + 2); side.call(double); apply(noted, 1)
    assert result == (2 * 1 + 1 + 3) + 2 * 1 + 1
    return [(caller, callee, n) for caller, callee, n in edges]


def test_the_parts_each_part_imports_are_read_from_every_import_relative_or_absolute(tmp_path):
    assert bench.part_imports(tiny_package(tmp_path)) == {
        "evaluation": set(), "evaluation.low": set(), "evaluation.side": set(),
        "evaluation.middle": {"evaluation.low"}, "evaluation.top": {"evaluation.side", "evaluation.middle"},
        "activities": {"evaluation.low", "evaluation.top"}}
    assert bench.parts_above(bench.part_imports(tmp_path))["evaluation.low"] == {
        "evaluation.middle", "evaluation.top", "activities"}  # top through middle


def test_a_walk_counts_every_call_into_the_package_and_the_calls_back_up_the_layers(tmp_path):
    walk = bench.count_walk(traced(tiny_package(tmp_path)), bench.part_imports(tmp_path))

    # main and noted; go and hook; run, double twice (from low, from side) and numbers once (started once,
    # resumed three times by sum in low); apply three times and total once; call once
    assert walk.entered == Counter({"activities.act": 2, "evaluation.top": 2, "evaluation.middle.step": 4,
                                    "evaluation.low": 4, "evaluation.side": 1})
    assert (walk.calls, walk.rooms) == (2 + 2 + 4 + 4 + 1, 5)
    # low calls back double and drives numbers (middle imports low), calls hook (top imports low through
    # middle) and noted (activities imports low); side calling double is no climb (neither imports the
    # other), nor is any call down
    assert walk.climbing == Counter({("evaluation.low", "evaluation.middle"): 2,
                                     ("evaluation.low", "evaluation.top"): 1, ("evaluation.low", "activities"): 1})
    assert walk.climbs == 4


def test_the_compat_aliases_leaf_is_a_part_of_its_own_as_the_layout_test_places_it():
    assert bench.part_of("evaluation.compat.aliases") == "evaluation.compat.aliases"
    assert bench.part_of("evaluation.compat.vectrixdb.retrieval") == "evaluation.compat"
    assert bench.part_of("evaluation.run.plan") == "evaluation.run"
    assert bench.part_of("activities.planning") == "activities"
