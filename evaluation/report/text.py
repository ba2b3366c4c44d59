"""Plain-text views of a report: the ranked table, the picks with the setups tied with them on time,
the faster setups the paired test cannot tell from each pick, and each setup against the top, as a
person reads them. A difference the test cannot tell is said to be that (too few questions, and how
many would do), never "as good". A report without the comparisons renders without them.

Each view takes the report's model (``store.run_report.RunReport``; a caller holding the JSON, such as
``evaluate``'s answer, may pass it and it is read once, ``RunReport.of``) and reads it through
``printable_report``: a kept report's texts (its golden file's name, setup keys, errors, what was left out)
are whatever someone with write access to the store left there, so each is escaped and bounded before it
enters a line (``cli.terminal`` says why there)."""
from __future__ import annotations

import re
from functools import partial
from typing import Any, Mapping

from ..errors import TEXT_LIMIT, printable
from ..measures import FOUND, FOUND_10, MRR, NDCG_10
from ..store.run_report import RunReport
from ..store.report_parts import SetupResult
from .answer import findings, pick_answers
from .notes import (cache_note, found_gap_words, holes_words, missing_notes, ranked_in_note, reading_words,
                    unfound_words, unreachable_notes)
from .judged import pick_judged_numbers, pick_warnings, picks_source_words, picks_view, render_judged, why_mark
from .numbers import TEXT_DASH, milliseconds, percent
from .race_words import cost_words, race_rule_words, stopped_line, stopped_setups
from .tier_words import label_next_lines, pick_tier_words, tier_lines

Report = RunReport | Mapping[str, Any]  # the model, or a report's JSON read into it once (``RunReport.of``)


def printable_report(report: Report) -> RunReport:
    """``report`` with every text in it as ``errors.printable_texts`` makes it, its result rows as they are."""
    return RunReport.of(report).printable()


_pct = partial(percent, dash=TEXT_DASH)
_ms = partial(milliseconds, dash=TEXT_DASH, style="table")


def _p(value: float | None) -> str:
    """Two decimals from 0.1; three significant digits below, so 0.0502 does not read as 0.05."""
    if value is None:
        return "-"
    return f"{value:.2f}" if value >= 0.1 else f"{value:.3g}" if value >= 0.001 else f"{value:.0e}"


def _versus_cells(setup: SetupResult) -> list[str]:
    """found@10 against the top, in questions, and its Holm-adjusted p-value ("" for reports without)."""
    versus = setup.versus_top
    found = versus.of(FOUND_10.versus_key) if versus is not None else None
    if versus is None or found is None:
        return ["top", ""] if setup.rank == 1 else ["", ""]
    return [f"{(found.better or 0) - (found.worse or 0):+d}", _p(found.p_holm) + ("" if versus.tied else " *")]


WIDTH = 100  # the text fits a terminal this wide (a table row, every wrapped sentence); --wide lifts it for the table


def wrap(text: str, *, first: str = "", rest: str | None = None, width: int = WIDTH) -> list[str]:
    """``text`` in lines of at most ``width`` (a word longer than a line stands alone): ``first`` before the
    first line, ``rest`` (``first``'s width in spaces by default) before the others. A number stays with
    its unit and an "of": "5 ms", "36 of 36" and "1 question" never break across lines."""
    import textwrap

    rest = " " * len(first) if rest is None else rest
    glued = _GLUE.sub(lambda m: m.group(0).replace(" ", "\u00a0"), text)
    lines = textwrap.wrap(glued, width=width, initial_indent=first, subsequent_indent=rest, break_long_words=False,
                          break_on_hyphens=False) or [first.rstrip()]
    return [line.replace("\u00a0", " ") for line in lines]


_GLUE = re.compile(r"\d[\d.,]*(?: of \d+| ms| questions?| points?|x)\b")


