"""The report as one self-contained HTML page: what people look at to choose a way of searching.

``render_html(report, history=..., questions=...)`` returns the whole page as text: inline CSS, inline
SVG charts, no script, nothing fetched (no font, no image, no CDN), so it opens from a file, a mail
attachment or the Function App alike, and every part reads without JavaScript.

What it shows, top to bottom: the golden data and collection; the expected documents an index no
longer holds (the same sentences ``evaluate`` warns with); the three picks; found@10 against median
time for every setup (frontier joined, time on a log axis); every setup ranked; the history of runs
on the same golden file (found@10 run by run, marks where an index changed); each setup's detail;
the questions most setups miss; what each number means.

Question text is never taken from the report. A page shows question ids, and text only when the
caller passes ``questions`` (id -> text, see ``golden.texts.question_texts``), which it may do only for a viewer
allowed to read the golden file: the ``report.html`` kept beside a run holds ids alone, because anyone
who may read runs may read it. The renderer reads what is present and skips what is absent, so
reports from older and newer versions (recall per k, significance, other engines) render.
"""
from __future__ import annotations

import json
import math
import re
from html import escape
from typing import Any, Iterable, Mapping, Sequence

from ..golden.texts import question_texts  # noqa: F401  (the page's callers import it from here)
from ..measures import CUTOFFS, FOUND, FOUND_10, MRR, NDCG_10
from ..scoring.metrics import LANDED
from .notes import cache_note, found_gap_words, missing_note
from .numbers import milliseconds as _ms, number as _num, percent as _pct, score as _score
from .style import CSS
from .svg import METHOD_COLOURS, ChartPoint, attr, method_colour, scatter, sparkline
from .trend import index_changes, trend_point

PICKS = (("finds_the_most", "Finds the most", "finds the most"),
         ("best_for_balance", "Best for balance", "best for balance"),
         ("best_for_time", "Best for time", "best for time"))
METHOD_NAMES = {"keyword": "keyword (BM25)", "keyword_documents": "keyword (BM25, fused with the document's)",
                "keyword_semantic": "keyword + semantic ranker",
                "dense": "dense (vectors)", "hybrid": "hybrid (BM25 + vectors, RRF)",
                "hybrid_semantic": "hybrid + semantic ranker", "hybrid_reranked": "hybrid + cross-encoder",
                "hybrid_colbert": "hybrid + ColBERT"}
LANDED_COLOURS = ("#0b7a4b", "#4fa67a", "#9ccc9c", "#e2c04f", "#e08a3c", "#c9463d")
# Setup keys the page reads itself; any other key a newer report adds is shown in the setup's detail.
_KNOWN_SETUP_KEYS = {"key", "target", "engine", "method", "method_label", "retrieval", "models", "ranker",
                     "options", "ranks", "results", "times_ms", "error", "summary", "rank", "neighbours",
                     "requests", "retries", "versus_top", "ndcg_10", "cache"}
_KNOWN_SUMMARY_KEYS = {"questions", "timed", "counts", "found", "mrr", "ndcg_10", "landed", "median_ms",
                       "p95_ms", "recall", "median_margin"}
_SURROGATE = re.compile("[\ud800-\udfff]")


# -- small helpers ---------------------------------------------------------------------------------

def _t(value: Any) -> str:
    """Text for the page: escaped, and a lone surrogate (from a JSON escape) shown as U+FFFD."""
    return escape(_SURROGATE.sub("\ufffd", str(value)), quote=True)


def _pick_key(value: Any) -> str | None:
    """A pick is a setup key, or (in newer reports) an object naming one under ``key`` or ``setup``."""
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        key = value.get("key") or value.get("setup")
        return key if isinstance(key, str) else None
    return None


def _summary(setup: dict[str, Any]) -> dict[str, Any] | None:
    summary = setup.get("summary")
    return summary if isinstance(summary, dict) and not setup.get("error") else None


def _found(summary: dict[str, Any], k: int | str) -> float | None:
    return _num((summary.get("found") or {}).get(str(k)))


def _count(summary: dict[str, Any], k: int | str) -> int | None:
    value = (summary.get("counts") or {}).get(str(k))
    return value if isinstance(value, int) else None


def _plain(value: Any, limit: int = 160) -> str:
    """A value a newer report added, as short readable text."""
    if isinstance(value, float):
        text = f"{value:.4g}"
    elif isinstance(value, (str, int, bool)) or value is None:
        text = "–" if value is None else str(value)
    else:
        text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _when(stamp: Any) -> str:
    """``2026-11-30T17:09:20.138Z`` as ``2026-11-30 17:09:20 UTC``; anything else as it is."""
    match = re.fullmatch(r"(\d{4}-\d{2}-\d{2})T(\d{2}:\d{2})(:\d{2})?(\.\d+)?(Z|\+00:00)", str(stamp or ""))
    return f"{match.group(1)} {match.group(2)}{match.group(3) or ''} UTC" if match else str(stamp or "")


def _key(key: str) -> str:
    """A setup key for the page, allowed to wrap after each "." and "+" (never inside a model's name)."""
    return _t(key).replace(".", ".<wbr>").replace("+", "+<wbr>")


def _words(name: str) -> str:
    return name.replace("_", " ")


# -- the page --------------------------------------------------------------------------------------

