"""The ``#tiers`` section: the setups the paired tests cannot separate, each with its rank interval, the
smallest difference the questions detect, and the ``#label-next`` section: what to label to separate
a tied top tier. The words are ``report.tier_words``', the terminal's; "" for a report without tiers."""
from __future__ import annotations

from typing import Any, Mapping

from ...store.run_report import RunReport
from ..numbers import number, percent
from ..tier_words import detectable_words, label_next_lines, pick_tier_words, procedure_words, rank_words
from ..svg import attr
from .context import Page
from .format import esc, scroller

SHOWN = 10  # proposals listed on the page of each kind; the report keeps up to 20, ``golden next`` any number


def tier_table(page: Page) -> str:
    """One row per ranked setup: its tier, found@10, its rank interval and share of first places."""
    tiers = page.report.tiers
    if tiers is None or not tiers.groups:
        return ""
    by_key = {s.key: s for s in page.ran}
    rows = []
    for n, group in enumerate(tiers.groups, start=1):
        for key in group:
            summary = by_key[key].summary if key in by_key else None
            count = summary.count(10) if summary is not None else None
            interval = tiers.ranks.get(key)
            share = interval.first_share if interval is not None else None
            rows.append(f'<tr data-tier="{n}" data-key="{attr(key)}"><td class="num">{n}</td><td class="key">{esc(key)}'
                        f'</td><td class="num">{esc(count if count is not None else "–")}</td>'
                        f'<td class="num">{esc(rank_words(interval) or "–")}</td>'
                        f'<td class="num">{esc(percent(share) if share is not None else "–")}</td></tr>')
    single = len(tiers.groups) == 1 and len(tiers.groups[0]) > 1
    detect = detectable_words(tiers)
    return ('<section id="tiers"><h2>Tiers</h2><p class="muted">Setups in one tier are ones the paired tests '
            f"cannot separate ({esc(procedure_words(tiers))}); a setup in a lower tier finds significantly less "
            "than one in the tier above (a tier is not a band of ranks: a setup that differs from the others on "
            "many questions both ways can stay in tier 1 below one that loses consistently to a near twin). "
            "Rank interval: where the setup ranks in "
            f"{percent(tiers.rank_level)} of resamples of the questions; first in: the "
            "share of resamples it ranks first in.</p>"
            + ('<p class="note">The tests separate none of them: the ranking is not decided by these '
               "questions.</p>" if single else "")
            + (f"<p>{esc(detect)}</p>" if detect else "")
            + scroller('<table class="tiers"><thead><tr><th class="num">tier</th><th>setup</th>'
                       '<th class="num">found@10</th><th class="num">rank interval</th>'
                       f'<th class="num">first in</th></tr></thead><tbody>{"".join(rows)}</tbody></table>')
            + "</section>")


def label_next(page: Page) -> str:
    """The ``#label-next`` section: the first results to judge and questions to label, "" without."""
    proposal = page.report.label_next
    lines = label_next_lines(page.report, limit=SHOWN)
    if proposal is None or not lines:
        return ""
    results = proposal.results[:SHOWN]
    questions = proposal.questions[:SHOWN]
    body = "".join(
        f'<tr data-question="{attr(r.get("question"))}"><td><code>{esc(r.get("question"))}</code></td>'
        f'<td><code>{esc(r.get("result"))}</code></td><td>{esc(", ".join(map(str, r.get("in") or [])))}</td>'
        f'<td class="num">{_score(r)}</td></tr>' for r in results)
    asked = "".join(
        f'<tr data-question="{attr(r.get("question"))}"><td><code>{esc(r.get("question"))}</code></td>'
        f'<td>{esc(r.get("kind", ""))}</td><td>{esc(", ".join(map(str, r.get("units") or [])))}</td>'
        f'<td class="num">{_score(r)}</td></tr>' for r in questions)
    tied = ", ".join(proposal.tied)
    parts = ['<section id="label-next"><h2>Label next</h2>'
             f'<p class="muted">Tier 1 holds {esc(tied)}. Labels on these would most help the paired tests separate '
             "them: where the tied setups disagree, weighted by how far one label moves each pair's test. "
             "<code>golden next</code> writes them as a template to fill in (the report holds ids only). Label "
             "them all, then run again: stopping at the first run that separates them reads the test more "
             "than once.</p>"]
    if body:
        parts.append(scroller('<table class="label-next"><thead><tr><th>question</th><th>result to judge</th>'
                              f'<th>in the top 10 of</th><th class="num">score</th></tr></thead><tbody>{body}</tbody>'
                              "</table>"))
    if asked:
        parts.append(scroller('<table class="label-next"><thead><tr><th>question to label</th><th>kind</th>'
                              '<th>results they disagree on</th><th class="num">score</th></tr></thead>'
                              f"<tbody>{asked}</tbody></table>"))
    return "".join(parts) + "</section>"


def pick_tier_note(report: RunReport, name: str) -> str:
    """A pick card's line saying the pick shares its tier, "" when it does not."""
    words = pick_tier_words(report, name)
    return f'<p class="tie tier">{esc(words[:1].upper() + words[1:])}.</p>' if words else ""


def _score(row: Mapping[str, Any]) -> str:
    value = number(row.get("score"))
    return "–" if value is None else f"{value:.3f}"
