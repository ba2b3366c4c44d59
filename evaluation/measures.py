"""What a report measures, each named once: a ``Measure`` is its printed name, parsed back from it.

As in ir_measures, a measure is a small value whose printed name is its identity: ``found@10``,
``hit_rate@5``, ``MRR``, ``nDCG@10``. ``parse_measure`` reads any of those (in any case, as the command
line's ``--fail-under found@10=0.8`` or ``mrr=0.5`` spells them) and ``str()`` gives the name back, so
``parse_measure(str(m)) == m`` for every measure. ``MEASURES`` is the one table from a measure to where
a report keeps it, which the metrics, the comparison, the store's shape check, the CLI and the views read:

    found@k / hit_rate@k   summary["found"][str(k)] (k in CUTOFFS); versus_top["found@10"] for k = 10
    MRR                    summary["mrr"];     versus_top["mrr"]
    nDCG@10                summary["ndcg_10"]; versus_top["ndcg_10"]

A matrix (``evaluation.builds.run_matrix``) reports five measures at any cut-off its ``--top-k`` names:
``parse_at_k`` reads ``hit_rate@5`` (or ``found@5``), ``precision@5``, ``recall@5``, ``mrr@5``, ``ndcg@5``,
and ``Measure.at_k_key`` is the key ``scoring.at_k`` keeps it under.

``hit_rate@k`` is ElectriPy's word for found@k (the share of questions with a relevant result in the
first k): another name, the same number. Report keys are a contract and do not change with the names.

Bottom layer (beside ``errors``), so the store's shape check reads the cut-offs from here too.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

from .errors import UsageError, did_you_mean

CUTOFFS = (1, 3, 5, 10, 20)  # the found@k every summary holds


@dataclass(frozen=True)
class Measure:
    """``name`` as printed (``found``, ``hit_rate``, ``MRR``, ``nDCG``) and its ``cutoff`` (None: all results)."""

    name: str
    cutoff: int | None = None

    def __str__(self) -> str:
        return self.name if self.cutoff is None else f"{self.name}@{self.cutoff}"

    @property
    def summary_path(self) -> tuple[str, ...]:
        """Where a setup's ``summary`` keeps this measure's value."""
        return _SUMMARY_PATH[(_FAMILY[self.name.casefold()], self.cutoff)]

    @property
    def versus_key(self) -> str:
        """The key ``versus_top`` and the paired comparison keep this measure under."""
        family = _FAMILY[self.name.casefold()]
        return f"found@{self.cutoff}" if family == "found" else _SUMMARY_PATH[(family, self.cutoff)][0]

    def of(self, summary: Mapping[str, Any]) -> Any:
        """This measure's value in a setup's ``summary`` (None when the summary lacks it)."""
        value: Any = summary
        for part in self.summary_path:
            value = value.get(part) if isinstance(value, Mapping) else None
        return value


    @property
    def at_k_key(self) -> str:
        """The key ``scoring.at_k`` keeps this measure under at its cut-off (``hit_rate`` for found@k)."""
        return _AT_K_FAMILY[self.name.casefold()]


# Family (as parsed, case folded) -> the printed name; and which cut-offs a report holds for it.
_FAMILY = {"found": "found", "hit_rate": "found", "mrr": "mrr", "ndcg": "ndcg"}
_PRINTED = {"found": "found", "hit_rate": "hit_rate", "mrr": "MRR", "ndcg": "nDCG"}
_SUMMARY_PATH: dict[tuple[str, int | None], tuple[str, ...]] = {
    **{("found", k): ("found", str(k)) for k in CUTOFFS},
    ("mrr", None): ("mrr",),
    ("ndcg", 10): ("ndcg_10",),
}

# The five measures of ``scoring.at_k``, by every name they are read under -> their key there.
_AT_K_FAMILY = {"found": "hit_rate", "hit_rate": "hit_rate", "precision": "precision", "recall": "recall",
                "mrr": "mrr", "ndcg": "ndcg"}
_AT_K_PRINTED = {"found": "found", "hit_rate": "hit_rate", "precision": "precision", "recall": "recall",
                 "mrr": "MRR", "ndcg": "nDCG"}

FOUND_10 = Measure("found", 10)
MRR = Measure("MRR")
NDCG_10 = Measure("nDCG", 10)
FOUND = tuple(Measure("found", k) for k in CUTOFFS)
HIT_RATE = tuple(Measure("hit_rate", k) for k in CUTOFFS)
MEASURES = (*FOUND, MRR, NDCG_10, *HIT_RATE)  # every measure a report holds, in the order views show them


def parse_measure(text: str) -> Measure:
    """The measure ``text`` names (``found@10``, ``hit_rate@5``, ``MRR``, ``nDCG@10``, in any case).

    A ``UsageError`` names the measures there are, and the closest, for anything else: a cut-off the
    report does not hold (``found@7``, ``nDCG@5``) or one written another way (``found@010``).
    """
    name, at, cutoff_text = text.strip().partition("@")
    family = name.casefold()
    cutoff: int | None = None
    if at:
        cutoff = int(cutoff_text) if cutoff_text.isdigit() and cutoff_text == str(int(cutoff_text)) else -1
    if family in _FAMILY and (_FAMILY[family], cutoff) in _SUMMARY_PATH:
        return Measure(_PRINTED[family], cutoff)
    names = [str(m) for m in MEASURES]
    closest = did_you_mean(text.strip(), names) or did_you_mean(text.strip().lower(), [n.lower() for n in names])
    raise UsageError(f'"{text}" is not a measure a report holds; the measures are {", ".join(names)}.{closest}')


def parse_at_k(text: str, cutoffs: tuple[int, ...] | None = None) -> Measure:
    """The at-k measure ``text`` names (``hit_rate@5``, ``found@5``, ``precision@5``, ``recall@5``,
    ``mrr@5``, ``ndcg@5``, in any case), at a cut-off of ``cutoffs`` when they are given.

    A ``UsageError`` names the measures there are, and the closest, for anything else.
    """
    name, at, cutoff_text = text.strip().partition("@")
    family = name.casefold()
    valid = at and cutoff_text.isdigit() and cutoff_text == str(int(cutoff_text)) and int(cutoff_text) >= 1
    names = [f"{n}@k" for n in _AT_K_PRINTED.values()]
    if family not in _AT_K_FAMILY or not valid:
        closest = did_you_mean(name.strip(), list(_AT_K_PRINTED.values())) if family not in _AT_K_FAMILY else ""
        raise UsageError(f'"{text}" is not a measure at a cut-off; the measures are {", ".join(names)} (k a whole '
                         f"number from 1, as in hit_rate@5).{closest}")
    cutoff = int(cutoff_text)
    if cutoffs is not None and cutoff not in cutoffs:
        raise UsageError(f'"{text}": the cut-off {cutoff} is not one of --top-k ({",".join(map(str, cutoffs))}); '
                         f"add {cutoff} to --top-k or use one of those")
    return Measure(_AT_K_PRINTED[family], cutoff)


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


def parse_azure_measure(text: str) -> Measure:
    """The Azure retrieval measure ``text`` names, in any case: one of ``AZURE_EXACT`` (``azure.ndcg@3``,
    ``azure.fidelity``) or a corrected one at any cut-off (``azure_corrected.ndcg@10``,
    ``azure_corrected.top1_relevance``). A ``UsageError`` names the measures there are, and the closest."""
    wanted = text.strip().casefold()
    for measure in AZURE_EXACT:
        if wanted == str(measure):
            return measure
    family, _, rest = wanted.partition(".")
    name, at, cutoff_text = rest.partition("@")
    at_k = dict(_CORRECTED).get(name)
    cutoff = int(cutoff_text) if cutoff_text.isdigit() and cutoff_text == str(int(cutoff_text)) else 0
    if family == AZURE_CORRECTED and at_k is not None and bool(at) == at_k and (cutoff >= 1 or not at):
        return Measure(f"{AZURE_CORRECTED}.{name}", cutoff or None)
    names = [*map(str, AZURE_EXACT), *(f"{AZURE_CORRECTED}.{n}{'@k' if k else ''}" for n, k in _CORRECTED)]
    if family == AZURE and at_k and cutoff >= 1:  # azure.ndcg@5: the evaluator's own cut-off is 3
        closest = f' The evaluator\'s cut-off is {AZURE_K}; at another, use "{AZURE_CORRECTED}.{name}@{cutoff}".'
    else:
        closest = did_you_mean(wanted, names)
    raise UsageError(f'"{text}" is not an Azure retrieval measure; the measures are {", ".join(names)} (k a whole '
                     f"number from 1, as in {AZURE_CORRECTED}.ndcg@10).{closest}")