def render_html(report: dict[str, Any], *, history: Sequence[dict[str, Any]] | None = None,
                questions: Mapping[str, str] | None = None) -> str:
    """The whole page for ``report``.

    ``history``: trend points of the runs on the same golden file, oldest first, this run last (see
    ``trend.collect_trend``); without it the page has this run alone. ``questions``: id -> text, for a
    viewer allowed to read the golden file; without it the page names questions by id only.
    """
    setups = [s for s in report.get("setups") or [] if isinstance(s, dict) and "key" in s]
    ran = sorted((s for s in setups if _summary(s) is not None),
                 key=lambda s: (s.get("rank") is None, s.get("rank") or 0, s["key"]))
    failed = [s for s in setups if _summary(s) is None]
    picks = _picks_by_key(report)
    collection = _collection_name(report)
    points = list(history) if history else [trend_point(report)]
    if isinstance(report.get("refused"), dict):  # the run never started: say why, and nothing else
        parts = [_header(report, collection, refused=True), _refused(report["refused"]), _footer(report)]
    else:
        parts = [
            _header(report, collection),
            _unreachable(report),
            _missing(report),
            _picks(report, setups),
            _left_out(report),
            _chart(report, ran, picks),
            _table(report, ran, failed, picks),
            _trend(points, ran),
            _details(report, setups, questions),
            _hard_questions(report, ran, questions),
            _glossary(report, ran),
            _footer(report),
        ]
    title = f"Retrieval evaluation · {collection} · {report.get('id', '')}"
    return ("<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
            "<meta name=\"referrer\" content=\"no-referrer\">\n"
            f"<title>{_t(title)}</title>\n<style>{CSS}</style>\n</head>\n<body>\n<main>\n"
            + "\n".join(p for p in parts if p) + "\n</main>\n</body>\n</html>\n")


def with_banner(page: str, banner: str) -> str:
    """``page`` with ``banner`` (trusted HTML, e.g. a site's menu) placed first in its body."""
    return page.replace("<body>\n", "<body>\n" + banner + "\n", 1) if "<body>\n" in page else banner + page


def _collection_name(report: dict[str, Any]) -> str:
    names = [str(c) for c in report.get("collections") or []]
    return ", ".join(names) if names else "this collection"


def _picks_by_key(report: dict[str, Any]) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for name, _label, words in PICKS:
        key = _pick_key((report.get("picks") or {}).get(name))
        if key:
            found.setdefault(key, []).append(words)
    return found


def _sentence(text: str) -> str:
    text = text.strip()
    return (text[:1].upper() + text[1:]).rstrip(".") + "."


def _refused(refused: dict[str, Any]) -> str:
    """Why a run never started (``report["refused"]``): its reason and the golden file's errors by line."""
    errors = [e for e in refused.get("errors") or [] if isinstance(e, dict)]
    listed = "".join(f"<li>{'line ' + _t(e.get('line')) + ': ' if e.get('line') is not None else ''}"
                     f"{_t(e.get('message'))}</li>" for e in errors)
    return ('<section class="note warn" id="refused"><strong>This run never started.</strong> '
            f"{_t(_sentence(str(refused.get('reason') or 'no reason was kept')))}"
            + (f"<ul>{listed}</ul>" if listed else "")
            + '<p class="muted">No setup was searched and nothing is picked. Fix the golden file and save it '
              "again; its new version starts a new run.</p></section>")


def _header(report: dict[str, Any], collection: str, *, refused: bool = False) -> str:
    golden = report.get("golden") or {}
    total, labelled = golden.get("questions"), golden.get("labelled")
    counted = f"{labelled} labelled question{'s' if labelled != 1 else ''}" if labelled is not None else "questions"
    if isinstance(total, int) and isinstance(labelled, int) and total != labelled:
        counted += f" of {total}"
    extra = [f"{golden[name]} {_words(name)}" for name in ("unfilled", "drafts")
             if isinstance(golden.get(name), int) and golden[name]]
    sha = str(golden.get("sha256") or "")
    line = (f'Golden data: <strong>{_t(counted)}</strong>{(" (" + _t(", ".join(extra)) + ")") if extra else ""} '
            f'from <code>{_t(golden.get("source", "?"))}</code>, sha256 <code title="{attr(sha)}">{_t(sha[:12])}…</code>'
            f' · collection <strong>{_t(collection)}</strong>')
    when = report.get("created_at")
    run_line = (f'Run <code>{_t(report.get("id", "?"))}</code>' + (f" at {_t(_when(when))}" if when else "")
                + f' · judged by <strong>{_t(report.get("by", "doc"))}</strong>'
                + (f', {_t(report["depth"])} results deep' if report.get("depth") else ""))
    problems = golden.get("problems") or []
    problem_note = ""
    if problems and not refused:  # a refused run lists the same errors as why it never started
        problem_note = (f'<div class="note warn"><strong>{len(problems)} row(s) of the golden file could not be '
                        "read and were left out of this run:</strong><ul>"
                        + "".join(f"<li>line {_t(p.get('line'))}: {_t(p.get('message'))}</li>"
                                  for p in problems[:20] if isinstance(p, dict)) + "</ul></div>")
    return (f'<header><h1>Which way of searching should <span class="key">{_t(collection)}</span> use?</h1>'
            f'<p class="golden-line">{line}</p><p class="golden-line">{run_line}</p></header>{problem_note}')


