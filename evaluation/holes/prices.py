"""What judging costs: tokens counted per call, priced from a table the user can edit, and a cap that
stops the judging before it would be passed.

- Tokens: the service's ``usage`` field (``prompt_tokens``, ``completion_tokens``) when the reply has
  one; otherwise estimated at one token per 4 characters (the rule of thumb OpenAI gives for English)
  and said so (``estimated_calls``). A cached reply costs nothing and is counted apart (``cached``).
- Prices: ``prices.json`` beside this module, or a file of the same shape (``--judge-prices``): US
  dollars per million input and output tokens, by model (Azure OpenAI: deployment) name, found by the
  exact name or else the longest name in the table that starts it.
- The cap: before each call, ``allows`` adds the call's worst case to what is spent and refuses when
  the sum would pass the cap, so the cap is never passed, not merely noticed after. The worst case is
  an upper bound, not a guess: byte-level BPE tokenizers (OpenAI's) never make more tokens than the
  prompt has UTF-8 bytes, plus ``MESSAGE_OVERHEAD`` tokens a message for the chat format, and the reply
  is at most ``max_tokens``. A call whose reply had no ``usage`` is charged against the cap at that
  worst case too (``spent_at_most``), so an estimate that came out low cannot let the cap be passed.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping, Sequence

from ..errors import UsageError
from ..files import read_input
from ..jsonl import parse_json

DEFAULT_PRICES = Path(__file__).with_name("prices.json")
CHARS_PER_TOKEN = 4  # OpenAI's rule of thumb, for replies without a usage field
MESSAGE_OVERHEAD = 8  # tokens the chat format adds around a message, generously (OpenAI counts 3-4)
REPLY_PRIMING = 8     # tokens that start the reply


@dataclass(frozen=True)
class Price:
    """Dollars per ``per_tokens`` input and output tokens, for ``model`` (the table's name for it)."""

    model: str
    input: float
    output: float
    per_tokens: int = 1_000_000

    def of(self, prompt_tokens: int, completion_tokens: int) -> float:
        return (prompt_tokens * self.input + completion_tokens * self.output) / self.per_tokens


@dataclass(frozen=True)
class PriceTable:
    """Prices by model name, read from ``source`` (``read_prices``)."""

    source: str
    prices: Mapping[str, Price]
    currency: str = "USD"

    def price(self, model: str) -> Price | None:
        """The price of ``model``: by its exact name, else the longest name in the table that starts it."""
        if model in self.prices:
            return self.prices[model]
        starts = [name for name in self.prices if model.startswith(name)]
        return self.prices[max(starts, key=len)] if starts else None


def read_prices(path: str | Path | None = None) -> PriceTable:
    """The price table at ``path`` (None: the shipped ``prices.json``); a ``UsageError`` naming the file,
    the entry and the fix for anything that is not one."""
    path = Path(path) if path is not None else DEFAULT_PRICES
    try:
        raw = read_input(path, max_bytes=1_000_000)
    except OSError as err:
        raise UsageError(f"{path}: cannot read the price table ({getattr(err, 'strerror', None) or err}); give a "
                         f"JSON file shaped as {DEFAULT_PRICES.name} (models -> input and output dollars per "
                         "million tokens)") from None
    return parse_prices(raw, str(path))


def parse_prices(raw: bytes | str, source: str) -> PriceTable:
    """A price table from its JSON (a file's bytes, or an app setting's text); ``source`` names it."""
    path = source
    try:
        table = parse_json(raw.decode("utf-8-sig") if isinstance(raw, bytes) else raw, strict=False)
    except (ValueError, UnicodeDecodeError) as err:
        raise UsageError(f"{path}: the price table is not JSON ({err})") from None
    models = table.get("models") if isinstance(table, dict) else None
    per = table.get("per_tokens", 1_000_000) if isinstance(table, dict) else None
    if not isinstance(models, dict) or isinstance(per, bool) or not isinstance(per, int) or per < 1:
        raise UsageError(f'{path}: a price table is {{"per_tokens": 1000000, "models": {{"gpt-4o-mini": '
                         '{"input": 0.15, "output": 0.60}}}}: dollars per million tokens by model')
    prices = {}
    for name, entry in models.items():
        values = [entry.get(side) if isinstance(entry, dict) else None for side in ("input", "output")]
        if not all(isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) and v >= 0
                   for v in values):
            raise UsageError(f'{path}: models."{name}" needs "input" and "output", each 0 or more dollars per '
                             f"{per} tokens, not {entry!r}")
        prices[str(name)] = Price(str(name), float(entry["input"]), float(entry["output"]), per)
    return PriceTable(source, prices, str(table.get("currency") or "USD"))


