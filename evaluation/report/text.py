"""Plain-text views of a report: the ranked table, the picks with the setups tied with them on time,
the faster setups the paired test cannot tell from each pick, and each setup against the top, as a
person reads them. A difference the test cannot tell is said to be that (too few questions, and how
many would do), never "as good". Reports made before the comparisons were added render without them."""
from __future__ import annotations

from functools import partial
from typing import Any, Mapping

from ..measures import FOUND, FOUND_10, MRR, NDCG_10
from .answer import PICK_LABELS, findings, pick_answers
from .notes import (cache_note, found_gap_words, holes_words, missing_notes, ranked_in_note, reading_words,
                    unfound_words)
from ..store.shape import Report
from .numbers import TEXT_DASH, milliseconds, percent
from .race_words import cost_words, race_rule_words, stopped_line, stopped_setups
from .time_words import in_tier_rule, tie_words

_PICK_LABELS = PICK_LABELS


_pct = partial(percent, dash=TEXT_DASH)
_ms = partial(milliseconds, dash=TEXT_DASH, style="table")


def _p(value: float | None) -> str:
    """Two decimals from 0.1; three significant digits below, so 0.0502 does not read as 0.05."""
    if value is None:
        return "-"
    return f"{value:.2f}" if value >= 0.1 else f"{value:.3g}" if value >= 0.001 else f"{value:.0e}"


def _versus_cells(setup: dict[str, Any]) -> list[str]:
    """found@10 against the top, in questions, and its Holm-adjusted p-value ("" for reports without)."""
    versus = setup.get("versus_top")
    if versus is None:
        return ["top", ""] if setup.get("rank") == 1 else ["", ""]
    found = versus["found@10"]
    return [f"{found['better'] - found['worse']:+d}", _p(found["p_holm"]) + ("" if versus["tied"] else " *")]


def render_table(report: Report, *, details: bool = True) -> str:
    """Every setup that ran, ranked: found@k as shares, MRR, nDCG@10, median and p95 time; with ``details``
    also found@10 against the top and its paired test's p-value (reports made before the comparisons
    have none)."""
    setups = report["setups"]
    compared = bool(report.get("significance")) and details
    header = ["#", "setup", *[str(m) for m in FOUND], str(MRR), str(NDCG_10), "median ms", "p95 ms",
              *(["found@10 vs top", "p"] if compared else [])]
    rows = []
    for s in setups:
        summary = s.get("summary")
        if summary is None:
            continue
        rows.append([str(s["rank"]), s["key"], *[m.shown(m.of(summary), dash=TEXT_DASH) for m in FOUND],
                     MRR.shown(MRR.of(summary)), NDCG_10.shown(NDCG_10.of(summary)), _ms(summary["median_ms"]),
                     _ms(summary["p95_ms"]), *(_versus_cells(s) if compared else [])])
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(header)]
    right = set(range(2, len(header)))

    def line(cells: list[str]) -> str:
        return "  ".join(
            c.rjust(w) if i in right else c.ljust(w) for i, (c, w) in enumerate(zip(cells, widths, strict=True))
        ).rstrip()

    out = [line(header), line(["-" * w for w in widths]), *(line(r) for r in rows)]
    if compared:
        out.append(f"(found@10 vs top: questions found in the top 10 minus the top's; p: paired exact test, "
                   f"Holm-corrected; * significant at {report['significance']['alpha']:g})")
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
    stopped = stopped_setups(report)
    if stopped:  # never in the table: their numbers are over the questions each searched, said so
        out.append("")
        out.append("Stopped by the race (never picked; each one's numbers are over the questions it searched):")
        out += [f"  {stopped_line(s)}" for s in stopped]
        cost = cost_words(report)
        if cost:
            out.append(f"  ({cost[0].upper() + cost[1:]})")
    return "\n".join(out)