def _unreachable(report: dict[str, Any]) -> str:
    """A target that could not be reached, said before anything else: its setups failed, the others ran."""
    from ..unreachable import unreachable_notes

    notes = unreachable_notes(report)
    if not notes:
        return ""
    return ('<section class="note warn" id="unreachable"><ul>' + "".join(f"<li>{_t(n)}</li>" for n in notes)
            + "</ul></section>")


def _missing(report: dict[str, Any]) -> str:
    missing = {t: g for t, g in (report.get("missing") or {}).items() if isinstance(g, dict)}
    if not missing:
        return ""
    items = []
    for target, gone in sorted(missing.items()):
        items.append(f'<li data-target="{attr(target)}">{_t(missing_note(target, gone, limit=None))}</li>')
    return ('<section class="note warn" id="missing"><strong>Expected documents the index does not hold.</strong> '
            "Their questions stay in the run and cannot be found there, so every setup loses them alike:"
            f"<ul>{''.join(items)}</ul></section>")


def _left_out(report: dict[str, Any]) -> str:
    """What a target's index cannot do, so a setup absent from the table is never a silent absence."""
    items = []
    for name, described in sorted((report.get("targets") or {}).items()):
        for item in (described.get("left_out") or []) if isinstance(described, dict) else []:
            if isinstance(item, dict):
                items.append(f"<li>on <strong>{_t(name)}</strong>: {_t(item.get('what', '?'))} "
                             f"({_t(item.get('reason', 'no reason given'))})</li>")
    if not items:
        return ""
    return ('<section class="note" id="left-out"><strong>Setups left out</strong> because the index cannot do '
            f"them:<ul>{''.join(items)}</ul></section>")


def _cache(report: dict[str, Any]) -> str:
    """How much of the run's batch work came from earlier runs (reports made without a cache: nothing)."""
    cache = report.get("cache")
    if not isinstance(cache, dict) or not all(isinstance(v, int) for v in cache.values()):
        return ""
    return f'<p class="note" id="cache">{_t(cache_note(cache))}</p>'


def _picks(report: dict[str, Any], setups: list[dict[str, Any]]) -> str:
    by_key = {s["key"]: s for s in setups}
    rules = report.get("rules") or {}
    rule_words = {
        "finds_the_most": "The setup with the most questions found in the top 10 (then found@1, then time).",
        "best_for_balance": f"The fastest setup within {_plain(rules.get('balance_points', 4))} points of the most found "
                            "(setups tied on time count as equally fast).",
        "best_for_time": f"The fastest setup within {_plain(rules.get('time_points', 8))} points of the most found "
                         "(setups tied on time count as equally fast).",
    }
    top_key = _pick_key((report.get("picks") or {}).get("finds_the_most"))
    top_summary = _summary(by_key[top_key]) if top_key in by_key else None
    cards = []
    for name, label, _words_ in PICKS:
        value = (report.get("picks") or {}).get(name)
        key = _pick_key(value)
        setup = by_key.get(key) if key else None
        summary = _summary(setup) if setup else None
        if summary is None:
            cards.append(f'<article class="pick" data-pick="{name}"><h3>{label}</h3>'
                         '<div class="setup">none</div><p class="rule">No setup ran.</p></article>')
            continue
        questions = summary.get("questions")
        count = _count(summary, 10)
        extra = ""
        if isinstance(value, dict):
            notes = {k: v for k, v in value.items() if k not in ("key", "setup")}
            extra = "".join(f'<p class="extra"><strong>{_t(_words(k))}:</strong> {_t(_plain(v))}</p>'
                            for k, v in notes.items())
        versus = (_versus(summary, top_summary, name) + _time_tie_note(report, name, key)
                  + _tie_note((report.get("ties") or {}).get(name), report))
        cards.append(
            f'<article class="pick" data-pick="{name}" data-key="{attr(key)}"><h3>{label}</h3>'
            f'<div class="setup key">{_t(key)}</div><div class="label">{_t(setup.get("method_label", ""))}</div>'
            '<div class="numbers">'
            f'<div class="number"><b>{_pct(_found(summary, 10), questions)}</b><span>found@10'
            + (f" · {count} of {questions}" if count is not None and questions else "") + "</span></div>"
            f'<div class="number"><b>{_ms(summary.get("median_ms"))}<small> ms</small></b><span>median search time</span></div>'
            f'</div>{versus}<p class="rule">{rule_words[name]}</p>{extra}</article>')
    return ('<section id="picks"><h2>The picks</h2><p class="muted">Nothing is switched: a person chooses. '
            "The three picks follow fixed rules; the chart and the table below show every other setup.</p>"
            f'<div class="picks">{"".join(cards)}</div></section>')


def _versus(summary: dict[str, Any], top: dict[str, Any] | None, name: str) -> str:
    """How a faster pick compares with ``finds_the_most``: questions given up, times faster."""
    if top is None or name == "finds_the_most" or summary is top:
        return ""
    mine, most = _count(summary, 10), _count(top, 10)
    t_mine, t_top = _num(summary.get("median_ms")), _num(top.get("median_ms"))
    words = []
    if mine is not None and most is not None:
        words.append("finds as many" if mine == most else
                     f"{most - mine} question{'s' if most - mine != 1 else ''} fewer found")
    if t_mine and t_top:
        ratio = t_top / t_mine
        words.append(f"{ratio:,.0f}× faster" if ratio >= 10 else f"{ratio:.1f}× faster" if ratio >= 1.05
                     else "about as fast")
    if not words:
        return ""
    return f'<p class="versus">Against finds the most: <strong>{_t(", ".join(words))}</strong>.</p>'


