"""The Chunking tab: a chunking run as HTML, read from its report alone (counts and keys).

``chunking_section(report)`` is the tab's body, for the run page's tabs (beside Retrieval) and the
Evaluate page: the pick and why, each technique at its best (right of questions, chunks, tied or
not, against the best), questions right against chunks made for every build (an inline SVG, no
script), what was left out and why, and the time and cache share. ``render_chunking_html(report)`` is a
chunking run's own ``report.html``: the same section on a page of its own, inline CSS, nothing fetched.
"""
from __future__ import annotations

from typing import Any

from ..page.format import esc, scroller
from ..tier_words import builds_tier_lines, builds_tiers_pick
from .pick import named_pick, pick_badge
from ..style import standalone_page

_W, _H, _PAD = 640, 260, 14  # the axes' words are HTML around the drawing: the pad only keeps a point whole


def chunking_section(report: dict[str, Any]) -> str:
    if not report or report.get("kind") != "chunking":
        return ""
    scored = report.get("scored", "found")
    pick = report.get("pick") or {}
    ties = report.get("ties") or []
    parts = ['<section class="chunking" id="chunking"><h2>How to cut the documents</h2>',
             named_pick(pick.get("pick"), str(pick.get("why") or ""), none="no build ran",
                        aside="a switch from the build in use" if pick.get("switch") else ""),
             f'<p class="muted">{esc(report.get("scored_note", ""))}. Tied with the best: '
             + (", ".join(esc(t) for t in ties) if ties else "none") + ".</p>"]
    tiers = report.get("tiers")
    parts += [f'<p class="tiers">{esc(line)}</p>'
              for line in builds_tier_lines(tiers, builds_tiers_pick(tiers, "technique"))]
    rows = []
    for t in report.get("techniques", []):
        against = t.get("against_best") or {}
        versus = ("best" if t.get("best") else
                  f'{against.get("best_only")} only the best got, {against.get("this_only")} only this; '
                  f'p = {against.get("p_holm", 1):.3g} (Holm)')
        state = "best" if t.get("best") else "tie" if t.get("tie") else "behind"
        picked = t["build"] == pick.get("pick")
        rows.append(f'<tr class="{state}{" picked" if picked else ""}"><td>{esc(t["name"])}</td>'
                    f'<td><code>{esc(t["build"])}</code>{pick_badge() if picked else ""}</td>'
                    f'<td class="num">{t["right"]}/{t["questions"]}</td><td class="num">{t["chunks"]}</td>'
                    f"<td>{esc(state)}</td><td>{esc(versus)}</td></tr>")
    parts.append(scroller('<table class="ranked"><thead><tr><th>technique</th><th>best build</th>'
                          f'<th class="num">{esc(scored)}</th><th class="num">chunks</th><th>tie</th>'
                          f'<th>against the best</th></tr></thead><tbody>{"".join(rows)}</tbody></table>'))
    parts.append(_scatter(report))
    notes = [f"Left out: {esc(s['what'])}: {esc(s['reason'])}." for s in report.get("skipped") or []]
    notes += [f"Failed: <code>{esc(f['build'])}</code>: {esc(f['error'])}." for f in report.get("failed") or []]
    notes += [f"Stopped: <code>{esc(s['build'])}</code>: {esc(s['words'])}." for s in report.get("stopped") or []]
    vectors = report.get("vectors") or {}
    notes.append(f"{len(report.get('builds', []))} builds in {report.get('seconds', 0):.0f} s, one after another; "
                 f"{vectors.get('share_from_cache', 0):.0%} of vectors came from the cache.")
    parts.append("<ul class=\"small\">" + "".join(f"<li>{n}</li>" for n in notes) + "</ul></section>")
    return "\n".join(parts)


def _scatter(report: dict[str, Any]) -> str:
    builds = report.get("builds") or []
    if not builds:
        return ""
    most_chunks = max(b["chunks"] for b in builds) or 1
    questions = max(b["questions"] for b in builds) or 1
    best = {t["build"] for t in report.get("techniques", [])}
    dots = []
    for b in builds:
        x = _PAD + (_W - 2 * _PAD) * b["chunks"] / most_chunks
        y = _H - _PAD - (_H - 2 * _PAD) * b["right"] / questions
        fill = "var(--accent)" if b["key"] in best else "#9aa3b2"
        dots.append(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="5" fill="{fill}"><title>{esc(b["key"])}: '
                    f'{b["right"]}/{b["questions"]}, {b["chunks"]} chunks</title></circle>')
    axes = (f'<line x1="{_PAD}" y1="{_H - _PAD}" x2="{_W - _PAD}" y2="{_H - _PAD}" stroke="#888"/>'
            f'<line x1="{_PAD}" y1="{_PAD}" x2="{_PAD}" y2="{_H - _PAD}" stroke="#888"/>')
    # the axes' words are HTML beside the drawing, not SVG text: the drawing scales to the screen's width
    # (to 0.6 on a phone), and text inside it would shrink with it
    return ('<figure class="build-chart"><p class="axis-words small muted">↑ '
            f'{esc(report.get("scored", "found"))} (0 to {questions})</p>'
            f'<svg viewBox="0 0 {_W} {_H}" width="100%" role="img" aria-label="questions right against chunks '
            f'made, one point per build">{axes}{"".join(dots)}</svg>'
            f'<p class="axis-words small muted">chunks made (0 to {most_chunks}) →</p>'
            '<figcaption class="small muted">One point per build: '
            "questions right against chunks made; each technique's best build in blue.</figcaption></figure>")


def render_chunking_html(report: dict[str, Any]) -> str:
    return standalone_page(esc(f"Chunking run · {report.get('id', '')}"), chunking_section(report))
