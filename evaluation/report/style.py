"""The HTML report's stylesheet, inlined into every page (the page fetches nothing), and the head every
page this tool writes starts with, by which a page is told as ours (``HTML_PAGE``)."""
from __future__ import annotations

from typing import Sequence

from ..files import OutputKind

PAGE_HEAD = ("<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
             "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
             "<meta name=\"referrer\" content=\"no-referrer\">\n")

# What `report --out` and `matrix --report-html` write: a page this tool wrote is replaced by the new one;
# any other file there (a golden file, a corpus, somebody's own page) is not.
HTML_PAGE = OutputKind("HTML page", own=lambda head: head.startswith(PAGE_HEAD.encode("utf-8")), article="an",
                       example="report.html")

CSS = """
:root { --ink: #1d2330; --muted: #5b6474; --line: #d9dee7; --soft: #f4f6f9; --accent: #1f5fae;
        --warn-bg: #fff6e0; --warn-line: #e2b33c; --good: #0b7a4b; --bad: #b3261e; }
* { box-sizing: border-box; }
html { -webkit-text-size-adjust: 100%; }
body { margin: 0; color: var(--ink); background: #fff; font: 15px/1.5 system-ui, -apple-system, "Segoe UI",
       Roboto, "Helvetica Neue", Arial, sans-serif; }
main { max-width: 1180px; margin: 0 auto; padding: 20px 28px 48px; }
h1 { font-size: 26px; line-height: 1.25; margin: 6px 0 6px; }
h2 { font-size: 19px; margin: 34px 0 8px; padding-top: 6px; border-top: 1px solid var(--line); }
h3 { font-size: 15px; margin: 16px 0 6px; }
p { margin: 6px 0; }
a { color: var(--accent); }
code, .key { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: 0.92em; }
.muted { color: var(--muted); }
.small { font-size: 13px; }
.golden-line { color: var(--muted); margin: 2px 0 0; }
.golden-line strong { color: var(--ink); font-weight: 600; }
.note { border: 1px solid var(--line); border-left-width: 5px; border-radius: 6px; padding: 10px 14px;
        margin: 14px 0; background: var(--soft); }
.note.warn { background: var(--warn-bg); border-color: var(--warn-line); }
.note ul { margin: 4px 0 0; padding-left: 20px; }
.lead { font-size: 16px; max-width: 70em; }

.picks { display: grid; grid-template-columns: repeat(auto-fit, minmax(250px, 1fr)); gap: 14px; margin: 12px 0; }
.pick { border: 1px solid var(--line); border-radius: 10px; padding: 12px 16px 14px; background: #fff;
        box-shadow: 0 1px 2px rgba(20, 30, 50, .06); }
.pick h3 { margin: 0 0 4px; font-size: 13px; letter-spacing: .04em; text-transform: uppercase; color: var(--muted); }
.pick .setup { font-weight: 650; font-size: 16px; word-break: break-word; }
.pick .label { color: var(--muted); font-size: 13px; margin: 2px 0 8px; }
.pick .numbers { display: flex; gap: 22px; }
.pick .number b { display: block; font-size: 24px; line-height: 1.1; font-variant-numeric: tabular-nums; }
.pick .number span { color: var(--muted); font-size: 12px; }
.pick .rule { color: var(--muted); font-size: 12.5px; margin-top: 8px; }
.pick .extra { font-size: 12.5px; margin-top: 6px; }
.pick .versus { font-size: 13px; margin: 8px 0 0; }
.pick .tie { font-size: 12.5px; margin: 6px 0 0; }
td .vs { display: block; white-space: nowrap; font-size: 11px; font-weight: 400; color: #4b5563; }
td .vs .why { display: block; color: #6b7280; }
td .vs.real, td .vs.real .why { color: #9b1c1c; }

figure { margin: 8px 0 0; }
.chart-grid { display: grid; grid-template-columns: minmax(0, 820px) minmax(240px, 1fr); gap: 8px 24px;
              align-items: start; }
.chart-grid figcaption { grid-column: 1 / -1; }
.chart-grid.many { grid-template-columns: minmax(0, 900px); }
.chart-grid.many ol.chart-key { columns: 3 250px; column-gap: 28px; }
.chart-grid.many ol.chart-key li { break-inside: avoid; }
/* the key goes under the chart before it would squeeze the chart under its 820 px */
@media (max-width: 1139px) { .chart-grid { grid-template-columns: minmax(0, 900px); }
                             .chart-grid ol.chart-key { columns: 3 250px; column-gap: 28px; }
                             .chart-grid ol.chart-key li { break-inside: avoid; } }
.chart-wrap { container: chart / inline-size; }
.chart-wrap > .scroll { overflow-x: auto; }
/* the chart fills the width it is given, every point on screen; its text is 11 to 12.5 units, so each
   drawing shows only where it is at least as wide as drawn (text 11 px or more): the wide one from 820 px,
   the narrow one (a phone's, 340 units) below that */
svg.chart { width: 100%; max-width: 100%; height: auto; display: block; }
svg.chart.narrow { display: none; max-width: 520px; }
@container chart (width < 820px) { svg.chart.wide { display: none; } svg.chart.narrow { display: block; } }
ol.chart-key { margin: 10px 0 0; padding-left: 28px; font-size: 13px; }
ol.chart-key li { margin: 0 0 7px; }
ol.chart-key li::marker { font-weight: 700; color: var(--muted); }
ol.chart-key .key { font-size: 12.5px; }
ol.chart-key .numbers { display: block; color: var(--muted); font-size: 12px; padding-left: 16px; }
svg.chart .plot { fill: #fbfcfd; stroke: var(--line); }
svg.chart .grid { stroke: #e6e9ef; stroke-width: 1; }
svg.chart .grid.major { stroke: #cfd5df; }
svg.chart .tick { fill: var(--muted); font-size: 11px; }
svg.chart .axis { fill: var(--ink); font-size: 12.5px; }
svg.chart .frontier { fill: none; stroke: #38404f; stroke-width: 1.6; stroke-dasharray: 5 4; }
svg.chart .point circle { stroke: #fff; stroke-width: 1.5; }
svg.chart .leader { stroke: #6b7383; stroke-width: 0.8; }
svg.chart .rank-label { fill: var(--ink); font-size: 11px; font-weight: 700; paint-order: stroke; stroke: #fff;
                        stroke-width: 3px; }
svg.chart .point .ring { fill: none; stroke: #1d2330; stroke-width: 2; }
svg.chart .point:hover circle { stroke: #1d2330; }
svg.chart .point circle:not(.ring) { fill-opacity: .88; }
svg.chart .pick-label { fill: var(--ink); font-size: 12px; font-weight: 600; paint-order: stroke;
                        stroke: #fff; stroke-width: 3px; }
figcaption { font-size: 13px; color: var(--muted); margin-top: 4px; }
figure.build-chart { max-width: 640px; }  /* drawn at most as wide as its units: its words stay by its axes */
figure.build-chart .axis-words { margin: 2px 0; }
figure.build-chart .axis-words:last-of-type { text-align: center; }
.named-pick code { font-weight: 650; }
tr.picked td { background: #eef3fb; }
.legend { display: flex; flex-wrap: wrap; gap: 6px 16px; margin: 6px 0 0; padding: 0; list-style: none;
          font-size: 13px; color: var(--muted); }
.legend li { display: flex; align-items: center; gap: 6px; }
.swatch { display: inline-block; width: 12px; height: 12px; border-radius: 50%; }
.swatch.line { width: 22px; height: 0; border-radius: 0; border-top: 2px dashed #38404f; }
.swatch.ring { background: #fff; border: 2px solid #1d2330; }

.table-wrap { overflow-x: auto; border: 1px solid var(--line); border-radius: 8px; }
/* a table wider than its frame says so above it (format.scroller): shown by a scroll timeline, which is
   active only while its frame can scroll; a browser without scroll timelines shows it on narrow screens */
.table-scroll { timeline-scope: --table-x; }
.table-scroll > .table-wrap { scroll-timeline: --table-x inline; }
.scroll-hint { margin: 0; max-height: 0; overflow: hidden; visibility: hidden; font-size: 13px; color: var(--muted);
               text-align: right; }
@supports (animation-timeline: scroll()) {
  .scroll-hint { animation: scroll-hint-shown linear both; animation-timeline: --table-x; }
}
@supports not (animation-timeline: scroll()) {
  @media (max-width: 900px) { .scroll-hint { max-height: 4em; margin: 0 0 4px; visibility: visible; } }
}
@keyframes scroll-hint-shown { from, to { max-height: 4em; margin: 0 0 4px; visibility: visible; } }
table { border-collapse: collapse; width: 100%; font-size: 14px; }
th, td { padding: 6px 10px; text-align: left; vertical-align: top; border-bottom: 1px solid #eceff4; }
thead th { background: var(--soft); font-size: 12.5px; color: var(--muted); font-weight: 600;
           white-space: nowrap; position: sticky; top: 0; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
tbody tr:hover { background: #f7f9fc; }
tr.failed td { color: var(--bad); }
td.setup .key { font-weight: 600; }
td.setup .label { display: block; color: var(--muted); font-size: 12.5px; }
.badge { display: inline-block; font-size: 11px; font-weight: 600; padding: 0 6px; border-radius: 9px;
         margin-left: 4px; background: #e7effa; color: var(--accent); white-space: nowrap; }
.badge.frontier { background: #eceff3; color: #38404f; }
.dot { display: inline-block; width: 10px; height: 10px; border-radius: 50%; margin-right: 6px;
       vertical-align: 0; }
td.main, th.main { background: #eef3fb; font-weight: 650; }
/* the setup column stays put while the rest slides: sticky, with a background to hide what passes under */
table.ranked th.setup, table.ranked td.setup { position: sticky; left: 0; z-index: 1; background: #fff;
                                               min-width: 240px; max-width: 330px; box-shadow: 1px 0 0 #eceff4; }
table.ranked thead th.setup { background: var(--soft); z-index: 2; }
table.ranked td.setup .key { word-break: break-word; }
table.ranked th, table.ranked td { padding: 6px 8px; }
td .count { display: block; font-size: 11px; font-weight: 400; color: #4b5563; }
@media (max-width: 600px) {
  main { padding: 14px 10px 40px; }
  table.ranked th.rank, table.ranked td.rank { display: none; }
  table.ranked th.setup, table.ranked td.setup { min-width: 0; width: 44vw; max-width: 44vw; font-size: 12.5px; }
  table.ranked td.setup .key { word-break: break-all; }
  table.ranked td.setup .label, table.ranked td.setup .badges { font-size: 11px; }
  .picks { grid-template-columns: minmax(0, 1fr); }
  .pick .numbers { gap: 14px; }
}
td.setup a.key, .chart-key a.key, details a.key { text-decoration: none; }
td.setup a.key:hover, .chart-key a.key:hover, details a.key:hover { text-decoration: underline; }
td.setup .badges { display: block; margin-top: 2px; }
td.setup .badges .badge:first-child { margin-left: 0; }

.trend td.num { min-width: 54px; }
/* the setup stays put on the left and this run on the right while the earlier runs slide between them */
table.trend th.key, table.trend td.key { position: sticky; left: 0; z-index: 1; background: #fff;
                                         box-shadow: 1px 0 0 #eceff4; }
table.trend th.this-run, table.trend td.this-run { position: sticky; right: 0; z-index: 1; background: #eef3fb;
                                                   box-shadow: -1px 0 0 var(--line); }
table.trend thead th.key, table.trend thead th.this-run { z-index: 2; }
table.trend thead th.key { background: var(--soft); }
@media (max-width: 600px) {
  table.trend th.key, table.trend td.key { min-width: 34vw; max-width: 40vw; font-size: 12.5px; }
  table.trend svg.spark { width: 84px; height: auto; }  /* beside this run's column on a 400 px screen */
}
.trend th.changed, .trend td.changed { border-left: 2px dashed var(--warn-line); }
.trend .up { color: var(--good); }
.trend .down { color: var(--bad); }
svg.spark polyline { fill: none; stroke: var(--accent); stroke-width: 1.6; }
svg.spark .dot { fill: var(--accent); }
svg.spark .index-change { stroke: var(--warn-line); stroke-width: 1.5; stroke-dasharray: 3 2; }

details.setup { border: 1px solid var(--line); border-radius: 8px; margin: 8px 0; background: #fff; }
details.setup > summary { cursor: pointer; padding: 8px 12px; list-style-position: inside; }
details.setup > summary .key { font-weight: 600; }
details.setup[open] > summary { border-bottom: 1px solid var(--line); background: var(--soft); }
details.setup .body { padding: 6px 14px 12px; display: grid; grid-template-columns: repeat(auto-fit, minmax(300px, 1fr));
                      gap: 4px 28px; }
.landed { display: flex; height: 18px; border-radius: 4px; overflow: hidden; margin: 6px 0 4px; background: #eee; }
.landed span { display: block; height: 100%; }
.landed-keys { display: flex; flex-wrap: wrap; gap: 2px 12px; font-size: 12.5px; color: var(--muted); }
dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: 2px 12px; margin: 4px 0; font-size: 13.5px; }
dl.facts dt { color: var(--muted); }
dl.facts dd { margin: 0; font-variant-numeric: tabular-nums; word-break: break-word; }
ul.plain { margin: 4px 0; padding-left: 18px; font-size: 13.5px; }
.qtext { color: var(--muted); }
td.expected { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: 12px; }

dl.glossary { display: grid; grid-template-columns: minmax(120px, max-content) 1fr; gap: 6px 18px; }
dl.glossary dt { font-weight: 600; }
dl.glossary dd { margin: 0; }
footer { margin-top: 40px; color: var(--muted); font-size: 12.5px; }

.page-nav { background: #17233a; color: #e8edf6; font-size: 14px; }
.page-nav .inner { max-width: 1180px; margin: 0 auto; padding: 9px 28px; display: flex; flex-wrap: wrap;
                   gap: 6px 22px; align-items: baseline; }
.page-nav a { color: #bcd4ff; }
.page-nav .title { font-weight: 700; color: #fff; }
.page-nav .who { margin-left: auto; color: #aab6c8; font-size: 13px; }
.page-nav details.menu summary { cursor: pointer; color: #bcd4ff; }
.page-nav details.menu[open] { flex-basis: 100%; order: 5; }
.page-nav details.menu ol { margin: 8px 0 4px; padding: 8px 14px 8px 40px; background: #fff; color: var(--ink);
                            border-radius: 8px; line-height: 1.9; columns: 3 280px; column-gap: 36px; }
.page-nav details.menu ol a { color: var(--accent); }
.page-nav details.menu ol a[aria-current] { font-weight: 700; color: var(--ink); }
.page-nav details.menu li.pager { list-style: none; margin-left: -26px; column-span: all; font-size: 13px;
                                  color: var(--muted); border-top: 1px solid var(--line); padding-top: 2px; }
.page-nav .older { background: #fff3cd; color: #4d3b00; }
.page-nav .older .inner { display: block; }
.page-nav .older a { color: #1f4f99; font-weight: 600; }
@media print { .page-nav { display: none; } details.setup { break-inside: avoid; } thead th { position: static; } }
"""  # noqa: E501 - the stylesheet is the page's bytes (the saved page fixture compares them)

