"""Every measure, each named once: a ``Measure`` is its printed name, and ``parse`` reads any name back.

As in ir_measures, a measure is a small value whose printed name is its identity: ``found@10``,
``hit_rate@5``, ``recall@10``, ``precision@5``, ``MRR``, ``nDCG@10``, ``azure.ndcg@3``. ``parse`` reads
every measure there is (in any case, as the command line's ``--fail-under found@10=0.8`` or ``mrr=0.5``
spells them) and ``str()`` gives the name back, so ``parse(str(m)) == m`` for every measure
(``every_measure`` lists them at any cut-offs). Where a name is read for one use, that use's parser
refuses the measures it has no number for, naming the ones it has and the closest:

    parse_measure        what a retrieval report holds (``evaluate --fail-under``): ``MEASURES``
    parse_at_k           what a matrix holds at each cut-off of its ``--top-k`` (``run_matrix --fail-under``)
    parse_azure_measure  Azure AI Foundry's Document Retrieval measures (``scoring.azure_retrieval``)

``MEASURES`` is the one table from a measure to where a report keeps it, which the metrics, the
comparison, the store's shape check, the CLI and the views read:

    found@k / hit_rate@k   summary["found"][str(k)] (k in CUTOFFS); versus_top["found@10"] for k = 10
    recall@k               summary["recall"][str(k)] (k in CUTOFFS)
    MRR                    summary["mrr"];     versus_top["mrr"]
    nDCG@10                summary["ndcg_10"]; versus_top["ndcg_10"]

A matrix (``evaluation.builds.run_matrix``) reports five measures at any cut-off (``at_k(k)``):
hit_rate@k (found@k by ElectriPy's name), precision@k, recall@k, MRR@k, nDCG@k, each kept under
``Measure.at_k_key`` in ``scoring.at_k``'s metrics. A sweep's rows keep a summary's measures.

``hit_rate@k`` is ElectriPy's word for found@k (the share of questions with a relevant result in the
first k): another name, the same number. Report keys are a contract and do not change with the names.

Bottom layer (beside ``errors``), so the store's shape check reads the cut-offs from here too.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any, Iterable, Mapping

from .errors import UsageError, did_you_mean

CUTOFFS = (1, 3, 5, 10, 20)  # the found@k and recall@k every summary holds


@dataclass(frozen=True)
class Measure:
    """``name`` as printed (``found``, ``hit_rate``, ``recall``, ``precision``, ``MRR``, ``nDCG``, ``azure.ndcg``,
    ...) and its ``cutoff`` (None: all results)."""

    name: str
    cutoff: int | None = None

    def __str__(self) -> str:
        return self.name if self.cutoff is None else f"{self.name}@{self.cutoff}"

    def at(self, cutoff: int | None) -> Measure:
        """The same measure at another cut-off (``FOUND_10.at(5)`` is found@5)."""
        return replace(self, cutoff=cutoff)

    @property
    def held(self) -> bool:
        """Whether a retrieval report's ``summary`` holds this measure (``MEASURES``)."""
        return (_SUMMARY_FAMILY.get(self.name.casefold()), self.cutoff) in _SUMMARY_PATH

    @property
    def summary_path(self) -> tuple[str, ...]:
        """Where a setup's ``summary`` (and a sweep's row) keeps this measure's value."""
        return _SUMMARY_PATH[(_SUMMARY_FAMILY[self.name.casefold()], self.cutoff)]

    @property
    def versus_key(self) -> str:
        """The key ``versus_top`` and the paired comparison keep this measure under."""
        family = _SUMMARY_FAMILY[self.name.casefold()]
        return f"found@{self.cutoff}" if family == "found" else _SUMMARY_PATH[(family, self.cutoff)][0]

    def of(self, summary: Mapping[str, Any]) -> Any:
        """This measure's value in a setup's ``summary`` or a sweep's row (None when it lacks it)."""
        value: Any = summary
        for part in self.summary_path:
            value = value.get(part) if isinstance(value, Mapping) else None
        return value

    def count_of(self, summary: Mapping[str, Any]) -> Any:
        """For found@k (hit_rate@k): how many questions a ``summary`` or a sweep's row counts as found in the
        first k (``summary["counts"][str(k)]``, the numerator of the share), None when it lacks it."""
        if _SUMMARY_FAMILY.get(self.name.casefold()) != "found":
            raise ValueError(f"{self} is not counted in questions; only found@k is")
        counts = summary.get("counts")
        return counts.get(str(self.cutoff)) if isinstance(counts, Mapping) else None

    @property
    def is_share_of_questions(self) -> bool:
        """found@k (hit_rate@k): the share of the questions found, which every view shows as a percent."""
        return _SUMMARY_FAMILY.get(self.name.casefold()) == "found"

    def shown(self, value: Any, *, count: Any = None, questions: Any = None, dash: str = "-") -> str:
        """This measure's value as every view writes it: found@k (hit_rate@k) as a percent, with the count of
        questions when ``count`` and ``questions`` are given (``97% (35/36)``); every other measure, a mean
        from 0 to 1, to three places (``0.600``). ``dash`` for a value a report does not hold."""
        if not self.is_share_of_questions:
            return score_text(value, dash=dash)
        text = percent_text(value, questions, dash=dash)
        if text != dash and isinstance(count, int) and isinstance(questions, int) and questions > 0:
            text += f" ({count}/{questions})"
        return text

    @property
    def at_k_key(self) -> str:
        """The key ``scoring.at_k`` keeps this measure under at its cut-off (``hit_rate`` for found@k)."""
        return _AT_K_FAMILY[self.name.casefold()]

    def at_k_of(self, metrics: Mapping[str, Any] | None) -> Any:
        """This measure's value in a matrix experiment's ``metrics`` (``{str(k): {key: value}}``); None
        when the experiment has none (it failed) or none at this cut-off."""
        at = (metrics or {}).get(str(self.cutoff))
        return at.get(self.at_k_key) if isinstance(at, Mapping) else None


