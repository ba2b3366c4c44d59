"""The words and numbers every view gives for a report's ``judged`` block (``evaluation.holes``): the judge,
its agreement with the people, the holes it graded, the numbers on human + judged labels, what it cost.

Every number that uses the judge's grades is named with the mark (``found@10+judged``); none is shown
in a column or a sentence of the human-only numbers. The picks are the people's unless the report says
``picks_from`` "human+judged", and then every view says so beside them (``picks_source_words``); a
conflict of model family, or a judge biased toward a pick, is printed on that pick (``pick_warnings``).
"""
from __future__ import annotations

from dataclasses import replace
from typing import Any, Mapping

from ..store.run_report import RunReport
from ..store.report_parts import Judged
from .numbers import TEXT_DASH, percent, score

MARK = "+judged"


def marked(measure: str, mark: str = MARK) -> str:
    """A measure's name when its number uses judged grades: ``found@10+judged``."""
    return f"{measure}{mark}"


def kappa_words(kappa: Mapping[str, Any] | None, name: str = "kappa") -> str:
    """``kappa 0.79 (95% interval 0.66 to 0.92) on 80 labels``, or why there is none."""
    if not kappa:
        return f"{name}: not measured"
    if kappa.get("value") is None:
        return f"{name}: not defined on {kappa.get('pairs', 0)} labels (every label one grade)"
    low, high = kappa["interval"]
    return (f"{name} {kappa['value']:.2f} (95% interval {low:.2f} to {high:.2f}) on {kappa['pairs']} labels")


def agreement_words(block: Judged) -> str:
    """Kappa, and on a graded scale weighted kappa too."""
    calibration = block.calibration
    words = kappa_words(calibration.get("kappa"))
    if calibration.get("weighted_kappa"):
        words += "; " + kappa_words(calibration["weighted_kappa"], "weighted kappa (quadratic)")
    return words


def tau_words(block: Judged) -> str | None:
    ranking = block.ranking
    if not ranking or ranking.get("tau") is None:
        return None
    interval = ranking.get("interval")
    shown = f" (95% interval {interval[0]:.2f} to {interval[1]:.2f})" if interval else ""
    return (f"Kendall tau {ranking['tau']:.2f}{shown} between the ranking on the people's labels and on theirs "
            f"with the judge's grades, over {ranking['setups']} setups")


def cost_words(block: Judged) -> str:
    cost = block.cost
    calls, cached = cost.get("calls", 0), cost.get("cached", 0)
    tokens = (f"{cost.get('prompt_tokens', 0):,} prompt + {cost.get('completion_tokens', 0):,} reply tokens"
              + (f" ({cost['estimated_calls']} call(s) without the service's count: estimated at 4 characters a token)"
                 if cost.get("estimated_calls") else " (the service's counts)"))
    money = ("not priced (the model is not in the price table)" if cost.get("cost") is None else
             f"{cost['cost']:.4f} {cost.get('currency', 'USD')}"
             + (f", at most {cost['cost_at_most']:.4f}" if cost.get("cost_at_most") != cost.get("cost") else ""))
    cap = f"; cap {cost['cap']:g}" if cost.get("cap") is not None else ""
    stopped = (f"; the cap stopped the judging: {cost.get('refused_by_cap', 0)} call(s) not made"
               if block.stopped_by_cap else "")
    return f"{calls} call(s), {cached} from the reply cache; {tokens}; {money}{cap}{stopped}"


def holes_words(block: Judged) -> str:
    holes = block.holes
    extra = []
    if holes.get("no_text"):
        extra.append(f"{holes['no_text']} without text at hand")
    if holes.get("left"):
        extra.append(f"{holes['left']} left unjudged")
    return (f"{holes.get('judged', 0)} of {holes.get('total', 0)} unjudged results in some setup's top 10 graded"
            + (f" ({', '.join(extra)})" if extra else ""))


def bias_lines(block: Judged) -> list[str]:
    bias = block.calibration.get("bias") or {}
    rows = {row["setup"]: row for row in bias.get("setups") or []}
    out = []
    for key in bias.get("flagged") or []:
        row = rows.get(key) or {}
        side = "higher" if (row.get("difference") or 0) > 0 else "lower"
        out.append(f"BIASED: the judge grades {key}'s results {side} than the people did "
                   f"({row.get('difference', 0):+.2f} of a grade on {row.get('labels_in_top', 0)} labels, p (Holm) "
                   f"{row.get('p_holm')}): its {marked('numbers')} favour{'s' if side == 'higher' else ' against'} it")
    return out


def conflict_lines(block: Judged) -> list[str]:
    judge = block.judge.get("model", "the judge")
    return [f"FAMILY CONFLICT: the judge {judge} is of the {c['family']} family, as {c['model']} under test in "
            f"{c['setup']} (judged anyway, as asked)" for c in block.conflicts]


def picks_source_words(report: RunReport) -> str | None:
    """A sentence to put beside the picks when they come from human + judged labels; None otherwise."""
    if report.picks_from != "human+judged":
        return None
    human = report.judged.human_picks if report.judged is not None else {}
    differs = [f"{name} {key}" for name, key in human.items() if key != report.picks.get(name)]
    return ("These picks are named from the people's labels WITH the judge's grades (" + MARK + ", --picks-from "
            "judged)" + (f"; on the people's labels alone: {', '.join(differs)}" if differs else
                         "; the people's labels alone name the same") + ".")


