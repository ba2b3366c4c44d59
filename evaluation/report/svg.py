"""The HTML report's charts, drawn as inline SVG text: no script, no font or file fetched.

``scatter`` plots found@10 against median search time (log axis) for every setup that ran, joins the
frontier with a line and rings the picks; ``sparkline`` draws one setup's found@10 run by run. Every
drawn point carries ``data-`` attributes with its numbers and a ``<title>`` a browser shows on hover, so
the chart is checkable by a program and readable without the table (which holds the same numbers).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from html import escape
from typing import Sequence

from .numbers import milliseconds

# Okabe-Ito colours (told apart with every common colour-vision deficiency), one per method.
METHOD_COLOURS = {
    "keyword": "#0072B2", "keyword_semantic": "#56B4E9", "dense": "#E69F00", "hybrid": "#009E73",
    "hybrid_semantic": "#D55E00", "hybrid_reranked": "#CC79A7", "hybrid_colbert": "#000000",
}
OTHER_COLOUR = "#6B6B6B"


def method_colour(method: str | None) -> str:
    return METHOD_COLOURS.get(method or "", OTHER_COLOUR)


def attr(value: object) -> str:
    """``value`` as a quoted attribute's text."""
    return escape(str(value), quote=True)


@dataclass(frozen=True)
class ChartPoint:
    key: str
    rank: int
    found_10: float        # share, 0..1
    median_ms: float       # > 0
    method: str | None
    picks: tuple[str, ...] = ()   # pick labels this setup holds, e.g. ("finds the most",)


def _fmt_ms(value: float) -> str:
    return milliseconds(value, style="tick")


def _log_ticks(lo: float, hi: float, *, most_decades: float = 4) -> list[float]:
    """1-2-5 ticks inside [lo, hi] when the axis spans at most ``most_decades`` decades, powers of ten
    otherwise (a narrow chart has room for fewer labels)."""
    decades = math.log10(hi / lo)
    steps = (1, 2, 5) if decades <= most_decades else (1,)
    ticks = []
    for exponent in range(math.floor(math.log10(lo)), math.ceil(math.log10(hi)) + 1):
        for step in steps:
            value = step * 10.0 ** exponent
            if lo * 0.999 <= value <= hi * 1.001:
                ticks.append(value)
    return ticks


def _time_domain(times: Sequence[float]) -> tuple[float, float]:
    """Round ends (1, 3 or 10 times a power of ten) with room around the fastest and slowest point."""
    def down(value: float) -> float:
        edge = 10.0 ** math.floor(math.log10(value))
        return 3 * edge if value >= 3 * edge else edge

    def up(value: float) -> float:
        edge = 10.0 ** math.floor(math.log10(value))
        return edge if value <= edge * 1.0001 else 3 * edge if value <= 3 * edge else 10 * edge

    lo, hi = down(min(times) / 1.3), up(max(times) * 1.3)
    return (lo, hi) if hi > lo else (lo, lo * 10)


def _found_domain(shares: Sequence[float]) -> tuple[float, float, float]:
    """(lowest, highest, step) in percent: a round floor below the lowest point, up to 100."""
    low = min(shares) * 100
    floor = max(0.0, math.floor((low - 5) / 10) * 10)
    span = 100 - floor
    step = 5 if span <= 30 else 10 if span <= 60 else 20
    return floor, 100.0, step


@dataclass(frozen=True)
class ChartLayout:
    """How big a chart is drawn and what fits in it. Its text is sized in the chart's own units (11 to
    12.5), so it reads at 11 px or more only where the chart is drawn at least ``width`` px wide: the page
    draws ``WIDE`` and ``NARROW`` and shows the one that fits (``style.CSS``), never one scaled down."""

    name: str                               # its class beside "chart", and the suffix of its ids
    width: int
    height: int
    margins: tuple[int, int, int, int]      # left, right, top, bottom
    time_words: str                         # the time axis's title
    most_decades: float                     # 1-2-5 ticks up to this many decades, powers of ten beyond
    pick_labels: bool                       # the picks' names beside their points (the cards name them too)


WIDE = ChartLayout("wide", 820, 430, (64, 24, 18, 52), "median search time, ms (log scale) — faster to the left",
                   4, True)
# a phone's: 340 units fill a 400 px screen's 380 px at a scale over 1; the three picks' names (about 330
# px together) would cover the plot, so the rings mark the picks and the cards above name them
NARROW = ChartLayout("narrow", 340, 360, (58, 12, 14, 46), "median ms (log scale) — faster to the left", 1.5,
                     False)


