"""The judging in steps that take and give plain JSON, so it can run in one process (``judge_holes``) or
fan out as Function App activities: plan, grade parts, gate, finish.

- ``plan_judging``: the refusals, the scale, the calibration slice, the holes in order, and each pair's
  worst-case cost (``JudgingPlan``: ids, grades and numbers only; the texts stay where they are read);
- ``grade_pairs``: one part's pairs graded, reply cache first, under the part's own budget (``PartSettings``:
  the budget and what the progress bar says of the part);
- ``part_budgets``: a cap shared by parts graded at once, never passed: each part in order is given
  what its pairs can cost at worst while the cap lasts, so the best-placed holes come first, as they
  do in one process;
- ``calibration_gate``: the calibration's statistics and whether the grades count (``judging``'s step 3);
- ``finish_judging``: the report's ``judged`` block from the grades and the parts' costs.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Callable, Mapping, Sequence

from ..chat import snippet
from ..errors import HoleJudgeError, UsageError
from ..golden.records import question_sha256
from ..golden.writing.cache import prompt_key
from .agreement import confusion, kappa
from .calibration import Label, bias, calibration_slice, top_units
from .family import conflicts
from .filled import (fill, human_judgements, judged_choice, judged_entries, judged_summaries, labelled_question,
                     ranking_tau)
from .grader import PROMPT_VERSION, Scale, grade_messages, parse_grade
from .prices import CostMeter, Price, PriceTable
from .settings import HoleSettings
from .texts import UnitTexts

Progress = Callable[[int, int, str], None]
JUDGED_MARK = "+judged"  # every number that uses judged grades is named with it (found@10+judged)
COST_COUNTS = ("calls", "cached", "refused_by_cap", "prompt_tokens", "completion_tokens", "estimated_calls")


@dataclass(frozen=True)
class JudgingPlan:
    """What ``plan_judging`` decided, as plain data (``to_json``/``from_json``): the judge's name and API,
    the scale, the settings, the price (None: not in the table), the conflicts judged anyway, the labels
    with text at hand, the calibration slice ``[question id, unit, grade]``, the holes ``[question id,
    unit]`` best placed first, the holes without text, and each pair's worst-case cost."""

    judge: str
    api: str | None
    scale: tuple[int, ...]
    settings: HoleSettings
    price: Price | None
    currency: str
    prices_from: str
    conflicts: tuple[dict[str, str], ...]
    available: int
    calibration: tuple[tuple[str, str, int], ...]
    holes: tuple[tuple[str, str], ...]
    no_text: int
    worst_calibration: tuple[float, ...]
    worst_holes: tuple[float, ...]

    def to_json(self) -> dict[str, Any]:
        out = asdict(self)
        out["settings"] = asdict(self.settings)
        out["price"] = None if self.price is None else asdict(self.price)
        return out

    @classmethod
    def from_json(cls, value: Mapping[str, Any]) -> JudgingPlan:
        price = value.get("price")
        return cls(judge=value["judge"], api=value.get("api"), scale=tuple(value["scale"]),
                   settings=HoleSettings(**value["settings"]), price=None if price is None else Price(**price),
                   currency=value["currency"], prices_from=value["prices_from"],
                   conflicts=tuple(dict(c) for c in value["conflicts"]), available=value["available"],
                   calibration=tuple((str(q), str(u), int(g)) for q, u, g in value["calibration"]),
                   holes=tuple((str(q), str(u)) for q, u in value["holes"]), no_text=value["no_text"],
                   worst_calibration=tuple(value["worst_calibration"]), worst_holes=tuple(value["worst_holes"]))

    @property
    def scale_of(self) -> Scale:
        return Scale(self.scale)

    def meter(self, budget: float | None) -> CostMeter:
        return CostMeter(self.price, budget)


def question_texts(report: Mapping[str, Any], questions: Any) -> dict[str, str]:
    """Each run question's text by id, from the golden file, where its text is the one the run searched
    (the sha256 the report keeps): a question edited since is not judged."""
    given = getattr(questions, "questions", questions)
    by_id = {str(q.id): q.question for q in given}
    texts = {}
    for q in report.get("questions") or ():
        text = by_id.get(str(q["id"]))
        if text is not None and (not q.get("sha256") or q["sha256"] == question_sha256(text)):
            texts[str(q["id"])] = text
    return texts


