"""Perturbations (seed 004, section 3): meaning-preserving rewrites and query-dependent insertions.

Config section ``perturbations``; target ``perturbations``; rules ``workflow/rules/perturbations.smk``
and ``workflow/rules/perturbations/``; jobs :mod:`judgelab.studies.perturbations.jobs`; science
:mod:`judgelab.studies.perturbations`; prompts ``resources/prompts/perturbations/``.

Per dataset: each judge's sample of its original PERAS judgment (the ``judge`` rule's table of the
study's ``template`` and ``persona``; requiring it schedules that PERAS judge job even when PERAS
is disabled), one rewrite job per rewrite variant over the pooled samples (rewriter + meaning
check), one insertion job per insertion variant (SEM calls the rewriter), one re-judge job per
variant x judge, the transition / distribution tables and the figures.
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import cached_property

from ...backends.base import Request
from ...errors import InputError
from .. import LLMJob, StudyPlan
from . import estimate

#: The template kind each prompt key needs (the rewrite variants: ``rewrite``).
PROMPT_KINDS = {"meaning_check": "meaning_check", "SEM": "sem_sentence", "LEX": "lex_sentence"}

#: The placeholders each prompt must hold (by its key under ``perturbations.prompts``).
PLACEHOLDERS = {
    "PSV": ("{passage}",),
    "ACV": ("{passage}",),
    "SUM": ("{passage}",),
    "EXP": ("{passage}",),
    "meaning_check": ("{original}", "{rewritten}"),
    "SEM": ("{query}",),
    "LEX": ("{terms}",),
}

#: Insertions that call a model (the others are fixed sentences).
LLM_INSERTIONS = ("SEM",)


class Plan(StudyPlan):
    name = "perturbations"
    paths = {
        "perturbation_sample": "{results}/perturbations/{dataset}/samples/{model}.tsv",
        "perturbation_rewrites": "{results}/perturbations/{dataset}/rewrites/{variant}.tsv",
        "perturbation_insertions": "{results}/perturbations/{dataset}/insertions/{variant}.tsv",
        "perturbation_sentences": "{results}/perturbations/{dataset}/insertions/{variant}_sentences.tsv",
        "perturbation_rejudged": "{results}/perturbations/{dataset}/rejudged/{variant}/{model}.tsv",
        "perturbation_transitions": "{results}/perturbations/{dataset}/transitions.tsv",
        "perturbation_shifts": "{results}/perturbations/{dataset}/shifts.tsv",
        "perturbation_kept": "{results}/perturbations/{dataset}/kept.tsv",
        "perturbation_distributions": "{results}/perturbations/{dataset}/distributions.tsv",
        "perturbation_insertion_counts": "{results}/perturbations/{dataset}/insertion_counts.tsv",
        "perturbation_transition_figure": "{results}/perturbations/{dataset}/figures/transitions/{model}.{ext}",
        "perturbation_insertion_figure": "{results}/perturbations/{dataset}/figures/insertions.{ext}",
    }

    def __init__(self, project):
        super().__init__(project)
        self._estimates: dict = {}

    # -- the section --------------------------------------------------------------------------

    @property
    def rewrite_variants(self) -> list[str]:
        return list(self.section["variants"])

    @property
    def insertions(self) -> list[str]:
        return list(self.section["insertions"])

    @property
    def variants(self) -> list[str]:
        return self.rewrite_variants + self.insertions

    @staticmethod
    def wildcard(variant: str) -> str:
        """A variant's name in the result paths (``SUM`` -> ``sum``)."""
        return variant.lower()

    @staticmethod
    def variant(wildcard: str) -> str:
        return wildcard.upper()

    @property
    def template(self) -> str:
        """The PERAS template of the original judgment and of the re-judging."""
        return self.section["template"]

    @property
    def persona(self) -> str:
        """``perturbations.persona``, or where it is null (the default) ``default`` when the run has
        it, else the run's first persona."""
        chosen = self.section["persona"]
        if chosen is not None:
            return chosen
        run = list(self.project.personas)
        return "default" if "default" in run or not run else run[0]

    @property
    def rewriter(self) -> str:
        return self.section["rewriter"]

    @property
    def checker(self) -> str:
        """The meaning checker (null: the rewriter)."""
        return self.section["checker"] or self.rewriter

    @property
    def sampling(self) -> dict[str, int]:
        """The sample job's settings: ``per_label`` passages per query and predicted label, ``seed``."""
        return {k: int(self.section[k]) for k in ("per_label", "seed")}

    @property
    def rewrite_max_tokens(self) -> int:
        return int(self.section["rewrite_max_tokens"])

    @property
    def check_max_tokens(self) -> int:
        return int(self.section["check_max_tokens"])

    @property
    def sem_max_tokens(self) -> int:
        return int(self.section["sem_max_tokens"])

    @property
    def sem_max_attempts(self) -> int:
        return int(self.section["sem_max_attempts"])

    @property
    def rewrite_models(self) -> list[str]:
        """The models a rewrite job calls: the rewriter, then the checker if it differs."""
        return list(dict.fromkeys([self.rewriter, self.checker]))

    def models(self) -> list[str]:
        used = list(self.judges)
        if self.rewrite_variants:
            used += self.rewrite_models
        if any(v in LLM_INSERTIONS for v in self.insertions):
            used.append(self.rewriter)
        return list(dict.fromkeys(used))

    @property
    def _prompt_keys(self) -> list[str]:
        keys = list(self.rewrite_variants)
        if keys:
            keys.append("meaning_check")
        return keys + [v for v in self.insertions if v in PLACEHOLDERS]

    def prompt(self, key: str) -> str:
        """A prompt's text (``PSV``..``EXP``, ``meaning_check``, ``SEM``, ``LEX``): a tracked
        param of the jobs using it."""
        return self.prompt_texts[key]

    @cached_property
    def prompt_texts(self) -> dict[str, str]:
        return {
            k: self.project.load_template(
                self.section["prompts"][k], PROMPT_KINDS.get(k, "rewrite"), f"perturbations.prompts.{k}"
            )
            for k in self._prompt_keys
        }

    @property
    def judge_template_text(self) -> str:
        return self.project.plan("peras").template_texts[self.template]

    @property
    def judge_max_tokens(self) -> int:
        return self.project.plan("peras").max_tokens(self.template)

    # -- files ----------------------------------------------------------------------------------

    def judgments(self, dataset: str, judge: str) -> str:
        """The original judgment a sample is drawn from: the PERAS judge rule's table."""
        return self.project.path(
            "judgments", dataset=dataset, model=judge, template=self.template, persona=self.persona
        )

    def samples(self, dataset: str) -> list[str]:
        return [self.project.path("perturbation_sample", dataset=dataset, model=m) for m in self.judges]

    def variant_table(self, dataset: str, variant: str) -> str:
        """The rewrites or insertions table of a variant (given as a name or a path wildcard)."""
        v = self.variant(variant)
        kind = "perturbation_rewrites" if v in self.rewrite_variants else "perturbation_insertions"
        return self.project.path(kind, dataset=dataset, variant=self.wildcard(v))

    def rejudged(self, dataset: str, variants: list[str]) -> list[str]:
        return [
            self.project.path("perturbation_rejudged", dataset=dataset, variant=self.wildcard(v), model=m)
            for v in variants
            for m in self.judges
        ]

    # -- the study's contract -----------------------------------------------------------------

    def check(self) -> None:
        super().check()
        s, key = self.section, self.name
        peras = self.project.plan("peras")
        if self.template not in peras.section["templates"]:
            raise InputError(
                f"{self.template!r} is not a PERAS template (keys of peras.templates: "
                f"{sorted(peras.section['templates'])})",
                key=f"{key}.template",
            )
        if not self.judges:
            raise InputError(
                "the study is enabled but has no live judge (perturbations.judges; null = the "
                f"top-level `judges`: {self.project.judges}): its judges re-judge the perturbed "
                "passages, which an imported judge cannot; set perturbations.enabled: false to skip it",
                key=key,
            )
        if self.persona not in self.project.personas:
            raise InputError(
                f"{self.persona!r} is not a persona of the run (personas.include and "
                f"personas.custom: {list(self.project.personas)})",
                key=f"{key}.persona",
            )
        for i, m in enumerate(self.judges):
            if m not in peras.judges:
                where = f"{key}.judges[{i}]" if s.get("judges") is not None else f"{key}.judges"
                raise InputError(
                    f"judge {m!r}: its original judgments come from the PERAS judge rule, which "
                    f"runs the PERAS judges {peras.judges} (peras.judges, null = the top-level "
                    "`judges`); add it there",
                    key=where,
                )
        models = self.project.config["models"]
        uses = {
            "rewriter": bool(self.rewrite_variants) or any(v in LLM_INSERTIONS for v in self.insertions),
            "checker": bool(self.rewrite_variants),
        }
        if uses["rewriter"] and s.get("rewriter") is None:
            raise InputError(
                "the rewrites and SEM sentences need a rewriter (a key of `models`)", key=f"{key}.rewriter"
            )
        for name, used in uses.items():
            if used and s.get(name) is not None and s[name] not in models:
                raise InputError(
                    f"{s[name]!r} is not a key of `models` (known: {sorted(models)})", key=f"{key}.{name}"
                )
        for k in self._prompt_keys:
            text = self.prompt_texts[k]
            missing = [p for p in PLACEHOLDERS[k] if p not in text]
            if missing:
                raise InputError(
                    f"the prompt {s['prompts'][k]!r} has no placeholder {', '.join(missing)}",
                    key=f"{key}.prompts.{k}",
                )

    def _peras_jobs(self) -> set:
        peras = self.project.plan("peras")
        return set(peras.llm_jobs()) if peras.enabled else set()

    def llm_jobs(self):
        jobs = []
        covered = {(j.rule, j.wildcards) for j in self._peras_jobs()}
        for d in self.datasets:
            for m in self.judges:  # the original judgments, unless PERAS runs them anyway
                wc = (("dataset", d), ("model", m), ("template", self.template), ("persona", self.persona))
                if ("judge", wc) not in covered:
                    jobs.append(LLMJob("judge", m, wc, self.name))
            for v in self.rewrite_variants:  # one job; a separate checker is a second model of it
                for model in self.rewrite_models:
                    jobs.append(
                        LLMJob(
                            "perturbation_rewrite",
                            model,
                            (("dataset", d), ("variant", self.wildcard(v))),
                            self.name,
                        )
                    )
            if "SEM" in self.insertions:
                jobs.append(LLMJob("perturbation_sem", self.rewriter, (("dataset", d),), self.name))
            for v in self.variants:
                for m in self.judges:
                    jobs.append(
                        LLMJob(
                            "perturbation_rejudge",
                            m,
                            (("dataset", d), ("variant", self.wildcard(v)), ("model", m)),
                            self.name,
                        )
                    )
        return jobs

    def targets(self) -> list[str]:
        path = self.project.path
        out = []
        for d in self.datasets:
            if self.rewrite_variants:
                out += [
                    path(k, dataset=d)
                    for k in ("perturbation_transitions", "perturbation_shifts", "perturbation_kept")
                ]
                out += [
                    path("perturbation_transition_figure", dataset=d, model=m, ext=e)
                    for m in self.judges
                    for e in ("png", "pdf")
                ]
            if self.insertions:
                out += [
                    path(k, dataset=d)
                    for k in ("perturbation_distributions", "perturbation_insertion_counts")
                ]
                out += [path("perturbation_insertion_figure", dataset=d, ext=e) for e in ("png", "pdf")]
        return out

    # -- the estimate -------------------------------------------------------------------------

    def requests(self, job, ctx) -> Iterator[tuple[str, Request, bool]]:
        """For ``judgelab estimate``: the requests of one job (:mod:`.estimate`)."""
        return estimate.requests(self, job, ctx)
