"""Nothing a report holds is ever markup on its page: every string (question and document ids, setup
keys, model and method names, errors, collection and source names, question texts) is a hostile
payload here, and the parsed page must have exactly the elements and attributes of the same report
with harmless strings. A test that fails when any attribute or text is written unescaped (issue 22)."""
from __future__ import annotations

from collections import Counter
from html.parser import HTMLParser
from typing import Callable

import pytest

from evaluation.store.run_report import RunReport
from evaluation.report.html import render_html
from evaluation.report.trend import trend_point

from conftest import build_report


def payload(n: int) -> str:
    """Breaks out of a double- or single-quoted attribute, or out of text, in every way a page can; no
    "." (setup keys split on it) and no "#page=" (expected items split on it)."""
    return (f"\"'><svg onload=alert({n})><script>alert({n})</script><img src=x onerror=alert({n})>"
            f"<a href=javascript:alert({n})>&amp;&lt;x{n}")


def harmless(n: int) -> str:
    return f"safe-{n}"


class Shape(HTMLParser):
    """The page as the browser builds it: each element with its attribute names, and every value and text."""

    def __init__(self, page: str) -> None:
        super().__init__(convert_charrefs=True)
        self.elements: Counter = Counter()
        self.values: list[str] = []
        self.feed(page)
        self.close()

    def handle_starttag(self, tag, attrs):
        self.elements[(tag, tuple(sorted(name for name, _ in attrs)))] += 1
        self.values += [value or "" for _, value in attrs]

    handle_startendtag = handle_starttag

    def handle_data(self, data):
        self.values.append(data)


def hostile_report(name: Callable[[int], str]) -> tuple[dict, dict[str, str]]:
    """A report whose every string a person or a service chose is ``name(n)``; and question texts."""
    target, model = name(20), name(21)
    doc, paged = name(10), f"{name(11)}#page=2"
    questions = {name(1): [doc], name(2): [paged], name(3): [name(12)]}
    setups = {f"{target}.keyword.bm25": {name(1): [doc], name(2): [name(13), paged], name(3): []},
              f"{target}.dense.{model}": {name(1): [name(13), doc], name(2): [paged], name(3): [name(12)]},
              f"{target}.hybrid.{model}": None}  # failed
    report = build_report(questions=questions, setups=setups)
    report["collections"] = [name(30)]
    report["golden"]["source"] = name(31)
    report["targets"] = {target: {"name": target, "engine": name(32), "collection": name(30), "chunks": 9,
                                  "models": [model], "index": name(33)}}
    for n, setup in enumerate(report["setups"]):
        setup["method_label"] = name(40 + n)
        setup["models"] = [model]
        if setup["error"]:
            setup["error"] = name(50)
    report["missing"] = {target: {"unit": "document", "documents": [name(60)], "questions": {name(3): [name(60)]},
                                  "partly": {name(2): [name(61)]}}}
    texts = {qid: name(70 + n) for n, qid in enumerate(questions)}
    return report, texts


def pages(name: Callable[[int], str]) -> list[str]:
    report, texts = hostile_report(name)
    older = dict(report, id="20261129T012433123Z-000001", created_at="2026-11-29T01:24:33.123000Z")
    from evaluation.run import refusal_report

    refused = refusal_report(name(80), source=name(81), sha256="ab" * 32, run_id="20261130T000000000Z-000001",
                             created_at="2026-11-30T00:00:00Z")
    refused["refused"]["errors"] = [{"line": 3, "message": name(82)}, {"line": None, "message": name(83)}]
    return [render_html(report), render_html(report, questions=texts),
            render_html(report, history=[trend_point(RunReport.from_json(r)) for r in (older, report)],
                        questions=texts),
            render_html(refused)]


@pytest.mark.parametrize("which", ["run", "run with question texts", "run with its trend", "refused run"])
def test_no_element_or_attribute_of_the_page_comes_from_the_reports_strings(which):
    n = ["run", "run with question texts", "run with its trend", "refused run"].index(which)
    hostile, benign = Shape(pages(payload)[n]), Shape(pages(harmless)[n])

    assert hostile.elements == benign.elements  # the same elements with the same attributes, whatever the strings
    tags = {tag for tag, _ in hostile.elements}
    names = {attribute for _, attributes in hostile.elements for attribute in attributes}
    assert not tags & {"script", "img"} and not [a for a in names if a.startswith("on")]
    assert not any(value.lstrip().lower().startswith("javascript:") for value in hostile.values)
    shown = "\n".join(hostile.values)
    assert "onerror=alert(" in shown  # the payloads are on the page, as text and values: shown, never run


def test_the_page_shows_every_hostile_id_whole_somewhere():
    shown = "\n".join(Shape(pages(payload)[1]).values)
    for n in (2, 3, 12, 20, 21, 30, 31, 40, 50, 60, 72):  # the ids, names and errors the page shows
        assert payload(n) in shown
