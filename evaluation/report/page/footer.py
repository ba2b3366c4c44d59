"""How the run was made: each target's engine and index, the cache's bookkeeping, the rules applied."""
from __future__ import annotations

from ...store.run_report import RunReport
from ..notes import cache_note
from ..race_words import race_rule_words
from .context import Page
from .format import esc, plain, spaced


def footer(page: Page) -> str:
    """The footer: each target's engine and index state, the cache's counts, the run's rules."""
    report = page.report
    bits = [f"{spaced(k)}: {', then '.join(map(str, v)) if isinstance(v, list) else plain(v)}"
            for k, v in report.rules.values.items()]  # every rule as kept, a newer one too
    targets = []
    for name, target in report.targets.items():
        described = target.values  # the description as kept: what an engine says of its index
        facts = [f"{described.get('engine', '?')} engine"]
        for label in ("documents", "chunks"):
            if isinstance(described.get(label), int):
                facts.append(f"{described[label]} {label}")
        for label in ("index", "endpoint"):
            if described.get(label):
                facts.append(f"{label} {described[label]}")
        if target.index_state:
            facts.append(f"index state {target.index_state[:12]}")
        targets.append(f"<li><strong>{esc(name)}</strong>: {esc(', '.join(facts))}</li>")
    return ("<footer><h2>How this run was made</h2>"
            + (f'<ul class="plain">{"".join(targets)}</ul>' if targets else "")
            + _cache(report)
            + (f"<p>Rules: {esc('; '.join(bits))}.</p>" if bits else "")
            + (f'<p id="race">Race: {esc(race)}.</p>' if (race := race_rule_words(report)) else "")
            + "<p>Made by the retrieval evaluation library. This page is one file: it fetches nothing and runs no "
              "script.</p></footer>")


def _cache(report: RunReport) -> str:
    """How much of the run's batch work came from earlier runs (a report without a cache: nothing)."""
    cache = report.cache
    if cache is None or not all(isinstance(v, int) for v in cache.values()):
        return ""
    return f'<p class="note" id="cache">{esc(cache_note(cache))}</p>'
