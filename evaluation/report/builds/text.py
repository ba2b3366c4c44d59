"""Chunking, sweep and matrix runs as text: the ranked tables a terminal and a pull request show.

``compare_text(report, markdown=False)``: every technique at its best (right of questions, chunks,
tied or not, against the best), the pick and why, what was left out, the time taken and the share of
vectors that came from the cache; ``markdown=True`` gives the same as Markdown tables. The sweep's own
tables are ``sweep_text`` (a terminal's) and ``sweep_markdown`` (a pull request's); a matrix's lines are
``matrix_text``. Each reads only the report (counts, keys and scores), and names each measure as
``measures`` prints it. Each takes the report through ``errors.printable_texts`` first: a kept run's texts
(keys, reasons, errors) are whatever someone with write access to the store left there.
"""
from __future__ import annotations

from typing import Any, Sequence

from ...errors import printable_texts
from ...measures import FOUND_10, MRR, NDCG_10, RECALL_10, at_k
from ..tier_words import builds_tier_lines, builds_tiers_pick


def table(head: Sequence[str], rows: Sequence[Sequence[str]], *, markdown: bool,
          right: Sequence[bool] = ()) -> list[str]:
    """Lines of a table: Markdown pipes, or columns padded to line up in a terminal."""
    align = list(right) + [False] * (len(head) - len(right))
    if markdown:
        rule = "|" + "|".join("---:" if a else "---" for a in align) + "|"
        return ["| " + " | ".join(head) + " |", rule] + ["| " + " | ".join(r) + " |" for r in rows]
    widths = [max(len(str(c)) for c in column) for column in zip(head, *rows, strict=True)]

    def line(cells: Sequence[str]) -> str:
        return "  ".join(str(c).rjust(w) if a else str(c).ljust(w)
                         for c, w, a in zip(cells, widths, align, strict=True)).rstrip()

    return [line(head), line(["-" * w for w in widths])] + [line(r) for r in rows]


def compare_text(report: dict[str, Any], *, markdown: bool = False) -> str:
    report = printable_texts(report)
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
    lines += ["",
              f"Pick: {code(pick.get('pick'))}" + (" (switch)" if pick.get("switch") else "")
              + f". {pick.get('why', '')}.",
              "Tied with the best: " + (", ".join(ties) if ties else "none") + "."]
    lines += builds_tier_lines(report.get("tiers"), builds_tiers_pick(report.get("tiers"), "technique"))
    for skipped in report.get("skipped") or []:
        lines.append(f"Left out: {skipped['what']}: {skipped['reason']}.")
    for failed in report.get("failed") or []:
        lines.append(f"Failed: {code(failed['build'])}: {failed['error']}.")
    for stopped in report.get("stopped") or []:  # never ranked or picked: asked some questions only, said so
        lines.append(f"Stopped: {code(stopped['build'])}: {stopped['words']}.")
    vectors = report.get("vectors") or {}
    lines.append(f"{len(report.get('builds', []))} builds in {report.get('seconds', 0):.1f} s; "
                 f"{vectors.get('share_from_cache', 0):.0%} of vectors came from the cache "
                 f"({vectors.get('vectors_cached', 0)} from the file, {vectors.get('vectors_shared', 0)} shared in the "
                 f"run, "
                 f"{vectors.get('vectors_computed', 0)} computed).")
    lines += ["", "Every build:" if not markdown else "Every build:", ""]
    lines += table(["#", "build", scored, "chunks", "seconds"],
                   [[str(b["rank"]), code(b["key"]), f"{b['right']}/{b['questions']}", str(b["chunks"]),
                     f"{b['seconds']:.1f}"] for b in report.get("builds", [])],
                   markdown=markdown, right=[True, False, True, True, True])
    return "\n".join(lines) + "\n"


def ranked_rows(report: dict[str, Any]) -> list[dict[str, Any]]:
    """A sweep's rows that ran every question, best first (a row the race stopped has no rank)."""
    return [row for row in report["rows"] if not row.get("stopped")]


def stopped_rows(report: dict[str, Any]) -> list[dict[str, Any]]:
    """A sweep's rows the race stopped (``builds.race``): said apart, never in the ranked table."""
    return [row for row in report["rows"] if row.get("stopped")]


