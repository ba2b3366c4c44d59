"""The answer in plain words, the one writer of every sentence the text and the page say about the picks:
each pick with one line of why, a pick that is the same setup as an earlier one said as that (never
repeated whole), the setups it was chosen among and the reason each lost, what the paired test says of
the fastest faster setup it cannot tell from the pick, and what the run found that a team should know
(reranking against the same kind of search without it, keyword search against every search with vectors).

Every sentence is read off the report's own numbers (found@10 counts, medians, the time pairs' ratios and
intervals, the tiers and the tests that made them): no statistic is re-computed here. The words follow
four rules a test holds them to (tests/report/test_answer_claims.py parses every sentence of many random
reports back against their numbers):
- a comparison of counts says "N more", "N fewer" or "as many" as the counts are, with both counts;
- a multiplier names both setups and carries the interval of their side-by-side pair (or the band of
  their medians' ratio, ``time_words.pace``), one baseline per comparison;
- the reason given is the one that decided (the counts, the time tier, found@1), never the rule's text;
  under the report's "equally fast" floor two setups are said to be as fast, in every sentence alike;
- the balance and time allowances are ``scoring.picks.allowed_shortfall``'s whole questions, the same
  number the picks were chosen with.
A report of any age reads (``store.run_report`` reads older shapes as today's); a field that is absent says less.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from ..golden.wording import plural
from ..scoring.picks import allowed_shortfall
from ..scoring.time_pairs import TimePair, slower_by_more
from ..settings import DEFAULT_ALPHA
from ..store.run_report import RunReport
from ..store.report_parts import SetupResult
from .notes import found_gap_words
from .numbers import number
from .time_words import pace, tie_words

PICK_LABELS = (("finds_the_most", "Finds the most"), ("best_for_balance", "Best for balance"),
               ("best_for_time", "Best for time"))
MOST_RIVALS = 3  # setups named one by one in a reason; the rest are counted ("and 2 more")


@dataclass(frozen=True)
class PickAnswer:
    """One pick: its ``name`` and ``label``, the setup ``key`` (None when none ran), ``same_as``: the label of
    an earlier pick that is this same setup (then the views say that instead of its numbers), ``why`` in
    one plain sentence, ``tied``: a sentence per other setup it was chosen among, with the reason it lost,
    and ``paired``: what the paired test on found@10 says of the fastest faster setup (None when the
    report holds no test)."""

    name: str
    label: str
    key: str | None
    same_as: str | None
    why: str
    tied: tuple[str, ...] = ()
    paired: str | None = None


def _count(setup: SetupResult, k: int = 10) -> int | None:
    return setup.summary.count(k) if setup.summary is not None else None


def _questions(setup: SetupResult) -> int | None:
    return setup.summary.questions if setup.summary is not None else None


def _median(setup: SetupResult) -> float | None:
    return number(setup.summary.median_ms) if setup.summary is not None else None


def _pace(report: RunReport, a: SetupResult, b: SetupResult) -> str | None:
    return pace(report, a.key, b.key, _median(a), _median(b))


def count_gap(mine: int, theirs: int, other: str, questions: int | None, where: str = "") -> str:
    """"1 question fewer than B (35 against 36 of 36)", "2 questions more than B (...)", "as many as B
    (36 of 36 each)": the one way a count is compared with another setup's (``where``: " in the top 10",
    " at found@1", said after the count)."""
    of = f" of {questions}" if questions else ""
    if mine == theirs:
        return f"as many{' questions' + where if where else ''} as {other} ({mine}{of} each)"
    word = "more" if mine > theirs else "fewer"
    return f"{plural(abs(mine - theirs), 'question')} {word}{where} than {other} ({mine} against {theirs}{of})"


def pick_answers(report: RunReport) -> list[PickAnswer]:
    """The three picks in order, each with its reasons (module docstring)."""
    by_key = {s.key: s for s in report.ran}
    rules = report.rules
    top = report.picks.get("finds_the_most")
    answers: list[PickAnswer] = []
    for name, label in PICK_LABELS:
        key = report.picks.get(name)
        if key is None or key not in by_key:
            answers.append(PickAnswer(name, label, None, None, "no setup ran"))
            continue
        earlier = next((a.label for a in answers if a.key == key), None)
        if name == "finds_the_most" or top not in by_key:
            why, tied = _most_why(report, key, by_key)
        else:
            points = number(rules.balance_points if name == "best_for_balance" else rules.time_points)
            why, tied = _time_pick_why(report, name, key, by_key[str(top)], by_key, points)
        answers.append(PickAnswer(name, label, key, earlier, why, tied, paired_words(report, name)))
    return answers


def _most_why(report: RunReport, key: str, by_key: Mapping[str, SetupResult]) -> tuple[str, tuple]:
    """Why the top ranks first: the most found in the top 10, and against each setup that finds as many,
    the first thing that put it ahead (found@1, its time tier, or its key when nothing else differs)."""
    top = by_key[key]
    found, questions = _count(top), _questions(top)
    if found is None:
        return "it ranks first", ()
    why = f"it finds the most questions in its top 10 ({found}{f' of {questions}' if questions else ''})"
    level = sorted((s for k, s in by_key.items() if k != key and _count(s) == found),
                   key=lambda s: (s.rank or math.inf, s.key))
    if not level:
        return why, ()
    tier = _tier(report, "finds_the_most")
    reasons = [_rank_edge(report, top, rival, tier) for rival in level[:MOST_RIVALS]]
    rest = [s.key for s in level[MOST_RIVALS:]]
    more = f"; and {plural(len(rest), 'more setup')} finding as many ({', '.join(rest)})" if rest else ""
    lead = f"{plural(len(level), 'other setup')} {'finds' if len(level) == 1 else 'find'} as many"
    return f"{why}; {lead}: {'; '.join(reasons)}{more}", ()


def _rank_edge(report: RunReport, top: SetupResult, rival: SetupResult, tier: list[str]) -> str:
    """What put ``top`` ahead of ``rival``, which finds as many in its top 10 (the ranking's next keys)."""
    mine, theirs = _count(top, 1), _count(rival, 1)
    name = rival.key
    if mine is not None and theirs is not None and mine != theirs:
        return f"{name} finds {count_gap(theirs, mine, 'it', None, ' at found@1')}"
    if tier and name not in tier:
        words = _pace(report, rival, top)
        return f"{name} finds as many first and is in a slower time tier" + (f" ({words})" if words else "")
    why = tie_words(report, "finds_the_most", top.key, name, _medians(top, rival))
    return f"{name} finds as many first, is tied with it on time ({why}) and comes after it by name"


def _tier(report: RunReport, name: str) -> list[str]:
    """The keys of the tier the pick ``name`` was chosen from (``ties_on_time``), [] when the report has none."""
    return list(report.ties_on_time.get(name, ()))


def _medians(*setups: SetupResult) -> dict[str, Any]:
    return {s.key: s.summary.median_ms if s.summary is not None else None for s in setups}


def _within(points: float | None, questions: int | None) -> tuple[str, int | None]:
    """"within 4 points (1 question) of the most" and the questions it allows, exactly as the picks count
    them (``allowed_shortfall``); "of those finding as many as the most" when it allows none."""
    if points is None or points < 0 or not questions:
        return "close to the most", None
    allowed = allowed_shortfall(points, questions)
    if allowed == 0:
        return "of those finding as many as the most", 0
    return f"within {points:g} points ({plural(allowed, 'question')}) of the most", allowed


def _time_pick_why(report: RunReport, name: str, key: str, top: SetupResult,
                   by_key: Mapping[str, SetupResult], points: float | None) -> tuple[str, tuple]:
    """Why the balance or time pick is the setup it is: against the fastest setup within its points (the
    anchor of the tier it was chosen from), then against the top; and a sentence per other setup of that
    tier with the reason it lost."""
    pick = by_key[key]
    questions = _questions(top)
    within, _ = _within(points, questions)
    tier = [k for k in _tier(report, name) if k in by_key]
    tests = report.time_tests.get(name)
    anchor = tests.anchor if tests is not None else None
    if anchor not in by_key:
        anchor = min(tier, key=lambda k: (_median(by_key[k]) or math.inf, k)) if tier else key
    fastest = by_key[str(anchor)]
    mine, most = _count(pick), _count(top)
    if anchor == key:
        first = f"the fastest {within}" if key != top.key else f"nothing {within} is faster"
    else:
        first = (f"{anchor}, the fastest {within}, is tied with it on time "
                 f"({tie_words(report, name, key, str(anchor), _medians(pick, fastest))}) "
                 f"and {_tier_edge(report, pick, fastest, tier, by_key, 'it')}")
    if key == top.key:
        why = first
    else:
        against = [count_gap(mine, most, top.key, questions) if mine is not None and most is not None else None,
                   _pace(report, pick, top)]
        said = [f"finds {against[0]}" if against[0] else None, f"is {against[1]}" if against[1] else None]
        why = f"{first}; it " + ", and ".join(s for s in said if s) if any(said) else first
    others = [by_key[k] for k in tier if k not in (key, anchor)]
    tied = tuple(f"{s.key} is tied on time with {anchor} "
                 f"({tie_words(report, name, str(anchor), s.key, _medians(fastest, s))}) "
                 f"and {_tier_edge(report, pick, s, tier, by_key, pick.key)}" for s in others[:MOST_RIVALS])
    rest = [s.key for s in others[MOST_RIVALS:]]
    if rest:
        tied += (f"{plural(len(rest), 'more setup')} tied on time with {anchor} ({', '.join(rest)})",)
    return why, tied


def _tier_edge(report: RunReport, pick: SetupResult, other: SetupResult,
               tier: Sequence[str], by_key: Mapping[str, SetupResult], called: str) -> str:
    """Why ``pick`` was chosen over ``other`` of its tier, in the order the rule looks (``scoring.picks.
    _time_pick``): the most found in the top 10; then not shown slower than the fastest of those by more
    than the floor; then found@1; then the key. Worded with ``other`` as the subject and the pick
    ``called`` ("it", or its key)."""
    mine, theirs = _count(pick), _count(other)
    questions = _questions(pick)
    if mine is not None and theirs is not None and mine != theirs:
        return f"finds {count_gap(theirs, mine, called, questions)}"
    best = [by_key[k] for k in tier if k in by_key and _count(by_key[k]) == mine] or [pick]
    fastest = min(best, key=lambda s: (_median(s) or math.inf, s.key))
    if other is not fastest and _shown_slower(report, fastest, other):
        return (f"finds as many but is shown slower than {called if fastest is pick else fastest.key} by more than "
                f"{report.rules.floor_ms or 0:g} ms ({_pace(report, other, fastest)})")
    first, theirs_first = _count(pick, 1), _count(other, 1)
    if first is not None and theirs_first is not None and first != theirs_first:
        return f"finds as many but {count_gap(theirs_first, first, called, None, ' at found@1')}"
    floor = report.rules.floor_ms
    by_more = f" by more than {floor:g} ms" if floor is not None else ""
    return f"finds as many and as many first, is not shown slower{by_more}, and comes after {called} by name"


def _shown_slower(report: RunReport, fast: SetupResult, slow: SetupResult) -> bool:
    """Whether the report's pair shows ``slow`` slower than ``fast`` by more than the floor (one pair at a
    time, as ``scoring.picks._time_pick`` asks); False when the report holds no such pair."""
    row = report.pair_between(fast.key, slow.key)
    if row is None or row.faster != fast.key:
        return False
    try:
        fields: dict[str, Any] = {field: row.values.get(field) for field in TimePair.__dataclass_fields__}
        pair = TimePair(**fields)  # a kept row of another shape is a TypeError: no such pair
    except TypeError:
        return False
    alpha = (number(report.significance.alpha) if report.significance is not None else None) or DEFAULT_ALPHA
    return bool(isinstance(pair.over_floor, bool) and slower_by_more(pair, alpha))


def paired_words(report: RunReport, name: str) -> str | None:
    """What the paired test on found@10 says of the fastest faster setup it cannot tell from pick ``name``
    (``report["ties"][name]``), with that setup's pace against the pick (``time_words.pace``: under the
    floor it is as fast, never "faster"); that every faster one finds significantly fewer; or that none
    is faster. None for reports without the test."""
    tie = report.ties.get(name)
    if tie is None:
        return None
    pick = tie.pick
    rows = tie.faster
    alpha = report.significance.alpha if report.significance is not None else 0.05
    if not rows:
        return f"no setup is faster than {pick}"
    if not tie.tied or not tie.with_:
        each = (f"the one faster setup, {rows[0].key}," if len(rows) == 1
                else f"each of the {len(rows)} faster setups")
        at = f" (paired test at {alpha:g})" if alpha is not None else ""
        return f"{each} finds significantly fewer than {pick}{at}"
    row = next((r for r in rows if r.key == tie.with_), None)
    if row is None:
        return None
    questions = len(report.question_ids) or None
    speed = pace(report, row.key, str(pick), row.median_ms, tie.median_ms)
    others = [r.key for r in rows if r.tied and r.key != tie.with_]
    return (f"{row.key} is {speed or f'faster than {pick}'} and {found_gap_words(row, questions)}"
            + (f"; the test cannot tell {', '.join(others)} from {pick} either" if others else ""))


def _best(setups: Sequence[SetupResult]) -> SetupResult | None:
    """The setup that finds the most in its top 10 (then the faster, then by key)."""
    if not setups:
        return None
    return min(setups, key=lambda s: (-(_count(s) or 0), _median(s) or math.inf, s.key))


def findings(report: RunReport) -> list[str]:
    """What the run found that a team should know, a sentence each (at most two): whether reranking by a
    model pays against the best search of the same kind without it, and whether plain keyword search
    finds as many as the best search with vectors. Each names both setups it compares."""
    ran = report.ran
    out = []
    for ranker, words, kind in (("cross-encoder", "Reranking with the cross-encoder", "hybrid search"),
                                ("semantic", "Azure's semantic ranker", "search")):
        reranked = _best([s for s in ran if s.ranker == ranker])
        plain = _best([s for s in ran if not s.ranker and s.retrieval in ("hybrid", "keyword")
                       and (ranker != "cross-encoder" or s.retrieval == "hybrid")])
        if reranked is None or plain is None:
            continue
        r, p, n = _count(reranked), _count(plain), _questions(reranked)
        if r is None or p is None:
            continue
        speed = _pace(report, reranked, plain)
        cost = f", and is {speed}" if speed else ""
        gap = count_gap(r, p, f"{plain.key}, the best {kind} without it", n, " in the top 10")
        verdict = ": it does not pay on this collection" if r < p else ""
        out.append(f"{words} ({reranked.key}) finds {gap}{cost}{verdict}.")
    keyword = _best([s for s in ran if s.retrieval in ("keyword", "keyword_documents") and not s.ranker])
    vectors = _best([s for s in ran if s.models and s.retrieval not in ("keyword", "keyword_documents")])
    if keyword is not None and vectors is not None:
        k, v, n = _count(keyword), _count(vectors), _questions(keyword)
        if k is not None and v is not None and k >= v:
            speed = _pace(report, keyword, vectors)
            gap = count_gap(k, v, f"{vectors.key}, the best setup with vectors", n, " in the top 10")
            out.append(f"Keyword search alone ({keyword.key}) finds {gap}" + (f", and is {speed}" if speed else "")
                       + ".")
    return out[:2]
