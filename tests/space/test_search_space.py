"""search_space and ``python3 -m evaluation space`` on the shipped sample, with the ``hash`` embedder (no
model loaded): shared searches give the engine's own results, and a killed run resumes to the same pick."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from evaluation.builds.runner import scratch, setup_for
from evaluation.builds.settings import BuildPlace
from evaluation.engine.corpus import read_corpus
from evaluation.golden import read_golden
from evaluation.space import SpaceSettings, search_space, space_of
from evaluation.space.searching import SpaceSearcher

ROOT = Path(__file__).parent.parent.parent
CORPUS, GOLDEN = ROOT / "samples" / "corpus.jsonl", ROOT / "samples" / "golden.jsonl"
AXES = {"sizes": [300, 600], "overlaps": [0], "models": ["hash"], "methods": ["keyword", "dense", "hybrid"],
        "depths": [10, 50], "rrf_k": [1, 60]}


def _decisions(report: dict) -> dict:
    return {"pick": report["pick"], "rounds": report["rounds"], "top_tier": report["top_tier"],
            "setups": report["setups"], "cost": report["cost"]}


def test_a_hybrid_at_depth_50_and_k_60_is_the_engines_own_hybrid(tmp_path: Path):
    space = space_of({**AXES, "sizes": [300], "depths": [50], "rrf_k": [60]})
    corpus, questions = read_corpus(CORPUS), list(read_golden(GOLDEN).labelled)
    hybrid = next(s for s in space.setups() if s.method == "hybrid")
    texts = [q.question for q in questions]
    with scratch(BuildPlace(workdir=tmp_path)) as where:
        searcher = SpaceSearcher(space.setups(), corpus, questions, where)
        found = searcher([hybrid.key], list(range(len(questions))))[hybrid.key]
        target = searcher.targets[hybrid.chunking]
        ours = searcher._ranked(hybrid, searcher._lists(target, [hybrid], texts), searcher.positions[hybrid.chunking])
        engine = target.search_batch(setup_for(target, "hybrid", ("hash",)), texts, 10)
    assert [[h.id for h in hits] for hits in ours] == [[h.id for h in hits] for hits in engine]
    assert 0 < sum(found) < len(questions)


def test_one_search_per_list_and_question_is_shared_by_every_setup_reading_it(tmp_path: Path):
    space = space_of(AXES)
    report = search_space(space, CORPUS, GOLDEN, settings=SpaceSettings(exhaustive=True, work_dir=tmp_path))
    questions = report["golden"]["questions"]
    assert len(report["setups"]) == 2 * (1 + 1 + 2 * 2)  # per chunking: keyword, dense, hybrid at 2 depths x 2 k
    assert report["engine_searches"] == 2 * 2 * questions  # per chunking: the keyword list and the dense list
    assert report["cost"]["share"] == 1.0 and all(e["questions"] == questions for e in report["setups"])


def test_a_run_killed_between_rounds_resumes_with_the_same_decisions(tmp_path: Path, monkeypatch):
    space = space_of(AXES)
    straight = search_space(space, CORPUS, GOLDEN, settings=SpaceSettings(work_dir=tmp_path / "straight"))
    assert len(straight["rounds"]) >= 2
    calls = {"n": 0}
    original = SpaceSearcher.__call__

    def killed_in_round_2(self, keys, indices):
        calls["n"] += 1
        if calls["n"] == 2:
            raise KeyboardInterrupt
        return original(self, keys, indices)

    settings = SpaceSettings(work_dir=tmp_path / "killed")
    monkeypatch.setattr(SpaceSearcher, "__call__", killed_in_round_2)
    with pytest.raises(KeyboardInterrupt):
        search_space(space, CORPUS, GOLDEN, settings=settings)
    monkeypatch.setattr(SpaceSearcher, "__call__", original)
    assert sorted(p.name for p in (tmp_path / "killed").glob("round-*.json")) == ["round-1.json"]
    resumed = search_space(space, CORPUS, GOLDEN, settings=settings)
    assert resumed["resumed_rounds"] == 1
    assert _decisions(resumed) == _decisions(straight)


def test_a_work_folder_of_another_space_is_refused(tmp_path: Path):
    search_space(space_of({**AXES, "sizes": [300], "methods": ["keyword"]}), CORPUS, GOLDEN,
                 settings=SpaceSettings(work_dir=tmp_path))
    from evaluation.errors import UsageError

    with pytest.raises(UsageError, match=r"plan.json: is another run's \(its space differ"):
        search_space(space_of({**AXES, "sizes": [600], "methods": ["keyword"]}), CORPUS, GOLDEN,
                     settings=SpaceSettings(work_dir=tmp_path))


def test_the_command_says_the_space_and_prints_pick_rounds_and_cost(tmp_path: Path):
    space_file = tmp_path / "space.toml"
    space_file.write_text("\n".join(f"{k} = {json.dumps(v)}" for k, v in AXES.items()), encoding="utf-8")
    out = tmp_path / "space.json"
    done = subprocess.run([sys.executable, "-m", "evaluation", "space", "--space", str(space_file), "--corpus",
                           str(CORPUS), "--golden", str(GOLDEN), "--report-json", str(out), "--quiet"],
                          capture_output=True, text=True, cwd=ROOT, check=False)
    assert done.returncode == 0, done.stderr
    assert "The space: 12 setups over 2 builds" in done.stderr
    assert "Pick: " in done.stdout and "Round 1: 12 setups" in done.stdout
    assert "setup x question searches" in done.stdout
    assert json.loads(out.read_text(encoding="utf-8"))["kind"] == "space"
    both = subprocess.run([sys.executable, "-m", "evaluation", "space", "--space", str(space_file), "--size-chars",
                           "300", "--corpus", str(CORPUS), "--golden", str(GOLDEN)],
                          capture_output=True, text=True, cwd=ROOT, check=False)
    assert both.returncode == 2 and "--size-chars and --space both declare the space" in both.stderr
