"""The overrating study's settings values, built by its plan (:mod:`.plan`) from the config and
carried whole as rule params into its jobs (:mod:`.jobs`): the pair sampling of the pairwise
study, and the options of Tables 1 and 2. The judges themselves are
:class:`judgelab.llm.judge.Judge` values (a pointwise judge: its scale's template and labels; the
pairwise judge: the forced-choice template and its two labels) and an imported judge's reading is
a :class:`judgelab.data.imported.ImportReading`."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from judgelab import schema
from judgelab.params import Settings


@dataclass(frozen=True)
class Sampling(Settings):
    """The pair sampling of a dataset (:func:`judgelab.studies.overrating.pairwise.sample_pairs`):
    at most ``per_setting`` pairs per setting per query, drawn by a generator seeded with
    (``seed``, query id, setting); a passage is relevant at grade ``relevant_min`` and above."""

    per_setting: int
    seed: int
    relevant_min: int

    def __post_init__(self) -> None:
        for name in ("per_setting", "seed", "relevant_min"):
            object.__setattr__(self, name, int(getattr(self, name)))


@dataclass(frozen=True)
class TableSettings(Settings):
    """The options of Tables 1 and 2: the token-confidence definition of their "Avg Confidence"
    (``full``, the paper's, or ``renormalised``; the other follows it) and the judges' display
    names by model key (a judge not named keeps its key)."""

    confidence: str = schema.default_of("overrating.confidence")
    names: Mapping[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "names", dict(self.names or {}))
