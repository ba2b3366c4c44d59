"""``answers score``: written answers scored by a judge model over an OpenAI-compatible endpoint.

The judge's settings are read here, at the edge, from flags and environment variables, into a frozen
``JudgeSettings`` (the library reads no environment):

    --endpoint   EVALUATION_JUDGE_ENDPOINT   https://<resource>.openai.azure.com, https://api.openai.com/v1,
                                             http://127.0.0.1:8080/v1 ...
    --model      EVALUATION_JUDGE_MODEL      model name, or the Azure OpenAI deployment
    --api-key-env NAME (default EVALUATION_JUDGE_API_KEY): the variable holding the key, never the key itself
    --auth auto: a key when that variable is set, else the managed identity on Azure OpenAI, else none
"""
from __future__ import annotations

import argparse
import json
import os
from typing import Mapping

from .chat_options import add_chat_options, chat_settings
from .common import path_or_address, plain

PREFIX = "EVALUATION_JUDGE"  # EVALUATION_JUDGE_ENDPOINT, _MODEL, _API_KEY
KEY_VARIABLE = f"{PREFIX}_API_KEY"  # the judge's key variable, the chunking commands' default too


def register(subparsers: argparse._SubParsersAction) -> None:
    answers = subparsers.add_parser("answers", help="score written answers with a judge model",
                                    description="Score written answers to golden questions with a judge model.")
    actions = answers.add_subparsers(dest="answers_command", metavar="ACTION", required=True)
    score = actions.add_parser("score", help="score each answer on Bedrock's RAG metrics with a judge model",
                               description=plain(__doc__.split("\n\n", 1)[0].split(": ", 1)[1]),
                               formatter_class=argparse.RawDescriptionHelpFormatter,
                               epilog=plain(__doc__.split("\n\n", 1)[1]))
    score.add_argument("--golden", required=True, type=path_or_address,
                       help="the golden file (the questions and reference answers)")
    score.add_argument("--answers", required=True, type=path_or_address,
                       help='JSONL rows {"id", "answer", "sources"?}, or one JSON object id -> answer')
    score.add_argument("--metrics", default="correctness,completeness,faithfulness,helpfulness",
                       help="comma-separated (default correctness,completeness,faithfulness,helpfulness; "
                            "also logical_coherence)")
    add_chat_options(score, "judge", PREFIX)
    score.add_argument("--json", action="store_true", help="print the scores as JSON")
    score.set_defaults(handler=score_answers)


def judge_settings(args: argparse.Namespace, environ: Mapping[str, str]):
    """The frozen ``JudgeSettings`` from the flags, falling back on ``environ``."""
    from ..answers.judge import JudgeSettings

    return chat_settings(args, environ, "judge", PREFIX, JudgeSettings)


def score_answers(args: argparse.Namespace) -> int:
    from ..answers.judge import ChatJudge
    from ..answers.scored import answer_report, read_answers

    answers = read_answers(args.answers)  # first: a bad file costs no request
    metrics = [m for m in args.metrics.split(",") if m.strip()]
    with ChatJudge(judge_settings(args, os.environ)) as judge:
        report = answer_report(args.golden, answers, judge, metrics)
    print(json.dumps(report.to_dict(), indent=2) if args.json else report.summary())
    return 0