# A page with two or more tabs: a bar of tabs, one tab shown at a time. No script: the tab the address names
# (``#tab-<name>``, or anything inside it, such as a setup's anchor) is shown, the first when it names none.
# Without ``:has`` (an old browser) or in print every tab shows, stacked, each under its own title.
_TABS_CSS = """
nav.tabs { margin: 22px 0 0; border-bottom: 1px solid var(--line); }
nav.tabs ul.plain { display: flex; flex-wrap: wrap; gap: 4px; margin: 0; padding: 0; list-style: none; font-size: 15px; }
nav.tabs a { display: block; padding: 8px 20px; margin-bottom: -1px; border: 1px solid transparent;
             border-bottom: none; border-radius: 8px 8px 0 0; color: var(--muted); font-weight: 600;
             text-decoration: none; }
nav.tabs a:hover { color: var(--ink); background: var(--soft); }
section.tab > h2.tab-title { font-size: 13px; letter-spacing: .04em; text-transform: uppercase; color: var(--muted);
                             border-top: none; margin: 14px 0 0; }
section.tab > h2.tab-title + * > h2:first-child { border-top: none; margin-top: 22px; }  /* the bar is its line */
@supports selector(:has(a)) {
  section.tab > h2.tab-title { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); }
  main:has(section.tab:target, section.tab :target) section.tab:not(:target):not(:has(:target)) { display: none; }
  main:not(:has(section.tab:target, section.tab :target)) section.tab ~ section.tab { display: none; }
  main:not(:has(section.tab:target, section.tab :target)) nav.tabs li:first-child a { CURRENT }
}
@media print { section.tab { display: block !important; } nav.tabs { display: none; } }
"""  # noqa: E501 - the stylesheet is the page's bytes (the saved page fixture compares them)
_CURRENT = "color: var(--ink); background: #fff; border-color: var(--line);"


