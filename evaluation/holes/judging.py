"""``judge_holes``: a run's unjudged results graded by a chat model the team brings, its agreement with
the team's own labels measured first, every number it touches kept apart and marked.

The steps, on a finished report (the run keeps ids only: the texts are read here, from the golden file
and the corpus or index, and none is kept):

1. Refusals before any call: the evidence grain (it has no holes), a judge of a model family under test
   (``family``; ``allow_family`` judges anyway and prints the conflict on every pick), a cost cap for a
   model the price table does not price.
2. Calibration (``calibration``): a seeded slice of the labels the team has, graded blind on the golden
   file's scale (``grader.Scale``); Cohen's kappa with its interval, weighted (quadratic) on a graded
   scale, and the confusion matrix (``agreement``); the judge's bias toward any setup.
3. The gate: the judge's grades count only when every calibration label was graded and the low end of
   kappa's interval (weighted kappa's on a graded scale) reaches ``min_kappa`` (0.4 by default, the
   floor of "moderate" agreement on Landis & Koch's scale; published judges sit at 0.4-0.65). A judge
   that does not pass grades no hole: nothing is spent on grades that would not count.
4. The holes: every (question, unit) some ranked setup left unjudged in its top 10, best placed first
   (so a cap that stops the judging leaves the deepest holes), each graded once.
5. The numbers again on human + judged labels (``filled``): each setup's summary, the Kendall tau of
   the two rankings with its interval, and the picks they would name. The report's own picks stay the
   human labels' unless ``picks_from="judged"``, which puts the judged picks (and their ties) in the
   report, keeps the human ones beside, and marks the report (``picks_from``).

Every model call goes through the reply cache first (``golden.writing.cache.ReplyCache``, the one
``golden write`` keeps: keyed by the model's name and the messages), so a warm re-run asks nothing and
costs nothing; the ``CostMeter`` counts tokens and refuses the call that could pass the cap.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, fields, replace
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Sequence

from ..chat import snippet
from ..errors import HoleJudgeError, UsageError, did_you_mean
from ..golden import Question
from ..golden.records import question_sha256
from ..golden.writing.cache import ReplyCache, prompt_key
from .agreement import confusion, kappa
from .calibration import Label, bias, calibration_slice, top_units
from .family import conflicts
from .filled import (fill, human_judgements, judged_choice, judged_entries, judged_summaries, labelled_question,
                     ranking_tau)
from .grader import PASSAGE_CHARS, PROMPT_VERSION, Scale, grade_messages, parse_grade
from .prices import CostMeter, PriceTable, read_prices
from .texts import UnitTexts

Progress = Callable[[int, int, str], None]
PICKS_FROM = ("human", "judged")
DEFAULT_CALIBRATION = 100
DEFAULT_MIN_KAPPA = 0.4
JUDGED_MARK = "+judged"  # every number that uses judged grades is named with it (found@10+judged)


@dataclass(frozen=True)
class HoleSettings:
    """How holes are judged (the module docstring): ``calibration`` labels set aside (seeded by ``seed``),
    the ``min_kappa`` the low end of kappa's interval must reach, the cost ``max_cost`` (None: no cap),
    where the picks come from, whether a judge of a family under test may judge, the longest passage
    shown, and the resamples of tau's interval and ``alpha`` of the bias test."""

    calibration: int = DEFAULT_CALIBRATION
    seed: int = 0
    min_kappa: float = DEFAULT_MIN_KAPPA
    max_cost: float | None = None
    picks_from: str = "human"
    allow_family: bool = False
    passage_chars: int = PASSAGE_CHARS
    resamples: int = 1000
    alpha: float = 0.05

    def __post_init__(self) -> None:
        if isinstance(self.calibration, bool) or not isinstance(self.calibration, int) or self.calibration < 2:
            raise UsageError(f"calibration={self.calibration!r}: set aside 2 or more labels (kappa needs pairs)")
        if not -1 <= self.min_kappa <= 1:
            raise UsageError(f"min_kappa={self.min_kappa!r}: a kappa is from -1 to 1")
        if self.max_cost is not None and not self.max_cost >= 0:
            raise UsageError(f"max_cost={self.max_cost!r}: a cost cap is 0 or more (in the price table's currency)")
        if self.picks_from not in PICKS_FROM:
            raise UsageError(f'picks_from="{self.picks_from}": one of {", ".join(PICKS_FROM)}.'
                             f"{did_you_mean(str(self.picks_from), PICKS_FROM)}")
        if self.passage_chars < 200 or self.resamples < 100 or not 0 < self.alpha < 1:
            raise UsageError("passage_chars must be 200 or more, resamples 100 or more, alpha between 0 and 1")

    @classmethod
    def of(cls, settings: HoleSettings | None = None, **keywords: Any) -> HoleSettings:
        names = {f.name for f in fields(cls)}
        unknown = sorted(set(keywords) - names)
        if unknown:
            raise TypeError(f"{unknown[0]!r} is not a setting of judge_holes; settings: {', '.join(sorted(names))}."
                            f"{did_you_mean(unknown[0], names)}")
        return replace(settings or cls(), **keywords)


