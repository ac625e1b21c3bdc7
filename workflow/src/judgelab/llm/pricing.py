"""Prices of API models (``models.<name>.prices``) and what a number of tokens costs."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from judgelab.errors import InputError


@dataclass(frozen=True)
class Prices:
    """USD per million tokens; batch requests cost ``batch_factor`` times as much."""

    input: float
    output: float
    batch_factor: float = 0.5

    @classmethod
    def from_spec(cls, spec: Mapping[str, Any], name: str) -> Prices | None:
        """The prices of a model entry, or None when it names none (local models are free)."""
        raw = spec.get("prices")
        if raw is None:
            return None
        key = f"models.{name}.prices"
        if not isinstance(raw, Mapping):
            raise InputError("expected a mapping {input: USD per 1M tokens, output: ...}", key=key)
        values = {}
        for field_name, default in (("input", None), ("output", None), ("batch_factor", 0.5)):
            value = raw.get(field_name, default)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
                raise InputError(f"expected a number >= 0, got {value!r}", key=f"{key}.{field_name}")
            values[field_name] = float(value)
        if values["batch_factor"] > 1:
            raise InputError(
                f"expected a factor in [0, 1], got {values['batch_factor']}", key=f"{key}.batch_factor"
            )
        return cls(**values)

    def cost(self, input_tokens: float, output_tokens: float, *, batch: bool = False) -> float:
        usd = (input_tokens * self.input + output_tokens * self.output) / 1e6
        return usd * self.batch_factor if batch else usd
