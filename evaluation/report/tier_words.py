"""Sentences about a report's tiers (``scoring.tiers``) and what to label next (``scoring.label_next``),
the same for the terminal, the page and the builds views: read from the report alone, so a kept run
says what it said when it was made. A report made before tiers has none and these say nothing.

A tier is said as what it is: setups the paired tests cannot separate, never "as good"; the
detectable difference says how large a difference could still hide in it.
"""
from __future__ import annotations

from typing import Any, Mapping, Sequence

from ..golden.wording import plural
from ..store.run_report import RunReport
from ..store.report_parts import RankInterval, Tiers


def rank_words(interval: RankInterval | None) -> str:
    """``rank 1`` or ``ranks 1-3`` from a rank interval; "" without one."""
    if interval is None:
        return ""
    low, high = interval.low, interval.high
    return f"rank {low}" if low == high else f"ranks {low}-{high}"


def procedure_words(tiers: Tiers) -> str:
    """How the tiers were made, in one clause."""
    pairs = tiers.pairs
    return (f"{tiers.metric}, an exact paired test per pair, Holm over "
            f"{'the one pair' if pairs == 1 else f'all {pairs} pairs'}, alpha {tiers.alpha:g}")


def group_words(tiers: Tiers, group: Sequence[str], *, short: bool = False) -> str:
    """A tier's setups, each with its rank interval (and, unless ``short``, its share of first places)."""
    named = []
    for key in group:
        interval = tiers.ranks.get(key)
        said = rank_words(interval)
        share = interval.first_share if interval is not None else None
        if said and share and not short:
            said += f", first in {share:.0%} of resamples"
        named.append(f"{key} ({said})" if said else key)
    return ", ".join(named)


def detectable_words(tiers: Tiers) -> str:
    """The smallest difference the questions detect, in points and questions, or ""."""
    found = tiers.detectable
    if found is None:
        return ""
    pairs = found.pairs or 1
    alone = (f"; for two setups alone, {found.one_pair[0]:.0f} points ({found.one_pair[1]:.1f} questions)"
             if pairs > 1 and found.one_pair is not None else "")
    run = found.questions_run or tiers.questions or 0
    return (f"With {plural(int(run), 'question')}, a found@10 difference under {found.points:.0f} "
            f"points ({found.questions:.1f} questions) can go unseen by the tiers at "
            f"{found.power:.0%} power{alone}.")


def tier_lines(report: RunReport) -> list[str]:
    """The tiers for a person: what they are, one line per tier, the detectable difference; [] without."""
    tiers = report.tiers
    if tiers is None or not tiers.groups:
        return []
    groups = tiers.groups
    lines = [f"Tiers: setups the paired tests cannot separate ({procedure_words(tiers)}; "
             f"{tiers.rank_level:.0%} bootstrap rank intervals):"]
    lines += [f"  tier {n}: {group_words(tiers, group)}" for n, group in enumerate(groups, start=1)]
    if len(groups) == 1 and len(groups[0]) > 1:
        lines.append("  The tests separate none of them: the ranking is not decided by these questions.")
    detect = detectable_words(tiers)
    if detect:
        lines.append(f"  {detect}")
    return lines


def pick_tier_words(report: RunReport, name: str) -> str:
    """``in tier 1 with A, B: the paired tests cannot separate them`` for a pick that shares its tier; ""."""
    tiers = report.tiers
    if tiers is None:
        return ""
    mates = tiers.picks.get(name) or ()
    key = report.picks.get(name)
    tier = next((n for n, group in enumerate(tiers.groups, start=1) if key in group), None)
    if not mates or tier is None:
        return ""
    return f"in tier {tier} with {', '.join(mates)}: the paired tests cannot separate them"


def label_next_lines(report: RunReport, limit: int = 5) -> list[str]:
    """The first results to judge (and questions to label, when the report holds some) that would most
    help separate the top tier; [] when the report proposes none."""
    proposal = report.label_next
    if proposal is None:
        return []
    results, questions = proposal.results, proposal.questions
    if not results and not questions:
        return []
    tied = ", ".join(proposal.tied)
    lines = [f"Label next, to separate tier 1 ({tied}): `golden next` writes these as a template to fill in"]
    if results:
        lines.append("  results to judge (question: result): " + "; ".join(
            f"{r.get('question')}: {r.get('result')}" for r in results[:limit])
            + (f" ... and {len(results) - limit} more" if len(results) > limit else ""))
    if questions:
        lines.append("  questions to label: " + ", ".join(str(r.get("question")) for r in questions[:limit])
                     + (f" ... and {len(questions) - limit} more" if len(questions) > limit else ""))
    return lines


def builds_tiers_pick(tiers: Any, field: str | None = None) -> str | None:
    """The key a builds run's ``tiers`` names as its pick (``tiers["pick"]``, or its ``field``); None when
    a damaged kept file gives something else there."""
    pick = tiers.get("pick") if isinstance(tiers, Mapping) else None
    if field is not None:
        pick = pick.get(field) if isinstance(pick, Mapping) else None
    return pick if isinstance(pick, str) else None


def builds_tier_lines(tiers: Mapping[str, Any] | None, pick: str | None, *, what: str = "technique",
                      name: Any = str) -> list[str]:
    """A builds run's tiers (chunking techniques, matrix experiments) in two sentences: the tiers, and
    whether the pick shares its tier; ``name`` shortens a key for reading. [] without tiers."""
    parsed = Tiers.from_json(dict(tiers)) if isinstance(tiers, Mapping) else None
    if parsed is None or not parsed.groups:
        return []
    groups = parsed.groups  # typed: a damaged kept file's group that is not a list of keys is left out
    lines = [f"Tiers ({procedure_words(parsed)}): "
             + " | ".join(f"{n}: {', '.join(name(k) for k in group)}" for n, group in enumerate(groups, start=1))
             + "."]
    mates = next(([k for k in group if k != pick] for group in groups if pick in group), [])
    if pick is not None and mates:
        tier = next(n for n, group in enumerate(groups, start=1) if pick in group)
        lines.append(f"The pick's {what} ({name(pick)}) is in tier {tier} with {', '.join(name(k) for k in mates)}: "
                     "the paired tests cannot separate them.")
    elif pick is not None and any(pick in group for group in groups):
        lines.append(f"The pick's {what} ({name(pick)}) is alone in its tier: the paired tests separate it from "
                     "every other.")
    return lines
