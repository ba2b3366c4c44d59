"""A space run's report as text: the pick, its top tier, the rounds, every setup on one line (a stopped
one with the questions it ran, never as if it had run them all) and the cost against every setup on
every question. Reads the report's dict only (``space.run.space_report`` makes it)."""
from __future__ import annotations

import json
import re
from typing import Any, Mapping

from ..files import OutputKind
from .text import WIDTH, wrap

_JSON_START = re.compile(rb'\{\s*"kind": "space",')  # how ``space_json`` starts every report
SPACE_JSON = OutputKind("space JSON report", own=lambda head: _JSON_START.match(head) is not None,
                        example="space.json")


def space_json(report: Mapping[str, Any]) -> str:
    """The report as ``--report-json`` writes it (``"kind": "space"`` first, indented)."""
    return json.dumps({"kind": report["kind"], **report}, indent=1)


def space_text(report: Mapping[str, Any]) -> str:
    """The report in lines of at most ``WIDTH`` (100) columns, as the run's own report is."""
    plan = report["plan"]
    cost = report["cost"]
    lines = [f"Space: {plan['setups']} setups over {report['builds']} builds; "
             + ("every setup on every question (--exhaustive)" if plan["exhaustive"] or len(plan["budgets"]) == 1
                else f"rounds over {plan['questions']} questions in seed {plan['seed']}'s order, "
                     f"rounds at {', '.join(map(str, plan['budgets']))} questions")
             + f"; a setup stops once shown to find more than {plan['margin']} questions fewer than the best over "
               f"every question (alpha {plan['alpha']:g}, one test per setup against whichever setup led before "
               f"each question: the exhaustive best is stopped with chance at most {plan['alpha']:g}, whatever the "
               f"space's size)"]
    entries = {e["key"]: e for e in report["setups"]}
    pick = report["pick"]
    if pick is None:
        lines.append("Pick: none (no setup ran every question)")
    else:
        e = entries[pick]
        lines.append(f"Pick: {pick}: found@10 {e['found']} of {e['questions']} questions")
        others = [key for key in report["top_tier"] if key != pick]
        lines.append(f"Top tier ({len(others)} more; the exact sign test, Holm, cannot tell them from the pick over "
                     f"every question): {', '.join(others[:12]) or 'none'}"
                     + (f" and {len(others) - 12} more" if len(others) > 12 else ""))
    for r in report["rounds"]:
        stopped = len(r["stopped"])
        lines.append(f"Round {r['round']}: {r['running']} setups on the first {r['budget']} questions; "
                     + (f"leader {r['leader']}, {stopped} stopped" if r["leader"] else "ranked on every question"))
    lines.append(f"Cost: {cost['searches']:,} setup x question searches of {cost['exhaustive']:,} for every setup on "
                 f"every question ({cost['share']:.1%})"
                 + (f"; {report['engine_searches']:,} searches of the engine (a list for a question, each shared by "
                    f"every setup reading it)" if "engine_searches" in report else "")
                 + (f"; {report['resumed_rounds']} rounds read back from the work folder"
                    if report.get("resumed_rounds") else ""))
    lines.append("")
    ranked = sorted(report["setups"], key=lambda e: (e["stopped"] is not None, -e["found"] / max(1, e["questions"]),
                                                     e["key"]))
    width = max((len(e["key"]) for e in ranked), default=0)
    wrapped = [part for line in lines for part in (wrap(line, rest="  ") if line else [""])]
    rest = " " * (width + 2) if width + 2 <= WIDTH // 2 else "    "  # a long key leaves its state room to wrap in
    for e in ranked:
        wrapped += wrap(_state(e, pick), first=f"{e['key']:<{width}}  ", rest=rest)
    return "\n".join(wrapped)


def _state(entry: Mapping[str, Any], pick: str | None) -> str:
    stop = entry["stopped"]
    if stop is None:
        where = "the pick" if entry["key"] == pick else ("top tier" if entry["top_tier"] else "below the top tier")
        return f"found@10 {entry['found']} of {entry['questions']}: {where}"
    low = stop["interval"][0]
    p = stop["adjusted_p"]
    shown = ("adjusted p 0: certain, the questions left cannot close the gap" if p == 0
             else f"adjusted p {p:.3g}")
    return (f"stopped in round {stop['round']} after {stop['questions']} questions (found {entry['found']} of them): "
            f"{stop['leader']} found {stop['difference']} more of them; over every question at least {low} fewer "
            f"than the best; {shown}; never the pick")