def _time_tie_note(report: dict[str, Any], name: str, key: str) -> str:
    """The setups a pick is tied with on time (``report["ties_on_time"][pick]``), "" when none."""
    tier = (report.get("ties_on_time") or {}).get(name)
    tied = [k for k in tier if isinstance(k, str) and k != key] if isinstance(tier, list) else []
    if not tied:
        return ""
    named = ", ".join(f'<strong class="key">{_t(k)}</strong>' for k in tied)
    return (f'<p class="tie time">Tied on time with {named}: their medians’ 99% intervals overlap, so this '
            "one was chosen among them by found@10, then found@1, then key.</p>")


def _tie_note(tie: Any, report: dict[str, Any]) -> str:
    """What the paired test says of the fastest faster setup it cannot tell from the pick
    (``report["ties"][pick]``): that the questions are too few to tell, never that it finds as many."""
    if not isinstance(tie, dict):
        return ""
    alpha = _plain((report.get("significance") or {}).get("alpha", 0.05))
    rows = [r for r in tie.get("faster") or [] if isinstance(r, dict)]
    keys = [r.get("key") if isinstance(r, dict) else r for r in tie.get("faster") or []]
    if tie.get("tied") and tie.get("with"):
        others = [k for k in keys if isinstance(k, str) and k != tie["with"]
                  and any(isinstance(r, dict) and r.get("key") == k and r.get("tied") for r in rows)]
        more = f" (also {', '.join(others)})" if others else ""
        row = next((r for r in rows if r.get("key") == tie["with"]), None)
        questions = len(report.get("question_ids") or []) or None
        words = (found_gap_words(row, questions) if row is not None else
                 f"the paired test on found@10 cannot tell them apart at {alpha}: too few questions to tell")
        return (f'<p class="tie">Faster <strong class="key">{_t(tie["with"])}</strong>{_t(more)}: '
                f"{_t(words)}.</p>")
    if keys:
        return f'<p class="tie muted">Every faster setup finds significantly less (paired test at {_t(alpha)}).</p>'
    return '<p class="tie muted">No setup is faster.</p>'


def _versus_top(setup: dict[str, Any]) -> str:
    """Under a setup's found@10: the difference to the top in questions, the Holm-corrected p of the
    paired test, and whether it is real or too few questions to tell (``setup["versus_top"]``); "" when
    not compared."""
    versus = setup.get("versus_top")
    if setup.get("rank") == 1:
        return '<span class="vs top">the top</span>'
    found = versus.get("found@10") if isinstance(versus, dict) else None
    if not isinstance(found, dict):
        return ""
    delta = (found.get("better") or 0) - (found.get("worse") or 0)
    p = _num(found.get("p_holm", found.get("p")))
    title = "; ".join(f"{name} {_plain(v.get('difference'))} [{', '.join(_plain(x) for x in v.get('interval') or [])}]"
                      for name, v in versus.items() if isinstance(v, dict) and "difference" in v)
    noise = bool(versus.get("tied"))
    words = f"{delta:+d} q" + (f", p {p:.2f}" if p is not None else "")
    return (f'<span class="vs {"noise" if noise else "real"}" title="{attr(title)}">{_t(words)}'
            f'<span class="why">{("same found@10" if delta == 0 else "too few to tell") if noise else "a real difference"}'
            "</span></span>")


def _chart(report: dict[str, Any], ran: list[dict[str, Any]], picks: dict[str, list[str]]) -> str:
    points, undrawn = [], []
    for setup in ran:
        summary = _summary(setup)
        found, time_ms = _found(summary, 10), _num(summary.get("median_ms"))
        if found is None or time_ms is None or time_ms <= 0 or not isinstance(setup.get("rank"), int):
            undrawn.append(setup["key"])
            continue
        points.append(ChartPoint(key=setup["key"], rank=setup["rank"], found_10=found, median_ms=time_ms,
                                 method=setup.get("method"), picks=tuple(picks.get(setup["key"], ()))))
    note = (f'<p class="muted small">Not drawn (no timed search): {", ".join(_t(k) for k in undrawn)}.</p>'
            if undrawn else "")
    if not points:
        return ('<section id="chart"><h2>Found against time</h2><p class="muted">No setup has both found@10 and a '
                f"timed search, so there is nothing to draw.</p>{note}</section>")
    frontier = [k for k in report.get("frontier") or [] if isinstance(k, str)]
    methods = sorted({p.method for p in points if p.method}, key=lambda m: list(METHOD_COLOURS).index(m)
                     if m in METHOD_COLOURS else 99)
    legend = "".join(f'<li><span class="swatch" style="background:{method_colour(m)}"></span>'
                     f"{_t(METHOD_NAMES.get(m, m))}</li>" for m in methods)
    drawn_frontier = [k for k in frontier if any(p.key == k for p in points)]
    if len(drawn_frontier) > 1:
        legend += '<li><span class="swatch line"></span>frontier: nothing is both faster and finds more</li>'
    legend += '<li><span class="swatch ring"></span>a pick</li>'
    key_list = "".join(
        f'<li value="{p.rank}" data-key="{attr(p.key)}"><span class="dot" style="background:{method_colour(p.method)}">'
        f'</span><a class="key" href="#setup-{attr(p.key)}">{_key(p.key)}</a>'
        f'<span class="numbers">found@10 {_pct(p.found_10)} · median {_ms(p.median_ms)} ms</span></li>'
        for p in sorted(points, key=lambda p: p.rank))
    frontier_words = ""
    if len(drawn_frontier) == 1:
        frontier_words = (f" The frontier is one setup, {_t(drawn_frontier[0])}: every other setup is slower "
                          "and finds no more.")
    return ('<section id="chart"><h2>Found against time</h2>'
            '<p class="muted">Each point is a setup, numbered by its rank in the table and coloured by its method. '
            "Up is more questions found in the top 10; left is faster. Points up and to the left are the ones "
            "worth a look.</p>"
            f'<figure class="chart-grid{" many" if len(points) > 10 else ""}"><div class="chart-wrap"><div class="scroll">{scatter(points, frontier)}</div>'
            f'<ul class="legend">{legend}</ul></div>'
            f'<ol class="chart-key">{key_list}</ol>'
            "<figcaption>Time is the median of searches made one at a time, as a caller would. Every point is "
            "where its numbers put it; where points crowd, their numbers sit a little away with a thin line "
            "to the point, and the table has the exact numbers."
            f"{frontier_words}</figcaption></figure>{note}</section>")