def tabs_css(names: Sequence[str]) -> str:
    """The CSS a page with the tabs ``names`` adds to ``CSS`` (a page with one tab adds none): the bar, one
    tab at a time, and the link of the tab on screen drawn as the open tab."""
    current = "".join(f'\n  main:has(#tab-{n}:target, #tab-{n} :target) nav.tabs a[href="#tab-{n}"] {{ {_CURRENT} }}'
                      for n in names)
    return _TABS_CSS.replace("{ CURRENT }\n}", "{ " + _CURRENT + " }" + current + "\n}")


def whole_page(title_html: str, body_html: str, css: str = CSS) -> str:
    """Every page this tool writes, around ``body_html``: ``PAGE_HEAD`` (charset, viewport, no referrer),
    ``title_html`` (escaped already) as its title, ``css`` inline. Nothing is fetched, no script runs."""
    return (PAGE_HEAD + f"<title>{title_html}</title>\n<style>{css}</style>\n</head>\n<body>\n<main>\n" + body_html
            + "\n</main>\n</body>\n</html>\n")


def standalone_page(title_html: str, body_html: str) -> str:
    """A page of its own around ``body_html`` (a kept chunking, sweep or matrix run's, an app's error page):
    ``whole_page`` with ``title_html`` as its first heading too."""
    return whole_page(title_html, f"<h1>{title_html}</h1>\n" + body_html)
