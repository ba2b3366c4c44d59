"""Plain-text views of a report: the ranked table and the picks, as a person reads them."""
from __future__ import annotations

from typing import Any

from ..scoring.metrics import CUTOFFS

_PICK_LABELS = (("finds_the_most", "Finds the most"), ("best_for_balance", "Best for balance"),
                ("best_for_time", "Best for time"))


def _pct(share: float | None) -> str:
    return "-" if share is None else f"{share * 100:.0f}%"


def _ms(value: float | None) -> str:
    return "-" if value is None else (f"{value:.0f}" if value >= 10 else f"{value:.1f}")


def render_table(report: dict[str, Any]) -> str:
    setups = report["setups"]
    header = ["#", "setup", *[f"@{k}" for k in CUTOFFS], "MRR", "nDCG@10", "median ms", "p95 ms"]
    rows = []
    for s in setups:
        summary = s.get("summary")
        if summary is None:
            continue
        rows.append([str(s["rank"]), s["key"], *[_pct(summary["found"][str(k)]) for k in CUTOFFS],
                     f"{summary['mrr']:.3f}", f"{summary['ndcg_10']:.3f}", _ms(summary["median_ms"]),
                     _ms(summary["p95_ms"])])
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(header)]
    right = set(range(2, len(header)))

    def line(cells: list[str]) -> str:
        return "  ".join(c.rjust(w) if i in right else c.ljust(w) for i, (c, w) in enumerate(zip(cells, widths))).rstrip()

    out = [line(header), line(["-" * w for w in widths]), *(line(r) for r in rows)]
    retried = [s for s in setups if s.get("retries")]
    if retried:  # throttled requests were waited for and sent again; their times include the waits
        out.append("")
        out.append("Retried after throttling (times include the waits):")
        out += [f"  {s['key']}: {s['retries']} retries in {s.get('requests', 0)} requests" for s in retried]
    failed = [s for s in setups if s.get("error")]
    if failed:
        out.append("")
        out.append("Failed (never picked):")
        out += [f"  {s['key']}: {s['error']}" for s in failed]
    return "\n".join(out)


def render_picks(report: dict[str, Any]) -> str:
    by_key = {s["key"]: s for s in report["setups"]}
    rules = report["rules"]
    out = ["Picks (nothing is switched: a person chooses):"]
    for name, label in _PICK_LABELS:
        key = report["picks"].get(name)
        if key is None:
            out.append(f"  {label + ':':18} none (no setup ran)")
            continue
        summary = by_key[key]["summary"]
        out.append(f"  {label + ':':18} {key}  found@10 {summary['counts']['10']}/{summary['questions']}"
                   f" ({_pct(summary['found']['10'])}), median {_ms(summary['median_ms'])} ms"
                   f" — {by_key[key]['method_label']}")
    out.append(f"  (balance: fastest within {rules['balance_points']:g} points of the most; "
               f"time: within {rules['time_points']:g} points)")
    return "\n".join(out)


def render_refusal(report: dict[str, Any]) -> str:
    """A refused run: why it never started, and every error of its golden file by line."""
    golden, refused = report["golden"], report["refused"]
    lines = [f"Run {report['id']} at {report['created_at']} was refused: {golden['source']} "
             f"(sha256 {golden['sha256'][:12]}): {refused['reason']}"]
    lines += [f"  line {p['line']}: {p['message']}" if p.get("line") is not None else f"  {p['message']}"
              for p in refused["errors"]]
    lines.append("No setup ran; nothing was picked.")
    return "\n".join(lines)


def render_report(report: dict[str, Any]) -> str:
    if report.get("refused"):
        return render_refusal(report)
    golden = report["golden"]
    head = (f"Run {report['id']} at {report['created_at']}: {golden['labelled']} labelled question(s) from "
            f"{golden['source']} (sha256 {golden['sha256'][:12]}), judged by {report['by']}, "
            f"{report['depth']} results deep")
    parts = [head, "", render_table(report), "", render_picks(report)]
    if report.get("missing"):
        parts.append("")
        for target, gone in report["missing"].items():
            parts.append(f"Missing on {target}: {', '.join(gone['documents'])} "
                         f"(questions {', '.join(gone['questions'])})")
    left_out = [f"Left out on {name}: {item['what']} ({item['reason']})"
                for name, target in report.get("targets", {}).items() for item in target.get("left_out") or []]
    if left_out:  # what a target's index cannot do, so a missing setup is never a silent one
        parts += ["", *left_out]
    return "\n".join(parts)