def scatter(points: Sequence[ChartPoint], frontier: Sequence[str], *, layout: ChartLayout = WIDE) -> str:
    """The found@10 / median time chart as an ``<svg>`` element drawn in ``layout`` ('' when no point can
    be drawn)."""
    if not points:
        return ""
    width, height = layout.width, layout.height
    left, right, top, bottom = layout.margins
    plot_w, plot_h = width - left - right, height - top - bottom
    ids = "" if layout is WIDE else f"-{layout.name}"
    t_lo, t_hi = _time_domain([p.median_ms for p in points])
    f_lo, f_hi, f_step = _found_domain([p.found_10 for p in points])

    def x(ms: float) -> float:
        return left + plot_w * (math.log10(ms) - math.log10(t_lo)) / (math.log10(t_hi) - math.log10(t_lo))

    def y(share: float) -> float:
        return top + plot_h * (1 - (share * 100 - f_lo) / (f_hi - f_lo))

    out = [f'<svg class="chart {layout.name}" viewBox="0 0 {width} {height}" width="{width}" height="{height}" '
           f'role="img" aria-labelledby="chart-title{ids} chart-desc{ids}" xmlns="http://www.w3.org/2000/svg">',
           f'<title id="chart-title{ids}">found@10 against median search time, one point per setup</title>',
           f'<desc id="chart-desc{ids}">{len(points)} setups; time on a logarithmic axis; the frontier joined by a '
           'line; picks ringed. The ranked table below holds the same numbers.</desc>',
           f'<rect class="plot" x="{left}" y="{top}" width="{plot_w}" height="{plot_h}"/>']
    # grid and axes
    value = f_lo
    while value <= f_hi + 1e-9:
        gy = y(value / 100)
        out.append(f'<line class="grid" x1="{left}" x2="{left + plot_w}" y1="{gy:.1f}" y2="{gy:.1f}"/>')
        out.append(f'<text class="tick" x="{left - 8}" y="{gy + 4:.1f}" text-anchor="end">{value:g}%</text>')
        value += f_step
    for tick in _log_ticks(t_lo, t_hi, most_decades=layout.most_decades):
        gx = x(tick)
        major = math.isclose(math.log10(tick), round(math.log10(tick)))
        out.append(f'<line class="grid{" major" if major else ""}" x1="{gx:.1f}" x2="{gx:.1f}" y1="{top}" '
                   f'y2="{top + plot_h}"/>')
        out.append(f'<text class="tick" x="{gx:.1f}" y="{top + plot_h + 16}" text-anchor="middle">'
                   f'{_fmt_ms(tick)}</text>')
    out.append(f'<text class="axis" x="{left + plot_w / 2:.1f}" y="{height - 12}" text-anchor="middle">'
               f'{escape(layout.time_words)}</text>')
    out.append(f'<text class="axis" transform="translate({left - 48} {top + plot_h / 2:.1f}) rotate(-90)" '
               'text-anchor="middle">found@10 — more is better</text>')
    # the frontier, under the points
    by_key = {p.key: p for p in points}
    line = sorted((by_key[k] for k in frontier if k in by_key), key=lambda p: p.median_ms)
    if len(line) > 1:
        path = " ".join(f"{x(p.median_ms):.1f},{y(p.found_10):.1f}" for p in line)
        out.append(f'<polyline class="frontier" points="{path}"/>')
    # points where they truly are, worst rank first so the best is drawn on top; the rank numbers and
    # the pick names go beside them where they cover nothing, with a thin line when they had to go further
    spots = [(x(p.median_ms), y(p.found_10)) for p in points]
    order = sorted(range(len(points)), key=lambda i: -points[i].rank)
    for i in order:
        p, (px, py) = points[i], spots[i]
        on_frontier = p.key in frontier
        tip = (f"#{p.rank} {p.key}: found@10 {p.found_10 * 100:.1f}%, median {_fmt_ms(p.median_ms)} ms"
               + (", on the frontier" if on_frontier else "") + "".join(f", {label}" for label in p.picks))
        out.append(f'<g class="point{" pick" if p.picks else ""}{" on-frontier" if on_frontier else ""}" '
                   f'data-key="{attr(p.key)}" data-rank="{p.rank}" data-found10="{p.found_10:.4f}" '
                   f'data-median-ms="{p.median_ms:g}">'
                   f'<title>{escape(tip)}</title>'
                   + (f'<circle class="ring" cx="{px:.1f}" cy="{py:.1f}" r="{RADIUS + 4}"/>' if p.picks else "")
                   + f'<circle cx="{px:.1f}" cy="{py:.1f}" r="{RADIUS}" fill="{method_colour(p.method)}"/></g>')
    box = (left, top, left + plot_w, top + plot_h)
    placer = _Labels(spots, box)
    by_rank = sorted(range(len(points)), key=lambda i: points[i].rank)
    for i in by_rank:
        placer.place(spots[i], str(points[i].rank), "rank-label", _RANK_CHAR_W, data_key=points[i].key)
    for i in by_rank:
        if points[i].picks and layout.pick_labels:
            placer.place(spots[i], " · ".join(points[i].picks), "pick-label", _PICK_CHAR_W, far=True)
    out += placer.drawn
    out.append("</svg>")
    return "".join(out)