def render_picks(report: Report) -> str:
    """The three picks, each with its numbers and one line of why in plain words (``answer.pick_answers``); a
    pick that is the same setup as an earlier one says only that; the setups each was tied with on time."""
    by_key = {s["key"]: s for s in report["setups"]}
    rules = report["rules"]
    if report.get("picks_withheld"):
        return f"Picks: none. {report['picks_withheld']}"
    out = ["Picks (nothing is switched: a person chooses):"]
    said_ties: dict[str, set[str]] = {}
    for answer in pick_answers(report):
        name, label, key = answer.name, answer.label, answer.key
        if key is None:
            out.append(f"  {label + ':':18} none ({answer.why})")
            continue
        if answer.same_as:
            out.append(f"  {label + ':':18} the same setup as {answer.same_as.lower()}")
        else:
            summary = by_key[key]["summary"]
            out.append(f"  {label + ':':18} {key}  found@10 {summary['counts']['10']} of {summary['questions']}"
                       f" ({_pct(summary['found']['10'])}), median {_ms(summary['median_ms'])} ms"
                       + (f" (timed in run {by_key[key]['timed_in']}, same index state)" if by_key[key].get("timed_in")
                          else "")
                       + (f" ({ranked_in_note(by_key[key])})" if ranked_in_note(by_key[key]) else "")
                       + f" — {by_key[key]['method_label']}")
            out.append(f"  {'':18} why: {answer.why}")
        tied = [k for k in (report.get("ties_on_time") or {}).get(name) or [] if k != key and k in by_key]
        if tied:
            medians = {k: by_key[k]["summary"]["median_ms"] for k in [key, *tied]}
            named = ", ".join(f"{k} ({tie_words(report, name, key, k, medians)})" for k in tied)
            line = f"  {'':18} tied on time with {named}; chosen among them by {in_tier_rule(report, name)}"
            if line not in said_ties.get(key, ()):  # the same setup, tied the same way: said once
                out.append(line)
            said_ties.setdefault(key, set()).add(line)
    out.append(f"  (balance: fastest within {rules['balance_points']:g} points of the most; "
               f"time: within {rules['time_points']:g} points)")
    return "\n".join(out)


def render_refusal(report: Report) -> str:
    """A refused run: why it never started, and every error of its golden file by line."""
    golden, refused = report["golden"], report["refused"]
    lines = [f"Run {report['id']} at {report['created_at']} was refused: {golden['source']} "
             f"(sha256 {golden['sha256'][:12]}): {refused['reason']}"]
    lines += [f"  line {p['line']}: {p['message']}" if p.get("line") is not None else f"  {p['message']}"
              for p in refused["errors"]]
    lines.append("No setup ran; nothing was picked.")
    return "\n".join(lines)


def render_ties(report: Report) -> str:
    """One line per pick: the fastest faster setup the paired test cannot tell from it, in words
    (``notes.found_gap_words``), or that none is."""
    ties = report.get("ties")
    if not ties:
        return ""
    significance = report["significance"]
    questions = len(report.get("question_ids") or []) or None
    out = [f"Faster setups the paired test cannot tell from each pick (found@10, exact test, Holm-corrected, "
           f"alpha {significance['alpha']:g}):"]
    for name, label in _PICK_LABELS:
        tie = ties.get(name)
        if tie is None:
            continue
        if not tie["faster"]:
            out.append(f"  {label + ':':18} no setup is faster than {tie['pick']}")
            continue
        if not tie["tied"]:
            out.append(f"  {label + ':':18} each of the {len(tie['faster'])} faster setup(s) finds significantly "
                       f"less than {tie['pick']}")
            continue
        row = next(r for r in tie["faster"] if r["key"] == tie["with"])
        others = [r["key"] for r in tie["faster"] if r["tied"] and r["key"] != tie["with"]]
        out.append(f"  {label + ':':18} faster {row['key']} ({_ms(row['median_ms'])} vs {_ms(tie['median_ms'])} ms) "
                   f"against {tie['pick']}: {found_gap_words(row, questions)}; p {_p(row['p_holm'])}"
                   + (f"; also untold: {', '.join(others)}" if others else ""))
    return "\n".join(out)


def render_versus_top(report: Report) -> str:
    """Each setup against the top: differences with their intervals and Holm-adjusted p-values."""
    significance = report.get("significance")
    rows = [s for s in report["setups"] if s.get("versus_top")]
    if not significance or not rows:
        return ""
    level = f"{significance['interval'] * 100:g}%"
    out = [f"Versus the top ({rows[0]['versus_top']['top']}), paired on the same questions; "
           f"{level} bootstrap intervals (each on its own), Holm-corrected p-values:"]
    for s in rows:
        versus = s["versus_top"]
        parts = []
        for measure, scale, unit in ((FOUND_10, 100, " points"), (MRR, 1, ""), (NDCG_10, 1, "")):
            label, m = str(measure), versus.get(measure.versus_key)
            if m is None:
                continue
            digits = 1 if scale == 100 else 3
            lo, hi = (v * scale for v in m["interval"])
            parts.append(f"{label} {m['difference'] * scale:+.{digits}f}{unit} [{lo:+.{digits}f}, {hi:+.{digits}f}] "
                         f"p {_p(m['p_holm'])}")
        verdict = (f"found@10: {found_gap_words(versus['found@10'], versus.get('questions'))}" if versus["tied"]
                   else "found@10 significantly different")
        out.append(f"  {s['key']}: {'; '.join(parts)} ({verdict})")
    return "\n".join(out)