def render_table(report: Report, *, details: bool = True, wide: bool | None = None) -> str:
    """Every setup that ran, ranked: found@k as shares, MRR, nDCG@10 and the median time; ``wide`` (the
    default with ``details``) adds the p95 time and, with ``details``, found@10 against the top and its
    paired test's p-value (reports made before the comparisons have none).

    Not ``wide``, the table fits ``WIDTH`` columns: found@3 to found@20 are headed "@3" to "@20" beside
    "found@1", and a setup key too long for the room left stands on its own line, its numbers on the next.
    """
    wide = details if wide is None else wide
    report = printable_report(report)
    setups = report.setups
    compared = report.significance is not None and details
    found_heads = [str(m) for m in FOUND] if wide else [str(FOUND[0]), *(f"@{m.cutoff}" for m in FOUND[1:])]
    header = ["#", "setup", *found_heads, str(MRR), str(NDCG_10), "median ms", *(["p95 ms"] if wide else []),
              *(["found@10 vs top", "p"] if compared else [])]
    rows = []
    for s in setups:
        summary = s.summary
        if summary is None:
            continue
        values = summary.values
        rows.append([str(s.rank), s.key, *[m.shown(m.of(values), dash=TEXT_DASH) for m in FOUND],
                     MRR.shown(MRR.of(values)), NDCG_10.shown(NDCG_10.of(values)), _ms(summary.median_ms),
                     *([_ms(summary.p95_ms)] if wide else []), *(_versus_cells(s) if compared else [])])
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(header)]
    alone: set[int] = set()  # rows whose key stands on its own line
    if not wide:
        room = WIDTH - (sum(widths) - widths[1]) - 2 * (len(widths) - 1)
        if widths[1] > room:
            widths[1] = max(room, len(header[1]))
            alone = {n for n, r in enumerate(rows) if len(r[1]) > widths[1]}
    right = set(range(2, len(header)))

    def line(cells: list[str]) -> str:
        return "  ".join(
            c.rjust(w) if i in right else c.ljust(w) for i, (c, w) in enumerate(zip(cells, widths, strict=True))
        ).rstrip()

    out = [line(header), line(["-" * w for w in widths])]
    for n, r in enumerate(rows):
        if n in alone:
            out += [f"{r[0].ljust(widths[0])}  {r[1]}", line(["", "", *r[2:]])]
        else:
            out.append(line(r))
    if compared and report.significance is not None:
        out.append(f"(found@10 vs top: questions found in the top 10 minus the top's; p: paired exact test, "
                   f"Holm-corrected; * significant at {report.significance.alpha:g})")
    retried = [s for s in setups if s.retries]
    if retried:  # throttled requests were waited for and sent again; their times include the waits
        out.append("")
        out.append("Retried after throttling (times include the waits):")
        out += [f"  {s.key}: {s.retries} retries in {s.requests or 0} requests" for s in retried]
    failed = [s for s in setups if s.error]
    if failed:
        out.append("")
        out.append("Failed (never picked):")
        out += [f"  {s.key}: {s.error}" for s in failed]
    stopped = stopped_setups(report)
    if stopped:  # never in the table: their numbers are over the questions each searched, said so
        out.append("")
        out += wrap("Stopped by the race (never picked; each one's numbers are over the questions it searched):",
                    rest="  ")
        out += [line for s in stopped for line in wrap(stopped_line(s), first="  ", rest="    ")]
        cost = cost_words(report)
        if cost:
            out += wrap(f"({cost[0].upper() + cost[1:]})", first="  ", rest="   ")
    return "\n".join(out)


