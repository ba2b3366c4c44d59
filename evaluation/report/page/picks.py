"""The three picks as cards: each with found@10 and its median, how it compares with the top, the setups
it is tied with on time, what the paired test says, and the rule that chose it."""
from __future__ import annotations

from typing import Any

from ..answer import findings, pick_answers
from ..notes import found_gap_words
from ..numbers import milliseconds as _ms, percent as _pct
from ..svg import attr
from ..time_words import faster_words, floor_ms, in_tier_rule, tie_words
from .context import PICKS, Page
from .format import esc, found_count, found_share, pick_key, plain, spaced, summary_of
from .tiers import pick_tier_note


def pick_cards(page: Page) -> str:
    """The ``#picks`` section: a card per pick, "none" for a pick no setup ran for."""
    report, setups = page.report, page.setups
    if report.get("picks_withheld"):
        return ('<section id="picks"><h2>The picks</h2><div class="note warn"><strong>No pick.</strong> '
                f'{esc(str(report["picks_withheld"]))}</div></section>')
    by_key = {s["key"]: s for s in setups}
    rules = report.get("rules") or {}
    floor = floor_ms(report)
    equal = (f"setups tied on time count as equally fast, and so do setups under {plain(floor)} ms of each other"
             if floor is not None else "setups tied on time count as equally fast")
    rule_words = {
        "finds_the_most": "The setup with the most questions found in the top 10 (then found@1, then time).",
        "best_for_balance": f"The fastest setup within {plain(rules.get('balance_points', 4))} points of the most "
                            f"found "
                            f"({equal}).",
        "best_for_time": f"The fastest setup within {plain(rules.get('time_points', 8))} points of the most found "
                         f"({equal}).",
    }
    top_key = pick_key((report.get("picks") or {}).get("finds_the_most"))
    top_summary = summary_of(by_key[top_key]) if top_key in by_key else None
    answers = {a.name: a for a in pick_answers(report)}  # the same words as the terminal's
    cards = []
    for name, label, _words in PICKS:
        value = (report.get("picks") or {}).get(name)
        key = pick_key(value)
        setup = by_key.get(key) if key else None
        summary = summary_of(setup) if setup else None
        if summary is None:
            cards.append(f'<article class="pick" data-pick="{name}"><h3>{label}</h3>'
                         '<div class="setup">none</div><p class="rule">No setup ran.</p></article>')
            continue
        answer = answers.get(name)
        if answer is not None and answer.same_as:  # the same setup as an earlier pick: said, not repeated whole
            cards.append(f'<article class="pick same" data-pick="{name}" data-key="{attr(key)}"><h3>{label}</h3>'
                         f'<p class="why">The same setup as <strong>{esc(answer.same_as)}</strong> '
                         f'(<span class="key">{esc(key)}</span>): {esc(answer.why)}.</p></article>')
            continue
        questions = summary.get("questions")
        count = found_count(summary, 10)
        extra = ""
        if isinstance(value, dict):
            notes = {k: v for k, v in value.items() if k not in ("key", "setup")}
            extra = "".join(f'<p class="extra"><strong>{esc(spaced(k))}:</strong> {esc(plain(v))}</p>'
                            for k, v in notes.items())
        why = f'<p class="why">Why: {esc(answer.why)}.</p>' if answer is not None else ""
        versus = (_versus(report, key, top_key, summary, top_summary, name) + _time_tie_note(report, name, key, by_key)
                  + _tie_note((report.get("ties") or {}).get(name), report) + pick_tier_note(report, name))
        cards.append(
            f'<article class="pick" data-pick="{name}" data-key="{attr(key)}"><h3>{label}</h3>'
            f'<div class="setup key">{esc(key)}</div><div class="label">{esc(setup.get("method_label", ""))}</div>'
            '<div class="numbers">'
            f'<div class="number"><b>{_pct(found_share(summary, 10), questions)}</b><span>found@10'
            + (f" · {count} of {questions}" if count is not None and questions else "") + "</span></div>"
            f'<div class="number"><b>{_ms(summary.get("median_ms"))}<small> ms</small></b><span>median search '
            f'time</span></div>'
            f'</div>{why}{versus}<p class="rule">{rule_words[name]}</p>{extra}</article>')
    found = findings(report)
    finding = f'<p class="finding"><strong>What this run found:</strong> {esc(" ".join(found))}</p>' if found else ""
    return ('<section id="picks"><h2>The picks</h2><p class="muted">Nothing is switched: a person chooses. '
            "The three picks follow fixed rules; the chart and the table below show every other setup.</p>"
            f'{finding}<div class="picks">{"".join(cards)}</div></section>')


