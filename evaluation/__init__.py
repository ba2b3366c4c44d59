"""Retrieval evaluation: which way of searching should this collection use?

The library owns every rule of the product; the Function App and the command line only call it.
The names below are its public face. Each loads on first use, so ``import evaluation`` pulls in no
model runtime, no BM25 engine and no Azure SDK (``python3 -m evaluation golden check`` stays fast).

    from evaluation import EmbeddedTarget, build_index, open_index, evaluate
    build_index("corpus.jsonl", ".index/corpus")
    report = evaluate(EmbeddedTarget(open_index(".index/corpus")), "golden.jsonl", save_to="runs")
    print(report["picks"])
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from .lazy import lazy_attributes
# eager and light: otherwise importing the module evaluation.evaluate would put the module where the function
# belongs. The keyword form users call lives in the compatibility layer; the core is evaluate.run_evaluation.
from .compat.vectrixdb.evaluating import evaluate

__version__ = "0.1.0"

_PUBLIC = {
    # one run in its three steps (evaluate, the three in a loop, is imported above)
    "plan_run": ".run", "run_setup": ".run", "assemble_report": ".run", "EvaluationSettings": ".settings",
    # before a run, and one search configuration scored (VectrixDB's names)
    "missing_documents": ".run", "setups_of": ".run", "retrieval_report": ".run",
    # the golden file
    "read_golden": ".golden", "check_golden": ".golden", "golden_template": ".golden",
    "save_questions": ".golden", "Golden": ".golden", "Question": ".golden",
    # VectrixDB's other names for the golden file, a run's parts and its constants (issue 41)
    "load_questions": ".golden", "load_bedrock_jsonl": ".golden", "GOLDEN_SCHEMA": ".golden.schema",
    "PICKS": ".scoring.picks", "TECHNIQUES": ".chunking.keys", "ADDS": ".chunking.keys",
    "build_report": ".run", "choose": ".scoring.picks", "search_of": ".run", "describe_target": ".target",
    # drafting a golden file with a model
    "write_golden": ".golden.writing", "WritingSettings": ".golden.writing", "GoldenWriting": ".golden.writing",
    "ChatWriter": ".golden.writing",
    "WriterUnavailableError": ".errors",
    # where runs live
    "open_store": ".store", "report_store": ".store", "save_report": ".evaluate", "render_html": ".report.html",
    # what is searched
    "Target": ".target", "Setup": ".target", "Hit": ".target",
    "EmbeddedTarget": ".engine", "build_index": ".engine", "open_index": ".engine",
    "AzureSearchTarget": ".azure_search",
    # errors (errors.py says the naming rule)
    "EvaluationError": ".errors", "GoldenFileError": ".errors", "CorpusError": ".errors",
    "SearchIndexError": ".errors", "ModelError": ".errors", "StoreError": ".errors", "UsageError": ".errors",
    "RunNotSavedError": ".errors", "SearchServiceError": ".errors", "TargetConfigError": ".errors",
    "AnswerError": ".errors", "RunNotFoundError": ".errors", "GoldenNotKeptError": ".errors",
    "WrongArgumentError": ".errors", "WrongValueError": ".errors", "MissingDocumentsWarning": ".errors",
    # their names before the rule (WrongArgument and WrongValue are VectrixDB's too), the same classes
    "RunNotFound": ".errors", "GoldenNotKept": ".errors", "WrongArgument": ".errors", "WrongValue": ".errors",
    "WriterUnavailable": ".errors",
    # the answer tools
    "answer_cutoff": ".answers", "answer_report": ".answers", "suggest_expected": ".answers",
    "stale_evidence": ".answers", "ChatJudge": ".answers", "JudgeSettings": ".answers", "ANSWER_METRICS": ".answers",
    # unjudged results judged by a chat model, its agreement measured first (evaluate(holes=HoleJudge(...)))
    "judge_holes": ".holes", "HoleJudge": ".holes", "HoleGrader": ".holes", "HoleJudgeError": ".errors",
    # how to cut the documents
    "sweep": ".builds", "sweep_markdown": ".builds", "compare_chunking": ".builds",
    "chunking_choice": ".builds", "chunking_store": ".store.builds",
    # the same run in its steps (VectrixDB's names)
    "chunking_plan": ".builds", "plan_chunking": ".builds", "chunking_build": ".builds", "chunking_options": ".builds",
    "run_chunking_build": ".builds", "chunking_report": ".builds", "handed_over": ".builds", "late_possible": ".builds",
    "answer_with": ".builds", "judge_with": ".builds",
    # ElectriPy's experiment matrix
    "run_matrix": ".builds", "ChunkVariant": ".builds",
    # which targets a collection searches (the Function App's configuration)
    "TargetSpec": ".target_specs", "parse_target_specs": ".target_specs", "open_target": ".target_specs",
    "TargetAccess": ".target_specs",
    # VectrixDB's names for what lives in the rooms below (issue 41): its classes and the defaults it names
    "ReportStore": ".store", "ChunkingStore": ".store.builds", "ChatRoute": ".chat", "GoldenCheck": ".golden",
    "GoldenProblem": ".golden", "DEPTH": ".settings", "SIZES": ".chunking.keys", "CHILD_SIZES": ".chunking.keys",
    "BUDGET": ".builds.settings", "ALPHA": ".builds.settings", "METHODS": ".compat.vectrixdb",
}
__all__ = sorted([*_PUBLIC, "evaluate"])

if TYPE_CHECKING:  # for readers and type checkers; at run time the names load lazily
    from .azure_search import AzureSearchTarget
    from .builds import (ChunkVariant, answer_with, chunking_build, chunking_choice, chunking_options, chunking_plan,
                         chunking_report, compare_chunking, handed_over, judge_with, late_possible, plan_chunking,
                         run_chunking_build, run_matrix, sweep, sweep_markdown)
    from .store.builds import chunking_store
    from .engine import EmbeddedTarget, build_index, open_index
    from .answers import (ANSWER_METRICS, ChatJudge, JudgeSettings, answer_cutoff, answer_report, stale_evidence,
                          suggest_expected)
    from .errors import (AnswerError, CorpusError, EvaluationError, GoldenFileError, GoldenNotKept,
                         GoldenNotKeptError, MissingDocumentsWarning, ModelError, RunNotFound, RunNotFoundError,
                         RunNotSavedError, SearchIndexError, SearchServiceError, StoreError, TargetConfigError,
                         UsageError, WriterUnavailable, WriterUnavailableError, WrongArgument, WrongArgumentError,
                         WrongValue, WrongValueError)
    from .golden import (Golden, Question, check_golden, golden_template, load_bedrock_jsonl, load_questions,
                         read_golden, save_questions)
    from .golden.schema import GOLDEN_SCHEMA
    from .scoring.picks import PICKS, choose
    from .run import build_report, search_of
    from .target import describe_target
    from .chunking.keys import ADDS, TECHNIQUES
    from .golden.writing.chat_writer import ChatWriter
    from .golden.writing.result import GoldenWriting
    from .golden.writing.settings import WritingSettings
    from .golden.writing.write import write_golden
    from .run import assemble_report, missing_documents, plan_run, retrieval_report, run_setup, setups_of
    from .settings import EvaluationSettings
    from .evaluate import save_report
    from .report.html import render_html
    from .store import open_store, report_store
    from .target import Hit, Setup, Target
    from .target_specs import TargetAccess, TargetSpec, open_target, parse_target_specs
    from .builds.settings import ALPHA, BUDGET
    from .compat.vectrixdb.retrieval import METHODS
    from .chat import ChatRoute
    from .chunking.keys import CHILD_SIZES, SIZES
    from .golden import GoldenCheck, GoldenProblem
    from .settings import DEPTH
    from .store import ReportStore
    from .store.builds import ChunkingStore


__getattr__ = lazy_attributes(__name__, _PUBLIC)


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
