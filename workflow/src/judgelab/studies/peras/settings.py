"""PERAS's settings values, built by its plan (:mod:`.plan`) from the config and carried whole
as rule params into its jobs (:mod:`.jobs`): the persona group a job covers, and the options of
the significance, figure and classifier stages."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any

from judgelab import schema
from judgelab.params import Settings


@dataclass(frozen=True)
class Group(Settings):
    """One dataset x model x template and its persona conditions, in order: the unit of the
    metrics, significance, figure and classifier jobs (their judgment and confidence inputs are
    in the order of ``personas``)."""

    dataset: str
    model: str
    template: str
    personas: tuple[str, ...]

    @property
    def ids(self) -> dict[str, str]:
        return {"dataset": self.dataset, "model": self.model, "template": self.template}

    @property
    def name(self) -> str:
        return f"{self.dataset} / {self.model} / {self.template}"


@dataclass(frozen=True)
class SignificanceSettings(Settings):
    """Persona vs reference: the reference persona, the paired bootstrap's draws and seed, and
    the significance level (Holm over each group's family)."""

    reference: str
    n_boot: int
    seed: int
    alpha: float


@dataclass(frozen=True)
class FigureSettings(Settings):
    """The radar charts' reference persona and support (``peras.support``: ``parsed``, each
    persona's parsed pairs, or ``common``, the pairs every persona answered), and the
    confidence-by-grade chart's personas and predicted label."""

    reference: str
    confidence_personas: tuple[str, ...]
    confidence_label: int
    support: str = schema.default_of("peras.support")


@dataclass(frozen=True)
class ClassifierSettings(Settings):
    """The RQ3 classifiers: trials, train share, seed, and the classifiers by name (None: the
    paper's five)."""

    trials: int
    train_fraction: float
    seed: int
    models: Mapping[str, Any] | None = None

    def param(self) -> str:
        """Not sorted: the order of ``models`` is the column order of Table 5."""
        return json.dumps(asdict(self), ensure_ascii=False)
