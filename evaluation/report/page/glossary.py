"""What the numbers mean: found@k, MRR, nDCG@10, the times, the frontier, the paired test, ties, picks."""
from __future__ import annotations

from ...measures import MRR, NDCG_10
from ..notes import READINGS
from .context import Page
from .format import esc, has_recall


# What "tied on time" meant in reports from before side-by-side timing and the floor (their pages say it still).
_BEFORE_THE_FLOOR = ("tied on time", "Two setups whose medians' 99% intervals overlap: their timed searches cannot "
                     "tell which is faster, so the picks treat them as equally fast and choose between them by "
                     "found@10, then found@1, then key, and the same inputs give the same picks.")


def _time_entries(floor: float) -> list[tuple[str, str]]:
    """Tied on time, equally fast, and the rule inside a tier, for a report with a floor of ``floor`` ms."""
    return [
        ("tied on time", "Every setup's sample is timed side by side, question by question in a rotating order, "
                         "so a busy machine slows each pair alike; two setups are tied unless a paired test on "
                         "their per-question time ratios (trimmed, Holm-corrected) shows one slower by more than "
                         "the floor. Setups not timed side by side are tied when their medians' 99% intervals "
                         "overlap."),
        ("equally fast", f"Setups under {floor:g} ms of each other (the report's equally_fast_ms: about what a "
                         "round trip to a search service costs) are equally fast: such a difference never "
                         "decides a pick."),
        ("inside a tier", "A time pick takes the setup shown faster by more than the floor, and only between "
                          "setups as fast as each other does found@1 decide."),
    ]


def glossary(page: Page) -> str:
    """The ``#words`` section; recall@k only when a setup's summary holds it."""
    report, ran = page.report, page.ran
    floor = report.rules.floor_ms
    by = report.by or "doc"
    graded = report.rules.rank_among is not None  # a report before graded judgements keeps its words
    depth = report.depth if report.depth is not None else 20
    entries = [
        ("found@k", "The share of questions with at least one expected result in the first k results. Other "
                    "tools call it hit rate@k or success@k, and recall@k when each question expects one document."
                    f" Here a result counts as expected when it matches at the “{by}” grain."),
        (str(MRR), "Mean reciprocal rank: 1 divided by the position of the first expected result (1 when first, "
                "0.5 when second, 0 when none came back in the top "
                f"{depth}), averaged over the questions."),
        (str(NDCG_10), "Normalised discounted cumulative gain over the first 10 results: every expected result "
                    "counts, the nearer the top the more; 1.0 is every expected result at the very top."
                    + (" A graded document counts by its grade (1 for one listed in expected), against the best "
                       "order of every judged document, as trec_eval computes it." if graded else "")),
        ("median / p95 ms", "Half the timed searches were faster than the median, 95 in 100 faster than p95. "
                            "Searches are timed one at a time as a caller would make them (query embedding and "
                            "reranking included, nothing cached), after one untimed warm-up, on a random "
                            "sample of the questions until the median is known within the margin shown "
                            "beside it (a 95% interval)."),
        ("frontier", "The setups no other setup beats on both found@10 and median time."),
        ("too few to tell", "With a few dozen questions, two setups a question or two apart may differ by luck. "
                            "Each setup is compared with the top on the same questions (an exact paired test on "
                            "found@10, Holm-corrected across setups); when the test cannot tell them apart at the "
                            "report's alpha, the questions are too few to tell, which is not the same as finding "
                            "as many: the page says how many questions the same test would need for a gap of the "
                            "size seen."),
        *(_time_entries(floor) if floor is not None else [_BEFORE_THE_FLOOR]),
        ("picks", "finds_the_most is the top of the ranking; best_for_balance and best_for_time are the fastest "
                  "setups within a few points of it, counted in whole questions."),
        ("neighbours", "Setups one change away: another ranker, one model more or fewer, or the same search "
                       "on another engine."),
    ]
    among, grade = report.rules.rank_among, report.rules.min_grade
    if among in READINGS:
        entries.insert(0, ("position", f"This run read ranks {READINGS[among][0]}: {READINGS[among][1]}. "
                                       f"A document graded {grade} or more counts as expected for found@k, MRR and "
                                       "recall@k; the exported TREC files read ranks the same way, so trec_eval, ranx "
                                       "and ir_measures give these numbers on them."))
    if any(s.summary is not None and s.summary.judged_10 is not None for s in ran):
        entries.append(("judged@10 / holes", "The share of a setup's top 10 results the golden file judges "
                                             "(any grade, 0 included), and the documents there it does not judge: "
                                             "those score as not relevant, so a setup finding them may be better "
                                             "than it looks."))
    if has_recall(ran):
        entries.insert(1, ("recall@k", "The share of a question's expected items found in the first k results, "
                                       "averaged over the questions."))
    return ('<section id="words"><h2>What the numbers mean</h2><dl class="glossary">'
            + "".join(f"<dt>{esc(a)}</dt><dd>{esc(b)}</dd>" for a, b in entries) + "</dl></section>")
