"""The study's settings values (each a :class:`judgelab.params.Settings`, carried whole as a rule's
param): the files to download, the published files each agreement row reads, the bootstrap."""

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
    dataset, prompt) per judgment file; ``pairs`` the dataset of each pair list; ``qrels`` the
    published dataset (``dl20``, ``dl21``) of each dataset table."""

    judgments: tuple[tuple[str, str, str, str], ...]
    pairs: tuple[str, ...]
    qrels: tuple[str, ...]

    def __post_init__(self):
        object.__setattr__(self, "judgments", tuple(tuple(j) for j in self.judgments))  # from JSON lists


@dataclass(frozen=True)
class Bootstrap(Settings):
    """The bootstrap of the human-vs-LLM difference (``sensitivity.bootstrap``)."""

    resamples: int
    seed: int
    level: float