def render_picks(report: Report) -> str:
    """The three picks, each with its numbers and its reasons in plain words (``answer.pick_answers``, the
    page's words too): a pick that is the same setup as an earlier one says that and its own why; the
    setups each was chosen among, with the reason each lost. Every line fits ``WIDTH`` columns."""
    report = printable_report(report)
    by_key = {s.key: s for s in report.setups}
    summaries = {s.key: s.summary for s in report.setups if s.summary is not None}  # the setups that ran
    rules = report.rules
    if report.picks_withheld:
        return "\n".join(wrap(f"Picks: none. {report.picks_withheld}"))
    out = ["Picks (nothing is switched: a person chooses):"]
    source = picks_source_words(report)
    if source:
        out += wrap(source, first="  ", rest="  ")
    hang = " " * 21
    for answer in pick_answers(picks_view(report)):
        label, key = answer.label, answer.key
        head = f"  {label + ':':18} "
        if key is None:
            out.append(f"{head}none ({answer.why})")
            continue
        if answer.same_as:
            out += wrap(f"the same setup as {answer.same_as.lower()}: {answer.why}", first=head, rest=hang)
        else:
            summary = summaries[key]  # a pick is a setup that ran
            numbers = (f"{key}  found@10 {summary.count(10)} of {summary.questions}"
                       f" ({_pct(summary.share(10))}), median {_ms(summary.median_ms)} ms")
            notes = [f"timed in run {by_key[key].timed_in}, same index state" if by_key[key].timed_in
                     else None, ranked_in_note(by_key[key])]
            numbers += "".join(f" ({n})" for n in notes if n)
            labelled = f"{numbers} — {by_key[key].method_label}"  # the method in words, when it fits
            out += wrap(labelled if len(head + labelled) <= WIDTH else numbers, first=head, rest=hang)
            out += wrap(f"why: {answer.why}{why_mark(report)}", first=hang, rest=hang + "     ")
            tier = pick_tier_words(report, answer.name)
            if tier:
                out += wrap(tier, first=hang, rest=hang)
        judged = pick_judged_numbers(report, key) if not answer.same_as else None
        for line in ([judged] if judged else []) + pick_warnings(report, key):
            out += wrap(line, first=hang, rest=hang)
        for sentence in answer.tied:
            out += wrap(f"also: {sentence}", first=hang, rest=hang + "      ")
    floor = rules.floor_ms
    out += wrap(f"(balance: fastest within {rules.balance_points:g} points of the most; time: within "
                f"{rules.time_points:g}" + (f"; {floor:g} ms apart or less: equally fast)" if floor is not None
                                               else ")"), first="  ", rest="   ")
    return "\n".join(out)


def render_refusal(report: Report) -> str:
    """A refused run: why it never started, and every error of its golden file by line."""
    report = printable_report(report)
    golden, refused = report.golden, report.refused
    if refused is None:
        raise ValueError(f"run {report.id} was not refused")
    lines = [f"Run {report.id} at {report.created_at} was refused: {golden.source} "
             f"(sha256 {(golden.sha256 or '')[:12]}): {refused.reason}"]
    lines += [f"  line {line}: {message}" if line is not None else f"  {message}" for line, message in refused.errors]
    lines.append("No setup ran; nothing was picked.")
    return "\n".join(lines)


def render_ties(report: Report) -> str:
    """One line per pick: what the paired test on found@10 says of the fastest faster setup it cannot tell
    from the pick (``answer.paired_words``, the page's words), or that none is."""
    report = printable_report(report)
    ties = report.ties
    if not ties or report.significance is None:
        return ""
    out = [f"Faster setups the paired test cannot tell from each pick (found@10, exact test, Holm-corrected, "
           f"alpha {report.significance.alpha:g}):"]
    for answer in pick_answers(report):
        if answer.paired is None:
            continue
        tie = ties.get(answer.name)
        row = next((r for r in tie.faster if r.key == tie.with_), None) if tie is not None else None
        p = f"; p {_p(row.p_holm)}" if row is not None and tie is not None and tie.tied and row.p_holm is not None \
            else ""
        out += wrap(answer.paired + p, first=f"  {answer.label + ':':18} ", rest=" " * 21)
    return "\n".join(out)


def render_versus_top(report: Report) -> str:
    """Each setup against the top: differences with their intervals and Holm-adjusted p-values."""
    report = printable_report(report)
    significance = report.significance
    rows = [(s.key, s.versus_top) for s in report.setups if s.versus_top is not None]
    if significance is None or significance.interval is None or not rows:
        return ""
    level = f"{significance.interval * 100:g}%"
    out = [f"Versus the top ({rows[0][1].top}), paired on the same questions; "
           f"{level} bootstrap intervals (each on its own), Holm-corrected p-values:"]
    for key, versus in rows:
        parts = []
        for measure, scale, unit in ((FOUND_10, 100, " points"), (MRR, 1, ""), (NDCG_10, 1, "")):
            label, m = str(measure), versus.of(measure.versus_key)
            if m is None or m.interval is None or m.difference is None:
                continue
            digits = 1 if scale == 100 else 3
            lo, hi = (v * scale for v in m.interval)
            parts.append(f"{label} {m.difference * scale:+.{digits}f}{unit} [{lo:+.{digits}f}, {hi:+.{digits}f}] "
                         f"p {_p(m.p_holm)}")
        found = versus.of(FOUND_10.versus_key)
        verdict = (f"found@10: {found_gap_words(found, versus.questions)}" if versus.tied and found is not None
                   else "found@10 significantly different")
        out.append(f"  {key}: {'; '.join(parts)} ({verdict})")
    return "\n".join(out)


