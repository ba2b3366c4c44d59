"""A matrix run as one self-contained HTML page, read from its report alone (ids, configurations, scores).

``render_matrix_html(report)``: what the labels were judged as (the chunk-id trap, said), the embedders
(a ``hash`` one marked as not a real model), the gate, and one row per experiment with each metric at
each k, best nDCG at the largest k first. Inline CSS (the run pages' own), no script, nothing fetched;
every value from the report is escaped.
"""
from __future__ import annotations

from typing import Any, NamedTuple

from ...measures import NDCG_10, at_k
from ..page.format import esc, scroller
from ..style import standalone_page
from .pick import named_pick, pick_badge
from ..tier_words import builds_tier_lines, builds_tiers_pick


def _rows(report: dict[str, Any]) -> list[dict[str, Any]]:
    """The experiments best first: those that ran by nDCG at the largest k (then id), the failed and those
    the race stopped last."""
    ndcg = NDCG_10.at(max(report["top_k"]))
    return sorted(report["experiments"], key=lambda x: (x["metrics"] is None, -(ndcg.at_k_of(x["metrics"]) or 0.0),
                                                         x["id"]))


def best_experiment(report: dict[str, Any]) -> str | None:
    """The best experiment that ran, as ``<chunking> <method> <embedder>`` (nDCG at the largest k first)."""
    rows = [x for x in _rows(report) if x["metrics"] is not None]
    if not rows:
        return None
    return " ".join(str(p) for p in (rows[0]["chunking"], rows[0]["method"], rows[0]["embedder"]) if p)


class MatrixPick(NamedTuple):
    """The matrix's pick in plain words: ``key`` (``best_experiment``, None when every experiment failed),
    ``why`` (its nDCG at the largest k among those that ran, and how many others are as high, a tie going
    to the first by id) and ``aside`` (its experiment id)."""

    key: str | None
    why: str
    aside: str


def matrix_pick(report: dict[str, Any]) -> MatrixPick:
    """The matrix's pick in plain words, for the page and the terminal alike (``MatrixPick``)."""
    ran = [x for x in _rows(report) if x["metrics"] is not None]
    if not ran:
        return MatrixPick(None, "every experiment failed", "")
    ndcg = NDCG_10.at(max(report["top_k"]))
    best = ndcg.at_k_of(ran[0]["metrics"]) or 0.0
    level = sum(1 for x in ran[1:] if abs((ndcg.at_k_of(x["metrics"]) or 0.0) - best) < 1e-12)
    why = f"The highest {ndcg} of the {len(ran)} experiments that ran ({best:.3f})"
    if level:
        why += f"; {level} other{'s' if level != 1 else ''} as high, so the first by id"
    return MatrixPick(best_experiment(report), why, f"experiment {ran[0]['id'][:12]}")


def _pick_line(report: dict[str, Any]) -> str:
    """The view's first line: the matrix's pick (``matrix_pick``: what ``chunking runs list`` calls it)."""
    key, why, aside = matrix_pick(report)
    if key is None:
        return named_pick(None, "", none=why)
    return named_pick(key, why, none="", aside=aside)


def matrix_section(report: dict[str, Any]) -> str:
    if not report or report.get("kind") != "matrix":
        return ""
    ks = report["top_k"]
    measures = [m for k in ks for m in at_k(k)]
    head = "".join(f'<th class="num">{esc(m)}</th>' for m in measures)
    rows = []
    first = True  # the first that ran is the pick (``_rows``: best first, failed last)
    for x in _rows(report):
        picked = first and x["metrics"] is not None
        first = first and not picked
        cells = (f"<td><code>{esc(x['id'][:12])}</code>{pick_badge() if picked else ''}</td>"
                 f"<td><code>{esc(x['chunking'])}</code></td><td>{esc(x['method'])}</td>"
                 f"<td>{esc(x['embedder'] or '-')}</td><td>{esc(x['judged_by'])}</td>")
        if x.get("stopped"):
            rows.append(f'<tr class="stopped">{cells}<td colspan="{len(measures)}">'
                        f'{esc(x["stopped"]["words"])}</td></tr>')
            continue
        if x["metrics"] is None:
            rows.append(f'<tr class="failed">{cells}<td colspan="{len(measures)}">failed: '
                        f'{esc(x.get("error"))}</td></tr>')
            continue
        values = "".join(f'<td class="num">{esc(m.shown(m.at_k_of(x["metrics"])))}</td>' for m in measures)
        rows.append(('<tr class="picked">' if picked else "<tr>") + f"{cells}{values}</tr>")
    embedders = "".join(f"<li><code>{esc(e['name'])}</code>: {esc(_without_marker(e))}"
                        + ("" if e["real_model"] else " <strong>(not a real model)</strong>") + "</li>"
                        for e in report["embedders"])
    gate = report["gate"]
    said = ("no thresholds" if not gate["thresholds"] else "every threshold met" if gate["passed"] else
            "; ".join(f"{esc(m['metric'])} of {esc(m['experiment'][:12])} is {esc(m['value'])}, under "
                      f"{esc(m['threshold'])}"
                      for m in gate["missed"]))
    return "\n".join([
        '<section class="matrix" id="matrix"><h2>Experiment matrix</h2>', _pick_line(report),
        *(f'<p class="tiers">{esc(line)}</p>' for line in builds_tier_lines(
            report.get("tiers"), builds_tiers_pick(report.get("tiers")), what="experiment",
            name=lambda k: str(k)[:12])),
        f'<p class="lead">{len(report["experiments"])} experiments on {report["queries"]["questions"]} queries, '
        f'judged by {esc(report["by"])}. {esc(report["labels"]["said"])}.</p>',
        f"<ul class=\"small\">{embedders}<li>Gate: {said}.</li></ul>",
        scroller('<table class="ranked"><thead><tr><th>id</th><th>chunking</th><th>method</th>'
                 f"<th>embedder</th><th>judged by</th>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>"),
        "</section>"])


def render_matrix_html(report: dict[str, Any]) -> str:
    title = f"Experiment matrix · {len(report.get('experiments', []))} experiments"
    return standalone_page(esc(title), matrix_section(report))


def _without_marker(embedder: dict[str, Any]) -> str:
    """The embedder's model text without its own "(not a real model)", which the page says once, in bold."""
    model = str(embedder["model"])
    return model.replace(" (not a real model)", "") if not embedder["real_model"] else model
