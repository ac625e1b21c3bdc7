"""The study's settings values (each a :class:`judgelab.params.Settings`, carried whole as a rule's
param): the files to download, the published files each agreement row reads, the bootstrap, the
pairs formed for live pairwise judging."""

from __future__ import annotations

from dataclasses import dataclass

from judgelab.params import Settings


@dataclass(frozen=True)
class Downloads(Settings):
    """The published files to fetch, in the order of the download job's outputs: (path in the
    repository, bytes, SHA-256, URL) each."""

    files: tuple[tuple[str, int, str, str], ...]

    def __post_init__(self):
        object.__setattr__(self, "files", tuple(tuple(f) for f in self.files))  # from JSON lists


@dataclass(frozen=True)
class Selection(Settings):
    """What the agreement job's input lists hold, in their order: ``judgments`` (model, type,
    published dataset, prompt) per published judgment file; ``pairs`` the published dataset of
    each pair list; ``tables`` the dataset (key of ``datasets``) of each dataset table;
    ``published`` (published dataset, dataset) pairs; ``live`` (dataset, model, prompt, type) per
    live judge's table; ``groups`` (prompt, group) of the live prompts."""

    judgments: tuple[tuple[str, str, str, str], ...]
    pairs: tuple[str, ...]
    tables: tuple[str, ...]
    published: tuple[tuple[str, str], ...] = ()
    live: tuple[tuple[str, str, str, str], ...] = ()
    groups: tuple[tuple[str, str], ...] = ()

    def __post_init__(self):
        for name in ("judgments", "published", "live", "groups"):  # from JSON lists
            object.__setattr__(self, name, tuple(tuple(x) for x in getattr(self, name)))


@dataclass(frozen=True)
class Bootstrap(Settings):
    """The bootstrap of the human-vs-LLM difference (``sensitivity.bootstrap``)."""

    resamples: int
    seed: int
    level: float


@dataclass(frozen=True)
class PairSampling(Settings):
    """How the pairs of a dataset without the authors' pair list are formed
    (``sensitivity.pairwise``): at most ``per_query`` pairs per query, drawn with ``seed``."""

    per_query: int
    seed: int


@dataclass(frozen=True)
class Rankings(Settings):
    """What the rankings job's input lists hold, in their order (``sensitivity.rankings``):
    ``judgments`` (model, type, published dataset, prompt) per published binary or graded file;
    ``tables`` the dataset of each dataset table; ``published`` (published dataset, dataset) pairs;
    ``live`` (dataset, model, prompt, type) per live judge's table; ``groups`` (prompt, group) of
    the live prompts; ``runs`` (dataset, run name) per run file; ``measures`` by ir-measures name."""

    judgments: tuple[tuple[str, str, str, str], ...]
    tables: tuple[str, ...]
    published: tuple[tuple[str, str], ...]
    live: tuple[tuple[str, str, str, str], ...]
    groups: tuple[tuple[str, str], ...]
    runs: tuple[tuple[str, str], ...]
    measures: tuple[str, ...]

    def __post_init__(self):
        for name in ("judgments", "published", "live", "groups", "runs"):  # from JSON lists
            object.__setattr__(self, name, tuple(tuple(x) for x in getattr(self, name)))
        object.__setattr__(self, "measures", tuple(self.measures))