def _has_recall(ran: Iterable[dict[str, Any]]) -> bool:
    return any(isinstance((_summary(s) or {}).get("recall"), dict) for s in ran)


def _table(report: dict[str, Any], ran: list[dict[str, Any]], failed: list[dict[str, Any]],
           picks: dict[str, list[str]]) -> str:
    frontier = set(k for k in report.get("frontier") or [] if isinstance(k, str))
    recall = _has_recall(ran)
    versus = any("versus_top" in s for s in ran)
    others = [k for k in CUTOFFS if k != 10]
    # found@10 (the ranking key) and the times first: what a pick is chosen on reads without scrolling
    head = (f"<tr><th class=\"num rank\">#</th><th class=\"setup\">setup</th><th class=\"num main\">{FOUND_10}</th>"
            '<th class="num">median ms</th><th class="num">p95 ms</th>'
            + "".join(f'<th class="num">{m}</th>' for m in FOUND if m != FOUND_10)
            + ('<th class="num">recall@10</th>' if recall else "")
            + f'<th class="num">{MRR}</th><th class="num">{NDCG_10}</th></tr>')
    rows = []
    for setup in ran:
        summary = _summary(setup)
        n = summary.get("questions")
        share, count = _found(summary, 10), _count(summary, 10)
        of = f'<span class="count">{count} of {n}</span>' if count is not None and n else ""
        cells = [f'<td class="num main">{_pct(share, n)}{of}{_versus_top(setup) if versus else ""}</td>',
                 f'<td class="num">{_ms(summary.get("median_ms"))}</td><td class="num">{_ms(summary.get("p95_ms"))}</td>']
        for k in others:
            share, count = _found(summary, k), _count(summary, k)
            title = f' title="{count} of {n} questions"' if count is not None and n else ""
            cells.append(f'<td class="num"{title}>{_pct(share, n)}</td>')
        if recall:
            cells.append(f'<td class="num">{_pct(((summary.get("recall") or {}) or {}).get("10"), n)}</td>')
        badges = "".join(f'<span class="badge">{_t(p)}</span>' for p in picks.get(setup["key"], []))
        if setup["key"] in frontier:
            badges += '<span class="badge frontier">frontier</span>'
        rows.append(
            f'<tr class="ranked" data-key="{attr(setup["key"])}" data-rank="{attr(setup.get("rank"))}">'
            f'<td class="num rank">{_t(setup.get("rank", ""))}</td>'
            f'<td class="setup"><span class="dot" style="background:{method_colour(setup.get("method"))}"></span>'
            f'<a class="key" href="#setup-{attr(setup["key"])}">{_t(setup["key"])}</a>'
            f'<span class="label">{_t(setup.get("method_label", ""))}</span>'
            + (f'<span class="badges">{badges}</span>' if badges else "") + "</td>"
            + "".join(cells)
            + f'<td class="num">{_score(summary.get("mrr"))}</td><td class="num">{_score(summary.get("ndcg_10"))}</td></tr>')
    span = 2 + len(CUTOFFS) + (1 if recall else 0) + 4
    for setup in failed:
        rows.append(f'<tr class="failed" data-key="{attr(setup["key"])}"><td class="num rank">–</td>'
                    f'<td class="setup"><span class="key">{_t(setup["key"])}</span>'
                    f'<span class="label">{_t(setup.get("method_label", ""))}</span></td>'
                    f'<td colspan="{span - 2}">failed, never picked: {_t(setup.get("error") or "no result")}</td></tr>')
    rank_by = (report.get("rules") or {}).get("rank_by") or ["found@10", "found@1", "median_ms", "key"]
    return ('<section id="ranked"><h2>Every setup, ranked</h2>'
            f'<p class="muted">Ranked by {_t(", then ".join(_words(str(r)) for r in rank_by))}. '
            "Under each found@10, how many questions that is"
            + ("; then the setup against the top, question by question (q: questions it finds that the top "
               "misses, minus the reverse; p: the paired test, corrected for comparing many setups)" if versus else "")
            + ". The setup column stays put while the table slides sideways.</p>"
            f'<div class="table-wrap"><table class="ranked"><thead>{head}</thead><tbody>{"".join(rows)}</tbody>'
            "</table></div></section>")