def render_report(report: Report, *, details: bool = False) -> str:
    """The run for a person at a terminal, the answer last: one line of what ran, any warning, the ranked
    table with named columns, the notes (documents not held, setups left out, labels, cache), then what the
    run found and the three picks with why. ``details``: the paired tests and intervals too (the page and
    report.json always hold them)."""
    if report.get("refused"):
        return render_refusal(report)
    golden = report["golden"]
    reading = reading_words(report)
    head = (f"Run {report['id']}: {golden['labelled']} questions from {golden['source']}, judged by {report['by']}"
            f"{', ' + reading if reading else ''}")
    from ..unreachable import unreachable_notes

    unfound = unfound_words(report)
    loud = ["", f"WARNING: {unfound}"] if unfound else []  # before the table: the picks rest on the rest
    parts = [head, *unreachable_notes(report), *loud, "", render_table(report, details=details)]
    notes = []
    if report.get("missing"):
        notes += missing_notes(report)
    top = next((s for s in report["setups"] if s.get("rank") == 1), None)
    graded = any(q.get("grades") for q in report.get("questions") or [] if isinstance(q, dict))
    if top is not None and graded and holes_words(top):  # a graded file is judged beyond its answers: say its holes
        notes.append(f"Labels: {top['key']} has {holes_words(top)}; the page lists the questions that most need "
                     "labels (each setup's unjudged ids are in the report's holes)")
    if report.get("cache") and details:
        notes.append(cache_note(report["cache"]))
    notes += [f"Left out on {name}: {item['what']} ({item['reason']})"  # a missing setup is never a silent one
              for name, target in report.get("targets", {}).items() for item in target.get("left_out") or []]
    if notes:
        parts += ["", *notes]
    if details:
        race = race_rule_words(report)
        for section in (render_ties(report), render_versus_top(report),
                        f"Race: {race}; {cost_words(report)}." if race else ""):
            if section:
                parts += ["", section]
    elif report.get("significance") and len([s for s in report["setups"] if s.get("summary")]) > 1:
        parts += ["", "(Whether each difference is more than luck, with paired tests and intervals: --details, the "
                      "page, or report.json.)"]
    found = findings(report)
    if found:
        parts += ["", "What this run found: " + " ".join(found)]
    parts += ["", render_picks(report)]
    return "\n".join(parts)


def render_questions(report: Report, texts: Mapping[str, str] | None = None, *, width: int = 60) -> str:
    """One row per question: where each pick found its first relevant result, and the question's text.

    The report holds no text; ``texts`` (``{id: text}`` from ``html.question_texts``, which keeps only
    texts whose sha256 is the one the report recorded) supplies it. Without ``texts`` the table is ids
    and positions alone.
    """
    picks = [key for key in dict.fromkeys(report["picks"].values()) if key is not None]
    ranks = {s["key"]: s.get("ranks") or {} for s in report["setups"]}
    header = ["question", *picks]
    shown = texts is not None
    if shown:
        header.append("text")
    rows = []
    for question in report["questions"]:
        qid = question["id"]
        cells = [qid, *[str(ranks[key].get(qid) or "-") for key in picks]]
        if shown:
            text = texts.get(qid) or "(not in the kept golden file)"
            cells.append(text if len(text) <= width else text[: width - 1] + "…")
        rows.append(cells)
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    numbers = set(range(1, 1 + len(picks)))
    lines = [
        "  ".join(
            c.rjust(w) if i in numbers else c.ljust(w) for i, (c, w) in enumerate(zip(r, widths, strict=True))
        ).rstrip()
        for r in [header, ["-" * w for w in widths], *rows]
    ]
    note = "first relevant position per pick (- = not in the results)"
    if not shown:
        note += "; question texts are not in a report, and no golden copy was found to read them from"
    return "\n".join([*lines, note])
