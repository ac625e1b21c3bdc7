"""Prompt sensitivity: the config section ``sensitivity`` resolved; see the package docstring.

Config section ``sensitivity``; target ``sensitivity``; rules ``workflow/rules/sensitivity/``; jobs
:mod:`.jobs`; science :mod:`.science`; the published files :mod:`.published` (their manifest
``resources/sensitivity/published.tsv``); paths :mod:`.paths`.
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import cached_property

from judgelab.errors import InputError, NothingToDo
from judgelab.llm.backends.base import Request
from judgelab.project.plan import LLMJob, StudyPlan
from judgelab.studies.sensitivity.paths import FIGURES, PATHS, TABLES
from judgelab.studies.sensitivity.published import PublishedFile, read_manifest
from judgelab.studies.sensitivity.settings import Bootstrap, Downloads, Selection

#: the manifest of the published files, under the workflow's ``resources/``
MANIFEST = "sensitivity/published.tsv"


class Plan(StudyPlan):
    name = "sensitivity"
    paths = PATHS

    @property
    def published(self) -> dict:
        return self.section["published"]

    @cached_property
    def manifest(self) -> list[PublishedFile]:
        return read_manifest(self.project.resources / MANIFEST)

    @property
    def published_datasets(self) -> dict[str, str]:
        """Published dataset (``dl20``, ``dl21``) -> the key of ``datasets`` holding its qrels."""
        return dict(self.published["datasets"])

    @property
    def datasets(self) -> list[str]:
        """The datasets whose human labels the published judgments are compared with."""
        return sorted(set(self.published_datasets.values()))

    @property
    def judges(self) -> list[str]:
        return []  # no live judge: the published judgments only

    def text_datasets(self) -> list[str]:
        return []  # no passage is shown to a model

    @cached_property
    def judgments(self) -> list[PublishedFile]:
        """The judgment files of the selected models, types, datasets and prompts, in manifest order."""
        p = self.published
        prompts = None if p["prompts"] is None else {str(x) for x in p["prompts"]}
        return [
            f
            for f in self.manifest
            if f.kind == "judgments"
            and f.model in p["models"]
            and f.type in p["types"]
            and f.dataset in self.published_datasets
            and (prompts is None or f.prompt in prompts)
        ]

    @cached_property
    def support(self) -> list[PublishedFile]:
        """``prompts.json`` and the pair lists of the datasets judged pairwise."""
        pairwise = {f.dataset for f in self.judgments if f.type == "pairwise"}
        return [
            f for f in self.manifest if f.kind == "prompts" or (f.kind == "pairs" and f.dataset in pairwise)
        ]

    def file_path(self, f: PublishedFile) -> str:
        return self.project.path("sensitivity_published", file=f.file)

    def downloads(self) -> Downloads:
        return Downloads(tuple(f.download() for f in self.support + self.judgments))

    def downloaded(self) -> list[str]:
        """The download job's outputs, in the order of :meth:`downloads`."""
        return [self.file_path(f) for f in self.support + self.judgments]

    def prompts_file(self) -> str:
        return next(self.file_path(f) for f in self.support if f.kind == "prompts")

    def pair_lists(self) -> list[PublishedFile]:
        return [f for f in self.support if f.kind == "pairs"]

    def qrel_datasets(self) -> list[str]:
        """The published datasets with a binary or graded file selected (their qrels are read)."""
        return sorted({f.dataset for f in self.judgments if f.type != "pairwise"})

    def selection(self) -> Selection:
        return Selection(
            tuple((f.model, f.type, f.dataset, f.prompt) for f in self.judgments),
            tuple(f.dataset for f in self.pair_lists()),
            tuple(self.qrel_datasets()),
        )

    def bootstrap(self) -> Bootstrap:
        b = self.section["bootstrap"]
        return Bootstrap(int(b["resamples"]), int(b["seed"]), float(b["level"]))

    def check(self) -> None:
        key = f"{self.name}.published"
        known = self.project.config["datasets"]
        for published, name in self.published_datasets.items():
            if name not in known:
                raise InputError(
                    f"{name!r} is not a key of `datasets` (known: {sorted(known)})",
                    key=f"{key}.datasets.{published}",
                )
        ids = {f.prompt for f in self.manifest if f.kind == "judgments"}
        for i, pid in enumerate(self.published["prompts"] or []):
            if str(pid) not in ids:
                raise InputError(
                    f"no published judgments with prompt {pid!r} (prompts with files: "
                    f"{sorted(ids, key=int)})",
                    key=f"{key}.prompts[{i}]",
                )
        if not self.judgments:
            raise NothingToDo(
                f"no published judgment file of models {self.published['models']}, types "
                f"{self.published['types']}, datasets {sorted(self.published_datasets)} "
                f"({key}); set {self.name}.enabled: false to skip the study",
                key=key,
            )

    def llm_jobs(self) -> list[LLMJob]:
        return []

    def targets(self) -> list[str]:
        path = self.project.path
        out = [path("sensitivity_agreement", ext=e) for e in TABLES]
        out += [path(k, ext=e) for k in ("sensitivity_spread", "sensitivity_groups") for e in TABLES]
        return out + [path("sensitivity_figure", ext=e) for e in FIGURES]

    def requests(self, job, ctx) -> Iterator[tuple[str, Request, bool]]:
        """No model-calling job: nothing for ``judgelab estimate``."""
        yield from ()
