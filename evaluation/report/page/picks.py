"""The three picks as cards: each with found@10 and its median, why it was chosen (against the top and the
fastest setup within its points), the setups it was chosen among and why each lost, what the paired test
says, and the rule that chose it. Every sentence is ``answer.pick_answers``', the terminal's too."""
from __future__ import annotations

from typing import Any

from ..answer import findings, pick_answers
from ..judged import pick_judged_numbers, pick_warnings, picks_source_words, picks_view, why_mark
from ..numbers import milliseconds as _ms, percent as _pct
from ..svg import attr
from .context import PICKS, Page
from .format import esc, plain, spaced
from .tiers import pick_tier_note


def pick_cards(page: Page) -> str:
    """The ``#picks`` section: a card per pick, "none" for a pick no setup ran for."""
    report, setups = page.report, page.setups
    if report.picks_withheld:
        return ('<section id="picks"><h2>The picks</h2><div class="note warn"><strong>No pick.</strong> '
                f'{esc(report.picks_withheld)}</div></section>')
    by_key = {s.key: s for s in setups}
    rules = report.rules
    floor = rules.floor_ms
    balance, time = rules.balance_points, rules.time_points
    equal = (f"setups tied on time count as equally fast, and so do setups under {plain(floor)} ms of each other"
             if floor is not None else "setups tied on time count as equally fast")
    rule_words = {
        "finds_the_most": "The setup with the most questions found in the top 10 (then found@1, then time).",
        "best_for_balance": f"The fastest setup within {plain(balance)} points of the most "
                            f"found "
                            f"({equal}).",
        "best_for_time": f"The fastest setup within {plain(time)} points of the most found "
                         f"({equal}).",
    }
    answers = {a.name: a for a in pick_answers(picks_view(report))}  # the same words as the terminal's
    said: set[str] = set()  # a paired test's sentence said on an earlier card of the same setup is not repeated
    cards = []
    for name, label, _words in PICKS:
        key = report.picks.get(name)
        setup = by_key.get(key) if key else None
        summary = setup.summary if setup else None
        if key is None or setup is None or summary is None:
            cards.append(f'<article class="pick" data-pick="{name}"><h3>{label}</h3>'
                         '<div class="setup">none</div><p class="rule">No setup ran.</p></article>')
            continue
        answer = answers.get(name)
        if answer is not None and answer.same_as:  # the same setup as an earlier pick: said, not repeated whole
            cards.append(f'<article class="pick same" data-pick="{name}" data-key="{attr(key)}"><h3>{label}</h3>'
                         f'<p class="why">The same setup as <strong>{esc(answer.same_as)}</strong> '
                         f'(<span class="key">{esc(key)}</span>): {esc(answer.why)}.</p>{_reasons(answer, said)}'
                         '</article>')
            continue
        questions = summary.questions
        count = summary.count(10)
        extra = "".join(f'<p class="extra"><strong>{esc(spaced(k))}:</strong> {esc(plain(v))}</p>'
                        for k, v in report.pick_notes.get(name, {}).items())
        why = f'<p class="why">Why: {esc(answer.why + why_mark(report))}.</p>' if answer is not None else ""
        why += pick_tier_note(report, name)
        cards.append(
            f'<article class="pick" data-pick="{name}" data-key="{attr(key)}"><h3>{label}</h3>'
            f'<div class="setup key">{esc(key)}</div><div class="label">{esc(setup.method_label or "")}</div>'
            '<div class="numbers">'
            f'<div class="number"><b>{_pct(summary.share(10), questions)}</b><span>found@10'
            + (f" · {count} of {questions}" if count is not None and questions else "") + "</span></div>"
            f'<div class="number"><b>{_ms(summary.median_ms)}<small> ms</small></b><span>median search '
            f'time</span></div>'
            f'</div>{why}{_reasons(answer, said)}<p class="rule">{rule_words[name]}</p>{extra}'
            + "".join(f'<p class="judged">{esc(line)}</p>' for line in [pick_judged_numbers(report, key)] if line)
            + "".join(f'<p class="note warn">{esc(w)}</p>' for w in pick_warnings(report, key)) + "</article>")
    found = findings(report)
    finding = f'<p class="finding"><strong>What this run found:</strong> {esc(" ".join(found))}</p>' if found else ""
    source = picks_source_words(report)
    source_note = f'<div class="note warn" data-picks-from="judged">{esc(source)}</div>' if source else ""
    return ('<section id="picks"><h2>The picks</h2><p class="muted">Nothing is switched: a person chooses. '
            "The three picks follow fixed rules; the chart and the table below show every other setup.</p>"
            f'{source_note}{finding}<div class="picks">{"".join(cards)}</div></section>')


def _reasons(answer: Any, said: set[str]) -> str:
    """The setups a pick was chosen among, each with the reason it lost, and what the paired test says of
    the fastest faster one (once per setup: ``said`` holds those already on the page): ``answer.pick_answers``'
    sentences, the same the terminal prints."""
    if answer is None:
        return ""
    tied = "".join(f'<p class="tie time">Also: {esc(sentence)}.</p>' for sentence in answer.tied)
    paired = ""
    if answer.paired and answer.paired not in said:
        paired = f'<p class="tie">Paired test on found@10: {esc(answer.paired)}.</p>'
        said.add(answer.paired)
    return tied + paired