def _trend(points: Sequence[dict[str, Any]], ran: list[dict[str, Any]]) -> str:
    intro = '<section id="history"><h2>Run by run</h2>'
    if len(points) < 2:
        return (intro + '<p class="muted">This is the only run on this golden file in the store. When there are '
                "more, each setup's found@10 is shown here run by run, with a mark where an index changed."
                "</p></section>")
    changes = index_changes(points)
    keys = [s["key"] for s in ran]
    for point in points:
        keys += [k for k in point.get("found_10") or {} if k not in keys]
    head = ["<th>setup</th>"]
    for point, changed in zip(points, changes):
        stamp = _when(point.get("created_at")) or str(point.get("id") or "")
        day, _, clock = stamp.partition(" ")
        cls = ' class="num changed"' if changed else ' class="num"'
        mark = (f'<br><span title="index changed: {attr(", ".join(changed))}">▲ index changed</span>'
                if changed else "")
        head.append(f'<th{cls} title="{attr(point.get("id", ""))}">{_t(day)}<br>{_t(clock)}{mark}</th>')
    head.append("<th>trend</th>")
    shares = [v for p in points for v in (p.get("found_10") or {}).values() if _num(v) is not None]
    floor = max(0.0, math.floor((min(shares, default=0.0) - 0.05) * 10) / 10)
    rows = []
    for key in keys:
        values = [_num((p.get("found_10") or {}).get(key)) for p in points]
        cells = []
        for i, (value, changed) in enumerate(zip(values, changes)):
            before = values[i - 1] if i else None
            direction = ""
            if value is not None and before is not None and abs(value - before) > 1e-9:
                direction = " up" if value > before else " down"
            cls = f'num{" changed" if changed else ""}{direction}'
            cells.append(f'<td class="{cls}">{_pct(value)}</td>')
        rows.append(f'<tr data-key="{attr(key)}"><td class="key">{_t(key)}</td>{"".join(cells)}'
                    f"<td>{sparkline(values, [bool(c) for c in changes], floor=floor)}</td></tr>")
    changed_any = any(changes)
    return (intro + f'<p class="muted">found@10 of each setup in the {len(points)} most recent runs on this golden '
            "file (oldest first; this run last). "
            + ("A dashed line marks a run whose index changed since the run before it. " if changed_any else
               "The indexes did not change between these runs. ")
            + f"Green went up, red went down; – means the setup did not run. Trend lines run from {floor:.0%} to 100%.</p>"
            f'<div class="table-wrap"><table class="trend"><thead><tr>{"".join(head)}</tr></thead>'
            f'<tbody>{"".join(rows)}</tbody></table></div></section>')


def _details(report: dict[str, Any], setups: list[dict[str, Any]], questions: Mapping[str, str] | None) -> str:
    by_key = {s["key"]: s for s in setups}
    ordered = sorted(setups, key=lambda s: (s.get("rank") is None, s.get("rank") or 0, s["key"]))
    blocks = [_detail(setup, by_key, report, questions) for setup in ordered]
    return ('<section id="setups"><h2>Each setup in detail</h2><p class="muted">Open a setup to see where its '
            "answers landed, its times, and the setups one change away from it.</p>" + "".join(blocks) + "</section>")


def _detail(setup: dict[str, Any], by_key: dict[str, dict[str, Any]], report: dict[str, Any],
            questions: Mapping[str, str] | None) -> str:
    key = setup["key"]
    summary = _summary(setup)
    head = (f'<summary><span class="dot" style="background:{method_colour(setup.get("method"))}"></span>'
            + (f'#{_t(setup["rank"])} ' if setup.get("rank") else "")
            + f'<span class="key">{_t(key)}</span> · {_t(setup.get("method_label", ""))}'
            + (f' · found@10 {_pct(_found(summary, 10), summary.get("questions"))}, median {_ms(summary.get("median_ms"))} ms'
               if summary else " · failed") + "</summary>")
    columns = []
    if summary is None:
        columns.append(f'<div><h3>Failed</h3><p>{_t(setup.get("error") or "no result")}</p>'
                       "<p class=\"muted\">A failed setup is reported and never picked.</p></div>")
    else:
        columns.append(_landed(summary))
        columns.append(_times(setup, summary))
        columns.append(_neighbours(setup, summary, by_key))
        columns.append(_missed(setup, report, questions))
    columns.append(_described(setup))
    extra = {k: v for k, v in setup.items() if k not in _KNOWN_SETUP_KEYS}
    extra.update({f"summary.{k}": v for k, v in (summary or {}).items() if k not in _KNOWN_SUMMARY_KEYS})
    if summary and isinstance(summary.get("recall"), dict):
        extra["recall"] = ", ".join(f"@{k} {_pct(v)}" for k, v in summary["recall"].items())
    if extra:
        columns.append("<div><h3>More</h3><dl class=\"facts\">" + "".join(
            f"<dt>{_t(_words(k))}</dt><dd>{_t(_plain(v))}</dd>" for k, v in extra.items()) + "</dl></div>")
    return (f'<details class="setup" id="setup-{attr(key)}" data-key="{attr(key)}">{head}'
            f'<div class="body">{"".join(c for c in columns if c)}</div></details>')


