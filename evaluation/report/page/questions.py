"""The questions most setups miss (more than half of those that ran), hardest first, then those some miss."""
from __future__ import annotations

from typing import Any, Mapping

from ...store.report_parts import SetupResult
from ..svg import attr
from .context import Page
from .format import esc, question_cell, scroller


def hard_questions(page: Page) -> str:
    """The ``#questions`` section, "" when no setup ran."""
    report, ran, questions = page.report, page.ran, page.questions
    if not ran:
        return ""
    ids = list(report.question_ids) or sorted({qid for s in ran for qid in (s.ranks or {})})
    expected = {row.id: row.expected for row in report.questions}
    rows = []
    for qid in ids:
        firsts = [(s.ranks or {}).get(qid) for s in ran]
        found = sum(1 for r in firsts if isinstance(r, int) and r <= 10)
        if found == len(ran):
            continue
        positions = [r for r in firsts if isinstance(r, int)]
        best = min(positions) if positions else None
        rows.append((found, qid, best))
    rows.sort(key=lambda r: (r[0], r[1]))  # hardest first
    most = [r for r in rows if r[0] * 2 < len(ran)]  # missed by more than half the setups
    some = [r for r in rows if r[0] * 2 >= len(ran)]
    note = ("Question text is shown from the kept golden file." if questions else
            "Questions are named by their id in the golden file; the report keeps no question text.")
    half = len(ran) // 2 + 1  # "most": more than half of the setups that ran
    most_part = (_question_table(most, ran, expected, questions) if most else
                 f'<p class="muted">None: every question was found in the top 10 by at least half of the '
                 f"{len(ran)} setups.</p>")
    some_part = ""
    if some:
        some_part = ('<h3>Questions some setups miss</h3><p class="muted">Found in the top 10 by at least half of the '
                     f"setups, but not by all of them.</p>{_question_table(some, ran, expected, questions)}")
    if not rows:
        most_part = '<p class="muted">None: every setup found every question in its top 10.</p>'
    return ('<section id="questions"><h2>Questions most setups miss</h2>'
            f'<p class="muted">Questions that at least {half} of the {len(ran)} setups did not find in their top 10, '
            f"hardest first. {note}</p>{most_part}{some_part}</section>")


def _question_table(rows: list[tuple[int, str, int | None]], ran: list[SetupResult],
                    expected: Mapping[str, Any], questions: Mapping[str, str] | None) -> str:
    body = "".join(
        f'<tr data-question="{attr(qid)}"><td>{question_cell(qid, questions)}</td>'
        f'<td class="num">{found} of {len(ran)}</td><td class="num">{best if best else "–"}</td>'
        f'<td class="expected">{esc(", ".join(str(e) for e in expected.get(qid, [])))}</td></tr>'
        for found, qid, best in rows)
    return scroller('<table><thead><tr><th>question</th><th class="num">setups finding it in the top 10</th>'
                    '<th class="num">best position</th><th>expected</th></tr></thead>'
                    f"<tbody>{body}</tbody></table>")


def labels_needed(page: Page) -> str:
    """The ``#labels`` section: the questions whose top 10 holds the most documents nobody judged, across the
    setups that ran (each setup's ``holes``), so a team knows which rows of the golden file to label next.
    Only for a graded golden file (one that judges beyond its answers); "" otherwise."""
    report, ran, questions = page.report, page.ran, page.questions
    if not ran or not report.graded or not any(s.holes is not None for s in ran):
        return ""
    unjudged: dict[str, dict[str, int]] = {}
    for setup in ran:
        for qid, ids in (setup.holes or {}).items():
            for doc in ids:
                seen = unjudged.setdefault(str(qid), {})
                seen[str(doc)] = seen.get(str(doc), 0) + 1
    if not unjudged:
        return ('<section id="labels"><h2>Questions that most need labels</h2><p class="muted">None: every '
                "setup's top 10 holds judged documents only.</p></section>")
    rows = sorted(unjudged.items(), key=lambda item: (-len(item[1]), item[0]))[:20]
    body = "".join(
        f'<tr data-question="{attr(qid)}"><td>{question_cell(qid, questions)}</td><td class="num">{len(docs)}</td>'
        f'<td class="expected">{esc(", ".join(d for d, _ in sorted(docs.items(), key=lambda x: (-x[1], x[0]))[:5]))}'
        f'{" …" if len(docs) > 5 else ""}</td></tr>' for qid, docs in rows)
    return ('<section id="labels"><h2>Questions that most need labels</h2><p class="muted">Documents in a setup\'s '
            "top 10 that the golden file does not judge score as not relevant, so a setup that finds them looks "
            "worse than it may be. These questions have the most; judge their documents (a grade, 0 when not "
            "relevant) and run again. Most often returned first.</p>"
            + scroller('<table><thead><tr><th>question</th><th class="num">unjudged in some top 10</th>'
                       f"<th>documents to judge</th></tr></thead><tbody>{body}</tbody></table>") + "</section>")
