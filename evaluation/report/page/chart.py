"""Found@10 against median time, one point per setup (frontier joined, time on a log axis), with its
legend and a numbered key that reads without the chart."""
from __future__ import annotations

from ..numbers import milliseconds as _ms, number as _num, percent as _pct
from ..svg import METHOD_COLOURS, NARROW, WIDE, ChartPoint, attr, method_colour, scatter
from .context import Page
from .format import esc, wrappable_key

METHOD_NAMES = {"keyword": "keyword (BM25)", "keyword_documents": "keyword (BM25, fused with the document's)",
                "keyword_semantic": "keyword + semantic ranker",
                "dense": "dense (vectors)", "hybrid": "hybrid (BM25 + vectors, RRF)",
                "hybrid_semantic": "hybrid + semantic ranker", "hybrid_reranked": "hybrid + cross-encoder",
                "hybrid_colbert": "hybrid + ColBERT"}


def chart(page: Page) -> str:
    """The ``#chart`` section: the setups with a found@10 and a timed search drawn, the others named.

    The chart is drawn twice, wide and narrow (``svg.WIDE``, ``svg.NARROW``), and the page's CSS shows
    the one its column has room for: an SVG scaled down to a phone shrinks its text with it (6 px at
    400 px), so a phone gets a chart drawn for its width instead."""
    report, ran, picks = page.report, page.ran, page.picks
    points, undrawn = [], []
    for setup in ran:
        summary = setup.summary
        assert summary is not None, "the setups that ran are those with a summary (context.page_of)"
        found, time_ms = _num(summary.share(10)), _num(summary.median_ms)
        if found is None or time_ms is None or time_ms <= 0 or setup.rank is None:
            undrawn.append(setup.key)
            continue
        points.append(ChartPoint(key=setup.key, rank=setup.rank, found_10=found, median_ms=time_ms,
                                 method=setup.method, picks=tuple(picks.get(setup.key, ()))))
    note = (f'<p class="muted small">Not drawn (no timed search): {", ".join(esc(k) for k in undrawn)}.</p>'
            if undrawn else "")
    if not points:
        return ('<section id="chart"><h2>Found against time</h2><p class="muted">No setup has both found@10 and a '
                f"timed search, so there is nothing to draw.</p>{note}</section>")
    frontier = list(report.frontier)
    methods = sorted({p.method for p in points if p.method}, key=lambda m: list(METHOD_COLOURS).index(m)
                     if m in METHOD_COLOURS else 99)
    legend = "".join(f'<li><span class="swatch" style="background:{method_colour(m)}"></span>'
                     f"{esc(METHOD_NAMES.get(m, m))}</li>" for m in methods)
    drawn_frontier = [k for k in frontier if any(p.key == k for p in points)]
    if len(drawn_frontier) > 1:
        legend += '<li><span class="swatch line"></span>frontier: nothing is both faster and finds more</li>'
    legend += '<li><span class="swatch ring"></span>a pick</li>'
    key_list = "".join(
        f'<li value="{p.rank}" data-key="{attr(p.key)}"><span class="dot" style="background:{method_colour(p.method)}">'
        f'</span><a class="key" href="#setup-{attr(p.key)}">{wrappable_key(p.key)}</a>'
        f'<span class="numbers">found@10 {_pct(p.found_10)} · median {_ms(p.median_ms)} ms</span></li>'
        for p in sorted(points, key=lambda p: p.rank))
    frontier_words = ""
    if len(drawn_frontier) == 1:
        frontier_words = (f" The frontier is one setup, {esc(drawn_frontier[0])}: every other setup is slower "
                          "and finds no more.")
    return ('<section id="chart"><h2>Found against time</h2>'
            '<p class="muted">Each point is a setup, numbered by its rank in the table and coloured by its method. '
            "Up is more questions found in the top 10; left is faster. Points up and to the left are the ones "
            "worth a look.</p>"
            f'<figure class="chart-grid{" many" if len(points) > 10 else ""}"><div class="chart-wrap"><div '
            f'class="scroll">'
            f"{scatter(points, frontier, layout=WIDE)}{scatter(points, frontier, layout=NARROW)}</div>"
            f'<ul class="legend">{legend}</ul></div>'
            f'<ol class="chart-key">{key_list}</ol>'
            "<figcaption>Time is the median of searches made one at a time, as a caller would. Every point is "
            "where its numbers put it; where points crowd, their numbers sit a little away with a thin line "
            "to the point, and the table has the exact numbers."
            f"{frontier_words}</figcaption></figure>{note}</section>")