def hole_pairs(report: Mapping[str, Any]) -> list[tuple[str, str]]:
    """Every (question id, unit) a ranked setup left unjudged in its top 10, best placed first: by its
    place among that setup's holes, then the setup's rank, then the question's order in the run."""
    order = {str(q): n for n, q in enumerate(report.get("question_ids") or ())}
    best: dict[tuple[str, str], tuple[int, int, int]] = {}
    for setup in _ranked(report):
        rank = setup.get("rank") or 0
        for qid, units in (setup.get("holes") or {}).items():
            for place, unit in enumerate(units):
                pair, at = (str(qid), str(unit)), (place, rank, order.get(str(qid), len(order)))
                best[pair] = min(best.get(pair, at), at)
    return sorted(best, key=lambda pair: (*best[pair], pair))


def plan_judging(report: Mapping[str, Any], questions: Any, texts: UnitTexts, judge: str, *,
                 settings: HoleSettings, prices: PriceTable, api: str | None = None,
                 max_tokens: int = 100) -> JudgingPlan:
    """Step 1 and the slice of step 2 (``judging``'s docstring): a ``UsageError`` for what must be refused
    before any call; else the plan."""
    if report.get("by") == "evidence":
        raise UsageError("at --by evidence a result is judged by the quotes its text holds, so a run has no holes "
                         "to judge; judge holes at --by doc or --by chunk")
    clashes = conflicts(judge, _ranked(report), report.get("targets") or {})
    if clashes and not settings.allow_family:
        raise UsageError(f"{clashes[0].words(judge)}: a judge favours what its own family ranks high, so its grades "
                         "would favour that setup. Judge with a model of another family, or pass --judge-allow-family "
                         "(allow_family=True) to judge anyway, the conflict printed on every pick")
    price = prices.price(judge)
    if settings.max_cost is not None and price is None:
        raise UsageError(f"a cost cap needs the judge's price, and {prices.source} does not price {judge}; add it "
                         '("models": {"' + judge + '": {"input": ..., "output": ...}}, dollars per million tokens) '
                         "to a copy of the table and give it with --judge-prices")
    asked = question_texts(report, questions)
    labelled = [q for q in report.get("questions") or () if q.get("expected")]
    scale = Scale.of(human_judgements(q) for q in labelled)
    holes = [pair for pair in hole_pairs(report) if pair[0] in asked]
    labels = [Label(str(q["id"]), unit, grade) for q in labelled if str(q["id"]) in asked
              for unit, grade in human_judgements(q).items()]
    unit_text = dict(texts({unit for _, unit in holes} | {label.unit for label in labels}))
    usable = [label for label in labels if label.unit in unit_text]
    chosen = calibration_slice(usable, settings.calibration, settings.seed)
    meter = CostMeter(price)

    def worst(qid: str, unit: str) -> float:
        return meter.worst_case(grade_messages(asked[qid], unit_text[unit], scale,
                                               passage_chars=settings.passage_chars), max_tokens)

    judged_holes = [pair for pair in holes if pair[1] in unit_text]
    return JudgingPlan(judge=judge, api=api, scale=scale.grades, settings=settings, price=price,
                       currency=prices.currency, prices_from=prices.source,
                       conflicts=tuple(c.to_json() for c in clashes), available=len(usable),
                       calibration=tuple((label.question_id, label.unit, label.grade) for label in chosen),
                       holes=tuple(judged_holes), no_text=len(holes) - len(judged_holes),
                       worst_calibration=tuple(worst(label.question_id, label.unit) for label in chosen),
                       worst_holes=tuple(worst(qid, unit) for qid, unit in judged_holes))


