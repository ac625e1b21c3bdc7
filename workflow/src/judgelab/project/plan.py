"""What a study's plan is: :class:`StudyPlan`, the base of every ``judgelab.studies.<study>.plan.Plan``
(how its config section resolves, its checks, its result paths, its LLM jobs and targets), and
:class:`LLMJob`, one job that calls a model. The project facade
(:class:`judgelab.wiring.facade.Project`) builds one plan per study by module path and asks
them; this module imports neither the facade nor any study."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from judgelab.errors import InputError
from judgelab.llm.backends.base import Request


@dataclass(frozen=True)
class LLMJob:
    """One job that calls a model: its rule, the model, and its wildcards (what a dry-run lists)."""

    rule: str
    model: str
    wildcards: tuple[tuple[str, str], ...]
    study: str = ""  # "" for the shared persona generation

    @property
    def wc(self) -> dict[str, str]:
        return dict(self.wildcards)


class StudyPlan:
    """The resolution questions of one study. Subclasses set ``name`` (the config section and the
    target) and ``paths`` (result paths under ``{results}``, named once), and implement
    :meth:`llm_jobs`, :meth:`targets` and :meth:`requests`."""

    name: str = ""
    paths: dict[str, str] = {}
    #: the scales of the imported judges its ``imported_judges`` list takes (``graded``,
    #: ``binary``, ``scores``): a published judge that gives scores goes only to a study whose
    #: list takes ``scores`` (:attr:`judgelab.wiring.facade.Project.published_groups`)
    imported_scales: tuple[str, ...] = ("graded", "binary")

    def __init__(self, project: Any):
        #: the :class:`~judgelab.wiring.facade.Project` that built the plan
        self.project = project
        self.section: dict = project.config[self.name]

    @property
    def enabled(self) -> bool:
        return bool(self.section["enabled"])

    @property
    def datasets(self) -> list[str]:
        """The study's ``datasets`` (null: every dataset of the config that has passage texts to
        show a live judge - a dataset without them, such as the bundled LLMJudge slice, is for
        imported and published judges only, and a study names it to take it)."""
        chosen = self.section.get("datasets")
        if chosen is None:
            return [d for d in self.project.datasets if self.project.has_texts(d)]
        return list(chosen)

    @property
    def judges(self) -> list[str]:
        """The study's ``judges`` (null: the top-level ``judges``)."""
        chosen = self.section.get("judges")
        return list(self.project.judges if chosen is None else chosen)

    @property
    def own_datasets(self) -> list[str]:
        """Datasets the study defines in its own section (not keys of the top-level `datasets`);
        ``judgelab estimate --table NAME=PATH`` may name them."""
        return []

    def judge_section(self, name: str):
        """The section of templates and judges ``name`` (:data:`judgelab.project.judges.JUDGE_SECTIONS`;
        a :class:`judgelab.llm.judge.JudgeSection`): the one factory of the judges its jobs run."""
        return self.project.judge_section(name)

    def models(self) -> list[str]:
        """Every model the study's jobs call."""
        return self.judges

    def text_datasets(self) -> list[str]:
        """The datasets (keys of the top-level ``datasets``) whose passage texts the study's jobs
        read: shown to a live model, or ranked by a retrieval system. A dataset no enabled study
        lists needs no texts (judged by imported judges only: its table's ``passage`` column may
        be empty, :meth:`judgelab.wiring.facade.Project.needs_texts`). By default every dataset of
        the study: a study says less only where it knows its jobs read no passage."""
        return self.datasets

    def check(self) -> None:
        """Every name of the section exists; errors name the full key."""
        for key, known in (
            ("datasets", self.project.config["datasets"]),
            ("judges", self.project.config["models"]),
        ):
            for i, v in enumerate(self.section.get(key) or []):
                if v not in known:
                    what = "datasets" if key == "datasets" else "models"
                    raise InputError(
                        f"{v!r} is not a key of `{what}` (known: {sorted(known)})",
                        key=f"{self.name}.{key}[{i}]",
                    )

    def llm_jobs(self) -> list[LLMJob]:
        raise NotImplementedError

    def checkpoints(self) -> list[tuple[str, dict[str, str]]]:
        """The Snakemake checkpoints (rule, wildcards) whose output decides the study's
        model-calling jobs (:meth:`llm_jobs`): a rule that lists those jobs (the provenance table)
        asks for them first, so Snakemake lists its inputs again once they have run. None by
        default."""
        return []

    def targets(self) -> list[str]:
        raise NotImplementedError

    def requests(self, job: LLMJob, ctx) -> Iterator[tuple[str, Request, bool | None]]:
        """For ``judgelab estimate``: the requests of ``job`` as (stage, request, exact) - exact
        False where a request stands in for one that depends on earlier answers (counted, never
        looked up). ``ctx`` gives the dataset pairs, persona texts and cache look-ups."""
        raise NotImplementedError