def _landed(summary: dict[str, Any]) -> str:
    landed = summary.get("landed") or {}
    total = sum(v for v in landed.values() if isinstance(v, int)) or 1
    bars, keys = [], []
    for name, colour in zip(LANDED, LANDED_COLOURS):
        count = landed.get(name, 0) if isinstance(landed.get(name, 0), int) else 0
        if count:
            bars.append(f'<span style="width:{count / total * 100:.2f}%;background:{colour}" '
                        f'title="{attr(name)}: {count}"></span>')
        keys.append(f'<span><span class="swatch" style="background:{colour}"></span> {_t(name)}: {count}</span>')
    return ("<div><h3>Where the first expected result landed</h3>"
            f'<div class="landed">{"".join(bars)}</div><div class="landed-keys">{"".join(keys)}</div></div>')


def _margin(value: Any) -> str:
    """How precisely the median is known, beside it: " (+/-6%)"; nothing for reports made before it."""
    number = _num(value)
    return "" if number is None else f" (&plusmn;{number * 100:.0f}%, 95% interval)"


def _times(setup: dict[str, Any], summary: dict[str, Any]) -> str:
    times = [t for t in (setup.get("times_ms") or []) if _num(t) is not None]
    facts = [("timed searches", str(summary.get("timed", len(times)))),
             ("median", f"{_ms(summary.get('median_ms'))} ms" + _margin(summary.get("median_margin"))),
             ("p95", f"{_ms(summary.get('p95_ms'))} ms")]
    if times:
        facts += [("fastest", f"{_ms(min(times))} ms"), ("slowest", f"{_ms(max(times))} ms")]
    if setup.get("timed_in"):  # reused, not measured in this run (evaluation.run.retime)
        facts.insert(0, ("timed in", f"run {_t(setup['timed_in'])}, same index state"))
    if isinstance(setup.get("requests"), int):
        facts.append(("requests", str(setup["requests"])))
    if isinstance(setup.get("retries"), int):  # throttled requests sent again; the times include the waits
        facts.append(("retried after throttling", f"{setup['retries']} (the times include the waits)"
                      if setup["retries"] else "0"))
    return ("<div><h3>Times</h3><dl class=\"facts\">"
            + "".join(f"<dt>{_t(a)}</dt><dd>{b}</dd>" for a, b in facts) + "</dl></div>")


def _neighbours(setup: dict[str, Any], summary: dict[str, Any], by_key: dict[str, dict[str, Any]]) -> str:
    rows = []
    for other_key in setup.get("neighbours") or []:
        other = by_key.get(other_key)
        other_summary = _summary(other) if other else None
        if other_summary is None:
            rows.append(f"<li><span class=\"key\">{_t(other_key)}</span>: failed</li>")
            continue
        mine, theirs = _count(summary, 10), _count(other_summary, 10)
        diff = ""
        if mine is not None and theirs is not None:
            delta = theirs - mine
            diff = ("same found@10" if delta == 0 else
                    f"{abs(delta)} question{'s' if abs(delta) != 1 else ''} {'more' if delta > 0 else 'fewer'} found")
        t_mine, t_theirs = _num(summary.get("median_ms")), _num(other_summary.get("median_ms"))
        speed = ""
        if t_mine and t_theirs:
            ratio = t_theirs / t_mine
            speed = f"{ratio:.1f}× slower" if ratio >= 1.05 else f"{1 / ratio:.1f}× faster" if ratio <= 1 / 1.05 else "as fast"
        rows.append(f'<li><a class="key" href="#setup-{attr(other_key)}">{_t(other_key)}</a>: '
                    f"{_t(', '.join(x for x in (diff, speed) if x))}</li>")
    body = f'<ul class="plain">{"".join(rows)}</ul>' if rows else '<p class="muted">None among the setups run.</p>'
    return ("<div><h3>Neighbours (one change away)</h3>" + body + "</div>")


def _missed(setup: dict[str, Any], report: dict[str, Any], questions: Mapping[str, str] | None) -> str:
    ranks = setup.get("ranks") or {}
    if not isinstance(ranks, dict) or not ranks:
        return ""
    missed = [(qid, r) for qid, r in ranks.items() if not isinstance(r, int) or r > 10]
    if not missed:
        return "<div><h3>Questions not found in the top 10</h3><p class=\"muted\">None: every question was.</p></div>"
    missed.sort(key=lambda item: (item[1] is None, item[1] or 0, item[0]))
    items = "".join(f"<li>{_question(qid, questions)} — "
                    f"{'not in the top ' + _t(report.get('depth', 20)) if not isinstance(r, int) else 'first at ' + str(r)}</li>"
                    for qid, r in missed)
    return f"<div><h3>Questions not found in the top 10 ({len(missed)})</h3><ul class=\"plain\">{items}</ul></div>"


def _question(qid: str, questions: Mapping[str, str] | None) -> str:
    text = (questions or {}).get(qid)
    return f'<code>{_t(qid)}</code>' + (f' <span class="qtext">“{_t(text)}”</span>' if text else "")


def _described(setup: dict[str, Any]) -> str:
    facts = [("target", setup.get("target")), ("engine", setup.get("engine")), ("method", setup.get("method")),
             ("models", ", ".join(str(m) for m in setup.get("models") or []) or None),
             ("ranker", setup.get("ranker"))]
    options = setup.get("options") or {}
    if isinstance(options, dict):
        facts += [(_words(str(k)), _plain(v)) for k, v in options.items()]
    return ("<div><h3>What it is</h3><dl class=\"facts\">"
            + "".join(f"<dt>{_t(a)}</dt><dd>{_t(b)}</dd>" for a, b in facts if b not in (None, ""))
            + "</dl></div>")