def pick_warnings(report: RunReport, key: str | None) -> list[str]:
    """What a pick must carry when a judge was used: a family conflict on it, or a judge biased toward it."""
    block = report.judged
    if block is None or key is None:
        return []
    out = [line for line in conflict_lines(block) if f" in {key} " in line + " "]
    if key in block.flagged:
        out.append(f"the judge is biased toward {key} (its {marked('numbers')} are suspect)")
    return out


def picks_view(report: RunReport) -> RunReport:
    """The report as the picks' reasons must read it: itself, or, when the picks were named from human +
    judged labels, one whose setups hold their judged summaries and ranks, so a reason never cites a
    people's number for a pick those numbers did not name (``why_mark`` then marks the reason)."""
    block = report.judged
    if report.picks_from != "human+judged" or block is None:
        return report
    ranks = block.judged_picks.get("ranks") or {}
    setups = tuple(replace(s, summary=block.setups[s.key].summary, rank=ranks.get(s.key, s.rank))
                   if s.key in block.setups else s for s in report.setups)
    return replace(report, setups=setups)  # read by the picks' reasons alone: never kept, never served


def why_mark(report: RunReport) -> str:
    """What a pick's reason carries when it cites judged numbers (" (+judged numbers)"), else ""."""
    return f" ({MARK} numbers)" if report.picks_from == "human+judged" and report.judged is not None else ""


def pick_judged_numbers(report: RunReport, key: str | None) -> str | None:
    """With picks named from judged grades, the pick's judged found@10 to show beside its own (marked)."""
    block = report.judged
    if report.picks_from != "human+judged" or block is None or key is None:
        return None
    entry = block.setups.get(key)
    summary = entry.summary if entry is not None else None
    if summary is None:
        return None
    return (f"{marked('found@10')} {summary.count(10)} of {summary.questions} "
            f"({percent(summary.share(10), dash=TEXT_DASH)}): the number this pick was named by")


def judged_rows(report: RunReport) -> list[dict[str, Any]]:
    """Per ranked setup, in the report's order: its human found@10 beside its judged numbers."""
    setups = report.judged.setups if report.judged is not None else {}
    rows = []
    for setup in report.setups:
        entry = setups.get(setup.key)
        if entry is None or entry.summary is None or setup.summary is None:
            continue
        judged = entry.summary
        rows.append({"key": setup.key, "found10": setup.summary.share(10),
                     "found10_judged": judged.share(10), "mrr_judged": judged.mrr,
                     "ndcg_judged": judged.ndcg_10, "holes_judged": entry.holes_judged,
                     "biased": entry.biased})
    return rows


def render_judged(report: RunReport) -> str:
    """The text section (``render_report`` prints it before the picks); "" without a judged block."""
    block = report.judged
    if block is None:
        return ""
    judge = block.judge
    if block.refused:
        return (f"Holes not judged by {judge.get('model')}: {block.refused}. Every number is the people's labels "
                "only.")
    scale = block.scale
    calibration = block.calibration
    grades = scale.get("grades") or [0, 1]
    out = [f"Holes judged by {judge.get('model')} ({scale.get('kind')} scale {grades[0]}-{grades[-1]}): numbers "
           f"named {MARK} use its grades; every other number is the people's labels only.",
           f"  Calibration: {calibration.get('graded', 0)} of the golden file's labels graded blind (set aside by "
           f"seed {calibration.get('seed')}): {agreement_words(block)}"]
    confusion = calibration.get("confusion") or {}
    if confusion.get("counts"):
        out.append("  Confusion (rows: the people's grade, columns: the judge's): "
                   + "; ".join(f"{g}: " + " ".join(str(c) for c in row)
                               for g, row in zip(confusion["grades"], confusion["counts"], strict=True)))
    out += [f"  {line}" for line in conflict_lines(block) + bias_lines(block)]
    if not block.counted:
        out.append(f"  The judge's grades do not count: {block.why_not_counted}")
        out.append(f"  Cost: {cost_words(block)}")
        return "\n".join(out)
    out.append(f"  Holes: {holes_words(block)}")
    tau = tau_words(block)
    if tau:
        out.append(f"  {tau}")
    rows = judged_rows(report)
    if rows:
        header = ["setup", "found@10", marked("found@10"), marked("MRR"), marked("nDCG@10"), "holes graded"]
        cells = [[r["key"] + (" (biased judge)" if r["biased"] else ""), percent(r["found10"], dash=TEXT_DASH),
                  percent(r["found10_judged"], dash=TEXT_DASH), score(r["mrr_judged"], dash=TEXT_DASH),
                  score(r["ndcg_judged"], dash=TEXT_DASH), str(r["holes_judged"])] for r in rows]
        widths = [max(len(h), *(len(c[i]) for c in cells)) for i, h in enumerate(header)]
        for line in [header, ["-" * w for w in widths], *cells]:
            out.append("  " + "  ".join(c.ljust(w) if i == 0 else c.rjust(w)
                                        for i, (c, w) in enumerate(zip(line, widths, strict=True))).rstrip())
    choice = block.judged_picks.get("picks") or {}
    if choice and report.picks_from != "human+judged":
        out.append(f"  Picks the {MARK} numbers would name (not the report's: --picks-from judged names them): "
                   + ", ".join(f"{name} {key}" for name, key in choice.items()))
    out.append(f"  Cost: {cost_words(block)}")
    return "\n".join(out)