RADIUS = 6.5
_RANK_CHAR_W = 7.0   # px per digit of an 11 px bold number (6.7 measured), rounded up
_PICK_CHAR_W = 6.9   # px per character of a 12 px semi-bold label (measured in Chromium: "finds the most" is 94 px)


class _Labels:
    """Places short labels beside points without covering a point, another label or the plot's edge.

    Each label tries spots around its point, nearest first (right, left, above, below, the diagonals),
    then the same further out; a label placed further than its neighbourhood gets a thin line to its
    point. When nothing fits, the label goes to its first spot anyway (a crowded chart still names every
    point; the table has the numbers)."""

    def __init__(self, points: list[tuple[float, float]], box: tuple[float, float, float, float]) -> None:
        self.box = box
        pad = RADIUS + 4.5  # a pick's ring
        self.taken = [(px - pad, py - pad, px + pad, py + pad) for px, py in points]
        self.drawn: list[str] = []

    def _fits(self, rect: tuple[float, float, float, float]) -> bool:
        x0, y0, x1, y1 = self.box
        inside = rect[0] >= x0 + 2 and rect[2] <= x1 - 2 and rect[1] >= y0 + 2 and rect[3] <= y1 - 2
        return inside and all(rect[2] <= a or rect[0] >= c or rect[3] <= b or rect[1] >= d for a, b, c, d in self.taken)

    def place(self, point: tuple[float, float], text: str, cls: str, char_w: float, *, far: bool = False,
              data_key: str | None = None) -> None:
        px, py = point
        w, h = len(text) * char_w, 12.0
        rings = (17, 32, 50, 72) if far else (13, 24, 38, 54)  # the first ring clears a pick's ring (11.5)
        tries = []
        for ring in rings:
            for dx, dy in ((1, 0), (-1, 0), (0, -1), (0, 1), (1, -1), (-1, -1), (1, 1), (-1, 1)):
                cx, cy = px + dx * (ring + w / 2 if dx else 0), py + dy * (ring + h / 2 - 2 if dy else 0)
                tries.append((cx, cy, ring))
        chosen = tries[0]
        gap = 4.0  # between two labels, so "3" and "21" never read as "321"
        for cx, cy, ring in tries:
            if self._fits((cx - w / 2 - gap, cy - h / 2, cx + w / 2 + gap, cy + h / 2)):
                chosen = (cx, cy, ring)
                break
        cx, cy, ring = chosen
        self.taken.append((cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2))
        if ring > rings[0]:
            # the line runs from the point's edge to the label's nearest edge
            lx = min(max(px, cx - w / 2), cx + w / 2)
            ly = min(max(py, cy - h / 2), cy + h / 2)
            self.drawn.append(f'<line class="leader" x1="{px:.1f}" y1="{py:.1f}" x2="{lx:.1f}" y2="{ly:.1f}"/>')
        key = f' data-key="{attr(data_key)}"' if data_key else ""
        self.drawn.append(f'<text class="{cls}"{key} x="{cx:.1f}" y="{cy + 4:.1f}" text-anchor="middle">'
                          f"{escape(text)}</text>")


def sparkline(values: Sequence[float | None], changes: Sequence[bool], *, floor: float = 0.0,
              width: int = 132, height: int = 30) -> str:
    """One setup's found@10 shares run by run (None: it did not run), with a dashed mark before each run
    whose index changed. The vertical range runs from ``floor`` to 100%: give every setup of one table
    the same floor, so their sparklines compare at a glance."""
    n = len(values)
    if n == 0:
        return ""
    pad = 4

    def x(i: int) -> float:
        return pad + (width - 2 * pad) * (i / (n - 1) if n > 1 else 0.5)

    def y(share: float) -> float:
        return pad + (height - 2 * pad) * (1 - (share - floor) / (1 - floor if floor < 1 else 1))

    out = [f'<svg class="spark" viewBox="0 0 {width} {height}" width="{width}" height="{height}" aria-hidden="true" '
           'xmlns="http://www.w3.org/2000/svg">']
    for i, changed in enumerate(changes):
        if changed and i > 0:
            cx = (x(i - 1) + x(i)) / 2
            out.append(f'<line class="index-change" x1="{cx:.1f}" x2="{cx:.1f}" y1="0" y2="{height}"/>')
    segment: list[str] = []
    for i, share in enumerate([*values, None]):
        if share is None:
            if len(segment) > 1:
                out.append(f'<polyline points="{" ".join(segment)}"/>')
            segment = []
            continue
        segment.append(f"{x(i):.1f},{y(share):.1f}")
    for i, share in enumerate(values):
        if share is not None:
            last = " last" if i == n - 1 else ""
            out.append(f'<circle class="dot{last}" cx="{x(i):.1f}" cy="{y(share):.1f}" r="{2.8 if last else 2}"/>')
    out.append("</svg>")
    return "".join(out)
