"""A page names what a kept report holds bounded: anyone who can write to a shared store decides its texts,
and a 5 MB golden file name made a 5 MB page (issue 46's probe pass), where every other view cuts it."""
from __future__ import annotations

from evaluation.errors import TEXT_LIMIT
from evaluation.report.html import render_html


def test_a_golden_file_name_of_5_mb_is_named_cut_with_its_length(make_report):
    report = make_report()
    usual = len(render_html(report))
    report["golden"]["source"] = "G" * 5_000_000
    page = render_html(report)
    assert "G" * (TEXT_LIMIT - 1) + "… (5,000,000 characters)" in page and "G" * TEXT_LIMIT not in page
    assert len(page) < usual + TEXT_LIMIT + 100