def _versus(report: dict[str, Any], key: str, top_key: Any, summary: dict[str, Any], top: dict[str, Any] | None,
            name: str) -> str:
    """How a faster pick compares with ``finds_the_most``: questions given up, times faster (with the
    pair's 95% interval when they were timed side by side)."""
    if top is None or name == "finds_the_most" or summary is top:
        return ""
    mine, most = found_count(summary, 10), found_count(top, 10)
    words = []
    if mine is not None and most is not None:
        words.append("finds as many" if mine == most else
                     f"{most - mine} question{'s' if most - mine != 1 else ''} fewer found")
    faster = faster_words(report, key, str(top_key), summary.get("median_ms"), top.get("median_ms"))
    if faster:
        words.append(faster)
    if not words:
        return ""
    return f'<p class="versus">Against finds the most: <strong>{esc(", ".join(words))}</strong>.</p>'


def _time_tie_note(report: dict[str, Any], name: str, key: str, by_key: dict[str, Any]) -> str:
    """The setups a pick is tied with on time (``report["ties_on_time"][pick]``) and why each is
    (``time_words.tie_words``), "" when none."""
    tier = (report.get("ties_on_time") or {}).get(name)
    tied = [k for k in tier if isinstance(k, str) and k != key] if isinstance(tier, list) else []
    if not tied:
        return ""
    named = ", ".join(f'<strong class="key">{esc(k)}</strong>' for k in tied)
    if floor_ms(report) is None:  # a report from before the floor: the words it was rendered with then
        return (f'<p class="tie time">Tied on time with {named}: their medians’ 99% intervals overlap, so this '
                "one was chosen among them by found@10, then found@1, then key.</p>")
    medians = {k: (summary_of(by_key[k]) or {}).get("median_ms") for k in [key, *tied] if k in by_key}
    named = ", ".join(f'<strong class="key">{esc(k)}</strong> ({esc(tie_words(report, name, key, k, medians))})'
                      for k in tied)
    return (f'<p class="tie time">Tied on time with {named}, so this one was chosen among them by '
            f"{esc(in_tier_rule(report, name))}.</p>")


def _tie_note(tie: Any, report: dict[str, Any]) -> str:
    """What the paired test says of the fastest faster setup it cannot tell from the pick
    (``report["ties"][pick]``): that the questions are too few to tell, never that it finds as many."""
    if not isinstance(tie, dict):
        return ""
    alpha = plain((report.get("significance") or {}).get("alpha", 0.05))
    rows = [r for r in tie.get("faster") or [] if isinstance(r, dict)]
    keys = [r.get("key") if isinstance(r, dict) else r for r in tie.get("faster") or []]
    if tie.get("tied") and tie.get("with"):
        others = [k for k in keys if isinstance(k, str) and k != tie["with"]
                  and any(isinstance(r, dict) and r.get("key") == k and r.get("tied") for r in rows)]
        more = f" (also {', '.join(others)})" if others else ""
        row = next((r for r in rows if r.get("key") == tie["with"]), None)
        questions = len(report.get("question_ids") or []) or None
        words = (found_gap_words(row, questions) if row is not None else
                 f"the paired test on found@10 cannot tell them apart at {alpha}: too few questions to tell")
        return (f'<p class="tie">Faster <strong class="key">{esc(tie["with"])}</strong>{esc(more)}: '
                f"{esc(words)}.</p>")
    if keys:
        return f'<p class="tie muted">Every faster setup finds significantly less (paired test at {esc(alpha)}).</p>'
    return '<p class="tie muted">No setup is faster.</p>'