def sweep_text(report: dict[str, Any]) -> str:
    """The sweep's rows as terminal columns, best first (``sweep_markdown`` gives them as Markdown)."""
    report = printable_texts(report)
    found = [FOUND_10.at(c) for c in report["k"]]
    head = ["#", "build", "method", str(NDCG_10), str(MRR), *map(str, found), "chunks", "build s", "median ms"]
    rows = [[str(r["rank"]), r["build"], r["method"], NDCG_10.shown(NDCG_10.of(r)), MRR.shown(MRR.of(r))]
            + [m.shown(m.of(r), count=m.count_of(r), questions=r["questions"]) for m in found]
            + [str(r["chunks"]), f"{r['build_seconds']:.1f}",
               "-" if r["median_ms"] is None else f"{r['median_ms']:.1f}"]
            for r in ranked_rows(report)]
    lines = table(head, rows, markdown=False, right=[True, False, False] + [True] * (len(head) - 3))
    for failed in report.get("failed") or []:
        lines.append(f"Failed: {failed['build']}: {failed['error']}.")
    lines += [f"Stopped: {r['key']}: {r['stopped']['words']}." for r in stopped_rows(report)]
    vectors = report.get("vectors") or {}
    lines.append(f"{report['questions']} questions judged by document; {report['rule']}; "
                 f"{report.get('seconds', 0):.1f} s; {vectors.get('share_from_cache', 0):.0%} of vectors from the "
                 f"cache.")
    return "\n".join(lines) + "\n"


def sweep_markdown(report: dict[str, Any]) -> str:
    """The sweep as a Markdown table, best first, for a pull request."""
    report = printable_texts(report)
    recall = [RECALL_10.at(c) for c in report["k"]]
    found = [FOUND_10.at(c) for c in report["k"]]
    head = ["#", "build", "method", str(NDCG_10), str(MRR), *map(str, recall), *map(str, found), "chunks", "build s",
            "median ms"]
    rows = [[str(row["rank"]), f"`{row['build']}`", row["method"], NDCG_10.shown(NDCG_10.of(row)),
             MRR.shown(MRR.of(row))]
            + [m.shown(m.of(row)) for m in recall]
            + [m.shown(m.of(row), count=m.count_of(row), questions=row["questions"]) for m in found]
            + [str(row["chunks"]), f"{row['build_seconds']:.1f}",
               "-" if row["median_ms"] is None else f"{row['median_ms']:.1f}"]
            for row in ranked_rows(report)]
    lines = table(head, rows, markdown=True, right=[False, False, False] + [True] * (len(head) - 3))
    lines += [f"- Stopped: `{r['key']}`: {r['stopped']['words']}." for r in stopped_rows(report)]
    share = report.get("vectors", {}).get("share_from_cache")
    lines += ["", f"{report['questions']} questions, judged by document; {report['rule']}."
              + (f" {share:.0%} of vectors came from the cache." if share is not None else "")]
    return "\n".join(lines) + "\n"


def matrix_text(report: dict[str, Any]) -> str:
    """A matrix run as terminal lines: its pick first (the page's words, ``matrix_pick``), what was judged how
    and that hit_rate@k is found@k, then one line per experiment, its short id, configuration and each
    measure at each k; the gate's outcome when it had thresholds."""
    from .matrix_page import matrix_pick

    report = printable_texts(report)
    pick = matrix_pick(report)
    key, why, aside = pick.key, pick.why, pick.aside
    lines = [f"Pick: {key} ({aside}). {why}." if key else f"No pick: {why}.",
             f"{len(report['experiments'])} experiments on {report['queries']['questions']} queries "
             f"({report['queries']['format']} file), judged by {report['by']}; {report['labels']['said']}",
             "(hit_rate@k is found@k: the share of queries with an expected document in the top k)"]
    for entry in report["embedders"]:
        if not entry["real_model"]:
            lines.append(f"note: embedder {entry['name']} is {entry['model']}")
    for x in report["experiments"]:
        what = f"{x['id'][:12]}  {x['chunking']:<18} {x['method']:<16} {x['embedder'] or '-':<12}"
        if x.get("stopped"):  # no metric as if over every query: the race stopped it, said so
            lines.append(f"{what} {x['stopped']['words']}")
            continue
        if x["metrics"] is None:
            lines.append(f"{what} failed: {x['error']}")
            continue
        cells = "  ".join(" ".join(f"{m} {m.shown(m.at_k_of(x['metrics']))}" for m in at_k(k)) for k in report["top_k"])
        lines.append(f"{what} {cells}")
    lines += builds_tier_lines(report.get("tiers"), builds_tiers_pick(report.get("tiers")), what="experiment",
                               name=lambda key: str(key)[:12])
    gate = report["gate"]
    if gate["thresholds"]:
        lines.append("gate: " + ("every threshold met" if gate["passed"] else f"{len(gate['missed'])} missed"))
    return "\n".join(lines)
