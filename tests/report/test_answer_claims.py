"""Every sentence the answer writes, read back against the numbers it states (issue 47).

Random runs (hypothesis draws the setups, how often each finds a question, how long each search takes, the
questions, the points and the floor) go through the real ``evaluate`` (ranking, picks, time tiers, paired
tests); every sentence of ``report/answer.py`` (the findings, each pick's why, the setups it was chosen
among, the paired test's note) is cut into clauses and each claim in it is parsed and checked against the
report: a count compared is the two setups' counts with "more", "fewer" or "as many" as they are; a
multiplier is the named pair's ratio and interval (or the band of their medians), in the right direction;
"as fast" is the floor's verdict; "the fastest within P points (Q questions)" is the fastest of the setups
``allowed_shortfall`` lets in; a tie on time is the tier's, with the test's reason. Nothing comparative is
left unparsed (a sentence that says a number or a "more" the checker cannot read fails), and each sentence
is said word for word on the page and at the terminal, so no card and no line can say something else.
"""
from __future__ import annotations

import html
import math
import os
import random
import re
from fractions import Fraction

from hypothesis import HealthCheck, Phase, example, given, settings, strategies as st

from evaluation.store.run_report import RunReport
from evaluation import evaluate
from evaluation.report.answer import findings, pick_answers
from evaluation.report.html import render_html
from evaluation.report.text import render_report
from evaluation.scoring.time_pairs import TimePair, slower_by_more
from evaluation.target import Hit, Setup
from fakes import write_golden

MENU = [("keyword", (), None), ("keyword_documents", (), None), ("dense", ("m1",), None), ("dense", ("m2",), None),
        ("dense", ("m1", "m2"), None), ("hybrid", ("m1",), None), ("hybrid", ("m2",), None),
        ("hybrid", ("m1", "m2"), None), ("hybrid", ("m1",), "cross-encoder"), ("hybrid", ("m1", "m2"), "cross-encoder"),
        ("keyword", (), "semantic"), ("hybrid", ("m1",), "semantic")]
# CLAIMS_QUICK=1 (for the runs that apply a mutation and expect a failure): the first failing example, unshrunk
PHASES = (Phase.explicit, Phase.generate) if os.environ.get("CLAIMS_QUICK") else tuple(Phase)
COSTS = (0.3, 0.5, 1.0, 2.0, 4.0, 6.0, 9.0, 10.0, 19.0, 40.0, 300.0, 900.0)  # ms a search, before its jitter


class DrawnTarget:
    """Setups whose every question's rank is drawn beforehand; a search moves the run's clock by the setup's
    cost, jittered, so times, pairs and tiers are the real code's over made-up durations."""

    engine = "test"

    def __init__(self, setups, ranks, cost_ms, now, rng):
        self.name, self._setups, self.ranks, self.cost_ms, self.now, self.rng = "t", setups, ranks, cost_ms, now, rng

    def describe(self):
        return {"name": self.name, "engine": self.engine, "collection": "docs", "chunks": 9, "models": []}

    def setups(self):
        return list(self._setups)

    def _results(self, setup, question):
        n = int(question.split()[1])
        docs = [f"x{j}" for j in range(20)]
        if self.ranks[setup.key][n] is not None:
            docs[self.ranks[setup.key][n] - 1] = f"d{n}"
        return [Hit(id=f"{d}:0", doc_id=d, page=None, score=1.0 / (i + 1)) for i, d in enumerate(docs)]

    def search(self, setup, question, depth):
        self.now[0] += self.cost_ms[setup.key] * self.rng.lognormvariate(0, 0.2) / 1000
        return self._results(setup, question)[:depth]

    def search_batch(self, setup, questions, depth):
        return [self._results(setup, q)[:depth] for q in questions]

    def holds(self, doc_ids):
        return set(doc_ids)

    def holds_chunks(self, chunk_ids):
        return set(chunk_ids)


