"""Prices of API models (``models.<name>.prices``) and what a number of tokens costs."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from judgelab import schema
from judgelab.llm.backends import capabilities


@dataclass(frozen=True)
class Prices:
    """USD per million tokens; batch requests cost ``batch_factor`` times as much."""

    input: float
    output: float
    batch_factor: float

    @classmethod
    def from_spec(cls, spec: Mapping[str, Any], name: str) -> Prices | None:
        """The prices of a model entry, or None when it names none (local models are free)."""
        raw = spec.get("prices")
        if raw is None:
            return None
        schema.validate_entry(raw, "models.<name>.prices", f"models.{name}.prices")
        # input and output are required; batch_factor, when unset, is the schema's default
        factor = raw.get("batch_factor", schema.default("models.<name>.prices.batch_factor"))
        return cls(float(raw["input"]), float(raw["output"]), float(factor))

    def cost(self, input_tokens: float, output_tokens: float, *, batch: bool = False) -> float:
        usd = (input_tokens * self.input + output_tokens * self.output) / 1e6
        return usd * self.batch_factor if batch else usd


#: The cost columns of a judge's row in a table beside its quality: where its labels come from
#: (``live`` - its backend - or ``imported``: no call), the calls, input and output tokens a fresh
#: run sends (once per request of its judgment table, cache hit or not: a hit carries the cached
#: call's counts), their dollars (0 for a local model; NaN for an API model whose entry lists no
#: prices), dollars per 1,000 judgments, and the model seconds (the calls' latencies summed: for
#: the embedded model its compute time).
COST_COLUMNS = ["cost_source", "calls", "input_tokens", "output_tokens", "usd", "usd_per_1k", "model_s"]


def judgment_cost(
    table, prices: Prices | None, *, backend: str | None, batch: bool = False, imported: bool = False
) -> dict[str, Any]:
    """:data:`COST_COLUMNS` of one judge's judgment table (one row per request; columns
    ``prompt_tokens``, ``completion_tokens``, ``latency_s``). ``imported``: labels from a file,
    no call (every count 0, marked so)."""
    import math

    import pandas as pd

    if imported:
        return {
            "cost_source": "imported (no calls)",
            "calls": 0,
            "input_tokens": 0,
            "output_tokens": 0,
            "usd": 0.0,
            "usd_per_1k": 0.0,
            "model_s": 0.0,
        }
    calls = len(table)

    def total(col: str) -> float:
        return float(pd.to_numeric(table[col], errors="coerce").sum()) if col in table else 0.0

    tokens_in, tokens_out = total("prompt_tokens"), total("completion_tokens")
    if prices is not None:
        usd = prices.cost(tokens_in, tokens_out, batch=batch)
    else:
        usd = math.nan if capabilities(backend).priced else 0.0
    return {
        "cost_source": f"live ({backend or 'unknown backend'}{', batch' if batch else ''})",
        "calls": calls,
        "input_tokens": int(tokens_in),
        "output_tokens": int(tokens_out),
        "usd": usd,
        "usd_per_1k": usd / calls * 1000 if calls else math.nan,
        "model_s": total("latency_s"),
    }