def _hard_questions(report: dict[str, Any], ran: list[dict[str, Any]], questions: Mapping[str, str] | None) -> str:
    if not ran:
        return ""
    ids = [str(q) for q in report.get("question_ids") or []] or sorted(
        {qid for s in ran for qid in (s.get("ranks") or {})})
    expected = {str(row.get("id")): row.get("expected") or [] for row in report.get("questions") or []
                if isinstance(row, dict)}
    rows = []
    for qid in ids:
        firsts = [(s.get("ranks") or {}).get(qid) for s in ran]
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


def _question_table(rows: list[tuple[int, str, int | None]], ran: list[dict[str, Any]],
                    expected: Mapping[str, Any], questions: Mapping[str, str] | None) -> str:
    body = "".join(
        f'<tr data-question="{attr(qid)}"><td>{_question(qid, questions)}</td>'
        f'<td class="num">{found} of {len(ran)}</td><td class="num">{best if best else "–"}</td>'
        f'<td class="expected">{_t(", ".join(str(e) for e in expected.get(qid, [])))}</td></tr>'
        for found, qid, best in rows)
    return ('<div class="table-wrap"><table><thead><tr><th>question</th><th class="num">setups finding it in the top 10</th>'
            '<th class="num">best position</th><th>expected</th></tr></thead>'
            f"<tbody>{body}</tbody></table></div>")


def _glossary(report: dict[str, Any], ran: list[dict[str, Any]]) -> str:
    by = report.get("by", "doc")
    depth = report.get("depth", 20)
    entries = [
        ("found@k", "The share of questions with at least one expected result in the first k results. Other "
                    "tools call it hit rate@k or success@k, and recall@k when each question expects one document."
                    f" Here a result counts as expected when it matches at the “{by}” grain."),
        ("MRR", "Mean reciprocal rank: 1 divided by the position of the first expected result (1 when first, "
                "0.5 when second, 0 when none came back in the top "
                f"{depth}), averaged over the questions."),
        ("nDCG@10", "Normalised discounted cumulative gain over the first 10 results: every expected result "
                    "counts, the nearer the top the more; 1.0 is every expected result at the very top."),
        ("median / p95 ms", "Half the timed searches were faster than the median, 95 in 100 faster than p95. "
                            "Searches are timed one at a time as a caller would make them (query embedding and "
                            "reranking included, nothing cached), after one untimed warm-up, on a random "
                            "sample of the questions until the median is known within the margin shown "
                            "beside it (a 95% interval)."),
        ("frontier", "The setups no other setup beats on both found@10 and median time."),
        ("too few to tell", "With a few dozen questions, two setups a question or two apart may differ by luck. "
                            "Each setup is compared with the top on the same questions (an exact paired test on "
                            "found@10, Holm-corrected across setups); when the test cannot tell them apart at the "
                            "report's alpha, the questions are too few to tell, which is not the same as finding "
                            "as many: the page says how many questions the same test would need for a gap of the "
                            "size seen."),
        ("tied on time", "Two setups whose medians' 99% intervals overlap: their timed searches cannot tell "
                         "which is faster, so the picks treat them as equally fast and choose between them by "
                         "found@10, then found@1, then key, and the same inputs give the same picks."),
        ("picks", "finds_the_most is the top of the ranking; best_for_balance and best_for_time are the fastest "
                  "setups within a few points of it, counted in whole questions."),
        ("neighbours", "Setups one change away: another ranker, one model more or fewer, or the same search "
                       "on another engine."),
    ]
    if _has_recall(ran):
        entries.insert(1, ("recall@k", "The share of a question's expected items found in the first k results, "
                                       "averaged over the questions."))
    return ('<section id="words"><h2>What the numbers mean</h2><dl class="glossary">'
            + "".join(f"<dt>{_t(a)}</dt><dd>{_t(b)}</dd>" for a, b in entries) + "</dl></section>")


def _footer(report: dict[str, Any]) -> str:
    rules = report.get("rules") or {}
    bits = [f"{_words(k)}: {', then '.join(map(str, v)) if isinstance(v, list) else _plain(v)}"
            for k, v in rules.items()]
    targets = []
    for name, described in (report.get("targets") or {}).items():
        if not isinstance(described, dict):
            continue
        facts = [f"{described.get('engine', '?')} engine"]
        for label in ("documents", "chunks"):
            if isinstance(described.get(label), int):
                facts.append(f"{described[label]} {label}")
        for label in ("index", "endpoint"):
            if described.get(label):
                facts.append(f"{label} {described[label]}")
        state = described.get("state") or described.get("fingerprint")
        if state:
            facts.append(f"index state {str(state)[:12]}")
        targets.append(f"<li><strong>{_t(name)}</strong>: {_t(', '.join(facts))}</li>")
    return ("<footer><h2>How this run was made</h2>"
            + (f'<ul class="plain">{"".join(targets)}</ul>' if targets else "")
            + _cache(report)
            + (f"<p>Rules: {_t('; '.join(bits))}.</p>" if bits else "")
            + "<p>Made by the retrieval evaluation library. This page is one file: it fetches nothing and runs no "
              "script.</p></footer>")