def drawn_report(folder, seed: int, questions: int, chosen: list[int], costs: list[float], skills: list[float],
                 balance: float = 4, time_points: float = 8, floor: float = 5.0, exhaustive: bool = False) -> dict:
    rng = random.Random(seed)
    setups = [Setup("t", "test", retrieval, models, ranker) for retrieval, models, ranker in (MENU[i] for i in chosen)]
    # ranks drawn from a few levels of skill, so equal counts (and equal found@1) come often
    ranks = {s.key: [(rng.choice((1, 1, 2, 3, 7, 12)) if rng.random() < skill else None) for _ in range(questions)]
             for s, skill in zip(setups, skills, strict=True)}
    now = [0.0]
    golden = write_golden(folder, [{"id": f"q{n}", "question": f"question {n}", "expected": [f"d{n}"]}
                                   for n in range(questions)])
    target = DrawnTarget(setups, ranks, dict(zip((s.key for s in setups), costs, strict=True)), now, rng)
    return evaluate(target, golden, clock=lambda: now[0], resamples=200, balance=balance, time_points=time_points,
                    equally_fast_ms=floor, time_floor=6, timed=12, exhaustive=exhaustive)


# -- reading a sentence back ---------------------------------------------------------------------------

def clauses(sentence: str) -> list[str]:
    """``sentence`` cut at "; " and ": " outside parentheses: each clause has one subject."""
    out, depth, start = [], 0, 0
    for n, ch in enumerate(sentence):
        depth += ch == "("
        depth -= ch == ")"
        if depth == 0 and sentence[n:n + 2] in ("; ", ": "):
            out.append(sentence[start:n])
            start = n + 2
    out.append(sentence[start:])
    return [c for c in out if c]


def times_text(value: float) -> str:
    return f"{value:,.0f}" if value >= 10 else f"{value:.1f}"


