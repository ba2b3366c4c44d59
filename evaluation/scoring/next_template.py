"""``next_template``: what to label next (``label_next``), written as golden-file rows the team fills in.

A kept run holds ids and scores, never a question's text; the person who has the golden file turns the
run's proposal into rows: ``golden next`` reads both. The rows, best first in each kind:

- **Results to judge**: the question's own row with every result to judge added to ``expected`` as an
  object with ``null`` for its grade (``{"d1": 1, "d7": null}``): ``golden check`` refuses a row with a
  null grade, so nothing is labelled until a person writes 0 (not relevant), 1 or more.
- **Drafts to check**: the draft row as it is (``"draft": true`` kept); a person checks its expected
  documents and removes the flag.
- **Template rows** (a document named, no question yet), searched by their hint: as they are, to
  write a question in.
- **Questions to label** (``unlabelled``: a file of questions without labels): ``"expected": []``,
  which ``golden check`` refuses until the documents are named.

Each row's ``hint`` says why it is proposed and which results the tied setups disagree on. A question
whose text in the golden file is not the text the run searched (its sha256 differs) is left out.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

from ..errors import UsageError, named, printable
from ..golden import Golden, Question
from ..golden.records import question_sha256
from ..settings import DEFAULT_RANK_AMONG
from ..store.report_parts import QuestionRow
from ..store.run_report import RunReport
from ..target import Target
from .judging import Rule, ranked_units, result_units, row_units
from .label_next import Candidate, labelled_of, propose

SEARCH_DEPTH = 20


@dataclass
class NextTemplate:
    """The rows to write, best first in each kind, and what was proposed (``Proposal.to_dict``)."""

    rows: list[dict[str, Any]]
    proposal: dict[str, Any] | None
    reason: str = ""  # why nothing is proposed, when nothing is
    left_out: list[str] = field(default_factory=list)  # ids whose text changed since the run


def run_rule(report: RunReport) -> Rule:
    """How the run judged: its grain, its reading of a rank and its relevant grade."""
    return Rule(by=report.by or "doc", rank_among=report.rules.rank_among or DEFAULT_RANK_AMONG,
                min_grade=report.rules.min_grade)


def searched(target: Target, keys: Sequence[str], questions: Sequence[Question], rule: Rule,
             texts: Mapping[str, str] | None = None) -> dict[str, dict[str, list[str]]]:
    """Each question's units (by id) in each of ``keys``' results, searched on ``target`` (the text given in
    ``texts`` for an id, else its question): how a candidate is seen without a run."""
    setups = {s.key: s for s in target.setups()}
    absent = [k for k in keys if k not in setups]
    if absent:
        raise UsageError(f"the tied setups {', '.join(absent)} are not setups of {target.describe().get('name')}; "
                         "open the index the run searched (the run's targets name it)")
    asked = [(texts or {}).get(str(q.id), q.question) for q in questions]
    out: dict[str, dict[str, list[str]]] = {str(q.id): {} for q in questions}
    for key in keys:
        hits = target.search_batch(setups[key], asked, SEARCH_DEPTH)
        for question, found in zip(questions, hits, strict=True):
            out[str(question.id)][key] = ranked_units(result_units(question, found, rule.by), rule.rank_among)
    return out


def next_template(report: RunReport, golden: Golden, *, target: Target | None = None,
                  unlabelled: Sequence[Question] = (), n: int = 20) -> NextTemplate:
    """The rows proposing what to label next for ``report``'s tied top tier, from ``golden`` (the file
    the run read, for its texts, drafts and template rows) and ``unlabelled`` questions; template rows
    and ``unlabelled`` are searched on ``target`` (without one they are left out). At most ``n`` of
    each kind (results to judge, questions to label)."""
    refuse_another_file(report, golden)
    groups = report.tiers.groups if report.tiers is not None else ()
    if not groups:
        return NextTemplate([], None, "the run has no tiers (a report made before them, or nothing ran)")
    if len(groups[0]) < 2:
        return NextTemplate([], None, f"tier 1 holds {groups[0][0]} alone: the paired tests already separate it")
    rule = run_rule(report)
    if rule.by == "evidence":
        return NextTemplate([], None, "the run judged by evidence, which reads the results' text a run does not keep")
    tied = list(groups[0])
    kept = {q.id: q for q in report.questions}
    asked = {str(q.id): q for q in golden.questions}
    left_out = sorted(qid for qid, q in asked.items() if qid in kept and q.labelled and not asked_as_run(kept[qid], q))
    run_questions = [Question(id=qid, question="", expected=q.expected, grades=tuple(q.grades.items()))
                     for qid, q in kept.items()]
    entries = [e.values for e in report.setups if e.key in tied]  # their result rows, as kept
    labelled = [q for q in labelled_of(entries, run_questions, rule) if q.id not in left_out]
    candidates = _drafts(entries, golden, kept, left_out, rule)
    if target is not None:
        templates = [q for q in golden.unfilled_rows if q.hint]
        found = searched(target, tied, [*templates, *unlabelled], rule,
                         texts={str(q.id): str(q.hint) for q in templates})
        candidates += [Candidate(str(q.id), "template", found[str(q.id)], known=q.judgements) for q in templates]
        candidates += [Candidate(str(q.id), "question", found[str(q.id)]) for q in unlabelled]
    proposal = propose(tied, labelled, candidates, min_grade=rule.min_grade)
    assert proposal is not None  # two or more are tied
    rows = _result_rows(proposal.results, asked, tied, n) + _question_rows(
        proposal.questions[:n], {**asked, **{str(q.id): q for q in golden.unfilled_rows},
                                 **{str(q.id): q for q in unlabelled}}, tied)
    return NextTemplate(_merged(rows), proposal.to_dict(n), left_out=left_out)


def asked_as_run(row: QuestionRow, question: Question) -> bool:
    """Whether ``question`` is the one the run kept as ``row``: the same text (its sha256), or a row that kept
    no hash (a report made before it), which cannot tell."""
    return row.sha256 in (None, question_sha256(question.question))


def refuse_another_file(report: RunReport, golden: Golden) -> None:
    """``UsageError`` when ``golden`` is not the file ``report``'s run read (another sha256) and holds none of
    the run's questions as the run asked them: its rows cannot name what the run's results are, so nothing
    in it could be proposed. A file edited since the run (a question reworded, rows added) still shares
    questions with it, and only the changed ones are left out."""
    kept = report.golden.sha256
    if not kept or kept == golden.sha256:
        return
    asked = {str(q.id): q for q in golden.questions}
    # a report that kept no question rows has a row per id (RunReport's upgrade): shared ids are all it can tell
    run_questions = report.questions
    if any(q.id in asked and asked_as_run(q, asked[q.id]) for q in run_questions):
        return
    run_id = printable(str(report.id))
    read = report.golden.source
    raise UsageError(f"{named(golden.source)} is not the golden file run {run_id} read: its sha256 is "
                     f"{golden.sha256[:12]}, the run's {printable(str(kept))[:12]}, and none of the run's "
                     f"{len(run_questions)} questions is in it as the run asked it, so nothing in it can separate "
                     "the run's tied setups; give the golden file the run read"
                     f"{f' ({named(read)})' if read else ''}, or evaluate with this file "
                     "first and ask golden next of that run")


def _drafts(entries: Sequence[Mapping[str, Any]], golden: Golden, kept: Mapping[str, Any], left_out: Sequence[str],
            rule: Rule) -> list[Candidate]:
    """The golden file's drafts the run searched, as questions to check (their proposed label not trusted)."""
    out = []
    for question in golden.draft_rows:
        qid = str(question.id)
        if qid in kept and qid not in left_out:
            units = {e["key"]: ranked_units(row_units(question, (e.get("results") or {}).get(qid) or [], rule.by),
                                            rule.rank_among) for e in entries}
            out.append(Candidate(qid, "draft", units))
    return out