# Each family by every spelling it is read under (case folded) -> its printed name.
_PRINTED = {"found": "found", "hit_rate": "hit_rate", "precision": "precision", "recall": "recall", "mrr": "MRR",
            "ndcg": "nDCG"}
# Where a retrieval report keeps each family (found and hit_rate are one number), and at which cut-offs.
_SUMMARY_FAMILY = {"found": "found", "hit_rate": "found", "recall": "recall", "mrr": "mrr", "ndcg": "ndcg"}
_SUMMARY_PATH: dict[tuple[str | None, int | None], tuple[str, ...]] = {
    **{("found", k): ("found", str(k)) for k in CUTOFFS},
    **{("recall", k): ("recall", str(k)) for k in CUTOFFS},
    ("mrr", None): ("mrr",),
    ("ndcg", 10): ("ndcg_10",),
}
# The five measures of ``scoring.at_k``, by every name they are read under -> their key there.
_AT_K_FAMILY = {"found": "hit_rate", "hit_rate": "hit_rate", "precision": "precision", "recall": "recall",
                "mrr": "mrr", "ndcg": "ndcg"}
AT_K_KEYS = ("hit_rate", "precision", "recall", "mrr", "ndcg")  # scoring.at_k's keys, in the order reports list them

FOUND_10 = Measure("found", 10)
RECALL_10 = Measure("recall", 10)
MRR = Measure("MRR")
NDCG_10 = Measure("nDCG", 10)
FOUND = tuple(Measure("found", k) for k in CUTOFFS)
HIT_RATE = tuple(Measure("hit_rate", k) for k in CUTOFFS)
RECALL = tuple(Measure("recall", k) for k in CUTOFFS)
MEASURES = (*FOUND, MRR, NDCG_10, *HIT_RATE, *RECALL)  # every measure a report holds, in the order views show them


def finite(value: Any) -> float | None:
    """``value`` as a finite float, or None for anything else (bools, NaN, text from an edited file)."""
    plain = isinstance(value, (int, float)) and not isinstance(value, bool)
    return float(value) if plain and math.isfinite(value) else None


def percent_text(share: Any, questions: int | None = None, *, dash: str = "-") -> str:
    """``0.6667`` as ``67%``; one decimal once more than 200 questions make a tenth of a point readable."""
    value = finite(share)
    if value is None:
        return dash
    digits = 1 if questions and questions > 200 else 0
    return f"{value * 100:.{digits}f}%"


def score_text(value: Any, *, dash: str = "-") -> str:
    """A mean from 0 to 1 (MRR, nDCG, recall, precision) to three places."""
    value = finite(value)
    return dash if value is None else f"{value:.3f}"