def part_budgets(worst: Sequence[Sequence[float]], cap: float | None) -> list[float | None]:
    """Each part's share of ``cap`` (None: no cap): in order, what the part's pairs can cost at worst, while
    the cap lasts; the rest of the parts get what is left (0 once it is spent). The shares add up to at
    most the cap, so parts graded at once never pass it together."""
    if cap is None:
        return [None] * len(worst)
    left: float = cap
    out: list[float | None] = []
    for costs in worst:
        share = min(sum(costs), left)
        out.append(share)
        left -= share
    return out


@dataclass(frozen=True)
class PartSettings:
    """How one part of the judging is graded (``grade_pairs``): ``budget``, what its calls may cost at most
    (None: no cap; ``part_budgets`` shares a cap between parts); ``what``, the words the progress bar
    shows for it; ``progress``, the bar (None: none), on which the part's pairs come after ``done`` others
    of ``total`` (None: the part's pairs are the whole judging)."""

    budget: float | None = None
    what: str = "grading"
    progress: Progress | None = None
    total: int | None = None
    done: int = 0

    def __post_init__(self) -> None:
        if self.budget is not None and not self.budget >= 0:
            raise UsageError(f"a part's budget is {self.budget}: give 0 or more dollars, or None for no cap")
        if self.done < 0 or (self.total is not None and self.total < self.done):
            raise UsageError(f"a part's progress starts at {self.done} of {self.total} pairs: give done from 0 to "
                             "total (the pairs graded before this part), total None for this part's own count")


class _Asker:
    """The judge's calls of one part: cache first, then the part's budget, then the model; grades read back."""

    def __init__(self, grader: Any, cache: Any, meter: CostMeter, scale: Scale, passage_chars: int,
                 part: PartSettings, pairs: int) -> None:
        self.grader, self.cache, self.meter, self.scale = grader, cache, meter, scale
        self.passage_chars, self.progress, self.what = passage_chars, part.progress, part.what
        self.total, self.done = part.total if part.total is not None else pairs, part.done
        self.stopped = False  # the cap refused a call: no call is made after it

    def grade(self, question: str, passage: str) -> int | None:
        """The judge's grade, or None when the budget stopped the judging before this call."""
        messages = grade_messages(question, passage, self.scale, passage_chars=self.passage_chars)
        key = prompt_key(str(self.grader.name), messages)
        if self.progress is not None:
            self.progress(self.done, self.total, f"judge_holes: {self.what}")
        self.done += 1
        kept = self.cache.get(key)
        if kept is not None:
            grade = parse_grade(kept, self.scale)
            if grade is not None:
                self.meter.cached += 1
                return grade
        if self.stopped or not self.meter.allows(messages, self.grader.max_tokens):
            self.stopped = True
            return None
        content, usage = self.grader.ask(messages)
        self.meter.record(messages, content, usage, self.grader.max_tokens)
        grade = parse_grade(content, self.scale)
        if grade is None:
            raise HoleJudgeError(f"the judge {self.grader.name}'s reply is not {{\"grade\": G}} with G one of "
                                 f"{', '.join(map(str, self.scale.grades))}: {snippet(content)}; the grades it gave "
                                 "before are kept in the reply cache (use a model that keeps to a JSON format)")
        self.cache.put(key, content)
        return grade


@dataclass
class Graded:
    """One part graded: a grade per pair (None: the budget stopped the judging first), and its costs."""

    grades: list[int | None]
    cost: dict[str, Any]
    stopped: bool

    def to_json(self) -> dict[str, Any]:
        return {"grades": self.grades, "cost": self.cost, "stopped": self.stopped}


def grade_pairs(plan: JudgingPlan, pairs: Sequence[Sequence[str]], questions: Any, report: Mapping[str, Any],
                texts: UnitTexts, grader: Any, cache: Any, part: PartSettings) -> Graded:
    """Grade ``pairs`` ((question id, unit), some of the plan's) with ``grader`` under ``part.budget``,
    reading the texts again (``questions``: the golden file, ``texts``: units); ``cache``: anything with
    ``get(key)`` and ``put(key, reply)`` (``ReplyCache``, ``replies.BlobReplies``)."""
    if str(getattr(grader, "name", "")) != plan.judge:
        raise UsageError(f"the plan was made for the judge {plan.judge}, not {getattr(grader, 'name', None)}")
    asked = question_texts(report, questions)
    unit_text = dict(texts({unit for _, unit in pairs}))
    meter = plan.meter(part.budget)
    asker = _Asker(grader, cache, meter, plan.scale_of, plan.settings.passage_chars, part, len(pairs))
    grades: list[int | None] = []
    for qid, unit in pairs:
        if qid not in asked or unit not in unit_text:  # the golden file or the index changed since the plan
            grades.append(None)
            continue
        grades.append(asker.grade(asked[qid], unit_text[unit]))
    return Graded(grades, meter.to_json(), asker.stopped)


