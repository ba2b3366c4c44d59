"""The answer in plain words, shared by the text and the page's first screen: each pick with one line of why,
a pick that is the same setup as an earlier one said as that (never repeated whole), and what the run
found that a team should know (reranking that does not pay, keyword search that finds as many as vectors).

Every sentence is read off the report's own numbers (found@10 counts, medians, the time pairs' ratios):
no statistic is re-computed here. A report of any age reads; a field that is absent says less.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from ..golden.wording import plural
from .numbers import found_count, number
from .time_words import faster_words

PICK_LABELS = (("finds_the_most", "Finds the most"), ("best_for_balance", "Best for balance"),
               ("best_for_time", "Best for time"))


@dataclass(frozen=True)
class PickAnswer:
    """One pick: its ``name`` and ``label``, the setup ``key`` (None when none ran), ``same_as``: the label of
    an earlier pick that is this same setup (then say only that), and ``why`` in one plain sentence."""

    name: str
    label: str
    key: str | None
    same_as: str | None
    why: str


def pick_key(value: Any) -> str | None:
    """A pick is a setup key, or (in newer reports) an object naming one under ``key`` or ``setup``."""
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        key = value.get("key") or value.get("setup")
        return key if isinstance(key, str) else None
    return None


def _count(setup: Mapping[str, Any]) -> tuple[int | None, int | None]:
    """(questions found in the top 10, questions) of a setup's summary, each None when it holds none."""
    summary = setup.get("summary") or {}
    questions = summary.get("questions")
    return found_count(summary, 10), (questions if isinstance(questions, int) else None)


def _ran(report: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    return [s for s in report.get("setups") or [] if isinstance(s, Mapping) and s.get("summary") and not s.get("error")]


def pick_answers(report: Mapping[str, Any]) -> list[PickAnswer]:
    """The three picks in order, each with its reason (module docstring)."""
    by_key = {s["key"]: s for s in _ran(report)}
    picks = report.get("picks") or {}
    rules = report.get("rules") or {}
    top = pick_key(picks.get("finds_the_most"))
    answers: list[PickAnswer] = []
    for name, label in PICK_LABELS:
        key = pick_key(picks.get(name))
        if key is None or key not in by_key:
            answers.append(PickAnswer(name, label, None, None, "no setup ran"))
            continue
        earlier = next((a.label for a in answers if a.key == key), None)
        points = number(rules.get("balance_points" if name == "best_for_balance" else "time_points"))
        answers.append(PickAnswer(name, label, key, earlier, _why(report, name, key, top, by_key, points)))
    return answers


def _why(report: Mapping[str, Any], name: str, key: str, top: str | None, by_key: Mapping[str, Mapping[str, Any]],
         points: float | None) -> str:
    found, questions = _count(by_key[key])
    of = f"{found} of {questions}" if found is not None and questions else "the most"
    if name == "finds_the_most":
        level = [k for k, s in by_key.items() if _count(s)[0] == found and k != key]
        why = f"it finds the most questions in its top 10 ({of})"
        if level:
            why += (f"; {plural(len(level), 'other setup')} {'finds' if len(level) == 1 else 'find'} as many, "
                    "and it is ahead on found@1, then on time")
        return why
    allowed = math.floor((points or 0) / 100 * questions) if questions else 0
    if points is None:
        within = "close to the most"
    elif allowed == 0:  # a few questions: the points allow less than one question fewer
        within = "of those finding as many as the most"
    else:
        within = f"within {points:g} points ({plural(allowed, 'question')}) of the most"
    if key == top:
        return f"nothing faster finds {within}"
    most = _count(by_key[top])[0] if top is not None and top in by_key else None
    fewer = (most - found) if most is not None and found is not None else None
    gap = (f"as many as {top}" if fewer == 0 else f"{plural(fewer, 'question')} fewer than {top}" if fewer is not None
           else f"close to {top}")
    speed = (faster_words(report, key, top, (by_key[key].get("summary") or {}).get("median_ms"),
                          (by_key[top].get("summary") or {}).get("median_ms"))
             if top is not None and top in by_key else None)
    return (f"the fastest {within}: it finds {of}, {gap}"
            + (f", and is {speed}" if speed and speed != "about as fast" else ", about as fast"))


def _median(setup: Mapping[str, Any]) -> float | None:
    return number((setup.get("summary") or {}).get("median_ms"))


def _best(setups: Sequence[Mapping[str, Any]]) -> Mapping[str, Any] | None:
    """The setup that finds the most in its top 10 (then the faster)."""
    if not setups:
        return None
    return max(setups, key=lambda s: (_count(s)[0] or 0, -(_median(s) or math.inf)))


def findings(report: Mapping[str, Any]) -> list[str]:
    """What the run found that a team should know, a sentence each (at most two): whether reranking by a
    model pays against the same search without it, and whether plain keyword search finds as many as any
    search with vectors."""
    ran = _ran(report)
    out = []
    for ranker, words in (("cross-encoder", "Reranking with the cross-encoder"),
                          ("semantic", "Azure's semantic ranker")):
        reranked = _best([s for s in ran if s.get("ranker") == ranker])
        plain = _best([s for s in ran if not s.get("ranker") and s.get("retrieval") in ("hybrid", "keyword")
                       and (ranker != "cross-encoder" or s.get("retrieval") == "hybrid")])
        if reranked is None or plain is None:
            continue
        (r, n), (p, _) = _count(reranked), _count(plain)
        slower = _ratio(_median(reranked), _median(plain))
        cost = f" and is {slower} slower" if slower else ""
        if r is None or p is None:
            continue
        if r < p:
            out.append(f"{words} found fewer questions in the top 10 than without it ({r} against {p} of {n}){cost}: "
                       f"it does not pay on this collection.")
        elif r == p:
            out.append(f"{words} finds as many questions in the top 10 as without it ({p} of {n}){cost}.")
        else:
            out.append(f"{words} finds {plural(r - p, 'question')} more in the top 10 than without it ({r} against "
                       f"{p} of {n}){cost}.")
    keyword = _best([s for s in ran if s.get("retrieval") in ("keyword", "keyword_documents") and not s.get("ranker")])
    vectors = _best([s for s in ran if s.get("models") and s.get("retrieval") not in ("keyword", "keyword_documents")])
    if keyword is not None and vectors is not None:
        (k, n), (v, _) = _count(keyword), _count(vectors)
        if k is not None and v is not None and k >= v:
            faster = _ratio(_median(vectors), _median(keyword))
            out.append(f"Keyword search alone ({keyword['key']}) finds as many questions in the top 10 as any setup "
                       f"with vectors ({k} of {n})" + (f", and is {faster} faster" if faster else "") + ".")
    return out[:2]


def _ratio(slow: float | None, fast: float | None) -> str | None:
    """``"100x"`` when ``slow`` is at least 1.5 times ``fast``, else None."""
    if not slow or not fast or slow < 1.5 * fast:
        return None
    ratio = slow / fast
    return f"{ratio:,.0f}x" if ratio >= 10 else f"{ratio:.1f}x"
