"""The page's top: the title and golden line, why a run never started, and the warnings read before the
picks (a target that could not be reached, expected documents an index does not hold, setups left out).
"""
from __future__ import annotations

from ...errors import named  # a kept name is anyone's to write in a shared store: bounded as every view names it
from ..notes import missing_note, reading_words, unfound_words, unreachable_notes
from ..svg import attr
from .context import Page
from .format import esc, sentence, spaced, utc_time


def header(page: Page) -> str:
    """The title, the golden file's line and the run's; the golden rows left out, unless the run was refused."""
    report, collection, refused = page.report, page.collection, page.refused
    golden = report.golden
    total, labelled = golden.questions, golden.labelled
    counted = f"{labelled} labelled question{'s' if labelled != 1 else ''}" if labelled is not None else "questions"
    if total is not None and labelled is not None and total != labelled:
        counted += f" of {total}"
    extra = [f"{golden.values[name]} {spaced(name)}" for name in ("unfilled", "drafts")
             if isinstance(golden.values.get(name), int) and golden.values[name]]
    sha = golden.sha256 or ""
    line = (f'Golden data: <strong>{esc(counted)}</strong>{(" (" + esc(", ".join(extra)) + ")") if extra else ""} '
            f'from <code>{esc(named(golden.source or "?"))}</code>, sha256 <code '
            f'title="{attr(sha)}">{esc(sha[:12])}…</code>'
            f' · collection <strong>{esc(collection)}</strong>')
    when = report.created_at
    reading = reading_words(report)
    run_line = (f'Run <code>{esc(report.id or "?")}</code>' + (f" at {esc(utc_time(when))}" if when else "")
                + f' · judged by <strong>{esc(report.by or "doc")}</strong>'
                + (f", {esc(reading)}" if reading else "")
                + (f', {esc(report.depth)} results deep' if report.depth else ""))
    problems = golden.problems
    problem_note = ""
    if problems and not refused:  # a refused run lists the same errors as why it never started
        problem_note = (f'<div class="note warn"><strong>{len(problems)} row(s) of the golden file could not be '
                        "read and were left out of this run:</strong><ul>"
                        + "".join(f"<li>line {esc(p.get('line'))}: {esc(p.get('message'))}</li>"
                                  for p in problems[:20]) + "</ul></div>")
    return (f'<header><h1>Which way of searching should <span class="key">{esc(collection)}</span> use?</h1>'
            f'<p class="golden-line">{line}</p><p class="golden-line">{run_line}</p></header>{problem_note}')


def refusal(page: Page) -> str:
    """Why a run never started (``report.refused``): its reason and the golden file's errors by line."""
    refused = page.report.refused
    if refused is None:
        return ""
    listed = "".join(f"<li>{'line ' + esc(line) + ': ' if line is not None else ''}{esc(message)}</li>"
                     for line, message in refused.errors)
    return ('<section class="note warn" id="refused"><strong>This run never started.</strong> '
            f"{esc(sentence(refused.reason or 'no reason was kept'))}"
            + (f"<ul>{listed}</ul>" if listed else "")
            + '<p class="muted">No setup was searched and nothing is picked. Fix the golden file and save it '
              "again; its new version starts a new run.</p></section>")


def unreachable(page: Page) -> str:
    """A target that could not be reached, said before anything else: its setups failed, the others ran."""
    notes = unreachable_notes(page.report)
    if not notes:
        return ""
    return ('<section class="note warn" id="unreachable"><ul>' + "".join(f"<li>{esc(n)}</li>" for n in notes)
            + "</ul></section>")


def unfound(page: Page) -> str:
    """The loud note of a run in which more than its share of questions name nothing any target holds:
    they score 0 in every setup, so the picks rest on the others."""
    words = unfound_words(page.report)
    if not words:
        return ""
    return f'<section class="note warn" id="unfound"><strong>Warning:</strong> {esc(words)}</section>'


def missing_documents(page: Page) -> str:
    missing = page.report.missing
    if not missing:
        return ""
    items = []
    for target, gone in sorted(missing.items()):
        items.append(f'<li data-target="{attr(target)}">{esc(missing_note(target, gone, limit=None))}</li>')
    return ('<section class="note warn" id="missing"><strong>Expected documents the index does not hold.</strong> '
            "Their questions stay in the run and cannot be found there, so every setup loses them alike:"
            f"<ul>{''.join(items)}</ul></section>")


def left_out(page: Page) -> str:
    """What a target's index cannot do, so a setup absent from the table is never a silent absence."""
    items = []
    for name, facts in sorted(page.report.targets.items()):
        for item in facts.left_out:
            items.append(f"<li>on <strong>{esc(name)}</strong>: {esc(item.what)} ({esc(item.reason)})</li>")
    if not items:
        return ""
    return ('<section class="note" id="left-out"><strong>Setups left out</strong> because the index cannot do '
            f"them:<ul>{''.join(items)}</ul></section>")