def calibration_gate(report: Mapping[str, Any], plan: JudgingPlan,
                     grades: Sequence[int | None]) -> tuple[dict[str, Any], str | None]:
    """The calibration's statistics (kappa, weighted kappa, confusion, bias) and why the grades do not
    count (None: they count)."""
    scale, settings = plan.scale_of, plan.settings
    chosen = [Label(q, u, g) for q, u, g in plan.calibration]
    graded = [(label, grade) for label, grade in zip(chosen, grades, strict=True) if grade is not None]
    table = confusion([label.grade for label, _ in graded], [grade for _, grade in graded], scale.grades)
    plain = kappa(table, "plain")
    weighted = None if scale.binary else kappa(table, "quadratic")
    labelled = {str(q["id"]): labelled_question(q) for q in report.get("questions") or () if q.get("expected")}
    tops = {s["key"]: top_units(report, s, labelled) for s in _ranked(report)}
    calibration = {"available": plan.available, "set_aside": len(chosen), "graded": len(graded),
                   "seed": settings.seed,
                   "labels": [[label.question_id, label.unit, label.grade, grade] for label, grade in graded],
                   "confusion": {"grades": list(scale.grades), "rows": "people", "columns": "judge", "counts": table},
                   "kappa": plain.to_json(), "weighted_kappa": None if weighted is None else weighted.to_json(),
                   "bias": bias(graded, tops, scale, alpha=settings.alpha, seed=settings.seed)}
    return calibration, _why_not_counted(calibration, len(graded), len(chosen), scale, settings)


def _why_not_counted(calibration: Mapping[str, Any], graded: int, chosen: int, scale: Scale,
                     settings: HoleSettings) -> str | None:
    """Why the judge's grades do not count, in a sentence with the fix; None when they do."""
    if not chosen:
        return ("no labelled result has text at hand to calibrate the judge on (give the corpus or the index the run "
                "searched)")
    if graded < chosen:
        return (f"the cost cap stopped the judging after {graded} of {chosen} calibration labels, before any hole: "
                "raise --judge-max-cost")
    measured = calibration["kappa"] if scale.binary else calibration["weighted_kappa"]
    which = "kappa" if scale.binary else "weighted kappa"
    if measured["value"] is None:
        return (f"{which} is not defined on the {graded} calibration labels: every label, the people's and the "
                "judge's, is one grade, so agreement beyond chance cannot be told; label some results not relevant "
                '(grade 0: "expected": {"doc": 1, "other": 0}) and judge again')
    low = measured["interval"][0]
    if low < settings.min_kappa:
        return (f"{which} {measured['value']:.2f} (95% interval {low:.2f} to {measured['interval'][1]:.2f}) on "
                f"{graded} calibration labels: its low end is under {settings.min_kappa:g}, so the judge's "
                "grades do not count; try a stronger judge, or set aside more labels (--judge-calibration)")
    return None


def added_costs(costs: Sequence[Mapping[str, Any]], plan: JudgingPlan) -> dict[str, Any]:
    """The parts' costs as one (``CostMeter.to_json``'s shape)."""
    total: dict[str, Any] = {name: sum(int(c.get(name) or 0) for c in costs) for name in COST_COUNTS}
    priced = plan.price is not None
    total["cost"] = round(sum(float(c.get("cost") or 0) for c in costs), 6) if priced else None
    total["cost_at_most"] = round(sum(float(c.get("cost_at_most") or 0) for c in costs), 6) if priced else None
    total.update(cap=plan.settings.max_cost, currency=plan.currency, prices_from=plan.prices_from,
                 price=None if plan.price is None else asdict(plan.price))
    return total


