"""Run by run: each setup's found@10 over the runs on the same golden file, marked where an index changed;
the setup's column and this run's stay on screen at any width."""
from __future__ import annotations

import math

from ..numbers import number as _num, percent as _pct
from ..svg import attr, sparkline
from ..trend import index_changes
from .context import Page
from .format import esc, scroller, utc_time, wrappable_key


def run_by_run(page: Page) -> str:
    """The ``#history`` section: found@10 per setup and run, or a sentence when this is the only run."""
    points, ran = page.points, page.ran
    intro = '<section id="history"><h2>Run by run</h2>'
    if len(points) < 2:
        return (intro + '<p class="muted">This is the only run on this golden file in the store. When there are '
                "more, each setup's found@10 is shown here run by run, with a mark where an index changed."
                "</p></section>")
    changes = index_changes(points)
    keys = [s.key for s in ran]
    for point in points:
        keys += [k for k in point.get("found_10") or {} if k not in keys]
    # the setup, the trend, the runs oldest first: the setup and this run (last) stay on screen while the
    # earlier runs slide between them, so a phone shows this run's column without scrolling
    last = len(points) - 1
    head = ['<th class="key">setup</th><th>trend</th>']
    for i, (point, changed) in enumerate(zip(points, changes, strict=True)):
        stamp = utc_time(point.get("created_at")) or str(point.get("id") or "")
        day, _, clock = stamp.partition(" ")
        cls = f' class="num{" changed" if changed else ""}{" this-run" if i == last else ""}"'
        mark = (f'<br><span title="index changed: {attr(", ".join(changed))}">▲ index changed</span>'
                if changed else "")
        this = "this run<br>" if i == last else ""
        head.append(f'<th{cls} title="{attr(point.get("id", ""))}">{this}{esc(day)}<br>{esc(clock)}{mark}</th>')
    shares = [v for p in points for v in (p.get("found_10") or {}).values() if _num(v) is not None]
    floor = max(0.0, math.floor((min(shares, default=0.0) - 0.05) * 10) / 10)
    rows = []
    for key in keys:
        values = [_num((p.get("found_10") or {}).get(key)) for p in points]
        cells = []
        for i, (value, changed) in enumerate(zip(values, changes, strict=True)):
            before = values[i - 1] if i else None
            direction = ""
            if value is not None and before is not None and abs(value - before) > 1e-9:
                direction = " up" if value > before else " down"
            cls = f'num{" changed" if changed else ""}{direction}{" this-run" if i == last else ""}'
            cells.append(f'<td class="{cls}">{_pct(value)}</td>')
        rows.append(f'<tr data-key="{attr(key)}"><td class="key">{wrappable_key(key)}</td>'
                    f'<td>{sparkline(values, [bool(c) for c in changes], floor=floor)}</td>{"".join(cells)}</tr>')
    changed_any = any(changes)
    return (intro + f'<p class="muted">found@10 of each setup in the {len(points)} most recent runs on this golden '
            "file (oldest first; this run last). "
            + ("A dashed line marks a run whose index changed since the run before it. " if changed_any else
               "The indexes did not change between these runs. ")
            + f"Green went up, red went down; – means the setup did not run. Trend lines run from {floor:.0%} to 100%, "
            "oldest to newest. The setup and this run stay put while the earlier runs slide sideways.</p>"
            + scroller(f'<table class="trend"><thead><tr>{"".join(head)}</tr></thead><tbody>{"".join(rows)}</tbody>'
                       "</table>") + "</section>")