def allowed(points: float, questions: int) -> int:
    return int(Fraction(str(points)) * questions // 100)


class Claims:
    """The checker: ``check(sentence, pick)`` returns every claim of ``sentence`` that the report's numbers
    contradict, and every comparative word or number it could not read (``pick``: the setup "it" is)."""

    def __init__(self, report: dict) -> None:
        self.report = report
        self.by_key = {s["key"]: s for s in report["setups"] if s.get("summary") and not s.get("error")}
        keys = sorted(self.by_key, key=len, reverse=True)
        self.key = "(?:" + "|".join(re.escape(k) for k in keys) + ")"
        self.floor = report["rules"]["equally_fast_ms"]
        self.top = report["picks"]["finds_the_most"]
        self.questions = len(report["question_ids"])

    def count(self, key: str, k: int = 10) -> int:
        return self.by_key[key]["summary"]["counts"][str(k)]

    def median(self, key: str) -> float:
        return self.by_key[key]["summary"]["median_ms"]

    def pair(self, a: str, b: str) -> dict | None:
        return next((r for r in self.report["time_pairs"] if {r["faster"], r["slower"]} == {a, b}), None)

    def best(self, keys: list[str]) -> str:
        return min(keys, key=lambda k: (-self.count(k), self.median(k), k))

    def baseline(self, tail: str, subject: str) -> str | None:
        """The setup a finding's "the best ... without it / with vectors" must name."""
        ran = self.by_key.values()
        if "with vectors" in tail:
            return self.best([s["key"] for s in ran if s["models"] and s["retrieval"] not in ("keyword",
                                                                                              "keyword_documents")])
        ranker = self.by_key[subject]["ranker"]
        return self.best([s["key"] for s in ran if not s["ranker"] and s["retrieval"] in ("hybrid", "keyword")
                          and (ranker != "cross-encoder" or s["retrieval"] == "hybrid")])

    def check(self, sentence: str, pick: str, name: str | None = None) -> list[str]:
        wrong = []
        for clause in clauses(sentence):
            first = re.search(rf"(?<![\w.+-])({self.key}|it)(?![\w.+-])", clause)
            subject = pick if first is None or first.group(1) == "it" else first.group(1)
            wrong += [f"{w}: {clause!r}" for w in self._clause(clause, subject, pick, name)]
        return wrong

    def _clause(self, clause: str, subject: str, pick: str, name: str | None) -> list[str]:
        key, wrong, spans = self.key, [], []

        def said(pattern: str):
            for match in re.finditer(pattern, clause):
                spans.append(match.span())
                yield match

        def who(value: str | None) -> str:
            return pick if value in (None, "it") else value

        for m in said(rf"(?<![-\d])(?P<n>\d+) (?P<q>questions?) (?P<dir>more|fewer)"
                      rf"(?P<where> in the top 10| at found@1)? than "
                      rf"(?P<other>{key}|it)(?P<tail>, the best [a-z -]+? with(?:out it| vectors))? "
                      rf"\((?P<a>\d+) against (?P<b>\d+)(?: of (?P<N>\d+))?\)"):
            k = 1 if m["where"] == " at found@1" else 10
            mine, theirs, other = self.count(subject, k), self.count(who(m["other"]), k), who(m["other"])
            if (int(m["a"]), int(m["b"])) != (mine, theirs):
                wrong.append(f"counts {m['a']} against {m['b']} are not {subject}'s {mine} and {other}'s {theirs}")
            if int(m["n"]) != abs(mine - theirs) or m["dir"] != ("more" if mine > theirs else "fewer"):
                wrong.append(f"'{m['n']} {m['dir']}' is not {mine} against {theirs}")
            if mine == theirs:
                wrong.append(f"'{m['n']} {m['dir']}' where both find {mine}: that is as many")
            if (m["n"] == "1") != (m["q"] == "question"):
                wrong.append(f"'{m['n']} {m['q']}'")
            if m["N"] and int(m["N"]) != self.questions:
                wrong.append(f"of {m['N']} is not the {self.questions} questions")
            if m["tail"] and self.baseline(m["tail"], subject) != other:
                wrong.append(f"{other} is not{m['tail']}")
        for m in said(rf"as many(?: questions(?P<where> in the top 10| at found@1))? as (?P<other>{key}|it)"
                      rf"(?P<tail>, the best [a-z -]+? with(?:out it| vectors))? "
                      rf"\((?P<a>\d+)(?: of (?P<N>\d+))? each\)"):
            k = 1 if m["where"] == " at found@1" else 10
            other = who(m["other"])
            if not int(m["a"]) == self.count(subject, k) == self.count(other, k):
                wrong.append(f"'as many ({m['a']} each)' is not {self.count(subject, k)} and {self.count(other, k)}")
            if m["tail"] and self.baseline(m["tail"], subject) != other:
                wrong.append(f"{other} is not{m['tail']}")
        for m in said(r"it finds the most questions in its top 10 \((?P<a>\d+)(?: of (?P<N>\d+))?\)"):
            most = max(self.count(k) for k in self.by_key)
            if not int(m["a"]) == self.count(pick) == most:
                wrong.append(f"the most is {most}, not {m['a']}")
        for m in said(r"(?P<k>\d+) other setups? finds? as many"):
            level = [k for k in self.by_key if k != pick and self.count(k) == self.count(pick)]
            if int(m["k"]) != len(level):
                wrong.append(f"{len(level)} other setups find as many, not {m['k']}")
        for m in said(r"finds (?P<n>\d+) questions? (?P<dir>more|fewer) in the top 10, and (?P<q>\d+) questions? "
                      r"are too few to tell whether that is luck(?: \(telling a gap this size would take "
                      r"(?:about|more than) [\d,]+ questions\))?"):
            mine, theirs = self.count(subject), self.count(pick)
            if int(m["n"]) != abs(mine - theirs) or m["dir"] != ("more" if mine > theirs else "fewer") \
                    or mine == theirs:
                wrong.append(f"'{m['n']} {m['dir']}' is not {subject}'s {mine} against {pick}'s {theirs}")
        for _ in said(r"finds (?:the same|as many) questions in the top 10(?! as)"):
            if self.count(subject) != self.count(pick):
                wrong.append(f"{subject} finds {self.count(subject)}, {pick} {self.count(pick)}: not as many")
        for m in said(rf"(?P<r>[\d.,]+)x (?P<dir>faster|slower) than (?P<other>{key}|it) "
                      rf"\((?P<lo>[\d.,]+)x to (?P<hi>[\d.,]+)x\)"):
            other = who(m["other"])
            row = self.pair(subject, other)
            if row is None or row["ratio"] is None:
                wrong.append(f"no side-by-side pair of {subject} and {other} to give {m['r']}x")
                continue
            if (m["r"], m["lo"], m["hi"]) != tuple(times_text(row[f]) for f in ("ratio", "low", "high")):
                wrong.append(f"{m['r']}x ({m['lo']}-{m['hi']}) is not the pair's {row['ratio']} "
                             f"({row['low']}-{row['high']})")
            if (m["dir"] == "faster") != (row["faster"] == subject) or row["ratio"] < 1.05:
                wrong.append(f"{subject} is not {m['dir']} than {other}: the pair says {row['faster']} is faster")
            if not row["over_floor"]:
                wrong.append(f"{subject} and {other} are equally fast under the floor, not {m['r']}x apart")
        for m in said(rf"(?:between (?P<lo>[\d.]+)x and (?P<hi>[\d.]+)x|over (?P<over>[\d,]+)x) (?P<dir>faster|slower) "
                      rf"than (?P<other>{key}|it)"):
            other = who(m["other"])
            row = self.pair(subject, other)
            ratio = max(self.median(subject), self.median(other)) / min(self.median(subject), self.median(other))
            low, high = (float(m["lo"]), float(m["hi"])) if m["lo"] else (float(m["over"].replace(",", "")), math.inf)
            if (row is not None and row["ratio"] is not None) or not low <= ratio < high:
                wrong.append(f"a band {low}-{high} for {subject}/{other} (ratio {ratio:.3g}, pair {row})")
            if (m["dir"] == "faster") != (self.median(subject) < self.median(other)):
                wrong.append(f"{subject} is not {m['dir']} than {other} by their medians")
        for m in said(rf"(?<!about )as fast as (?P<other>{key}|it) \(equally fast: (?:both under (?P<f1>[\d.]+) ms|"
                      rf"(?P<f2>[\d.]+) ms or less apart)\)"):
            other = who(m["other"])
            wrong += self._equal(subject, other, m["f1"], m["f2"], self._pair_equal(subject, other))
        for m in said(rf"about as fast as (?P<other>{key}|it)"):
            row, other = self.pair(subject, who(m["other"])), who(m["other"])
            ratio = (row["ratio"] if row is not None and row["ratio"] is not None else
                     max(self.median(subject), self.median(other)) / min(self.median(subject), self.median(other)))
            if ratio >= 1.05:
                wrong.append(f"{subject} and {other} are not within 1.05x: {ratio}")
        for m in said(rf"tied (?:with (?P<o1>it|{key}) on time|on time with (?P<o2>it|{key})) \((?P<why>equally fast: "
                      rf"(?:both under (?P<f1>[\d.]+) ms|(?P<f2>[\d.]+) ms or less apart)|the paired test cannot tell "
                      rf"them apart|their medians' 99% intervals overlap)\)"):
            other = who(m["o1"] or m["o2"])
            wrong += self._tied(name, subject, other, m)
        for m in said(r"(?P<n>\d+) more setups? finding as many \((?P<list>[^()]+)\)"):
            named = m["list"].split(", ")
            if int(m["n"]) != len(named) or any(self.count(k) != self.count(pick) for k in named):
                wrong.append(f"{named} do not all find as many as {pick}")
        for m in said(rf"(?P<n>\d+) more setups? tied on time with (?P<a>{key}) \((?P<list>[^()]+)\)"):
            named = m["list"].split(", ")
            if (int(m["n"]) != len(named) or not set(named) <= set(self.report["ties_on_time"][name])
                    or m["a"] != self.report["time_tests"][name]["anchor"]):
                wrong.append(f"{named} are not {m['n']} setups of {name}'s tier anchored at {m['a']}")
        for _ in said(r"is in a slower time tier"):
            if subject in self.report["ties_on_time"]["finds_the_most"]:
                wrong.append(f"{subject} is in the top's time tier")
        for m in said(rf"is shown slower than (?P<other>{key}|it) by more than (?P<f>[\d.]+) ms"):
            other = who(m["other"])
            row = self.pair(other, subject)
            shown = (row is not None and row["faster"] == other
                     and slower_by_more(TimePair(**row), self.report["significance"]["alpha"]))
            if not shown or float(m["f"]) != self.floor or self.count(subject) != self.count(pick):
                wrong.append(f"{subject} is not shown slower than {other} by more than {m['f']} ms: {row}")
        for _ in said(r"is not shown slower by more than (?P<f>[\d.]+) ms"):
            tier = [k for k in self.report["ties_on_time"][name] if self.count(k) == self.count(pick)]
            fastest = min(tier, key=lambda k: (self.median(k), k))
            row = self.pair(fastest, subject)
            if subject != fastest and row is not None and slower_by_more(TimePair(**row),
                                                                         self.report["significance"]["alpha"]):
                wrong.append(f"{subject} is shown slower than {fastest} by more than the floor")
        for m in said(r"finds as many first|finds as many and as many first|finds as many but"):
            if self.count(subject) != self.count(pick):
                wrong.append(f"{subject} finds {self.count(subject)}, {pick} {self.count(pick)}")
            if "first" in m.group(0) and self.count(subject, 1) != self.count(pick, 1):
                wrong.append(f"{subject} finds {self.count(subject, 1)} first, {pick} {self.count(pick, 1)}")
        for m in said(rf"comes after (?P<other>{key}|it) by name"):
            if not who(m["other"]) < subject:
                wrong.append(f"{who(m['other'])} does not come before {subject} by name")
        for m in said(r"(?P<lead>the fastest |nothing )(?:within (?P<p>[\d.]+) points \((?P<q>\d+) questions?\) "
                      r"of the most|of those finding as many as the most)(?P<none> is faster)?"):
            wrong += self._within(name, subject, pick, m, clause)
        for _ in said(r"it does not pay on this collection"):
            if name is not None or not re.search(r"\d+ questions? fewer in the top 10", self._whole):
                wrong.append("'does not pay' where reranking does not find fewer")
        for m in said(rf"(?:the one faster setup, (?P<one>{key}),|each of the (?P<k>\d+) faster setups) finds "
                      rf"significantly fewer than (?P<p>{key})(?: \(paired test at (?P<alpha>[\d.]+)\))?"):
            tie = self.report["ties"][name]
            if tie["tied"] or len(tie["faster"]) != (1 if m["one"] else int(m["k"])) or tie["pick"] != m["p"]:
                wrong.append(f"the paired test's rows say otherwise: {tie}")
        for _ in said(rf"no setup is faster than (?P<p>{key})"):
            if self.report["ties"][name]["faster"]:
                wrong.append("a setup is faster")
        for m in said(rf"the test cannot tell (?P<list>.+?) from (?P<p>{key}) either"):
            tie = self.report["ties"][name]
            told = {r["key"] for r in tie["faster"] if r["tied"]} - {tie["with"]}
            if set(m["list"].split(", ")) != told:
                wrong.append(f"the test cannot tell {told}, not {m['list']}")
        against = (rf"(?:than|as) (?P<other>{key}|it)(?:, the best [a-z -]+? with(?:out it| vectors))? "
                   rf"\((?:\d|equally|[\d.,]+x)")
        named = {who(m.group("other")) for m in re.finditer(against, clause)}
        if len(named) > 1:  # a count and a multiplier in one clause are against one setup
            wrong.append(f"one comparison against {sorted(named)}")
        left = list(clause)
        for start, end in spans:
            left[start:end] = " " * (end - start)
        rest = re.sub(rf"(?<![\w.+-]){key}(?![\w.+-])", " ", "".join(left))
        unread = re.findall(r"\d|\b(?:more|fewer|many|faster|slower|fast|fastest|tied|pay)\b", rest)
        if unread:
            wrong.append(f"said but not read back: {unread} in {rest!r}")
        return wrong

    _whole = ""

    def _pair_equal(self, a: str, b: str) -> bool:
        row = self.pair(a, b)
        if row is not None:
            return not row["over_floor"]
        return abs(self.median(a) - self.median(b)) <= self.floor

    def _equal(self, a: str, b: str, under: str | None, apart: str | None, equal: bool) -> list[str]:
        wrong = []
        if not equal:
            wrong.append(f"{a} and {b} are told apart by more than the floor, not equally fast")
        if float(under or apart) != self.floor:
            wrong.append(f"the floor is {self.floor} ms, not {under or apart}")
        if under and not (self.median(a) < self.floor and self.median(b) < self.floor):
            wrong.append(f"{a} ({self.median(a)} ms) and {b} ({self.median(b)} ms) are not both under the floor")
        return wrong

    def _tied(self, name: str | None, a: str, b: str, m: re.Match) -> list[str]:
        tier = self.report["ties_on_time"][name]
        test = self.report["time_tests"][name]
        if a not in tier or b not in tier or test["anchor"] not in (a, b):
            return [f"{a} and {b} are not tied on time in {name}'s tier {tier} (anchor {test['anchor']})"]
        verdict = next(v for v in test["tied"] if v["key"] == (b if a == test["anchor"] else a))
        expected = {"equally fast": "equally fast", "cannot tell": "the paired test cannot tell them apart"}.get(
            verdict["why"], "their medians' 99% intervals overlap")
        if not m["why"].startswith(expected):
            return [f"the test said {verdict['why']!r}, the sentence {m['why']!r}"]
        return self._equal(a, b, m["f1"], m["f2"], True) if verdict["why"] == "equally fast" else []

    def _within(self, name: str | None, subject: str, pick: str, m: re.Match, clause: str) -> list[str]:
        rules = self.report["rules"]
        points = rules["balance_points" if name == "best_for_balance" else "time_points"]
        most = self.count(self.top)
        let_in = allowed(points, self.questions)
        wrong = []
        if m["p"] is not None and (float(m["p"]) != points or int(m["q"]) != let_in or let_in == 0):
            wrong.append(f"{points} points of {self.questions} questions allow {let_in}, not {m['p']} ({m['q']})")
        if m["p"] is None and let_in != 0:
            wrong.append(f"{points} points allow {let_in} questions, not none")
        within = [k for k in self.by_key if self.count(k) >= most - let_in]
        fastest = min(within, key=lambda k: (self.median(k), k))
        if m["none"]:  # "nothing within ... is faster": the pick itself is the fastest
            if pick != fastest:
                wrong.append(f"{fastest} is faster within the points than {pick}")
        elif subject != fastest:
            wrong.append(f"the fastest within the points is {fastest}, not {subject}")
        return wrong

    def check_finding(self, sentence: str) -> list[str]:
        self._whole = sentence
        try:
            return self.check(sentence, pick="(no pick)")
        finally:
            self._whole = ""


def sentences(report: dict) -> list[tuple[str, str, str | None]]:
    """(sentence, the setup "it" is, pick name) for every sentence the answer writes."""
    out = [(s, "(no pick)", None) for s in findings(RunReport.from_json(report))]
    for answer in pick_answers(RunReport.from_json(report)):
        if answer.key is None:
            continue
        out.append((answer.why, answer.key, answer.name))
        out += [(s, answer.key, answer.name) for s in answer.tied]
        if answer.paired:
            out.append((answer.paired, report["ties"][answer.name]["pick"], answer.name))
    return out


def problems(report: dict) -> list[str]:
    """Every claim the report's numbers contradict, and every sentence the terminal or the page does not
    say word for word."""
    checker = Claims(report)
    wrong = []
    for sentence, pick, name in sentences(report):
        wrong += checker.check_finding(sentence) if name is None else checker.check(sentence, pick, name)
    text = " ".join(render_report(report).split())
    page = " ".join(html.unescape(re.sub(r"<[^>]+>", " ", render_html(report))).split())
    said_paired = set()
    for sentence, _, name in sentences(report):
        for where, words in (("terminal", text), ("page", page)):
            if where == "terminal" and sentence == next((a.paired for a in pick_answers(RunReport.from_json(report))
                                                         if a.name == name), None):
                continue  # the paired test's sentence is behind --details at the terminal
            if sentence not in words:
                wrong.append(f"the {where} does not say: {sentence!r}")
        said_paired.add(sentence)
    details = " ".join(render_report(report, details=True).split())
    for answer in pick_answers(RunReport.from_json(report)):
        if answer.paired and answer.paired not in details:
            wrong.append(f"the terminal's --details does not say: {answer.paired!r}")
    return wrong


@settings(max_examples=80, deadline=None, derandomize=True, phases=PHASES,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(seed=st.integers(0, 2**16), questions=st.integers(3, 40),
       chosen=st.lists(st.integers(0, len(MENU) - 1), min_size=2, max_size=7, unique=True),
       costs=st.lists(st.sampled_from(COSTS), min_size=7, max_size=7),
       skills=st.lists(st.sampled_from((0.5, 0.7, 0.85, 0.9, 0.95, 1.0)), min_size=7, max_size=7),
       points=st.sampled_from(((4, 8), (0, 0), (3, 5), (5.6, 11.2), (10, 30), (100, 100))),
       floor=st.sampled_from((5.0, 0.0, 1.0, 20.0)), paired=st.booleans())
@example(seed=7, questions=125, chosen=[0, 2, 5, 8], costs=[0.5, 9.0, 10.0, 900.0, 1, 1, 1],
         skills=[0.9, 0.85, 0.9, 0.95, 1, 1, 1], points=(5.6, 11.2), floor=5.0,
         paired=True)  # 5.6 of 125 is exactly 7 questions
def test_every_sentence_of_the_answer_says_what_the_numbers_say(tmp_path_factory, seed, questions, chosen, costs,
                                                                skills, points, floor, paired):
    report = drawn_report(tmp_path_factory.mktemp("run"), seed, questions, chosen, costs[:len(chosen)],
                          skills[:len(chosen)], balance=points[0], time_points=points[1], floor=floor)
    if not paired:  # a report whose setups were not timed side by side (times reused, or made before pairs)
        report["time_pairs"] = []
    assert problems(report) == []


def test_the_allowance_is_the_picks_whole_questions_not_a_float_one(tmp_path):
    # 5.6 points of 125 questions: 5.6 x 125 / 100 = 7 exactly; in floats 5.6 / 100 * 125 = 6.999... (6)
    report = drawn_report(tmp_path, 7, 125, [0, 2, 5, 8], [0.5, 9.0, 10.0, 900.0], [0.9, 0.85, 0.9, 0.95],
                          balance=5.6, time_points=11.2)
    balance = next(a for a in pick_answers(RunReport.from_json(report)) if a.name == "best_for_balance")
    assert "within 5.6 points (7 questions) of the most" in balance.why
    assert problems(report) == []


def test_the_checker_refuses_each_kind_of_wrong_sentence(tmp_path):
    # the reader itself, on one drawn run: a true sentence passes, and each way of getting one wrong is named
    # exhaustive: both setups searched every question, whatever a race would have stopped
    report = drawn_report(tmp_path, 3, 36, [0, 7], [0.5, 19.0], [0.8, 0.95], exhaustive=True)
    checker = Claims(report)
    fast, slow = "t.keyword.bm25", "t.hybrid.m1+m2"
    mine, theirs = checker.count(fast), checker.count(slow)
    assert mine < theirs  # the draw: keyword finds fewer and is faster
    row = checker.pair(fast, slow)
    ratio = f"{times_text(row['ratio'])}x faster than {slow} ({times_text(row['low'])}x to {times_text(row['high'])}x)"
    gap = theirs - mine
    true = (f"it finds {gap} question{'s' * (gap != 1)} fewer than {slow} ({mine} against {theirs} of 36), "
            f"and is {ratio}")
    assert checker.check(true, fast, "best_for_balance") == []
    wrong = {
        "as many": f"it finds as many as {slow} ({mine} of 36 each), and is {ratio}",
        "counts": true.replace(f"({mine} against {theirs}", f"({theirs} against {mine}"),
        "is not": true.replace("fewer", "more"),
        "pair's": true.replace(f"{times_text(row['ratio'])}x", f"{times_text(row['ratio'] * 2)}x"),
        "is not slower": true.replace("faster", "slower"),
        "not read back": true + ", and it is better by 3",
    }
    for found, sentence in wrong.items():
        said = checker.check(sentence, fast, "best_for_balance")
        assert any(found in w for w in said), (found, said)
