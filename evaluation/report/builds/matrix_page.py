"""A matrix run as one self-contained HTML page, read from its report alone (ids, configurations, scores).

``render_matrix_html(report)``: what the labels were judged as (the chunk-id trap, said), the embedders
(a ``hash`` one marked as not a real model), the gate, and one row per experiment with each metric at
each k, best nDCG at the largest k first. Inline CSS (the run pages' own), no script, nothing fetched;
every value from the report is escaped.
"""
from __future__ import annotations

from html import escape
from typing import Any

from ..style import standalone_page


def _e(value: Any) -> str:
    return escape(str(value), quote=True)


def _rows(report: dict[str, Any]) -> list[dict[str, Any]]:
    last = str(max(report["top_k"]))
    return sorted(report["experiments"], key=lambda x: (x["metrics"] is None,
                                                         -(x["metrics"] or {}).get(last, {}).get("ndcg", 0.0), x["id"]))


def best_experiment(report: dict[str, Any]) -> str | None:
    """The best experiment that ran, as ``<chunking> <method> <embedder>`` (nDCG at the largest k first)."""
    rows = [x for x in _rows(report) if x["metrics"] is not None]
    return " ".join(str(p) for p in (rows[0]["chunking"], rows[0]["method"], rows[0]["embedder"]) if p) if rows else None


def matrix_section(report: dict[str, Any]) -> str:
    if not report or report.get("kind") != "matrix":
        return ""
    ks = report["top_k"]
    head = "".join(f'<th class="num">{name}@{k}</th>' for k in ks
                   for name in ("hit", "P", "R", "MRR", "nDCG"))
    rows = []
    for x in _rows(report):
        cells = (f"<td><code>{_e(x['id'][:12])}</code></td><td><code>{_e(x['chunking'])}</code></td><td>{_e(x['method'])}</td>"
                 f"<td>{_e(x['embedder'] or '-')}</td><td>{_e(x['judged_by'])}</td>")
        if x["metrics"] is None:
            rows.append(f'<tr class="failed">{cells}<td colspan="{5 * len(ks)}">failed: {_e(x.get("error"))}</td></tr>')
            continue
        values = "".join(f'<td class="num">{x["metrics"][str(k)][m]:.3f}</td>' for k in ks
                         for m in ("hit_rate", "precision", "recall", "mrr", "ndcg"))
        rows.append(f"<tr>{cells}{values}</tr>")
    embedders = "".join(f"<li><code>{_e(e['name'])}</code>: {_e(e['model'])}"
                        + ("" if e["real_model"] else " <strong>(not a real model)</strong>") + "</li>"
                        for e in report["embedders"])
    gate = report["gate"]
    said = ("no thresholds" if not gate["thresholds"] else "every threshold met" if gate["passed"] else
            "; ".join(f"{_e(m['metric'])} of {_e(m['experiment'][:12])} is {_e(m['value'])}, under {_e(m['threshold'])}"
                      for m in gate["missed"]))
    return "\n".join([
        '<section class="matrix" id="matrix"><h2>Experiment matrix</h2>',
        f'<p class="lead">{len(report["experiments"])} experiments on {report["queries"]["questions"]} queries, '
        f'judged by {_e(report["by"])}. {_e(report["labels"]["said"])}.</p>',
        f"<ul class=\"small\">{embedders}<li>Gate: {said}.</li></ul>",
        '<div class="table-wrap"><table class="ranked"><thead><tr><th>id</th><th>chunking</th><th>method</th>'
        f"<th>embedder</th><th>judged by</th>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table></div>",
        "</section>"])


def render_matrix_html(report: dict[str, Any]) -> str:
    title = f"Experiment matrix · {len(report.get('experiments', []))} experiments"
    return standalone_page(_e(title), matrix_section(report))
