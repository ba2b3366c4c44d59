"""Hand-made targets for the flow tests: fixed result lists, enough to check the flow, not an engine."""
from __future__ import annotations

import json

from evaluation.target import Hit, Setup


class ListTarget:
    """A target whose setups return fixed result lists: enough to check the flow, not the engine."""

    engine = "test"

    def __init__(self, name, answers, held, broken=()):
        self.name, self.answers, self.held, self.broken = name, answers, set(held), set(broken)
        self.calls = []

    def describe(self):
        return {"name": self.name, "engine": self.engine, "collection": "docs", "chunks": 9, "models": []}

    def setups(self):
        return [Setup(self.name, self.engine, "keyword"), Setup(self.name, self.engine, "dense", ("m",)),
                Setup(self.name, self.engine, "hybrid", ("m",))]

    def _results(self, setup, question):
        if setup.method in self.broken:
            raise RuntimeError("the service said no")
        docs = self.answers[setup.method].get(question, [])
        return [Hit(id=f"{d}:0", doc_id=d, page=None, score=1.0 / (i + 1)) for i, d in enumerate(docs)]

    def search(self, setup, question, depth):
        self.calls.append(("search", setup.key, question))
        return self._results(setup, question)[:depth]

    def search_batch(self, setup, questions, depth):
        self.calls.append(("batch", setup.key, tuple(questions)))
        return [self._results(setup, q)[:depth] for q in questions]

    def holds(self, doc_ids):
        return {d for d in doc_ids if d in self.held}

    def holds_chunks(self, chunk_ids):
        return {c for c in chunk_ids if c.rsplit(":", 1)[0] in self.held and c.endswith(":0")}


def write_golden(tmp_path, rows):
    path = tmp_path / "golden.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    return path


ANSWERS = {
    "keyword": {"where is alpha": ["alpha"], "where is beta": ["x", "beta"], "where is gamma": []},
    "dense": {"where is alpha": ["x", "y", "alpha"], "where is beta": ["beta"], "where is gamma": ["gamma"]},
    "hybrid": {"where is alpha": ["alpha"], "where is beta": ["beta"], "where is gamma": ["gamma"]},
}


def through_json(value):
    """``value`` written as JSON and read back, as a Durable run's working files carry it (a ``Plan`` as its
    JSON, read back as the ``Plan``)."""
    from evaluation.run import Plan

    if isinstance(value, Plan):
        return Plan.from_json(json.loads(json.dumps(value.to_json())))
    return json.loads(json.dumps(value))


def fake_plan(setups, questions=100, timed=10, **fields):
    """A plan of ``questions`` questions (``q0``, ``q1``, ...), the first ``timed`` sampled, and ``setups``
    given as ``Setup.to_dict``'s fields (any left out filled in: only what the test is about is written)."""
    from evaluation.golden import Question
    from evaluation.run import EvaluationSettings, Plan, PlannedSetup

    ids = [f"q{n}" for n in range(questions)]
    planned = tuple(PlannedSetup(key=s["key"], target=s.get("target", s["key"].split(".")[0]),
                                 engine=s.get("engine", "embedded"), method=s.get("method", s["key"].split(".")[1]),
                                 method_label=s.get("method_label", s["key"]), retrieval=s.get("retrieval", "keyword"),
                                 models=tuple(s.get("models", ())), ranker=s.get("ranker"),
                                 options=s.get("options", {})) for s in setups)
    made = {"run_id": "run-1", "created_at": "2026-11-30T01:02:03Z", "settings": EvaluationSettings(), "golden": {},
            "questions": tuple(Question(id=q, question=f"question {q}", expected=("d",)) for q in ids),
            "timed_question_ids": tuple(ids[:timed]), "setups": planned, "targets": {}, "missing": {}}
    return Plan(**{**made, **fields})
