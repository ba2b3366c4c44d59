"""Question text for a viewer allowed to read the golden file: the golden file's privacy rule, here
because it is the golden file's (a run holds ids and hashes, never a question's text).

A page or a table shows question ids; ``question_texts`` gives id -> text, read from the golden file's
own bytes, only for ids the report scored and only when the bytes are the run's golden file (same
sha256) and each text hashes to what the report recorded. Callers pass it only to viewers who may
read the golden file.
"""
from __future__ import annotations

import hashlib
from typing import Any, Mapping

from ..store.run_report import RunReport
from .records import question_sha256
from .scan import scan_golden


def question_texts(golden_raw: bytes, report: RunReport | Mapping[str, Any]) -> dict[str, str]:
    """Question id -> text, read from the golden file ``golden_raw`` the run was made from.

    Only ids the report scored are kept; when the report records a question's ``sha256`` (of its text
    as UTF-8), a text that does not hash to it is left out. Bytes that are not the run's golden file
    (another sha256) give nothing. ``report``: the model, or a report's JSON read into it once.
    """
    report = RunReport.of(report)
    if hashlib.sha256(golden_raw).hexdigest() != report.golden.sha256:
        return {}
    # a report that kept no question rows scored none by text: nothing is shown for ids alone
    wanted = {row.id: row.sha256 for row in report.questions} if report.questions_kept else {}
    texts = {}
    for question in scan_golden(golden_raw).questions:
        if question.id not in wanted:
            continue
        digest = wanted[question.id]
        if digest and question_sha256(question.question) != digest:
            continue
        texts[question.id] = question.question
    return texts