def at_k(k: int) -> tuple[Measure, ...]:
    """The five measures a matrix reports at cut-off ``k``, in ``AT_K_KEYS``' order: hit_rate@k,
    precision@k, recall@k, MRR@k, nDCG@k."""
    return tuple(Measure(_PRINTED[key], k) for key in AT_K_KEYS)


# -- Azure AI Foundry's Document Retrieval metrics (scoring.azure_retrieval) ----------------------------
#
# ``azure.*`` are the seven numbers azure-ai-evaluation's DocumentRetrievalEvaluator computes, exactly (its
# k is 3, so only ``azure.ndcg@3`` and ``azure.xdcg@3`` carry a cut-off); ``azure_corrected.*`` are the
# same ideas with its mistakes fixed, at any cut-off k. A report does not hold them yet, so
# ``parse_measure`` does not read them: ``parse_azure_measure`` does. The part after the dot is the
# key a question's numbers are kept under (``ndcg@3``, ``fidelity``: the evaluator's own property names).

AZURE = "azure"
AZURE_CORRECTED = "azure_corrected"
AZURE_K = 3  # the evaluator's fixed depth
AZURE_EXACT = (Measure("azure.ndcg", AZURE_K), Measure("azure.xdcg", AZURE_K), Measure("azure.fidelity"),
               Measure("azure.top1_relevance"), Measure("azure.top3_max_relevance"), Measure("azure.holes"),
               Measure("azure.holes_ratio"))
# The corrected forms, in the same order: which take a cut-off (top1_relevance needs none).
_CORRECTED = (("ndcg", True), ("xdcg", True), ("fidelity", True), ("top1_relevance", False),
              ("max_relevance", True), ("holes", True), ("holes_ratio", True))


def azure_corrected(k: int) -> tuple[Measure, ...]:
    """The seven corrected measures at cut-off ``k`` (a whole number from 1), in ``AZURE_EXACT``'s order."""
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise UsageError(f"a cut-off is a whole number of results from 1, not {k!r}")
    return tuple(Measure(f"{AZURE_CORRECTED}.{name}", k if at_k else None) for name, at_k in _CORRECTED)


def azure_key(measure: Measure) -> str:
    """The key one question's numbers keep ``measure`` under: its printed name after the family
    (``azure.ndcg@3`` -> ``ndcg@3``, the evaluator's property name; ``azure_corrected.holes@5`` -> ``holes@5``)."""
    return str(measure).partition(".")[2]


def is_azure(measure: Measure) -> bool:
    return measure.name.partition(".")[0] in (AZURE, AZURE_CORRECTED) and "." in measure.name


def every_measure(cutoffs: Iterable[int] = CUTOFFS) -> tuple[Measure, ...]:
    """Every measure there is at ``cutoffs`` (whole numbers from 1), each once: what a report holds, what a
    matrix holds at each cut-off, and Azure's, exact and corrected."""
    ks = sorted(set(cutoffs))
    found = [*MEASURES, *(m for k in ks for m in (FOUND_10.at(k), *at_k(k))), *AZURE_EXACT,
             *(m for k in ks for m in azure_corrected(k))]
    return tuple(dict.fromkeys(found))


# -- reading a name --------------------------------------------------------------------------------------

def _whole(text: str) -> int | None:
    """``text`` as a cut-off when it is one written the one way (``5``, not ``05`` or ``+5``), else None."""
    return int(text) if text.isdigit() and text == str(int(text)) and int(text) >= 1 else None


def _read(text: str) -> Measure | None:
    """The measure ``text`` names, in any case, or None: the one grammar every parser below reads."""
    wanted = text.strip().casefold()
    family, dot, rest = wanted.partition(".")
    if dot:  # Azure's: azure.<name>[@3] exactly as the evaluator names it, azure_corrected.<name>[@k]
        if family == AZURE:
            return next((m for m in AZURE_EXACT if str(m) == wanted), None)
        name, at, cutoff_text = rest.partition("@")
        takes_k = dict(_CORRECTED).get(name)
        if family != AZURE_CORRECTED or takes_k is None or bool(at) != takes_k:
            return None
        cutoff = _whole(cutoff_text) if at else None
        return Measure(f"{AZURE_CORRECTED}.{name}", cutoff) if cutoff is not None or not at else None
    name, at, cutoff_text = wanted.partition("@")
    if name not in _PRINTED:
        return None
    if not at:
        return MRR if name == "mrr" else None
    cutoff = _whole(cutoff_text)
    return Measure(_PRINTED[name], cutoff) if cutoff is not None else None