class _Asker:
    """The judge's calls of one judging: cache first, then the cap, then the model; grades read back."""

    def __init__(self, grader: Any, cache: ReplyCache, meter: CostMeter, scale: Scale, passage_chars: int,
                 progress: Progress | None, total: int) -> None:
        self.grader, self.cache, self.meter, self.scale = grader, cache, meter, scale
        self.passage_chars, self.progress, self.total = passage_chars, progress, total
        self.done = 0
        self.stopped = False  # the cap refused a call: no call is made after it

    def grade(self, question: str, passage: str, what: str) -> int | None:
        """The judge's grade, or None when the cap stopped the judging before this call."""
        messages = grade_messages(question, passage, self.scale, passage_chars=self.passage_chars)
        key = prompt_key(str(self.grader.name), messages)
        self.done += 1
        if self.progress is not None:
            self.progress(self.done - 1, self.total, f"judge_holes: {what}")
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


def hole_pairs(report: Mapping[str, Any]) -> list[tuple[str, str]]:
    """Every (question id, unit) a ranked setup left unjudged in its top 10, best placed first: by its
    place among that setup's holes, then the setup's rank, then the question's order in the run."""
    order = {str(q): n for n, q in enumerate(report.get("question_ids") or ())}
    best: dict[tuple[str, str], tuple[int, int, int]] = {}
    for setup in report["setups"]:
        if setup.get("summary") is None or setup.get("error"):
            continue
        rank = setup.get("rank") or 0
        for qid, units in (setup.get("holes") or {}).items():
            for place, unit in enumerate(units):
                pair = (str(qid), str(unit))
                best[pair] = min(best.get(pair, (place, rank, order.get(str(qid), len(order)))),
                                 (place, rank, order.get(str(qid), len(order))))
    return sorted(best, key=lambda pair: (*best[pair], pair))


