"""A chunking run as text: the ranked tables a terminal and a pull request show.

``compare_text(report, markdown=False)``: every technique at its best (right of questions, chunks,
tied or not, against the best), the pick and why, what was left out, the time taken and the share of
vectors that came from the cache; ``markdown=True`` gives the same as Markdown tables. The sweep's own
table is ``sweep_markdown`` below. Reads only the report: counts and keys.
"""
from __future__ import annotations

from typing import Any, Sequence


def table(head: Sequence[str], rows: Sequence[Sequence[str]], *, markdown: bool, right: Sequence[bool] = ()) -> list[str]:
    """Lines of a table: Markdown pipes, or columns padded to line up in a terminal."""
    align = list(right) + [False] * (len(head) - len(right))
    if markdown:
        rule = "|" + "|".join("---:" if a else "---" for a in align) + "|"
        return ["| " + " | ".join(head) + " |", rule] + ["| " + " | ".join(r) + " |" for r in rows]
    widths = [max(len(str(c)) for c in column) for column in zip(head, *rows)]

    def line(cells: Sequence[str]) -> str:
        return "  ".join(str(c).rjust(w) if a else str(c).ljust(w) for c, w, a in zip(cells, widths, align)).rstrip()

    return [line(head), line(["-" * w for w in widths])] + [line(r) for r in rows]


def compare_text(report: dict[str, Any], *, markdown: bool = False) -> str:
    scored = report.get("scored", "found")
    code = (lambda k: f"`{k}`") if markdown else (lambda k: k)
    lines = [f"Chunking run {report.get('id', '')}: {report['golden']['scored']} questions, right = "
             f"{'answered (judged)' if scored == 'answered' else 'found'} within {report['budget']} characters", ""]
    rows = []
    for t in report.get("techniques", []):
        against = t.get("against_best")
        versus = ("best" if t.get("best") else
                  f"{against['best_only']} vs {against['this_only']}, p = {against['p_holm']:.3g}" if against else "")
        rows.append([t["name"], code(t["build"]), f"{t['right']}/{t['questions']}", str(t["chunks"]),
                     "best" if t.get("best") else ("tie" if t.get("tie") else "-"), versus])
    lines += table(["technique", "best build", scored, "chunks", "tie", "against the best (Holm)"], rows,
                   markdown=markdown, right=[False, False, True, True, False, False])
    pick = report.get("pick") or {}
    ties = report.get("ties") or []
    lines += ["", f"Pick: {code(pick.get('pick'))}" + (" (switch)" if pick.get("switch") else "") + f". {pick.get('why', '')}.",
              "Tied with the best: " + (", ".join(ties) if ties else "none") + "."]
    for skipped in report.get("skipped") or []:
        lines.append(f"Left out: {skipped['what']}: {skipped['reason']}.")
    for failed in report.get("failed") or []:
        lines.append(f"Failed: {code(failed['build'])}: {failed['error']}.")
    vectors = report.get("vectors") or {}
    lines.append(f"{len(report.get('builds', []))} builds in {report.get('seconds', 0):.1f} s; "
                 f"{vectors.get('share_from_cache', 0):.0%} of vectors came from the cache "
                 f"({vectors.get('vectors_cached', 0)} from the file, {vectors.get('vectors_shared', 0)} shared in the run, "
                 f"{vectors.get('vectors_computed', 0)} computed).")
    lines += ["", "Every build:" if not markdown else "Every build:", ""]
    lines += table(["#", "build", scored, "chunks", "seconds"],
                   [[str(b["rank"]), code(b["key"]), f"{b['right']}/{b['questions']}", str(b["chunks"]),
                     f"{b['seconds']:.1f}"] for b in report.get("builds", [])],
                   markdown=markdown, right=[True, False, True, True, True])
    return "\n".join(lines) + "\n"


def sweep_text(report: dict[str, Any]) -> str:
    """The sweep's rows as terminal columns, best first (``sweep_markdown`` gives them as Markdown)."""
    cutoffs = report["k"]
    head = (["#", "build", "method", "nDCG@10", "MRR"] + [f"found@{c}" for c in cutoffs]
            + ["chunks", "build s", "median ms"])
    rows = [[str(r["rank"]), r["build"], r["method"], f"{r['ndcg_10']:.3f}", f"{r['mrr']:.3f}"]
            + [f"{r['counts'][str(c)]}/{r['questions']}" for c in cutoffs]
            + [str(r["chunks"]), f"{r['build_seconds']:.1f}", "-" if r["median_ms"] is None else f"{r['median_ms']:.1f}"]
            for r in report["rows"]]
    lines = table(head, rows, markdown=False, right=[True, False, False] + [True] * (len(head) - 3))
    for failed in report.get("failed") or []:
        lines.append(f"Failed: {failed['build']}: {failed['error']}.")
    vectors = report.get("vectors") or {}
    lines.append(f"{report['questions']} questions judged by document; {report['rule']}; "
                 f"{report.get('seconds', 0):.1f} s; {vectors.get('share_from_cache', 0):.0%} of vectors from the cache.")
    return "\n".join(lines) + "\n"


def sweep_markdown(report: dict[str, Any]) -> str:
    """The sweep as a Markdown table, best first, for a pull request."""
    cutoffs = report["k"]
    head = (["#", "build", "method", "nDCG@10", "MRR"] + [f"recall@{c}" for c in cutoffs]
            + [f"found@{c}" for c in cutoffs] + ["chunks", "build s", "median ms"])
    lines = ["| " + " | ".join(head) + " |", "|" + "|".join("---" if i < 3 else "---:" for i in range(len(head))) + "|"]
    for row in report["rows"]:
        median = "-" if row["median_ms"] is None else f"{row['median_ms']:.1f}"
        cells = ([str(row["rank"]), f"`{row['build']}`", row["method"], f"{row['ndcg_10']:.3f}", f"{row['mrr']:.3f}"]
                 + [f"{row['recall'][str(c)]:.3f}" for c in cutoffs]
                 + [f"{row['counts'][str(c)]}/{row['questions']}" for c in cutoffs]
                 + [str(row["chunks"]), f"{row['build_seconds']:.1f}", median])
        lines.append("| " + " | ".join(cells) + " |")
    share = report.get("vectors", {}).get("share_from_cache")
    lines += ["", f"{report['questions']} questions, judged by document; {report['rule']}."
              + (f" {share:.0%} of vectors came from the cache." if share is not None else "")]
    return "\n".join(lines) + "\n"