def render_report(report: Report, *, details: bool = False, wide: bool | None = None, with_id: bool = True) -> str:
    """The run for a person at a terminal, the answer last: one line of what ran, any warning, the ranked
    table with named columns, the notes (documents not held, setups left out, labels, cache), then what the
    run found and the three picks with why. ``details``: the paired tests and intervals too (the page and
    report.json always hold them). Every line but a table's under ``wide`` (the default with ``details``)
    fits ``WIDTH`` columns, so a 40-row terminal holds the answer after a run. ``with_id``: the first line
    names the run (``evaluate`` leaves it to the line that says where the run was saved when it does not fit).
    """
    report = printable_report(report)
    if report.refused is not None:
        return render_refusal(report)
    golden = report.golden
    reading = reading_words(report)
    head = (f"{golden.labelled} questions from {golden.source}, judged by {report.by}"
            f"{', ' + reading if reading else ''}")
    if with_id or len(head) + len(f"Run {report.id}: ") <= WIDTH:  # else the line saying where it was saved names it
        head = f"Run {report.id}: {head}"
    unfound = unfound_words(report)
    loud = ["", f"WARNING: {unfound}"] if unfound else []  # before the table: the picks rest on the rest
    said = [*unreachable_notes(report), *loud]
    parts = [*wrap(head), *(line for note in said for line in (wrap(note, rest="  ") if note else [""])), "",
             render_table(report, details=details, wide=wide)]
    notes = []
    if report.missing:
        notes += missing_notes(report)
    top = report.top
    if top is not None and report.graded and holes_words(top):  # a graded file is judged beyond its answers: its holes
        notes.append(f"Labels: {top.key} has {holes_words(top)}; the page lists the questions that most need "
                     "labels (each setup's unjudged ids are in the report's holes)")
    if report.cache and details:
        notes.append(cache_note(report.cache))
    notes += [f"Left out on {name}: {item.what} ({item.reason})"  # a missing setup is never a silent one
              for name, target in report.targets.items() for item in target.left_out]
    if notes:
        parts += ["", *(line for note in notes for line in wrap(note, rest="  "))]
    for lines in (tier_lines(report), label_next_lines(report)):
        if lines:
            parts += ["", *(line for text in lines for line in wrap(text, rest="    "))]
    if details:
        race = race_rule_words(report)
        for section in (render_ties(report), render_versus_top(report),
                        "\n".join(wrap(f"Race: {race}; {cost_words(report)}.", rest="  ")) if race else ""):
            if section:
                parts += ["", section]
    found = findings(report)
    if found:
        parts += ["", *wrap("What this run found: " + " ".join(found))]
    judged = render_judged(report)
    if judged:
        parts += ["", judged]
    parts += ["", render_picks(report)]
    if not details and report.significance is not None and len(report.ran) > 1:
        parts.append("  (whether each difference is more than luck: --details, the page, or report.json)")
    return "\n".join(parts)


def render_questions(report: Report, texts: Mapping[str, str] | None = None, *, width: int = 60) -> str:
    """One row per question: where each pick found its first relevant result, and the question's text.

    The report holds no text; ``texts`` (``{id: text}`` from ``html.question_texts``, which keeps only
    texts whose sha256 is the one the report recorded) supplies it. Without ``texts`` the table is ids
    and positions alone.
    """
    report = printable_report(report)
    picks = [key for key in dict.fromkeys(report.picks.values()) if key is not None]
    ranks = {s.key: s.ranks or {} for s in report.setups}
    header = ["question", *picks]
    shown = texts is not None
    if texts is not None:
        header.append("text")
        texts = {printable(qid, TEXT_LIMIT): text for qid, text in texts.items()}  # keyed as the report's ids now are
    rows = []
    for question in report.questions:
        qid = question.id
        cells = [qid, *[str(ranks[key].get(qid) or "-") for key in picks]]
        if texts is not None:
            text = texts.get(qid) or "(not in the kept golden file)"
            cells.append(printable(text, width))
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
