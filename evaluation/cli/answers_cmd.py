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

from .common import seconds, whole

ENDPOINT_VARIABLE = "EVALUATION_JUDGE_ENDPOINT"
MODEL_VARIABLE = "EVALUATION_JUDGE_MODEL"
KEY_VARIABLE = "EVALUATION_JUDGE_API_KEY"
MAX_TIMEOUT_S = 600  # a judge that needs longer for one reply is not answering; nothing waits for ever
MAX_RETRIES = 10


def register(subparsers: argparse._SubParsersAction) -> None:
    answers = subparsers.add_parser("answers", help="score written answers with a judge model",
                                    description="Score written answers to golden questions with a judge model.")
    actions = answers.add_subparsers(dest="answers_command", metavar="ACTION", required=True)
    score = actions.add_parser("score", help="score each answer on Bedrock's RAG metrics with a judge model",
                               description=__doc__.split("\n\n", 1)[0].split(": ", 1)[1],
                               formatter_class=argparse.RawDescriptionHelpFormatter,
                               epilog=__doc__.split("\n\n", 1)[1])
    score.add_argument("--golden", required=True, help="the golden file (the questions and reference answers)")
    score.add_argument("--answers", required=True,
                       help='JSONL rows {"id", "answer", "sources"?}, or one JSON object id -> answer')
    score.add_argument("--metrics", default="correctness,completeness,faithfulness,helpfulness",
                       help="comma-separated (default correctness,completeness,faithfulness,helpfulness; "
                            "also logical_coherence)")
    score.add_argument("--endpoint", help=f"the judge's endpoint (default ${ENDPOINT_VARIABLE})")
    score.add_argument("--model", help=f"model or Azure deployment name (default ${MODEL_VARIABLE})")
    score.add_argument("--api", choices=("auto", "azure", "openai"), default="auto",
                       help="request style (default auto: azure on *.openai.azure.com and *.cognitiveservices.azure.com)")
    score.add_argument("--api-version", default="2024-10-21", help="Azure OpenAI api-version (default 2024-10-21)")
    score.add_argument("--auth", choices=("auto", "key", "managed-identity", "none"), default="auto",
                       help="how to sign in (default auto)")
    score.add_argument("--api-key-env", default=KEY_VARIABLE, metavar="NAME",
                       help=f"environment variable holding the key (default {KEY_VARIABLE})")
    score.add_argument("--client-id", help="a user-assigned managed identity's client id")
    score.add_argument("--timeout", type=seconds(MAX_TIMEOUT_S), default=60.0,
                       help=f"seconds to wait for one reply (default 60, at most {MAX_TIMEOUT_S})")
    score.add_argument("--retries", type=whole(0, MAX_RETRIES), default=2,
                       help=f"retries after a timeout or a busy service (default 2, at most {MAX_RETRIES})")
    score.add_argument("--json", action="store_true", help="print the scores as JSON")
    score.set_defaults(handler=score_answers)


def judge_settings(args: argparse.Namespace, environ: Mapping[str, str]):
    """The frozen ``JudgeSettings`` from the flags, falling back on ``environ``."""
    from ..answers.judge import JudgeSettings
    from ..errors import UsageError

    endpoint = args.endpoint or environ.get(ENDPOINT_VARIABLE)
    model = args.model or environ.get(MODEL_VARIABLE)
    if not endpoint or not model:
        raise UsageError(f"the judge needs an endpoint and a model: --endpoint URL --model NAME, or "
                         f"{ENDPOINT_VARIABLE} and {MODEL_VARIABLE}")
    key = environ.get(args.api_key_env) or None
    auth = args.auth.replace("-", "_")
    if auth == "auto":
        probe = JudgeSettings(endpoint=endpoint, model=model, api=args.api, auth="none")
        auth = "key" if key else "managed_identity" if probe.kind == "azure" else "none"
    if auth == "key" and not key:
        raise UsageError(f"--auth key reads the key from ${args.api_key_env}, which is not set")
    return JudgeSettings(endpoint=endpoint, model=model, api=args.api, api_version=args.api_version, auth=auth,
                         api_key=key if auth == "key" else None, managed_identity_client_id=args.client_id,
                         timeout_s=args.timeout, retries=args.retries)


def score_answers(args: argparse.Namespace) -> int:
    from ..answers.judge import ChatJudge
    from ..answers.scored import answer_report, read_answers

    answers = read_answers(args.answers)  # first: a bad file costs no request
    metrics = [m for m in args.metrics.split(",") if m.strip()]
    with ChatJudge(judge_settings(args, os.environ)) as judge:
        report = answer_report(args.golden, answers, judge, metrics)
    print(json.dumps(report.to_dict(), indent=2) if args.json else report.summary())
    return 0