def _names() -> list[str]:
    """Every measure's name as the refusal lists it (``@k``: any whole number from 1)."""
    corrected = [f"{AZURE_CORRECTED}.{n}{'@k' if k else ''}" for n, k in _CORRECTED]
    return [*(f"{p}@k" for p in _PRINTED.values()), str(MRR), *map(str, AZURE_EXACT), *corrected]


def parse(text: str) -> Measure:
    """Any measure by its printed name, in any case (``found@7``, ``precision@5``, ``MRR``, ``MRR@10``,
    ``azure.ndcg@3``, ``azure_corrected.holes@5``): ``parse(str(m)) == m`` for every measure. A
    ``UsageError`` names the measures there are, and the closest, for anything else."""
    measure = _read(text)
    if measure is None:
        names = _names()
        raise UsageError(f'"{text}" is not a measure; the measures are {", ".join(names)} (k a whole number from 1, '
                         f"as in recall@10).{did_you_mean(text.strip(), names)}")
    return measure


def parse_measure(text: str) -> Measure:
    """The measure ``text`` names among those a report holds (``found@10``, ``hit_rate@5``, ``recall@5``,
    ``MRR``, ``nDCG@10``, in any case).

    A ``UsageError`` names the measures there are, and the closest, for anything else: a cut-off the
    report does not hold (``found@7``, ``nDCG@5``) or one written another way (``found@010``).
    """
    measure = _read(text)
    if measure is not None and measure.held:
        return measure
    names = [str(m) for m in MEASURES]
    closest = did_you_mean(text.strip(), names) or did_you_mean(text.strip().lower(), [n.lower() for n in names])
    raise UsageError(f'"{text}" is not a measure a report holds; the measures are {", ".join(names)}.{closest}')


def parse_at_k(text: str, cutoffs: tuple[int, ...] | None = None) -> Measure:
    """The at-k measure ``text`` names (``hit_rate@5``, ``found@5``, ``precision@5``, ``recall@5``,
    ``mrr@5``, ``ndcg@5``, in any case), at a cut-off of ``cutoffs`` when they are given.

    A ``UsageError`` names the measures there are, and the closest, for anything else.
    """
    measure = _read(text)
    if measure is None or measure.cutoff is None or measure.name.casefold() not in _AT_K_FAMILY:
        name = text.strip().partition("@")[0]
        printed = [_PRINTED[family] for family in _AT_K_FAMILY]
        closest = did_you_mean(name.strip(), printed) if name.casefold() not in _AT_K_FAMILY else ""
        raise UsageError(
            f'"{text}" is not a measure at a cut-off; the measures are '
            f"{', '.join(f'{n}@k' for n in printed)} (k a whole number from 1, as in hit_rate@5).{closest}"
        )
    if cutoffs is not None and measure.cutoff not in cutoffs:
        raise UsageError(f'"{text}": the cut-off {measure.cutoff} is not one of --top-k '
                         f'({",".join(map(str, cutoffs))}); '
                         f"add {measure.cutoff} to --top-k or use one of those")
    return measure


def parse_azure_measure(text: str) -> Measure:
    """The Azure retrieval measure ``text`` names, in any case: one of ``AZURE_EXACT`` (``azure.ndcg@3``,
    ``azure.fidelity``) or a corrected one at any cut-off (``azure_corrected.ndcg@10``,
    ``azure_corrected.top1_relevance``). A ``UsageError`` names the measures there are, and the closest."""
    measure = _read(text)
    if measure is not None and is_azure(measure):
        return measure
    wanted = text.strip().casefold()
    family, _, rest = wanted.partition(".")
    name, at, cutoff_text = rest.partition("@")
    names = [*map(str, AZURE_EXACT), *(f"{AZURE_CORRECTED}.{n}{'@k' if k else ''}" for n, k in _CORRECTED)]
    cutoff = _whole(cutoff_text)
    if family == AZURE and dict(_CORRECTED).get(name) and cutoff is not None:  # azure.ndcg@5: the evaluator's is 3
        closest = f' The evaluator\'s cut-off is {AZURE_K}; at another, use "{AZURE_CORRECTED}.{name}@{cutoff}".'
    else:
        closest = did_you_mean(wanted, names)
    raise UsageError(f'"{text}" is not an Azure retrieval measure; the measures are {", ".join(names)} (k a whole '
                     f"number from 1, as in {AZURE_CORRECTED}.ndcg@10).{closest}")
