"""A small world whose every relevance is known, and scripted judges of known agreement with it.

Each question ``q<i>`` has a labelled relevant document ``a<i>``, a labelled not-relevant one ``c<i>``
(grade 0), a truly relevant document nobody labelled ``b<i>`` (a hole a perfect judge fills) and
fillers ``n<i>_<k>`` that are relevant to nothing. Four setups search it:

- ``keyword``: a<i> first, then c<i> on odd questions (a labelled 0 in its top 10: what a judge biased
  toward it over-grades);
- ``dense.m1``: b<i> first, a<i> only on even questions (second): people's labels undersell it;
- ``dense.m2``: a<i> third on every third question, b<i> never: weak whatever the labels;
- ``hybrid.m1``: a<i> on questions past the first quarter, b<i> on every question (in the top 10).

On the people's labels alone the order is keyword > hybrid > dense.m1 > dense.m2; with the holes filled
truly, dense.m1 and hybrid find every question (b<i>) and rise: the tau between the two orders is known.
A graded world gives a<i> grade 3, b<i> grade 2 and c<i> 0 on a 0-3 scale.

Judges answer the prompt by its ``[q <id>]`` and ``[doc <unit>]`` marks, as a model would answer by the
text: ``perfect`` (the truth), ``noisy`` (each grade flipped with probability p, decided once per pair
by a seeded hash, to another grade at random), ``biased`` (the truth, but every result the favoured
setup put in its top 10 graded at the top of the scale).
"""
from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field

from chat_server import Reply, Seen, completion

from evaluation.target import Hit, Setup

FILLERS = 8


def ids(n: int) -> list[int]:
    return list(range(1, n + 1))


def results(method: str, i: int) -> list[str]:
    fill = [f"n{i}_{k}" for k in range(FILLERS)]
    if method == "keyword":
        return [f"a{i}", f"c{i}", *fill] if i % 2 else [f"a{i}", *fill]
    if method == "dense.m1":
        return [f"b{i}", f"a{i}", *fill] if i % 2 == 0 else [f"b{i}", *fill]
    if method == "dense.m2":
        return [fill[0], fill[1], f"a{i}", *fill[2:]] if i % 3 == 0 else fill
    if method == "hybrid.m1":
        return ([fill[0], f"a{i}", f"b{i}", *fill[1:]] if i > 0.25 * WORLD_SIZE[0] else [fill[0], f"b{i}", *fill[1:]])
    raise KeyError(method)


WORLD_SIZE = [40]
METHODS = {"keyword": ("keyword", ()), "dense.m1": ("dense", ("m1",)), "dense.m2": ("dense", ("m2",)),
           "hybrid.m1": ("hybrid", ("m1",))}


@dataclass
class World:
    n: int = 40
    graded: bool = False

    def __post_init__(self) -> None:
        WORLD_SIZE[0] = self.n

    @property
    def top(self) -> int:
        return 3 if self.graded else 1

    def question(self, i: int) -> str:
        return f"[q q{i}] what does topic {i} say?"

    def golden_rows(self) -> list[dict]:
        good = 3 if self.graded else 1
        return [{"id": f"q{i}", "question": self.question(i), "expected": {f"a{i}": good, f"c{i}": 0}}
                for i in ids(self.n)]

    def truth(self, qid: str, unit: str) -> int:
        i = qid[1:]
        if unit == f"a{i}":
            return 3 if self.graded else 1
        if unit == f"b{i}":
            return 2 if self.graded else 1
        return 0

    def texts(self, units) -> dict[str, str]:
        return {u: f"[doc {u}] A passage of the world about {u}." for u in units}

    def target(self) -> WorldTarget:
        return WorldTarget(self)

    def top10(self, method: str, qid: str) -> set[str]:
        return set(results(method, int(qid[1:]))[:10])


class WorldTarget:
    engine = "test"
    name = "w"

    def __init__(self, world: World) -> None:
        self.world = world
        self.by_question = {world.question(i): i for i in ids(world.n)}

    def describe(self):
        return {"name": self.name, "engine": self.engine, "collection": "world", "chunks": 1, "models": []}

    def setups(self):
        return [Setup(self.name, self.engine, method, models) for method, models in METHODS.values()]

    def _method(self, setup: Setup) -> str:
        return setup.method if not setup.models else f"{setup.method}.{setup.models[0]}"

    def search(self, setup, question, depth):
        i = self.by_question[question]
        return [Hit(id=f"{d}:0", doc_id=d, page=None, score=1.0 / (n + 1))
                for n, d in enumerate(results(self._method(setup), i))][:depth]

    def search_batch(self, setup, questions, depth):
        return [self.search(setup, q, depth) for q in questions]

    def holds(self, doc_ids):
        return set(doc_ids)

    def holds_chunks(self, chunk_ids):
        return set(chunk_ids)


def seen_pair(user: str) -> tuple[str, str]:
    qid = re.search(r"\[q (\S+)\]", user).group(1)
    unit = re.search(r"\[doc (\S+)\]", user).group(1)
    return qid, unit


@dataclass
class ScriptedJudge:
    """``grade(qid, unit) -> grade``, as a chat model over ``ChatServer.respond`` or as a grader in process
    (``ask``). ``asked`` counts the pairs it was asked about."""

    world: World
    kind: str = "perfect"  # perfect, noisy, biased
    p: float = 0.0
    seed: int = 0
    favoured: str = "keyword"
    usage: bool = True
    name: str = "judge-model"
    max_tokens: int = 100
    asked: list[tuple[str, str]] = field(default_factory=list)

    def grade(self, qid: str, unit: str) -> int:
        true = self.world.truth(qid, unit)
        if self.kind == "biased" and unit in self.world.top10(self.favoured, qid):
            return self.world.top
        if self.kind == "noisy" and self.flipped(qid, unit):
            others = [g for g in range(self.world.top + 1) if g != true]
            return others[self.draw(qid, unit, "to") % len(others)]
        return true

    def draw(self, qid: str, unit: str, what: str) -> int:
        digest = hashlib.sha256(f"{self.seed}|{qid}|{unit}|{what}".encode()).digest()
        return int.from_bytes(digest[:8], "big")

    def flipped(self, qid: str, unit: str) -> bool:
        return self.draw(qid, unit, "flip") / 2 ** 64 < self.p

    def reply_text(self, user: str) -> str:
        qid, unit = seen_pair(user)
        self.asked.append((qid, unit))
        return json.dumps({"grade": self.grade(qid, unit), "reason": "scripted"})

    def __call__(self, seen: Seen) -> Reply:  # ChatServer.respond
        body = completion(self.reply_text(seen.body["messages"][-1]["content"]))
        if not self.usage:
            body.pop("usage")
        else:
            body["usage"] = {"prompt_tokens": 300, "completion_tokens": 12, "total_tokens": 312}
        return Reply(body=body)

    def ask(self, messages):  # a grader in process
        return self.reply_text(messages[-1]["content"]), {"prompt_tokens": 300, "completion_tokens": 12}
