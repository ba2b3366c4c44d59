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
