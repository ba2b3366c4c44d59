"""``evaluate --judge-holes``: the flags that have a chat model grade the run's unjudged results, and the
``HoleJudge`` built from them at the edge (the library reads no flag and no environment variable).

The judge is named as ``answers score`` names one, its flags starting ``--judge-`` (``--judge-endpoint``,
``--judge-model``, ...) and falling back on the same variables (``EVALUATION_JUDGE_ENDPOINT``,
``_MODEL``, ``_API_KEY``). Its replies are kept in ``--judge-reply-cache`` (default
``.index/judge-replies.jsonl``), so running the same evaluate again asks the model nothing.
"""
from __future__ import annotations

import argparse
import math
import os
from typing import Any, Mapping

from ..errors import UsageError
from .chat_options import add_chat_options, chat_settings
from .common import local_path, whole

PREFIX = "EVALUATION_JUDGE"  # the judge's variables, as answers score reads them
DEFAULT_CACHE = os.path.join(".index", "judge-replies.jsonl")
# Flags that mean nothing without --judge-holes (their defaults are None or False: given when set).
ONLY_WITH_JUDGING = ("judge_endpoint", "judge_model", "judge_reply_cache", "judge_prices", "judge_max_cost",
                     "judge_calibration", "judge_min_kappa", "judge_allow_family")


def _money(value: str) -> float:
    try:
        amount = float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{value!r} is not an amount, such as 2.50") from None
    if not math.isfinite(amount) or amount < 0:
        raise argparse.ArgumentTypeError(f"{value!r}: a cost cap is 0 or more")
    return amount


def _kappa(value: str) -> float:
    try:
        number = float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{value!r} is not a kappa, such as 0.4") from None
    if not -1 <= number <= 1:
        raise argparse.ArgumentTypeError(f"{value!r}: a kappa is from -1 to 1")
    return number


def add_hole_judge_options(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group(
        "judging the holes (results nobody labelled) with a chat model; every number it gives is marked +judged")
    group.add_argument("--judge-holes", action="store_true",
                       help="grade every unjudged result in a setup's top 10 with a chat model, once it agrees with "
                            "a slice of the golden file's own labels (Cohen's kappa); the report keeps its grades "
                            "and the numbers they give apart from the people's")
    add_chat_options(group, "judge", PREFIX, flags="judge-")
    group.add_argument("--judge-reply-cache", type=local_path, metavar="FILE",
                       help=f"keep every reply of the judge here, so a second run asks nothing "
                            f"(default {DEFAULT_CACHE})")
    group.add_argument("--judge-prices", type=local_path, metavar="FILE",
                       help="the price table (JSON: dollars per million input and output tokens by model); default: "
                            "the shipped one, list prices of common OpenAI models")
    group.add_argument("--judge-max-cost", type=_money, metavar="AMOUNT",
                       help="stop judging before the cost could pass this (in the price table's currency); the "
                            "holes left are said, and stay unjudged")
    group.add_argument("--judge-calibration", type=whole(2, 100_000), metavar="N",
                       help="labels set aside to measure the judge on, seeded by --seed (default 100)")
    group.add_argument("--judge-min-kappa", type=_kappa, metavar="KAPPA",
                       help="the low end of kappa's 95%% interval the judge must reach for its grades to count "
                            "(default 0.4, moderate agreement)")
    group.add_argument("--judge-allow-family", action="store_true",
                       help="judge even with a model of a family under test (a MiniLM judge of a MiniLM "
                            "cross-encoder); the conflict is printed on every pick")
    group.add_argument("--picks-from", choices=("human", "judged"), default="human",
                       help="name the picks from the people's labels (default) or from the people's with the "
                            "judge's grades (marked so wherever shown)")


def hole_judge(args: argparse.Namespace, environ: Mapping[str, str], progress: Any = None) -> Any:
    """The ``HoleJudge`` the flags ask for, or None without ``--judge-holes``; a ``UsageError`` for a judge
    flag given without it, before any search."""
    if not args.judge_holes:
        given = [name for name in ONLY_WITH_JUDGING if getattr(args, name, None) not in (None, False)]
        if args.picks_from != "human":
            given.append("picks_from")
        if given:
            raise UsageError(f"--{given[0].replace('_', '-')} is a setting of the holes' judge: add --judge-holes")
        return None
    from ..holes import HoleGrader, HoleJudge
    from ..holes.grader import GRADE_MAX_TOKENS

    settings = chat_settings(args, environ, "judge", PREFIX, flags="judge-", max_tokens=GRADE_MAX_TOKENS)
    keywords: dict[str, Any] = {"seed": args.seed, "picks_from": args.picks_from,
                                "allow_family": args.judge_allow_family, "max_cost": args.judge_max_cost}
    if args.judge_calibration is not None:
        keywords["calibration"] = args.judge_calibration
    if args.judge_min_kappa is not None:
        keywords["min_kappa"] = args.judge_min_kappa
    return HoleJudge(HoleGrader(settings), cache=args.judge_reply_cache or DEFAULT_CACHE, prices=args.judge_prices,
                     progress=progress, **keywords)
