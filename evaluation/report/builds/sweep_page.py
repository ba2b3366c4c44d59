"""A sweep run as HTML, read from its report alone (build keys, methods, counts and times).

``sweep_section(report)`` is the Chunking tab's view of the newest sweep: its rows ranked as the sweep
ranked them (nDCG@10, then MRR, then median search time), each with found at every k as a count of
the questions, chunks made, build seconds and median search ms; the failed builds with their errors;
the time and the cache share. ``render_sweep_html(report)`` is the sweep's own ``report.html``.
Inline CSS (the run pages' own), no script, nothing fetched; every value from the report is escaped.
"""
from __future__ import annotations

from typing import Any

from ...measures import FOUND_10, MRR, NDCG_10
from ..page.format import esc, scroller
from ..style import standalone_page


def _number(value: Any, digits: int) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def sweep_section(report: dict[str, Any]) -> str:
    if not report or report.get("kind") != "sweep":
        return ""
    found = [FOUND_10.at(c) for c in report.get("k") or []]
    rows = []
    for row in sorted((r for r in report.get("rows") or [] if not r.get("stopped")), key=lambda r: r.get("rank", 0)):
        counts = "".join(f'<td class="num">'
                         f'{esc(m.shown(m.of(row), count=m.count_of(row), questions=row["questions"]))}</td>'
                         for m in found)
        rows.append(f'<tr><td class="num">{row["rank"]}</td><td><code>{esc(row["build"])}</code></td>'
                    f'<td>{esc(row["method"])}</td><td class="num">{NDCG_10.shown(NDCG_10.of(row))}</td>'
                    f'<td class="num">{MRR.shown(MRR.of(row))}</td>{counts}<td class="num">{row["chunks"]}</td>'
                    f'<td class="num">{_number(row.get("build_seconds"), 1)}</td>'
                    f'<td class="num">{_number(row.get("median_ms"), 1)}</td></tr>')
    head = "".join(f'<th class="num">{esc(m)}</th>' for m in found)
    notes = [f"Failed: <code>{esc(f['build'])}</code>: {esc(f['error'])}." for f in report.get("failed") or []]
    notes += [f"Stopped: <code>{esc(r['key'])}</code>: {esc(r['stopped']['words'])}."
              for r in report.get("rows") or [] if r.get("stopped")]
    vectors = report.get("vectors") or {}
    builds = len({row["build"] for row in report.get("rows") or []})
    notes.append(f"{builds} builds in {report.get('seconds', 0):.0f} s, one after another; "
                 f"{vectors.get('share_from_cache', 0):.0%} of vectors came from the cache. "
                 f"{esc(report.get('rule', ''))}.")
    best = report.get("best")
    return "\n".join([
        '<section class="sweep" id="sweep"><h2>Sweep: every build, every method</h2>',
        f'<p class="lead">Best: <code>{esc(best)}</code>. {report.get("questions", 0)} questions, judged by '
        f'{esc(report.get("by", "doc"))}.</p>' if best else
        f'<p class="lead">No build ran. {report.get("questions", 0)} questions.</p>',
        scroller('<table class="ranked"><thead><tr><th class="num">#</th><th>build</th><th>method</th>'
                 f'<th class="num">{esc(NDCG_10)}</th><th class="num">{esc(MRR)}</th>{head}<th class="num">chunks</th>'
                 f'<th class="num">build s</th><th class="num">median '
                 f'ms</th></tr></thead><tbody>{"".join(rows)}</tbody>'
                 "</table>"),
        '<ul class="small">' + "".join(f"<li>{n}</li>" for n in notes) + "</ul></section>"])


def render_sweep_html(report: dict[str, Any]) -> str:
    return standalone_page(esc(f"Sweep · {report.get('id', '')}"), sweep_section(report))