def judge_holes(report: Mapping[str, Any], questions: Any, texts: UnitTexts, grader: Any, *,
                settings: HoleSettings | None = None, cache: ReplyCache | str | Path | None = None,
                prices: PriceTable | str | Path | None = None, progress: Progress | None = None,
                **keywords: Any) -> dict[str, Any]:
    """The report's ``judged`` block (the module docstring's steps); the report is not changed
    (``with_judged`` puts the block in a copy).

    ``questions``: the golden file's questions (a ``Golden`` or a list), for their text: a run keeps none.
    ``texts``: the text of units (``texts.index_texts``, ``texts.corpus_texts``). ``grader``: a
    ``grader.HoleGrader`` or anything with ``ask(messages) -> (text, usage)``, ``name`` and ``max_tokens``.
    ``cache``: a ``ReplyCache`` or its file. ``prices``: a ``PriceTable`` or its file (default: the shipped
    ``prices.json``). Settings as ``HoleSettings`` or its fields as keywords.
    """
    settings = HoleSettings.of(settings, **keywords)
    if report.get("by") == "evidence":
        raise UsageError("at --by evidence a result is judged by the quotes its text holds, so a run has no holes "
                         "to judge; judge holes at --by doc or --by chunk")
    name = str(getattr(grader, "name", "") or "")
    ranked = [s for s in report["setups"] if s.get("summary") is not None and not s.get("error")]
    clashes = conflicts(name, ranked, report.get("targets") or {})
    if clashes and not settings.allow_family:
        raise UsageError(f"{clashes[0].words(name)}: a judge favours what its own family ranks high, so its grades "
                         "would favour that setup. Judge with a model of another family, or pass --judge-allow-family "
                         "(allow_family=True) to judge anyway, the conflict printed on every pick")
    table = prices if isinstance(prices, PriceTable) else read_prices(prices)
    price = table.price(name)
    if settings.max_cost is not None and price is None:
        raise UsageError(f"a cost cap needs the judge's price, and {table.source} does not price {name}; add it "
                         '("models": {"' + name + '": {"input": ..., "output": ...}}, dollars per million tokens) '
                         "to a copy of the table and give it with --judge-prices")
    replies = cache if isinstance(cache, ReplyCache) else ReplyCache(cache)
    meter = CostMeter(price, settings.max_cost)

    texts_of = _question_texts(report, questions)
    labelled = [q for q in report.get("questions") or () if q.get("expected")]
    scale = Scale.of(human_judgements(q) for q in labelled)
    holes = [pair for pair in hole_pairs(report) if pair[0] in texts_of]
    labels = [Label(str(q["id"]), unit, grade) for q in labelled if str(q["id"]) in texts_of
              for unit, grade in human_judgements(q).items()]
    unit_text = dict(texts({unit for _, unit in holes} | {label.unit for label in labels}))
    usable = [label for label in labels if label.unit in unit_text]
    chosen = calibration_slice(usable, settings.calibration, settings.seed)
    asker = _Asker(grader, replies, meter, scale, settings.passage_chars, progress, len(chosen) + len(holes))

    graded: list[tuple[Label, int]] = []
    for label in chosen:
        grade = asker.grade(texts_of[label.question_id], unit_text[label.unit], "grading the calibration labels")
        if grade is not None:
            graded.append((label, grade))
    calibration = _calibration(graded, chosen, usable, scale, report, settings)
    why_not = _why_not_counted(calibration, graded, chosen, scale, settings)
    grades: dict[str, dict[str, int]] = {}
    no_text = sum(1 for _, unit in holes if unit not in unit_text)
    if why_not is None:
        for qid, unit in holes:
            if unit not in unit_text:
                continue
            grade = asker.grade(texts_of[qid], unit_text[unit], "grading the holes")
            if grade is not None:
                grades.setdefault(qid, {})[unit] = grade
    if progress is not None:
        progress(asker.total, asker.total, "judge_holes: done")
    judged_count = sum(len(units) for units in grades.values())
    block: dict[str, Any] = {
        "judge": {"model": name, "prompt": PROMPT_VERSION, "passage_chars": settings.passage_chars,
                  "api": getattr(getattr(grader, "settings", None), "kind", None)},
        "scale": scale.to_json(),
        "settings": {k: v for k, v in asdict(settings).items() if k != "passage_chars"},
        "calibration": calibration,
        "counted": why_not is None,
        "why_not_counted": why_not,
        "holes": {"total": len(holes), "judged": judged_count, "no_text": no_text,
                  "left": len(holes) - judged_count - no_text},
        "grades": grades,
        "conflicts": [c.to_json() for c in clashes],
        "cost": meter.to_json(table),
        "stopped_by_cap": asker.stopped,
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
        choice = judged_choice(report, judged_entries(report, filled, summaries))
        block["judged_picks"] = choice
        block["picks_from"] = settings.picks_from
    return block


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


def _question_texts(report: Mapping[str, Any], questions: Any) -> dict[str, str]:
    """Each run question's text by id, from the golden file, where its text is the one the run searched
    (the sha256 the report keeps): a question edited since is not judged."""
    given: Iterable[Question] = getattr(questions, "questions", questions)
    by_id = {str(q.id): q.question for q in given}
    texts = {}
    for q in report.get("questions") or ():
        text = by_id.get(str(q["id"]))
        if text is not None and (not q.get("sha256") or q["sha256"] == question_sha256(text)):
            texts[str(q["id"])] = text
    return texts


def _calibration(graded: Sequence[tuple[Label, int]], chosen: Sequence[Label], usable: Sequence[Label],
                 scale: Scale, report: Mapping[str, Any], settings: HoleSettings) -> dict[str, Any]:
    people = [label.grade for label, _ in graded]
    judge = [grade for _, grade in graded]
    table = confusion(people, judge, scale.grades)
    plain = kappa(table, "plain")
    weighted = None if scale.binary else kappa(table, "quadratic")
    labelled = {str(q["id"]): labelled_question(q) for q in report.get("questions") or () if q.get("expected")}
    ranked = [s for s in report["setups"] if s.get("summary") is not None and not s.get("error")]
    tops = {s["key"]: top_units(report, s, labelled) for s in ranked}
    return {"available": len(usable), "set_aside": len(chosen), "graded": len(graded), "seed": settings.seed,
            "labels": [[label.question_id, label.unit, label.grade, grade] for label, grade in graded],
            "confusion": {"grades": list(scale.grades), "rows": "people", "columns": "judge", "counts": table},
            "kappa": plain.to_json(), "weighted_kappa": None if weighted is None else weighted.to_json(),
            "bias": bias(graded, tops, scale, alpha=settings.alpha, seed=settings.seed)}


def _why_not_counted(calibration: Mapping[str, Any], graded: Sequence[Any], chosen: Sequence[Any], scale: Scale,
                     settings: HoleSettings) -> str | None:
    """Why the judge's grades do not count, in a sentence with the fix; None when they do."""
    if not chosen:
        return ("no labelled result has text at hand to calibrate the judge on (give the corpus or the index the run "
                "searched)")
    if len(graded) < len(chosen):
        return (f"the cost cap stopped the judging after {len(graded)} of {len(chosen)} calibration labels, before "
                "any hole: raise --judge-max-cost")
    measured = calibration["kappa"] if scale.binary else calibration["weighted_kappa"]
    which = "kappa" if scale.binary else "weighted kappa"
    if measured["value"] is None:
        return (f"{which} is not defined on the {len(graded)} calibration labels: every label, the people's and the "
                "judge's, is one grade, so agreement beyond chance cannot be told; label some results not relevant "
                '(grade 0: "expected": {"doc": 1, "other": 0}) and judge again')
    low = measured["interval"][0]
    if low < settings.min_kappa:
        return (f"{which} {measured['value']:.2f} (95% interval {low:.2f} to {measured['interval'][1]:.2f}) on "
                f"{len(graded)} calibration labels: its low end is under {settings.min_kappa:g}, so the judge's "
                "grades do not count; try a stronger judge, or set aside more labels (--judge-calibration)")
    return None


def _judged_holes(report: Mapping[str, Any], key: str, grades: Mapping[str, Mapping[str, int]]) -> int:
    """How many of the setup's holes the judge graded."""
    setup = next(s for s in report["setups"] if s["key"] == key)
    return sum(1 for qid, units in (setup.get("holes") or {}).items() for unit in units
               if unit in grades.get(str(qid), {}))


class HoleJudge:
    """A judging to run on a finished report, as ``evaluate(holes=...)`` takes it: the grader and how it
    judges, called with the report, the golden file and the run's targets; gives the report with its
    ``judged`` block (``with_judged``). ``texts`` left out: the first target whose index holds its chunks
    (the embedded engine's) gives them (``texts.index_texts``)."""

    def __init__(self, grader: Any, *, texts: UnitTexts | None = None, settings: HoleSettings | None = None,
                 cache: ReplyCache | str | Path | None = None, prices: PriceTable | str | Path | None = None,
                 progress: Progress | None = None, **keywords: Any) -> None:
        self.grader, self.texts, self.cache, self.prices, self.progress = grader, texts, cache, prices, progress
        self.settings = HoleSettings.of(settings, **keywords)
        self.prices = prices if isinstance(prices, PriceTable) or prices is None else read_prices(prices)
        self.cache = cache if isinstance(cache, ReplyCache) or cache is None else ReplyCache(cache)  # checked now

    def __call__(self, report: Mapping[str, Any], questions: Any, targets: Sequence[Any] = ()) -> dict[str, Any]:
        texts = self.texts or texts_of_targets(targets)
        block = judge_holes(report, questions, texts, self.grader, settings=self.settings, cache=self.cache,
                            prices=self.prices, progress=self.progress)
        return with_judged(report, block)


def texts_of_targets(targets: Sequence[Any]) -> UnitTexts:
    """Unit texts from the first target whose index holds its chunks; a ``UsageError`` when none does."""
    from .texts import index_texts

    for target in targets:
        chunks = getattr(getattr(target, "index", None), "chunks", None)
        if chunks:
            return index_texts(chunks)
    raise UsageError("the judge reads each result's text, and no target here keeps its chunks (an Azure AI Search "
                     "index is read through its service): give the corpus too (--corpus, or texts=corpus_texts(...))")
