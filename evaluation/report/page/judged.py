"""The ``#judged`` section: the holes a chat model graded, how far it agrees with the people, and the
numbers on human + judged labels, each column named with the mark (``found@10+judged``) and kept out
of every other table of the page. "" for a report without a judged block."""
from __future__ import annotations

from ..judged import (MARK, agreement_words, bias_lines, conflict_lines, cost_words, holes_words, judged_rows,
                      marked, tau_words)
from ..numbers import percent, score
from ..svg import attr
from .context import Page
from .format import esc, scroller, wrappable_key


def judged_holes(page: Page) -> str:
    report = page.report
    block = report.judged
    if block is None:
        return ""
    judge = block.judge
    if block.refused:
        return (f'<section id="judged"><h2>Holes judged by a model ({esc(MARK)})</h2><div class="note warn">'
                f"<strong>Not judged by {esc(judge.get('model'))}:</strong> {esc(block.refused)}. Every number on "
                "this page is the people's labels only.</div></section>")
    scale = block.scale
    grades = scale.get("grades") or [0, 1]
    calibration = block.calibration
    parts = [f'<p class="muted">Results no one labelled, graded by <strong>{esc(judge.get("model"))}</strong> on the '
             f"golden file's {esc(scale.get('kind'))} scale ({grades[0]}-{grades[-1]}). Numbers named "
             f"<strong>{esc(MARK)}</strong> use its grades; every other number on this page is the people's labels "
             "only. Its grades are never written into the golden file.</p>",
             f"<p>Calibration: {calibration.get('graded', 0)} of the golden file's labels graded blind (set aside by "
             f"seed {esc(calibration.get('seed'))}): {esc(agreement_words(block))}.</p>"]
    confusion = calibration.get("confusion") or {}
    if confusion.get("counts"):
        head = "".join(f'<th class="num">judge {esc(g)}</th>' for g in confusion["grades"])
        body = "".join(f"<tr><th>people {esc(g)}</th>" + "".join(f'<td class="num">{esc(c)}</td>' for c in row)
                       + "</tr>" for g, row in zip(confusion["grades"], confusion["counts"], strict=True))
        parts.append(scroller(f'<table class="confusion"><thead><tr><th></th>{head}</tr></thead>'
                              f"<tbody>{body}</tbody></table>"))
    parts += [f'<div class="note warn">{esc(line)}</div>' for line in conflict_lines(block) + bias_lines(block)]
    if not block.counted:
        parts.append(f'<div class="note warn"><strong>The judge\'s grades do not count:</strong> '
                     f"{esc(block.why_not_counted)}</div>")
    else:
        parts.append(f"<p>{esc(holes_words(block))}.</p>")
        tau = tau_words(block)
        if tau:
            parts.append(f"<p>{esc(tau)}.</p>")
        rows = judged_rows(report)
        if rows:
            biased = ' class="biased"'
            body = "".join(
                f'<tr data-key="{attr(r["key"])}"{biased if r["biased"] else ""}>'
                f'<td class="key">{wrappable_key(r["key"])}{" (biased judge)" if r["biased"] else ""}</td>'
                f'<td class="num">{percent(r["found10"])}</td><td class="num">{percent(r["found10_judged"])}</td>'
                f'<td class="num">{score(r["mrr_judged"])}</td><td class="num">{score(r["ndcg_judged"])}</td>'
                f'<td class="num">{r["holes_judged"]}</td></tr>' for r in rows)
            parts.append(scroller(
                '<table class="judged"><thead><tr><th>setup</th><th class="num">found@10</th>'
                f'<th class="num">{esc(marked("found@10"))}</th><th class="num">{esc(marked("MRR"))}</th>'
                f'<th class="num">{esc(marked("nDCG@10"))}</th><th class="num">holes graded</th></tr></thead>'
                f"<tbody>{body}</tbody></table>"))
        choice = block.judged_picks.get("picks") or {}
        if choice and report.picks_from != "human+judged":
            parts.append(f'<p class="muted">The picks the {esc(MARK)} numbers would name (not this report\'s; '
                         "<code>--picks-from judged</code> names them): "
                         + esc(", ".join(f"{name.replace('_', ' ')} {key}" for name, key in choice.items())) + ".</p>")
    parts.append(f'<p class="muted">Cost: {esc(cost_words(block))}.</p>')
    return f'<section id="judged"><h2>Holes judged by a model ({esc(MARK)})</h2>{"".join(parts)}</section>'