def message_bytes(messages: Sequence[Mapping[str, str]]) -> int:
    return sum(len(str(m.get("content", "")).encode("utf-8")) + len(str(m.get("role", ""))) for m in messages)


def worst_tokens(messages: Sequence[Mapping[str, str]]) -> int:
    """An upper bound of the prompt's tokens (the module docstring)."""
    return message_bytes(messages) + MESSAGE_OVERHEAD * len(messages) + REPLY_PRIMING


def estimated_tokens(text: str) -> int:
    return math.ceil(len(text) / CHARS_PER_TOKEN)


class CostMeter:
    """The judge's calls and what they cost, and the cap they stay under (the module docstring).

    ``price`` None: tokens are counted but not priced, and no cap can be kept (``judge_holes`` refuses a
    cap without a price before any call)."""

    def __init__(self, price: Price | None, cap: float | None = None) -> None:
        if cap is not None and price is None:
            raise UsageError("a cost cap needs the model's price: add the model to the price table")
        self.price, self.cap = price, cap
        self.calls = self.cached = self.estimated_calls = 0
        self.prompt_tokens = self.completion_tokens = 0
        self.spent = 0.0          # priced from the tokens counted (estimated where a reply had no usage)
        self.spent_at_most = 0.0  # what the cap is kept against: the worst case for a reply without usage
        self.refused = 0          # calls not made because the cap would have been passed

    def worst_case(self, messages: Sequence[Mapping[str, str]], max_tokens: int) -> float:
        """The most the next call can cost: every prompt byte a token, the reply at its limit."""
        if self.price is None:
            return 0.0
        return self.price.of(worst_tokens(messages), max_tokens)

    def allows(self, messages: Sequence[Mapping[str, str]], max_tokens: int) -> bool:
        """Whether a call with ``messages`` stays under the cap whatever it costs; counts a refusal."""
        if self.cap is None:
            return True
        if self.spent_at_most + self.worst_case(messages, max_tokens) <= self.cap:
            return True
        self.refused += 1
        return False

    def record(self, messages: Sequence[Mapping[str, str]], reply: str, usage: Any, max_tokens: int) -> None:
        """One call made: its tokens from ``usage`` (the reply's ``usage`` field), else estimated."""
        self.calls += 1
        prompt = _count(usage, "prompt_tokens")
        completion = _count(usage, "completion_tokens")
        if prompt is None or completion is None:
            self.estimated_calls += 1
            prompt = estimated_tokens("".join(str(m.get("content", "")) for m in messages))
            completion = estimated_tokens(reply)
            worst = self.worst_case(messages, max_tokens)
        else:
            worst = self.price.of(prompt, completion) if self.price is not None else 0.0
        self.prompt_tokens += prompt
        self.completion_tokens += completion
        if self.price is not None:
            self.spent += self.price.of(prompt, completion)
            self.spent_at_most += worst

    def to_json(self, table: PriceTable | None = None) -> dict[str, Any]:
        return {"calls": self.calls, "cached": self.cached, "refused_by_cap": self.refused,
                "prompt_tokens": self.prompt_tokens, "completion_tokens": self.completion_tokens,
                "estimated_calls": self.estimated_calls,
                "cost": None if self.price is None else round(self.spent, 6),
                "cost_at_most": None if self.price is None else round(self.spent_at_most, 6),
                "cap": self.cap, "currency": table.currency if table is not None else "USD",
                "price": None if self.price is None else {"model": self.price.model, "input": self.price.input,
                                                          "output": self.price.output,
                                                          "per_tokens": self.price.per_tokens},
                "prices_from": table.source if table is not None else None}


def _count(usage: Any, name: str) -> int | None:
    value = usage.get(name) if isinstance(usage, dict) else None
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None