def finish_judging(report: Mapping[str, Any], plan: JudgingPlan, calibration_grades: Sequence[int | None],
                   hole_grades: Sequence[int | None], costs: Sequence[Mapping[str, Any]],
                   stopped: bool) -> dict[str, Any]:
    """The report's ``judged`` block (``judging``'s steps 5 and 6)."""
    settings = plan.settings
    calibration, why_not = calibration_gate(report, plan, calibration_grades)
    grades: dict[str, dict[str, int]] = {}
    if why_not is None:
        for (qid, unit), grade in zip(plan.holes, hole_grades, strict=False):
            if grade is not None:
                grades.setdefault(qid, {})[unit] = grade
    judged_count = sum(len(units) for units in grades.values())
    total = len(plan.holes) + plan.no_text
    block: dict[str, Any] = {
        "judge": {"model": plan.judge, "prompt": PROMPT_VERSION, "passage_chars": settings.passage_chars,
                  "api": plan.api},
        "scale": plan.scale_of.to_json(),
        "settings": {k: v for k, v in asdict(settings).items() if k != "passage_chars"},
        "calibration": calibration,
        "counted": why_not is None,
        "why_not_counted": why_not,
        "holes": {"total": total, "judged": judged_count, "no_text": plan.no_text,
                  "left": total - judged_count - plan.no_text},
        "grades": grades,
        "conflicts": list(plan.conflicts),
        "cost": added_costs(costs, plan),
        "stopped_by_cap": stopped,
        "picks_from": "human",
        "mark": JUDGED_MARK,
    }
    if why_not is None:
        filled = fill(report, grades)
        summaries = judged_summaries(report, filled)
        flagged = set(calibration["bias"]["flagged"])
        block["setups"] = {key: {"summary": summaries[key], "holes_judged": _judged_holes(report, key, grades),
                                 "biased": key in flagged}
                           for key in filled.keys}
        block["ranking"] = ranking_tau(filled, resamples=settings.resamples, seed=settings.seed)
        block["judged_picks"] = judged_choice(report, judged_entries(report, filled, summaries))
        block["picks_from"] = settings.picks_from
    return block


def refused_block(judge: str, reason: str) -> dict[str, Any]:
    """The ``judged`` block of a judging that never graded anything (refused before any call, or a judge
    that stopped answering): why, and no number."""
    return {"judge": {"model": judge, "prompt": PROMPT_VERSION}, "refused": reason, "counted": False,
            "why_not_counted": reason, "holes": {}, "grades": {}, "conflicts": [], "stopped_by_cap": False,
            "picks_from": "human", "mark": JUDGED_MARK}


def with_judged(report: Mapping[str, Any], block: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of ``report`` holding ``block`` as ``judged``; with ``picks_from`` "judged" (and the grades
    counted) the report's picks, ties, time tiers and time tests are the judged ones, the human ones
    kept in ``judged.human_picks``, and ``picks_from`` says so at the top."""
    out = dict(report)
    block = dict(block)
    if block.get("picks_from") == "judged" and block.get("judged_picks"):
        choice = block["judged_picks"]
        block["human_picks"] = {name: out.get(name) for name in ("picks", "ties", "ties_on_time", "time_tests")}
        for name in ("picks", "ties", "ties_on_time", "time_tests"):
            out[name] = choice[name]
        out["picks_from"] = "human+judged"
    else:
        out["picks_from"] = "human"
    out["judged"] = block
    return out


def _ranked(report: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    return [s for s in report["setups"] if s.get("summary") is not None and not s.get("error")]


def _judged_holes(report: Mapping[str, Any], key: str, grades: Mapping[str, Mapping[str, int]]) -> int:
    """How many of the setup's holes the judge graded."""
    setup = next(s for s in report["setups"] if s["key"] == key)
    return sum(1 for qid, units in (setup.get("holes") or {}).items() for unit in units
               if unit in grades.get(str(qid), {}))