def _result_rows(results: Sequence[Mapping[str, Any]], asked: Mapping[str, Question], tied: Sequence[str],
                 n: int) -> list[dict[str, Any]]:
    """One row per question with results to judge, the first ``n`` results in all, each a null grade."""
    rows: dict[str, dict[str, Any]] = {}
    for rank, result in enumerate(results[:n], start=1):
        qid = str(result["question"])
        question = asked.get(qid)
        if question is None:
            continue
        row = rows.get(qid)
        if row is None:
            row = {"id": qid, "question": question.question, "expected": dict(question.judgements),
                   "hint": f"label next: grade each result written null (0 not relevant, 1 relevant, higher for "
                           f"more) to help separate {' and '.join(tied)}"}
            if question.draft:
                row["draft"] = True
            rows[qid] = row
        row["expected"][str(result["result"])] = None
        holders = ", ".join(result.get("in") or [])
        row["hint"] += f"; #{rank} {result['result']} (in the top 10 of {holders})"
    return list(rows.values())


def _question_rows(questions: Sequence[Mapping[str, Any]], asked: Mapping[str, Question],
                   tied: Sequence[str]) -> list[dict[str, Any]]:
    rows = []
    for rank, proposed in enumerate(questions, start=1):
        question = asked.get(str(proposed["question"]))
        if question is None:
            continue
        disputed = ", ".join(proposed.get("units") or [])
        kind = proposed.get("kind")
        row: dict[str, Any]
        if kind == "question":
            row = {"id": str(question.id), "question": question.question, "expected": [],
                   "hint": f"label next #{rank}: name the documents that answer it; {' and '.join(tied)} disagree "
                           f"on {disputed or 'their top 10'}"}
        else:
            row = {"id": str(question.id), "question": question.question,
                   "expected": dict(question.judgements) if question.graded else list(question.expected)}
            if kind == "draft":
                row["draft"] = True
                row["hint"] = (f"label next #{rank}: check this draft's expected documents, then remove \"draft\"; "
                               f"{' and '.join(tied)} disagree on {disputed or 'their top 10'}")
            else:
                row["hint"] = (f"label next #{rank}: write a question this answers ({' and '.join(tied)} disagree on "
                               f"it when searched by how it starts); it starts: {question.hint}")
        rows.append(row)
    return rows


def _merged(rows: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """One row per id: a draft that also has results to judge is one row with both asks."""
    out: dict[str, dict[str, Any]] = {}
    for row in rows:
        if row["id"] not in out:
            out[row["id"]] = row
            continue
        first = out[row["id"]]
        if isinstance(first["expected"], dict) and isinstance(row["expected"], list):
            row_expected = {k: 1 for k in row["expected"]}
            first["expected"] = {**row_expected, **first["expected"]}
        first["hint"] += "; also " + row["hint"]
        first["draft"] = first.get("draft") or row.get("draft", False)
        if not first["draft"]:
            first.pop("draft")
    return list(out.values())
